//! One event stream, several reporters.

mod human;
mod json;
mod junit;

use std::io::{self, Write};
use std::time::Duration;

use crate::cli::Format;
use crate::rules::{Level, Outcome, Rule};

/// What a run reports, in order: one `Started`, one `Rule` per rule, one `Done`.
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
    /// The run ended.
    Done {
        /// Totals.
        summary: &'a Summary,
        /// Every rule, in order.
        rules: &'a [RuleReport],
    },
}

/// A rule with its outcome.
#[derive(Debug, Clone)]
pub struct RuleReport {
    /// Stable id.
    pub id: &'static str,
    /// Required or observation.
    pub level: Level,
    /// Where the contract says it.
    pub source: &'static str,
    /// What it checks.
    pub summary: &'static str,
    /// Mock faults that break it.
    pub faults: &'static [&'static str],
    /// The verdict and evidence.
    pub outcome: Outcome,
    /// Time taken.
    pub duration: Duration,
}

impl RuleReport {
    /// Pairs a rule with its outcome.
    pub fn new(rule: &Rule, outcome: Outcome, duration: Duration) -> Self {
        Self {
            id: rule.id,
            level: rule.level,
            source: rule.source,
            summary: rule.summary,
            faults: rule.faults,
            outcome,
            duration,
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
    /// Rules passed.
    pub passed: usize,
    /// Rules failed (both levels).
    pub failed: usize,
    /// Rules skipped.
    pub skipped: usize,
    /// Required rules failed.
    pub required_failed: usize,
    /// Observations failed.
    pub observations_failed: usize,
    /// Requests sent.
    pub requests: u64,
    /// Wall time.
    pub duration: Duration,
    /// The process exit code.
    pub exit_code: u8,
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
    }
}
