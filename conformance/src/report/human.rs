//! The human report: a line per rule as it finishes, then a table and the
//! failures in detail.

use std::io::{self, Write};

use super::{Event, Reporter, RuleReport};
use crate::rules::{Level, Status};

pub struct Human<'w> {
    out: Box<dyn Write + 'w>,
}

impl<'w> Human<'w> {
    pub fn new(out: Box<dyn Write + 'w>) -> Self {
        Self { out }
    }

    fn verdict(r: &RuleReport) -> &'static str {
        match (r.outcome.status, r.level) {
            (Status::Passed, _) => "PASS",
            (Status::Failed, Level::Required) => "FAIL",
            (Status::Failed, Level::Observation) => "WARN",
            (Status::Skipped, _) => "SKIP",
        }
    }
}

impl Reporter for Human<'_> {
    fn on(&mut self, event: &Event<'_>) -> io::Result<()> {
        let out = &mut self.out;
        match event {
            Event::Started {
                target,
                seed,
                cases,
                rules,
                strict,
            } => {
                writeln!(out, "aggpay-conformance {}", env!("CARGO_PKG_VERSION"))?;
                writeln!(out, "target: {target}")?;
                writeln!(
                    out,
                    "seed: {seed}, cases per property: {cases}, rules: {rules}{}",
                    if *strict { ", strict" } else { "" }
                )?;
                writeln!(out)?;
            }
            Event::Rule(r) => {
                let extra = match (&r.outcome.skip_reason, r.outcome.status) {
                    (Some(why), _) => format!(" ({why})"),
                    (None, Status::Failed) => format!(
                        " ({} failure{})",
                        r.outcome.failures.len(),
                        if r.outcome.failures.len() == 1 {
                            ""
                        } else {
                            "s"
                        }
                    ),
                    _ => String::new(),
                };
                writeln!(
                    out,
                    "{} {:<30} {:>6} cases {:>7.2}s{extra}",
                    Self::verdict(r),
                    r.id,
                    r.outcome.cases,
                    r.duration.as_secs_f64()
                )?;
                out.flush()?;
            }
            Event::Done { summary, rules } => {
                writeln!(out)?;
                writeln!(
                    out,
                    "{:<30} {:<11} {:<8} {:>8}",
                    "rule", "level", "result", "cases"
                )?;
                writeln!(out, "{}", "-".repeat(60))?;
                for r in *rules {
                    writeln!(
                        out,
                        "{:<30} {:<11} {:<8} {:>8}",
                        r.id,
                        r.level.as_str(),
                        r.outcome.status.as_str(),
                        r.outcome.cases
                    )?;
                }
                let failed: Vec<&RuleReport> = rules
                    .iter()
                    .filter(|r| r.outcome.status == Status::Failed)
                    .collect();
                if !failed.is_empty() {
                    writeln!(out, "\nFailures\n========")?;
                }
                for r in failed {
                    writeln!(out, "\n{} [{}] {}", r.id, r.level.as_str(), r.summary)?;
                    writeln!(out, "  source: {}", r.source)?;
                    for f in &r.outcome.failures {
                        writeln!(out, "  - {}", f.message)?;
                        if let Some(input) = &f.input {
                            writeln!(out, "    minimal input: {input}")?;
                        }
                        if let Some(ev) = &f.evidence {
                            writeln!(out, "    request: {} {}", ev.method, ev.url)?;
                            if let Some(s) = ev.status {
                                writeln!(out, "    status: {s}")?;
                            }
                            if !ev.body.is_empty() {
                                writeln!(out, "    body: {}", ev.body)?;
                            }
                            writeln!(out, "    reproduce: {}", ev.curl)?;
                        }
                    }
                }
                writeln!(
                    out,
                    "\n{} passed, {} failed, {} skipped ({} required failed, {} observations failed); {} requests in {:.2}s; seed {}",
                    summary.passed,
                    summary.failed,
                    summary.skipped,
                    summary.required_failed,
                    summary.observations_failed,
                    summary.requests,
                    summary.duration.as_secs_f64(),
                    summary.seed
                )?;
                let verdict = match summary.exit_code {
                    0 => "conforms: every required rule passed",
                    _ => "does not conform",
                };
                writeln!(
                    out,
                    "{verdict} (exit {}); rerun with --seed {} to repeat these cases",
                    summary.exit_code, summary.seed
                )?;
                out.flush()?;
            }
        }
        Ok(())
    }
}
