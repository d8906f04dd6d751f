//! One event stream, four reporters. Every text a reporter prints was
//! formatted once, when the failure was made (secrets redacted, control
//! characters escaped): reporters only lay it out.

mod human;
mod json;
mod junit;
mod markdown;
#[cfg(test)]
mod tests;

use std::io::{self, Write};
use std::time::Duration;

use crate::baseline::Known;
use crate::cli::Format;
use crate::rules::{Level, Outcome, Rule, Status};

/// What a run reports, in order: one `Started`, one `Rule` per rule (in
/// catalogue order, whatever the parallelism), one `Done`; or, for a run
/// that could not be made, one `Unusable`.
#[derive(Debug)]
pub enum Event<'a> {
    /// The run begins.
    Started {
        /// The server judged.
        target: &'a str,
        /// The seed of the generated cases.
        seed: u64,
        /// Cases per property.
        cases: u32,
        /// Rules to run.
        rules: usize,
        /// Whether observations count.
        strict: bool,
    },
    /// A rule finished.
    Rule(&'a RuleReport),
    /// The run could not be made (exit 2): instead of every other event.
    Unusable {
        /// The server that was to be judged, as far as it is known.
        target: &'a str,
        /// Why, fit to show.
        why: &'a str,
    },
    /// The run ended.
    Done {
        /// Totals.
        summary: &'a Summary,
        /// Every rule, in order.
        rules: &'a [RuleReport],
    },
}

/// A failure's place in a baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// Its fingerprint.
    pub fingerprint: String,
    /// True when the baseline knows it.
    pub known: bool,
}

/// A rule with its outcome.
#[derive(Debug, Clone)]
pub struct RuleReport {
    /// The rule (its id, level, source, quotes, summary and faults).
    pub rule: Rule,
    /// The verdict and evidence.
    pub outcome: Outcome,
    /// Time taken.
    pub duration: Duration,
    /// One mark per failure.
    pub marks: Vec<Mark>,
    /// Whether its outcome counts against the run: a required rule, or
    /// any rule with `--strict`. Decided once, by the runner; the exit
    /// code and every reporter read it.
    pub counts: bool,
}

impl RuleReport {
    /// Pairs a rule with its outcome; `known` tells a fingerprint the
    /// baseline knows; `strict` counts observations too.
    pub fn new(
        rule: &Rule,
        outcome: Outcome,
        duration: Duration,
        strict: bool,
        known: impl Fn(&str, &str) -> bool,
    ) -> Self {
        let marks = outcome
            .failures
            .iter()
            .map(|f| {
                let fingerprint = crate::baseline::fingerprint(rule.id, &f.message);
                let known = known(rule.id, &fingerprint);
                Mark { fingerprint, known }
            })
            .collect();
        Self {
            rule: rule.clone(),
            outcome,
            duration,
            marks,
            counts: rule.level == Level::Required || strict,
        }
    }

    /// The sentences a report quotes: those of the claims its failures
    /// (or inconclusive cases) break, each once; when none names a claim
    /// (a rule that passed, or a harness bug), every sentence of the rule.
    pub fn grounds(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        let broken = self
            .outcome
            .failures
            .iter()
            .chain(&self.outcome.inconclusive);
        for quote in broken.filter_map(|f| f.claim).flat_map(|c| c.says) {
            if !out.contains(quote) {
                out.push(quote);
            }
        }
        if out.is_empty() {
            out = self.rule.says();
        }
        out
    }

    /// A failure every one of whose failures the baseline knows.
    pub fn is_known(&self) -> bool {
        self.outcome.status == Status::Failed
            && !self.marks.is_empty()
            && self.marks.iter().all(|m| m.known)
    }

    /// A failure with at least one new failure.
    pub fn is_new_failure(&self) -> bool {
        self.outcome.status == Status::Failed && !self.is_known()
    }

    /// A new failure that counts: the run fails (exit 1).
    pub fn fails_run(&self) -> bool {
        self.counts && self.is_new_failure()
    }

    /// A failure that does not fail the run: known to the baseline, or an
    /// observation without `--strict`.
    pub fn failed_uncounted(&self) -> bool {
        self.outcome.status == Status::Failed && !self.fails_run()
    }

    /// Inconclusive where it counts: the run cannot conclude (exit 2).
    pub fn undecided(&self) -> bool {
        self.counts && self.outcome.status == Status::Inconclusive
    }

    /// The word of its verdict.
    pub fn verdict(&self) -> &'static str {
        match (self.outcome.status, self.rule.level) {
            (Status::Failed, _) if self.is_known() => "KNOWN",
            (Status::Passed, _) => "PASS",
            (Status::Failed, Level::Required) => "FAIL",
            (Status::Failed, Level::Observation) => "WARN",
            (Status::Inconclusive, _) => "UNSURE",
            (Status::Skipped, _) => "SKIP",
            (Status::NotRun, _) => "NORUN",
        }
    }
}

/// Totals of a run.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The server judged.
    pub target: String,
    /// The seed.
    pub seed: u64,
    /// Cases per property.
    pub cases: u32,
    /// Whether observations count.
    pub strict: bool,
    /// Requests in flight at once.
    pub jobs: usize,
    /// Rules passed.
    pub passed: usize,
    /// Rules failed anew (both levels).
    pub failed: usize,
    /// Rules whose failures a baseline knows.
    pub known: usize,
    /// Rules skipped.
    pub skipped: usize,
    /// Rules the run budget stopped.
    pub not_run: usize,
    /// Places the rules could not judge ([`crate::rules::NotJudged`]),
    /// over every rule.
    pub not_judged: usize,
    /// Rules that met only transient failures where they did not pass.
    pub inconclusive: usize,
    /// Required rules among them.
    pub required_inconclusive: usize,
    /// Required rules failed anew.
    pub required_failed: usize,
    /// Observations failed anew.
    pub observations_failed: usize,
    /// Failures a baseline knows that did not happen again.
    pub fixed: Vec<Known>,
    /// True when a baseline was given.
    pub baseline: bool,
    /// True when the run budget ran out.
    pub budget_spent: bool,
    /// Requests sent, retries included.
    pub requests: u64,
    /// Requests sent again after a transient failure.
    pub retries: u64,
    /// Wall time.
    pub duration: Duration,
    /// The process exit code.
    pub exit_code: u8,
}

/// The rules that could not judge some places, in order: what every
/// reporter lists under "Not judged".
fn not_judged(rules: &[RuleReport]) -> Vec<&RuleReport> {
    rules
        .iter()
        .filter(|r| !r.outcome.not_judged.is_empty())
        .collect()
}

/// Something that turns events into output.
pub trait Reporter {
    /// Handles one event.
    fn on(&mut self, event: &Event<'_>) -> io::Result<()>;
}

/// The reporter of a format, writing to `out`.
pub fn for_format<'w>(format: Format, out: Box<dyn Write + 'w>) -> Box<dyn Reporter + 'w> {
    match format {
        Format::Human => Box::new(human::Human::new(out)),
        Format::Json => Box::new(json::Json::new(out)),
        Format::Junit => Box::new(junit::Junit::new(out)),
        Format::Markdown => Box::new(markdown::Markdown::new(out)),
    }
}
