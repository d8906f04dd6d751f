//! A rule, the claims it makes, a rule at work (`Check`), and what it
//! finds.

use std::fmt;

use super::log::Observer;
use super::observe::{self, Cases, Observed};
use crate::ctx::Ctx;
use crate::http::{Exchange, Request};

/// How much a rule's failure weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// API.md states it: a failure fails the run.
    Required,
    /// Only WIRE.md or common practice says it: reported, fails the run
    /// only with `--strict`.
    Observation,
}

impl Level {
    /// `required` or `observation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Required => "required",
            Level::Observation => "observation",
        }
    }
}

/// How a rule finds its cases: what it is, typed, never read from its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// It judges the cases it was written for.
    Check,
    /// A family of properties: it sends its cases to every place of the
    /// contract table its subjects hold for, and reports where it did
    /// (its outcome's `places`). Its requests wait behind other rules' in
    /// the pool (the patient turn): it has many, none another waits on.
    Properties,
    /// Random sequences of operations against a model: what it catches
    /// beyond its faults depends on the draw.
    Sequences,
}

/// When a rule runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before every other rule, one at a time, with no other request in
    /// flight: it judges what requests leave behind, which another rule's
    /// write would blur.
    Alone,
    /// After [`Phase::Alone`] and before the other rules, side by side
    /// with the other rules of this phase only: it judges what its own
    /// writes leave behind, in records no other rule of the phase writes.
    Writes,
    /// With the other rules, in parallel.
    Rules,
    /// After every other rule: it judges every exchange of the run.
    Exchanges,
}

/// A named rule.
#[derive(Clone)]
pub struct Rule {
    /// Stable id, `family.name`; the family is the file it lives in.
    pub id: &'static str,
    /// Required or observation.
    pub level: Level,
    /// How it finds its cases.
    pub kind: Kind,
    /// Where the contract says it (API.md section, or WIRE.md).
    pub source: &'static str,
    /// What it holds a server to, one claim per comparison it makes,
    /// each with the sentences it rests on. Every failure names the
    /// claim it breaks.
    pub claims: &'static [Claim],
    /// What it checks.
    pub summary: &'static str,
    /// Faults of `aggpay-mock` that break it (the proof it can fail);
    /// typed, so that a misspelt fault does not compile.
    pub faults: &'static [aggpay_mock::Fault],
    /// What it judges, in the contract table's terms: COVERAGE.md
    /// lists the rule on every row these subjects hold for (an
    /// observation with none is listed with the observations only).
    pub judges: &'static [crate::contract::Subject],
    /// How it judges.
    pub run: Run,
}

/// How a rule judges.
#[derive(Clone, Copy)]
pub enum Run {
    /// It sends or reads what it needs and judges it, beside the
    /// other rules.
    Check(fn(&Check<'_>) -> Outcome),
    /// As `Check`, but alone (before every other rule, with no other
    /// request in flight): what it judges is the
    /// state requests leave behind.
    Alone(fn(&Check<'_>) -> Outcome),
    /// As `Check`, in the phase of the rules that write: it judges the state its own
    /// writes leave in records of one kind, which it alone writes then.
    Writes(fn(&Check<'_>) -> Outcome),
    /// It judges every answer of the run as it is made (`Some(why)`
    /// when broken), and is reported after every other rule; its cases
    /// are the answers it counts.
    EveryAnswer(fn(&Observed<'_>) -> Option<String>, Cases),
    /// Both: it judges every answer, then its check adds what it
    /// judges of its own (given the answers' verdict by
    /// `from_log`).
    EveryAnswerAnd(
        fn(&Observed<'_>) -> Option<String>,
        fn(&Check<'_>) -> Outcome,
    ),
}

/// One thing a rule holds a server to, and the statement it rests on:
/// the unit of the harness's provenance. A rule makes one claim per
/// kind of comparison; every failure names the claim it breaks, so that
/// a report quotes the sentence behind the very comparison that failed,
/// and a check with no sentence behind it has no claim to name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// What the server is held to.
    pub holds: &'static str,
    /// The sentences it rests on, verbatim (whitespace aside): of API.md
    /// for a required rule, of API.md or WIRE.md for an observation. A
    /// sentence of an RFC that API.md invokes is given as
    /// `RFC <number> section <n>: <sentence>`. A test holds the others to
    /// the copy of the specification in `spec/`.
    pub says: &'static [&'static str],
}

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Run::Check(_) => "Check",
            Run::Alone(_) => "Alone",
            Run::Writes(_) => "Writes",
            Run::EveryAnswer(_, Cases::Successes) => "EveryAnswer(successes)",
            Run::EveryAnswer(_, Cases::Answers) => "EveryAnswer(answers)",
            Run::EveryAnswer(_, Cases::Messages) => "EveryAnswer(messages)",
            Run::EveryAnswerAnd(..) => "EveryAnswerAnd",
        })
    }
}

impl Rule {
    /// The sentences its claims rest on, each once, in order.
    pub fn says(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for quote in self.claims.iter().flat_map(|c| c.says) {
            if !out.contains(quote) {
                out.push(quote);
            }
        }
        out
    }

    /// When it runs.
    pub fn phase(&self) -> Phase {
        match self.run {
            Run::Check(_) => Phase::Rules,
            Run::Alone(_) => Phase::Alone,
            Run::Writes(_) => Phase::Writes,
            Run::EveryAnswer(..) | Run::EveryAnswerAnd(..) => Phase::Exchanges,
        }
    }

    /// Its judge of every answer, for the HTTP layer.
    pub fn observer(&self) -> Option<Observer> {
        match self.run {
            Run::Check(_) | Run::Alone(_) | Run::Writes(_) => None,
            Run::EveryAnswer(judge, cases) => Some((self.id, judge, cases)),
            Run::EveryAnswerAnd(judge, _) => Some((self.id, judge, Cases::Answers)),
        }
    }

    /// The places of the contract table its subjects hold for (an
    /// operation's path id, query parameter, key header, body field):
    /// where a rule of a family of properties must send its cases.
    /// Derived from the table alone, as the report's `places` shows
    /// where it did.
    pub fn places_due(&self) -> Vec<String> {
        crate::contract::subject::due(self.judges)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// Judges, in the run's context.
    pub fn judge(&self, c: &Check<'_>) -> Outcome {
        match self.run {
            Run::Check(check)
            | Run::Alone(check)
            | Run::Writes(check)
            | Run::EveryAnswerAnd(_, check) => check(c),
            Run::EveryAnswer(_, cases) => observe::from_log(c, cases),
        }
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rule")
            .field("id", &self.id)
            .field("level", &self.level)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// A rule at work: the run's context, and which rule it is (so that no
/// check retypes its own id).
#[derive(Debug, Clone, Copy)]
pub struct Check<'a> {
    /// The run.
    pub ctx: &'a Ctx,
    /// The running rule's id.
    pub rule: &'static str,
    /// The running rule's claims: the only ones its failures may name.
    pub claims: &'static [Claim],
}

impl Check<'_> {
    /// Sends a request.
    pub fn send(&self, request: Request) -> Exchange {
        self.ctx.http.send(request)
    }

    /// `f` over `items` in parallel (in the pool), results in order.
    pub fn map<T: Sync, R: Send>(&self, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
        self.ctx.http.pool().map(items, f)
    }

    /// The claim the rule's cases test: its first. A judge shared by
    /// several rules (the rows a page owes, every answer of the run)
    /// fails it, so that a failure quotes the sentence of the case that
    /// asked: a page size's, a filter's, a direction's.
    pub fn main_claim(&self) -> &'static Claim {
        &self.claims[0]
    }

    /// A failure of `claim` shown by one exchange. When every attempt of
    /// the exchange met a transient failure, it proves nothing: the
    /// failure is inconclusive.
    pub fn fail(&self, claim: &'static Claim, e: &Exchange, message: impl Into<String>) -> Finding {
        self.owns(claim);
        let http = &self.ctx.http;
        let message = message.into();
        let message = match (&e.transient, &e.outcome) {
            (Some(t), Ok(status)) => format!(
                "{message} ({t}: {status} on each of {} attempts)",
                e.attempts
            ),
            (Some(t), Err(err)) => {
                format!("{message} ({t} on each of {} attempts: {err})", e.attempts)
            }
            (None, Err(err)) => format!("{message} ({err})"),
            (None, Ok(_)) => message,
        };
        Finding {
            message: http.text(&message, 2_000),
            claim: Some(claim),
            inconclusive: e.transient.is_some(),
            input: None,
            evidence: Some(Box::new(Evidence {
                method: e.request.method.to_owned(),
                url: http.text(&e.url, 4_000),
                status: e.status(),
                body: http.snippet(&e.body),
                curl: http.curl(&e.request),
                refused: e.refused(),
            })),
        }
    }

    /// A failure of `claim` without an exchange.
    pub fn note(&self, claim: &'static Claim, message: impl Into<String>) -> Finding {
        self.owns(claim);
        Finding {
            claim: Some(claim),
            ..self.harness_bug(message)
        }
    }

    /// A failure of the harness itself (a rule that panicked): it breaks
    /// no claim, and says so.
    pub fn harness_bug(&self, message: impl Into<String>) -> Finding {
        Finding {
            message: self.ctx.http.text(&message.into(), 2_000),
            claim: None,
            inconclusive: false,
            input: None,
            evidence: None,
        }
    }

    /// A rule's failure names one of its own claims: the list a report
    /// and COVERAGE.md show is the whole of what it holds a server to.
    fn owns(&self, claim: &Claim) {
        assert!(
            self.claims.contains(claim),
            "{}: a failure names the claim {:?}, which the rule does not make",
            self.rule,
            claim.holds
        );
    }

    /// Something this rule could not judge at `place`, and why.
    pub fn not_judged(&self, place: crate::contract::Place, why: impl Into<String>) -> NotJudged {
        NotJudged {
            place,
            reason: self.ctx.http.text(&why.into(), 2_000),
        }
    }

    /// A generated input, fit to show.
    pub fn shown_input(&self, input: &str) -> String {
        self.ctx.http.text(input, 2_000)
    }
}

/// One failure: what is wrong, and the exchange that shows it. Every
/// text in it is formatted once, at creation: secrets redacted,
/// control characters escaped. Reporters print it as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finding {
    /// What is wrong.
    pub message: String,
    /// The claim it breaks; none for a failure of the harness itself.
    pub claim: Option<&'static Claim>,
    /// True when the evidence is only transient failures: the server
    /// did not answer the question, so nothing is proven either way.
    pub inconclusive: bool,
    /// The (shrunk) generated input, for property rules.
    pub input: Option<String>,
    /// The request and answer, when one exchange shows it.
    pub evidence: Option<Box<Evidence>>,
}

/// The exchange behind a failure.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Method of the request.
    pub method: String,
    /// URL of the request (no key).
    pub url: String,
    /// Status answered, if any.
    pub status: Option<u16>,
    /// The start of the body.
    pub body: String,
    /// A reproduction, every credential shown as `<redacted>`.
    pub curl: String,
    /// Whether the answer refused the request as a bad request
    /// ([`Exchange::refused`]).
    pub refused: bool,
}

/// A rule's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every case held.
    Passed,
    /// At least one case did not.
    Failed,
    /// Every case that did not pass met only transient failures
    /// (429, 502, 503, 504, resets, timeouts): not proven either way.
    Inconclusive,
    /// The rule could not run.
    Skipped,
    /// The run budget ran out before the rule finished.
    NotRun,
}

impl Status {
    /// `passed`, `failed`, `inconclusive`, `skipped` or `not_run`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Inconclusive => "inconclusive",
            Status::Skipped => "skipped",
            Status::NotRun => "not_run",
        }
    }
}

/// What a rule found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The verdict.
    pub status: Status,
    /// Cases (values or responses) judged.
    pub cases: u64,
    /// Evidence, when failed.
    pub failures: Vec<Finding>,
    /// Cases that met only transient failures, listed apart.
    pub inconclusive: Vec<Finding>,
    /// Why, when skipped or not run.
    pub skip_reason: Option<String>,
    /// The places of the contract table its cases were sent to (the
    /// families of properties say where they looked), each true
    /// where a case failed.
    pub places: std::collections::BTreeMap<crate::contract::Place, bool>,
    /// What it could not judge, each with why: a place it did not reach,
    /// or a name the server shows it does not read. Not a failure, and
    /// never silent: every reporter lists it.
    pub not_judged: Vec<NotJudged>,
}

/// Something a rule could not judge, and why: a pass says nothing of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotJudged {
    /// Where, in the contract table's terms.
    pub place: crate::contract::Place,
    /// Why, fit to show (formatted once, as a finding's message is).
    pub reason: String,
}

impl Outcome {
    /// Judged `cases` and found `failures` (none: passed). Failures
    /// made of transient evidence only are set apart: they make the
    /// rule inconclusive when nothing else failed.
    pub fn judged(cases: u64, failures: Vec<Finding>) -> Self {
        let (inconclusive, failures): (Vec<Finding>, Vec<Finding>) =
            failures.into_iter().partition(|f| f.inconclusive);
        let status = match (failures.is_empty(), inconclusive.is_empty()) {
            (false, _) => Status::Failed,
            (true, false) => Status::Inconclusive,
            (true, true) => Status::Passed,
        };
        Self {
            status,
            cases,
            failures,
            inconclusive,
            skip_reason: None,
            places: Default::default(),
            not_judged: Vec::new(),
        }
    }

    /// Could not run.
    pub fn skipped(reason: impl Into<String>) -> Self {
        Self {
            status: Status::Skipped,
            cases: 0,
            failures: Vec::new(),
            inconclusive: Vec::new(),
            skip_reason: Some(reason.into()),
            places: Default::default(),
            not_judged: Vec::new(),
        }
    }

    /// Not run, for `reason`.
    pub fn not_run_because(reason: impl Into<String>) -> Self {
        Self {
            skip_reason: Some(reason.into()),
            ..Self::not_run()
        }
    }

    /// Stopped by the run budget.
    pub fn not_run() -> Self {
        Self {
            status: Status::NotRun,
            cases: 0,
            failures: Vec::new(),
            inconclusive: Vec::new(),
            skip_reason: Some("not run: the run budget (--max-duration) ran out first".to_owned()),
            places: Default::default(),
            not_judged: Vec::new(),
        }
    }
}
