//! The rule catalogue.

mod auth;
mod cursor;
mod fields;
mod offset;
mod wire;
mod writes;

pub use catalogue::catalogue;
pub use model::{Failure, Level, Outcome, Rule, Status};

mod model {
    use std::fmt;

    use crate::ctx::Ctx;
    use crate::http::Exchange;

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

    /// A named rule.
    #[derive(Clone)]
    pub struct Rule {
        /// Stable id, `family.name`.
        pub id: &'static str,
        /// Required or observation.
        pub level: Level,
        /// Where the contract says it (API.md section, or WIRE.md).
        pub source: &'static str,
        /// What it checks.
        pub summary: &'static str,
        /// Faults of `aggpay-mock` that break it (the proof it can fail).
        pub faults: &'static [&'static str],
        /// The check.
        pub check: fn(&Ctx) -> Outcome,
    }

    impl fmt::Debug for Rule {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("Rule")
                .field("id", &self.id)
                .field("level", &self.level)
                .finish_non_exhaustive()
        }
    }

    /// One failure: what is wrong, and the exchange that shows it.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct Failure {
        /// What is wrong.
        pub message: String,
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
        /// The start of the body, secrets scrubbed.
        pub body: String,
        /// A reproduction, key shown as `<redacted>`.
        pub curl: String,
    }

    impl Failure {
        /// A failure with only a message.
        pub fn new(message: impl Into<String>) -> Self {
            Self {
                message: message.into(),
                ..Self::default()
            }
        }

        /// A failure about one exchange.
        pub fn at(ctx: &Ctx, e: &Exchange, message: impl Into<String>) -> Self {
            let message = message.into();
            let message = match &e.outcome {
                Err(err) => format!("{message} ({err})"),
                Ok(_) => message,
            };
            Self {
                message: ctx.http.scrub(&message),
                input: None,
                evidence: Some(Box::new(Evidence {
                    method: e.request.method.to_owned(),
                    url: e.url.clone(),
                    status: e.status(),
                    body: ctx.http.snippet(&e.body),
                    curl: ctx.http.curl(&e.request),
                })),
            }
        }
    }

    /// A rule's verdict.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Status {
        /// Every case held.
        Passed,
        /// At least one case did not.
        Failed,
        /// The rule could not run.
        Skipped,
    }

    impl Status {
        /// `passed`, `failed` or `skipped`.
        pub fn as_str(self) -> &'static str {
            match self {
                Status::Passed => "passed",
                Status::Failed => "failed",
                Status::Skipped => "skipped",
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
        pub failures: Vec<Failure>,
        /// Why, when skipped.
        pub skip_reason: Option<String>,
    }

    impl Outcome {
        /// Judged `cases` and found `failures` (none: passed).
        pub fn judged(cases: u64, failures: Vec<Failure>) -> Self {
            let status = if failures.is_empty() {
                Status::Passed
            } else {
                Status::Failed
            };
            Self {
                status,
                cases,
                failures,
                skip_reason: None,
            }
        }

        /// Could not run.
        pub fn skipped(reason: impl Into<String>) -> Self {
            Self {
                status: Status::Skipped,
                cases: 0,
                failures: Vec::new(),
                skip_reason: Some(reason.into()),
            }
        }
    }
}

/// Shared helpers of the rule families.
mod support {
    use std::cell::Cell;
    use std::fmt::Debug;

    use proptest::strategy::Strategy;
    use proptest::test_runner::{
        Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
    };

    use super::{Failure, Outcome};
    use crate::ctx::Ctx;
    use crate::http::Exchange;

    /// Evidence kept per rule; more only repeats the point.
    pub const MAX_FAILURES: usize = 5;

    /// Collects failures up to [`MAX_FAILURES`], counting cases.
    #[derive(Debug, Default)]
    pub struct Judge {
        pub cases: u64,
        pub failures: Vec<Failure>,
        pub more: u64,
    }

    impl Judge {
        pub fn case(&mut self) {
            self.cases += 1;
        }

        pub fn fail(&mut self, failure: Failure) {
            if self.failures.len() < MAX_FAILURES {
                self.failures.push(failure);
            } else {
                self.more += 1;
            }
        }

        pub fn check(&mut self, ok: bool, failure: impl FnOnce() -> Failure) {
            self.case();
            if !ok {
                self.fail(failure());
            }
        }

        pub fn outcome(mut self) -> Outcome {
            if self.more > 0
                && let Some(last) = self.failures.last_mut()
            {
                last.message
                    .push_str(&format!(" (and {} more like it)", self.more));
            }
            Outcome::judged(self.cases, self.failures)
        }
    }

    /// The rule's own seed: the run seed mixed with the rule id, so a rule's
    /// cases do not depend on which other rules ran.
    fn seed_for(seed: u64, rule: &str) -> [u8; 32] {
        let mut h: u64 = seed ^ 0xcbf2_9ce4_8422_2325;
        for b in rule.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let mut out = [0u8; 32];
        for (i, chunk) in out.chunks_mut(8).enumerate() {
            let z = h.wrapping_add(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1));
            chunk.copy_from_slice(&aggpay::util::splitmix64(z).to_le_bytes());
        }
        out
    }

    /// Runs a property: `check` on generated values; a failure is shrunk to
    /// a minimal input, re-run to capture its request, and reported.
    pub fn property<S>(
        ctx: &Ctx,
        rule: &str,
        strategy: S,
        check: impl Fn(&S::Value) -> Result<(), Failure>,
    ) -> Outcome
    where
        S: Strategy,
        S::Value: Debug,
    {
        let config = Config {
            cases: ctx.options.cases.max(1),
            failure_persistence: None,
            max_shrink_iters: 64,
            max_shrink_time: 20_000,
            max_global_rejects: 4_096,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(
            config,
            TestRng::from_seed(RngAlgorithm::ChaCha, &seed_for(ctx.options.seed, rule)),
        );
        let cases = Cell::new(0u64);
        let result = runner.run(&strategy, |value| {
            cases.set(cases.get() + 1);
            check(&value).map_err(|f| TestCaseError::fail(f.message))
        });
        match result {
            Ok(()) => Outcome::judged(cases.get(), Vec::new()),
            Err(TestError::Fail(reason, minimal)) => {
                let mut failure = check(&minimal).err().unwrap_or_else(|| {
                    Failure::new(format!("{reason} (the minimal case passed when re-run: the server is not deterministic)"))
                });
                failure.input = Some(format!("{minimal:?}"));
                Outcome::judged(cases.get(), vec![failure])
            }
            Err(TestError::Abort(reason)) => Outcome::judged(
                cases.get(),
                vec![Failure::new(format!("aborted: {reason}"))],
            ),
        }
    }

    /// The sample of `op`, or why there is none.
    pub fn sample<'c>(ctx: &'c Ctx, op: &str) -> Result<&'c Exchange, String> {
        match ctx.corpus.get(op) {
            Some(e) => Ok(e),
            None => Err(ctx
                .unsampled
                .get(op)
                .cloned()
                .unwrap_or_else(|| format!("{op} was not sampled"))),
        }
    }

    /// A numeric string as a number.
    pub fn num(v: &serde_json::Value) -> Option<u64> {
        v.as_str()
            .filter(|s| aggpay::rules::is_numeric_id(s))
            .and_then(|s| s.parse().ok())
    }
}

mod catalogue {
    use super::Rule;

    /// Every rule, in the order they run (sampling and discovery come
    /// first; the header rules last, so they judge every exchange).
    pub fn catalogue() -> Vec<Rule> {
        let mut rules = Vec::new();
        rules.extend(super::auth::rules());
        rules.extend(super::fields::rules());
        rules.extend(super::cursor::rules());
        rules.extend(super::offset::rules());
        rules.extend(super::writes::rules());
        rules.extend(super::wire::rules());
        rules
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_rule_has_a_fault() {
        let rules = catalogue();
        let mut ids = std::collections::HashSet::new();
        for r in &rules {
            assert!(ids.insert(r.id), "duplicate {}", r.id);
            assert!(!r.faults.is_empty(), "{} has no fault that breaks it", r.id);
            for f in r.faults {
                assert!(
                    f.parse::<aggpay_mock::Fault>().is_ok(),
                    "{}: unknown fault {f}",
                    r.id
                );
            }
        }
    }
}
