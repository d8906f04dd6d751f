//! What the rule families share: a judge that collects failures, the
//! property runner, and small readers of JSON values.

use std::fmt::Debug;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

use super::{Check, Finding, NotJudged, Outcome};

/// Evidence kept per rule; more only repeats the point.
pub const MAX_FAILURES: usize = 5;
/// Shrinking steps at most: each is a request.
const MAX_SHRINK_STEPS: u32 = 64;
/// Failing cases checked again alone, at most, for one that fails again.
const RECHECKED: usize = 3;

/// Collects failures up to [`MAX_FAILURES`] (and as many inconclusive
/// ones), counting cases.
#[derive(Debug, Default)]
pub struct Judge {
    pub cases: u64,
    pub failures: Vec<Finding>,
    pub unsure: Vec<Finding>,
    pub more: u64,
    /// The places of the contract table the cases were sent to, each
    /// true where a case failed.
    pub places: std::collections::BTreeMap<crate::contract::Place, bool>,
    /// What the rule could not judge, with why.
    pub not_judged: Vec<NotJudged>,
}

impl Judge {
    /// Takes something the rule could not judge ([`Check::not_judged`]).
    pub fn not_judged(&mut self, what: NotJudged) {
        if !self.not_judged.contains(&what) {
            self.not_judged.push(what);
        }
    }

    pub fn case(&mut self) {
        self.cases += 1;
    }

    pub fn fail(&mut self, failure: Finding) {
        let list = if failure.inconclusive {
            &mut self.unsure
        } else {
            &mut self.failures
        };
        if list.len() < MAX_FAILURES {
            list.push(failure);
        } else if !failure.inconclusive {
            self.more += 1;
        }
    }

    pub fn check(&mut self, ok: bool, failure: impl FnOnce() -> Finding) {
        self.case();
        if !ok {
            self.fail(failure());
        }
    }

    /// Takes a case's result.
    pub fn result(&mut self, result: Result<(), Finding>) {
        self.case();
        if let Err(f) = result {
            self.fail(f);
        }
    }

    /// Takes the result of a case sent to `place`.
    pub fn at(&mut self, place: crate::contract::Place, result: Result<(), Finding>) {
        let failed = matches!(&result, Err(f) if !f.inconclusive);
        *self.places.entry(place).or_default() |= failed;
        self.result(result);
    }

    /// Takes the result of a case meant for `place`: judged, or not
    /// reached there (not a case; listed with why).
    pub fn reached(
        &mut self,
        c: &Check<'_>,
        place: crate::contract::Place,
        result: Result<Reached, Finding>,
    ) {
        match result {
            Ok(Reached::Not(why)) => self.not_judged(c.not_judged(place, why)),
            Ok(Reached::Judged) => self.at(place, Ok(())),
            Err(f) => self.at(place, Err(f)),
        }
    }

    pub fn outcome(mut self) -> Outcome {
        if self.more > 0
            && let Some(last) = self.failures.last_mut()
        {
            last.message
                .push_str(&format!(" (and {} more like it)", self.more));
        }
        self.failures.append(&mut self.unsure);
        Outcome {
            places: self.places,
            not_judged: self.not_judged,
            ..Outcome::judged(self.cases, self.failures)
        }
    }
}

/// Whether a case was judged at its place, or could not be, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reached {
    /// Judged, and it held.
    Judged,
    /// Not judged there: why.
    Not(String),
}

/// A rule's own seed: the run seed mixed with the rule id, so that a
/// rule's cases do not depend on which other rules ran.
fn seed_for(seed: u64, rule: &str) -> [u8; 32] {
    let h = aggpay_internal::mix::fnv1a(seed, rule.as_bytes());
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let z = h.wrapping_add(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1));
        chunk.copy_from_slice(&aggpay_internal::mix::splitmix64(z).to_le_bytes());
    }
    out
}

impl Check<'_> {
    /// Runs a property: `check` on `cases` generated values. The values
    /// are drawn first, in order, from the rule's seed, then checked in
    /// parallel: the same seed gives the same cases and the same verdict
    /// whatever `--jobs` is. The first failing value (in drawing order)
    /// is shrunk to a minimal one, re-checked to capture its request, and
    /// reported.
    pub fn property<S>(
        &self,
        strategy: S,
        check: impl Fn(&S::Value) -> Result<(), Finding> + Sync,
    ) -> Outcome
    where
        S: Strategy,
        S::Value: Debug + Send + Sync,
    {
        self.property_n(self.ctx.options.cases, strategy, check)
    }

    /// [`Check::property`] on `cases` generated values. A failure that
    /// shows its input its own way (a sequence's replay script) keeps it;
    /// the others show the value.
    pub fn property_n<S>(
        &self,
        cases: u32,
        strategy: S,
        check: impl Fn(&S::Value) -> Result<(), Finding> + Sync,
    ) -> Outcome
    where
        S: Strategy,
        S::Value: Debug + Send + Sync,
    {
        let config = Config {
            cases: cases.max(1),
            failure_persistence: None,
            max_local_rejects: 1_024,
            max_global_rejects: 4_096,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(
            config,
            TestRng::from_seed(
                RngAlgorithm::ChaCha,
                &seed_for(self.ctx.options.seed, self.rule),
            ),
        );
        let mut trees = Vec::new();
        let mut rejects = 0;
        while trees.len() < cases.max(1) as usize {
            match strategy.new_tree(&mut runner) {
                Ok(tree) => trees.push(tree),
                Err(reason) => {
                    rejects += 1;
                    if rejects > 4_096 {
                        // The harness's strategy, not the server, is at
                        // fault: the rule could not run.
                        return Outcome::skipped(format!("could not generate cases: {reason}"));
                    }
                }
            }
        }
        let values: Vec<S::Value> = trees.iter().map(ValueTree::current).collect();
        let results = self.map(&values, |v| check(v));
        let cases = values.len() as u64;
        let proven = |r: &Result<(), Finding>| matches!(r, Err(f) if !f.inconclusive);
        let failed: Vec<(usize, &Finding)> = results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Err(f) if !f.inconclusive => Some((i, f)),
                _ => None,
            })
            .collect();
        let Some(&earliest) = failed.first() else {
            // Nothing failed for sure: the cases that met only transient
            // failures, if any, make the property inconclusive.
            let unsure = results
                .into_iter()
                .filter_map(Result::err)
                .take(MAX_FAILURES)
                .collect();
            return Outcome::judged(cases, unsure);
        };
        // Checked side by side, a case may have met another's effect (a
        // write to a faulty server): the one shrunk is the first that
        // fails again alone, when one does among the first few.
        let (first, finding) = failed
            .iter()
            .take(RECHECKED)
            .find(|(i, _)| proven(&check(&values[*i])))
            .copied()
            .unwrap_or(earliest);
        let mut tree = trees.swap_remove(first);
        let mut best = (values[first].clone_debug(), finding.clone());
        // proptest's own shrinking walk, one request per step.
        if tree.simplify() {
            for _ in 0..MAX_SHRINK_STEPS {
                match check(&tree.current()) {
                    // A transient answer proves nothing: shrink elsewhere.
                    Ok(())
                    | Err(Finding {
                        inconclusive: true, ..
                    }) => {
                        if !tree.complicate() {
                            break;
                        }
                    }
                    Err(f) => {
                        best = (format!("{:?}", tree.current()), f);
                        if !tree.simplify() {
                            break;
                        }
                    }
                }
            }
        }
        let (input, mut failure) = best;
        if failure.input.is_none() {
            failure.input = Some(self.shown_input(&input));
        }
        Outcome::judged(cases, vec![failure])
    }
}

/// A failure that only shows a refusal (a 400, or a client error saying
/// error.bad_request) is no failure: API.md lets a server
/// refuse a value it finds invalid ("Which parameter values cause
/// error.bad_request: not shown"), and `errors.shape` judges the form of
/// every 400 of the run. For the values whose meaning is in doubt: far
/// numbers, near misses.
pub fn unless_refused(result: Result<(), Finding>) -> Result<(), Finding> {
    match result {
        Err(f) if f.evidence.as_ref().is_some_and(|e| e.refused) => Ok(()),
        other => other,
    }
}

/// `format!("{:?}")` as a method, for the first failing value.
trait CloneDebug {
    fn clone_debug(&self) -> String;
}

impl<T: Debug> CloneDebug for T {
    fn clone_debug(&self) -> String {
        format!("{self:?}")
    }
}

/// The string at `field`, or "".
pub fn text<'v>(v: &'v Value, field: &str) -> &'v str {
    v[field].as_str().unwrap_or("")
}
