//! The log of the rules that judge every answer: each answer the server
//! gives is shown to every such rule as it is made (`http::Watch`), and
//! what they find is kept here until their verdicts are written.

use std::cell::OnceCell;
use std::ops::Deref;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::contract::Walk;
use crate::http::{Exchange, Watch};

/// How many offending exchanges a rule keeps as evidence.
const KEEP: usize = 5;

/// A rule that judges every exchange of the run as it happens: the id of
/// the rule and its verdict on one answer (`Some(why)` when broken).
/// An answer without content (to a HEAD, a 304) is shown only to those
/// whose cases are [`Cases::Messages`]: the others judge content.
pub type Observer = (
    &'static str,
    fn(&Observed<'_>) -> Option<String>,
    super::observe::Cases,
);

/// An answer as the rules that judge every answer see it: the exchange,
/// and the fields its operation's table names in its `data`, walked once
/// for all of them, when the first asks.
#[derive(Debug)]
pub struct Observed<'e> {
    exchange: &'e Exchange,
    walk: OnceCell<Option<Walk<'e>>>,
}

impl<'e> Observed<'e> {
    /// `exchange`, not walked yet.
    pub fn new(exchange: &'e Exchange) -> Self {
        Self {
            exchange,
            walk: OnceCell::new(),
        }
    }

    /// The fields of a success's `data` by its operation's table (none
    /// for an answer of no operation, or not a success with data).
    pub fn walk(&self) -> Option<&Walk<'e>> {
        self.walk
            .get_or_init(|| {
                let e = self.exchange;
                Some(Walk::new(e.data()?, e.op()?.data))
            })
            .as_ref()
    }
}

impl Deref for Observed<'_> {
    type Target = Exchange;

    fn deref(&self) -> &Exchange {
        self.exchange
    }
}

/// What the rules that judge every answer found, per rule: evidence kept
/// and the count.
#[derive(Debug, Default)]
pub struct Log {
    /// Answered exchanges judged (transient ones are not).
    pub answered: u64,
    /// Successful exchanges.
    pub successes: u64,
    /// Answered exchanges without content (a HEAD's, a 304).
    pub bodiless: u64,
    violations: Vec<Violations>,
}

/// One exchange rule's violations: evidence kept (at most [`KEEP`]) and
/// how many there were in all. The evidence kept is the first by URL and
/// message, not by arrival: the report is the same whatever `--jobs`.
#[derive(Debug)]
struct Violations {
    rule: &'static str,
    kept: Vec<(String, Exchange)>,
    total: u64,
}

impl Log {
    fn note(&mut self, rule: &'static str, message: String, exchange: &Exchange) {
        let at = match self.violations.iter().position(|v| v.rule == rule) {
            Some(i) => i,
            None => {
                self.violations.push(Violations {
                    rule,
                    kept: Vec::new(),
                    total: 0,
                });
                self.violations.len() - 1
            }
        };
        let entry = &mut self.violations[at];
        entry.total += 1;
        // By URL, message, then how the request carried its key (two
        // rules may send one URL with two headers): never by arrival.
        let key = |(m, e): &(String, Exchange)| (e.url.clone(), m.clone(), e.request.auth.kind());
        let here = (
            exchange.url.clone(),
            message.clone(),
            exchange.request.auth.kind(),
        );
        let at = entry.kept.partition_point(|k| key(k) < here);
        if at < KEEP {
            entry.kept.insert(at, (message, exchange.clone()));
            entry.kept.truncate(KEEP);
        }
    }

    /// The violations of one rule and their total.
    pub fn of(&self, rule: &str) -> (Vec<(String, Exchange)>, u64) {
        self.violations
            .iter()
            .find(|v| v.rule == rule)
            .map(|v| (v.kept.clone(), v.total))
            .unwrap_or_default()
    }
}

/// The rules that judge every answer, and their log.
#[derive(Debug)]
pub struct AnswerLog {
    observers: Vec<Observer>,
    log: Mutex<Log>,
}

impl AnswerLog {
    /// A log judging every answer with `observers`.
    pub fn new(observers: Vec<Observer>) -> Self {
        Self {
            observers,
            log: Mutex::new(Log::default()),
        }
    }

    /// What was found so far.
    pub fn lock(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Watch for AnswerLog {
    fn answered(&self, e: &Exchange) {
        // Judged before the log is locked: the requests in flight are
        // judged at once, and only what they found waits its turn.
        let answer = Observed::new(e);
        let bodiless = !e.has_content();
        let found: Vec<(&'static str, String)> = self
            .observers
            .iter()
            .filter(|(_, _, cases)| !bodiless || *cases == super::observe::Cases::Messages)
            .filter_map(|(rule, judge, _)| Some((*rule, judge(&answer)?)))
            .collect();
        let mut log = self.lock();
        log.answered += 1;
        log.bodiless += u64::from(bodiless);
        if e.success() && !bodiless {
            log.successes += 1;
        }
        for (rule, why) in found {
            log.note(rule, why, e);
        }
    }
}
