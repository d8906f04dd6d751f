//! JUnit XML via quick-junit: one test case per rule.

use std::io::{self, Write};

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::{Event, Reporter};
use crate::rules::Status;

pub struct Junit<'w> {
    out: Box<dyn Write + 'w>,
}

impl<'w> Junit<'w> {
    pub fn new(out: Box<dyn Write + 'w>) -> Self {
        Self { out }
    }
}

impl Junit<'_> {
    /// A run that could not be made: one test case, `run`, in error with
    /// why, so that a CI's test view shows it.
    fn unusable(&mut self, target: &str, why: &str) -> io::Result<()> {
        let mut suite = TestSuite::new("aggpay-conformance");
        suite.add_property(("target", target));
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_message(why);
        status.set_type("could not run");
        let mut case = TestCase::new("run", status);
        case.set_classname("aggpay.conformance.setup");
        suite.add_test_case(case);
        self.write(suite)
    }

    fn write(&mut self, suite: TestSuite) -> io::Result<()> {
        let mut report = Report::new("aggpay-conformance");
        report.add_test_suite(suite);
        report.serialize(&mut self.out).map_err(io::Error::other)?;
        writeln!(self.out)?;
        self.out.flush()
    }
}

impl Reporter for Junit<'_> {
    fn on(&mut self, event: &Event<'_>) -> io::Result<()> {
        let (summary, rules) = match event {
            Event::Done { summary, rules } => (summary, rules),
            Event::Unusable { target, why } => return self.unusable(target, why),
            _ => return Ok(()),
        };
        let mut suite = TestSuite::new("aggpay-conformance");
        suite.set_time(summary.duration);
        suite.add_property(("target", summary.target.as_str()));
        suite.add_property(("seed", summary.seed.to_string().as_str()));
        for r in *rules {
            let status = match r.outcome.status {
                Status::Passed => TestCaseStatus::success(),
                Status::Skipped | Status::NotRun => {
                    let mut s = TestCaseStatus::skipped();
                    if let Some(why) = &r.outcome.skip_reason {
                        s.set_message(why.as_str());
                    }
                    s
                }
                // Only transient failures: the rule could not be judged.
                Status::Inconclusive if r.undecided() => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                    let first = r
                        .outcome
                        .inconclusive
                        .first()
                        .map(|f| f.message.as_str())
                        .unwrap_or("inconclusive");
                    s.set_message(first);
                    s.set_type("inconclusive");
                    s
                }
                Status::Inconclusive => TestCaseStatus::success(),
                // An observation fails the suite only with --strict, a
                // known failure never.
                Status::Failed if r.failed_uncounted() => TestCaseStatus::success(),
                Status::Failed => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    let first = r
                        .outcome
                        .failures
                        .first()
                        .map(|f| f.message.as_str())
                        .unwrap_or("failed");
                    s.set_message(first);
                    s.set_type(r.rule.level.as_str());
                    // What the rule rests on first, then each failure.
                    let grounds = std::iter::once(format!("source: {}", r.rule.source))
                        .chain(r.grounds().iter().map(|q| format!("says: \"{q}\"")))
                        .collect::<Vec<_>>()
                        .join("\n");
                    let failures = r.outcome.failures.iter().zip(&r.marks).map(|(f, mark)| {
                        let mut lines = vec![f.message.clone()];
                        lines.extend(f.claim.map(|c| format!("breaks: {}", c.holds)));
                        lines.push(format!("fingerprint: {}", mark.fingerprint));
                        lines.extend(f.input.as_ref().map(|i| format!("minimal input: {i}")));
                        if let Some(ev) = &f.evidence {
                            lines.push(format!("request: {} {}", ev.method, ev.url));
                            lines.extend(ev.status.map(|s| format!("status: {s}")));
                            lines.push(format!("body: {}", ev.body));
                            lines.push(format!("reproduce: {}", ev.curl));
                        }
                        lines.join("\n")
                    });
                    let detail: Vec<String> = std::iter::once(grounds).chain(failures).collect();
                    s.set_description(detail.join("\n\n"));
                    s
                }
            };
            let mut case = TestCase::new(r.rule.id, status);
            case.set_classname(format!("aggpay.conformance.{}", r.rule.level.as_str()));
            case.set_time(r.duration);
            case.set_assertions(usize::try_from(r.outcome.cases).unwrap_or(usize::MAX));
            if r.failed_uncounted() {
                let notes: Vec<&str> = r
                    .outcome
                    .failures
                    .iter()
                    .map(|f| f.message.as_str())
                    .collect();
                let why = if r.is_known() {
                    "known failure (in the baseline)"
                } else {
                    "observation failed (not counted without --strict)"
                };
                case.set_system_out(format!("{why}: {}", notes.join("; ")));
            }
            suite.add_test_case(case);
            // What the rule could not judge: a skipped case of its own per
            // place, so that a CI page shows it beside the rule's pass.
            for n in &r.outcome.not_judged {
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!("not judged: {}", n.reason));
                let mut case = TestCase::new(format!("{} [{}]", r.rule.id, n.place), s);
                case.set_classname(format!("aggpay.conformance.{}", r.rule.level.as_str()));
                suite.add_test_case(case);
            }
        }
        self.write(suite)
    }
}
