//! The human report: a line per rule as it finishes, then a table, the
//! failures in detail, and the baseline's news.

use std::io::{self, Write};

use super::{Event, Mark, Reporter, RuleReport, Summary};
use crate::rules::{Finding, Status};

pub struct Human<'w> {
    out: Box<dyn Write + 'w>,
}

impl<'w> Human<'w> {
    pub fn new(out: Box<dyn Write + 'w>) -> Self {
        Self { out }
    }

    fn failures(out: &mut dyn Write, title: &str, rules: &[&RuleReport]) -> io::Result<()> {
        Self::evidence(out, title, rules, |r| {
            r.outcome
                .failures
                .iter()
                .zip(r.marks.iter().map(Some))
                .collect()
        })
    }

    fn evidence(
        out: &mut dyn Write,
        title: &str,
        rules: &[&RuleReport],
        items: impl Fn(&RuleReport) -> Vec<(&Finding, Option<&Mark>)>,
    ) -> io::Result<()> {
        if rules.is_empty() {
            return Ok(());
        }
        writeln!(out, "\n{title}\n{}", "=".repeat(title.len()))?;
        for r in rules {
            writeln!(
                out,
                "\n{} [{}] {}",
                r.rule.id,
                r.rule.level.as_str(),
                r.rule.summary
            )?;
            writeln!(out, "  source: {}", r.rule.source)?;
            for quote in r.grounds() {
                writeln!(out, "  says: \"{quote}\"")?;
            }
            for (f, mark) in items(r) {
                let known = if mark.is_some_and(|m| m.known) {
                    " (known)"
                } else {
                    ""
                };
                writeln!(out, "  - {}{known}", f.message)?;
                if let Some(claim) = f.claim {
                    writeln!(out, "    breaks: {}", claim.holds)?;
                }
                if let Some(mark) = mark {
                    writeln!(out, "    fingerprint: {}", mark.fingerprint)?;
                }
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
        Ok(())
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
            } => Self::started(out, target, *seed, *cases, *rules, *strict),
            Event::Rule(r) => Self::rule(out, r),
            Event::Done { summary, rules } => {
                Self::table(out, summary, rules)?;
                Self::totals(out, summary)
            }
            // Said on stderr, where a person reads why a run stopped.
            Event::Unusable { .. } => Ok(()),
        }
    }
}

impl Human<'_> {
    fn started(
        out: &mut dyn Write,
        target: &str,
        seed: u64,
        cases: u32,
        rules: usize,
        strict: bool,
    ) -> io::Result<()> {
        writeln!(out, "aggpay-conformance {}", env!("CARGO_PKG_VERSION"))?;
        writeln!(out, "target: {target}")?;
        writeln!(
            out,
            "seed: {seed}, cases per property: {cases}, rules: {rules}{}",
            if strict { ", strict" } else { "" }
        )?;
        writeln!(out)?;

        Ok(())
    }

    /// One line for a rule as it is done.
    fn rule(out: &mut dyn Write, r: &RuleReport) -> io::Result<()> {
        let extra = match (&r.outcome.skip_reason, r.outcome.status) {
            (Some(why), _) => format!(" ({why})"),
            (None, Status::Inconclusive) => {
                format!(" ({} transient)", r.outcome.inconclusive.len())
            }
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
        let extra = match r.outcome.not_judged.len() {
            0 => extra,
            1 => format!("{extra} (1 place not judged)"),
            n => format!("{extra} ({n} places not judged)"),
        };
        writeln!(
            out,
            "{:<6} {:<30} {:>6} cases {:>7.2}s{extra}",
            r.verdict(),
            r.rule.id,
            r.outcome.cases,
            r.duration.as_secs_f64()
        )?;
        out.flush()?;

        Ok(())
    }

    /// The table of every rule, then the failures and what did not run.
    fn table(out: &mut dyn Write, summary: &Summary, rules: &[RuleReport]) -> io::Result<()> {
        writeln!(out)?;
        writeln!(
            out,
            "{:<30} {:<11} {:<12} {:>8}",
            "rule", "level", "result", "cases"
        )?;
        writeln!(out, "{}", "-".repeat(64))?;
        for r in rules {
            let result = if r.is_known() {
                "known"
            } else {
                r.outcome.status.as_str()
            };
            writeln!(
                out,
                "{:<30} {:<11} {:<12} {:>8}",
                r.rule.id,
                r.rule.level.as_str(),
                result,
                r.outcome.cases
            )?;
        }
        let new: Vec<&RuleReport> = rules.iter().filter(|r| r.is_new_failure()).collect();
        let known: Vec<&RuleReport> = rules.iter().filter(|r| r.is_known()).collect();
        Self::failures(out, "Failures", &new)?;
        Self::failures(out, "Known failures (in the baseline)", &known)?;
        let unsure: Vec<&RuleReport> = rules
            .iter()
            .filter(|r| r.outcome.status == Status::Inconclusive)
            .collect();
        Self::evidence(
            out,
            "Inconclusive (only transient failures: 429, 502, 503, 504, resets, timeouts)",
            &unsure,
            |r| r.outcome.inconclusive.iter().map(|f| (f, None)).collect(),
        )?;
        let not_judged = super::not_judged(rules);
        if !not_judged.is_empty() {
            writeln!(
                out,
                "\nNot judged (a pass says nothing of these)\n========================================="
            )?;
            for r in not_judged {
                writeln!(out, "{}", r.rule.id)?;
                for n in &r.outcome.not_judged {
                    writeln!(out, "  - {}: {}", n.place, n.reason)?;
                }
            }
        }
        if !summary.fixed.is_empty() {
            writeln!(out, "\nFixed since the baseline\n========================")?;
            for k in &summary.fixed {
                writeln!(out, "  - {} {}: {}", k.rule, k.fingerprint, k.message)?;
            }
        }
        let not_run: Vec<&str> = rules
            .iter()
            .filter(|r| r.outcome.status == Status::NotRun)
            .map(|r| r.rule.id)
            .collect();
        if !not_run.is_empty() {
            writeln!(
                out,
                "\nNot run: the run budget (--max-duration) ran out first: {}",
                not_run.join(", ")
            )?;
        }
        Ok(())
    }

    /// The totals and the verdict.
    fn totals(out: &mut dyn Write, summary: &Summary) -> io::Result<()> {
        let baseline = if summary.baseline {
            format!(", {} known, {} fixed", summary.known, summary.fixed.len())
        } else {
            String::new()
        };
        writeln!(
            out,
            "\n{} passed, {} failed, {} inconclusive, {} skipped, {} not run, {} not judged ({} required failed, {} observations failed{baseline}); {} requests ({} retries) in {:.2}s with {} jobs; seed {}",
            summary.passed,
            summary.failed,
            summary.inconclusive,
            summary.skipped,
            summary.not_run,
            places(summary.not_judged),
            summary.required_failed,
            summary.observations_failed,
            summary.requests,
            summary.retries,
            summary.duration.as_secs_f64(),
            summary.jobs,
            summary.seed
        )?;
        let verdict = match (summary.exit_code, summary.budget_spent) {
            (1, _) => "does not conform",
            (_, true) => "incomplete: the run budget ran out",
            (0, _) if summary.not_judged > 0 => {
                "conforms as far as judged: every required rule passed, and some places could not be judged (listed above)"
            }
            (0, _) => "conforms: every required rule passed",
            _ => {
                "inconclusive: a required rule met only transient failures (429, 5xx gateways, resets, timeouts)"
            }
        };
        writeln!(
            out,
            "{verdict} (exit {}); rerun with --seed {} to repeat these cases",
            summary.exit_code, summary.seed
        )?;
        out.flush()?;
        Ok(())
    }
}

/// `1 place`, `3 places`.
fn places(n: usize) -> String {
    if n == 1 {
        "1 place".to_owned()
    } else {
        format!("{n} places")
    }
}
