//! The JSON report: one object, written when the run ends. Field names are
//! stable; docs/conformance.md documents them.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{Event, Reporter};
use crate::rules::Finding;

pub struct Json<'w> {
    out: Box<dyn Write + 'w>,
}

impl<'w> Json<'w> {
    pub fn new(out: Box<dyn Write + 'w>) -> Self {
        Self { out }
    }
}

impl Reporter for Json<'_> {
    fn on(&mut self, event: &Event<'_>) -> io::Result<()> {
        let (summary, rules) = match event {
            Event::Done { summary, rules } => (summary, rules),
            Event::Unusable { target, why } => {
                let report = json!({
                    "tool": "aggpay-conformance",
                    "version": env!("CARGO_PKG_VERSION"),
                    "target": target,
                    "error": why,
                    "exit_code": crate::cli::EXIT_UNUSABLE,
                    "rules": [],
                });
                serde_json::to_writer_pretty(&mut self.out, &report)?;
                writeln!(self.out)?;
                return self.out.flush();
            }
            _ => return Ok(()),
        };
        let rules: Vec<Value> = rules
            .iter()
            .map(|r| {
                json!({
                    "id": r.rule.id,
                    "level": r.rule.level.as_str(),
                    "status": r.outcome.status.as_str(),
                    "known": r.is_known(),
                    "source": r.rule.source,
                    "says": r.rule.says(),
                    "claims": r.rule.claims.iter().map(|c| json!({"holds": c.holds, "says": c.says})).collect::<Vec<_>>(),
                    "summary": r.rule.summary,
                    "cases": r.outcome.cases,
                    "duration_ms": r.duration.as_millis() as u64,
                    "skip_reason": r.outcome.skip_reason,
                    "faults": r.rule.faults.iter().map(|f| f.name()).collect::<Vec<_>>(),
                    "places": r.outcome.places.keys().map(ToString::to_string).collect::<Vec<_>>(),
                    "failed_places": r.outcome.places.iter().filter(|(_, failed)| **failed).map(|(p, _)| p.to_string()).collect::<Vec<_>>(),
                    "not_judged": r.outcome.not_judged.iter().map(|n| json!({"place": n.place.to_string(), "reason": n.reason})).collect::<Vec<_>>(),
                    "inconclusive": r.outcome.inconclusive.iter().map(|f| {
                        failure(f)
                    }).collect::<Vec<_>>(),
                    "failures": r.outcome.failures.iter().zip(&r.marks).map(|(f, mark)| {
                        let mut out = failure(f);
                        out["fingerprint"] = json!(mark.fingerprint);
                        out["known"] = json!(mark.known);
                        out
                    }).collect::<Vec<_>>(),
                })
            })
            .collect();
        let report = json!({
            "tool": "aggpay-conformance",
            "version": env!("CARGO_PKG_VERSION"),
            "target": summary.target,
            "seed": summary.seed,
            "cases": summary.cases,
            "strict": summary.strict,
            "jobs": summary.jobs,
            "summary": {
                "passed": summary.passed,
                "failed": summary.failed,
                "known": summary.known,
                "skipped": summary.skipped,
                "not_run": summary.not_run,
                "not_judged": summary.not_judged,
                "inconclusive": summary.inconclusive,
                "required_inconclusive": summary.required_inconclusive,
                "required_failed": summary.required_failed,
                "observations_failed": summary.observations_failed,
                "fixed": summary.fixed,
                "budget_spent": summary.budget_spent,
                "requests": summary.requests,
                "retries": summary.retries,
                "duration_ms": summary.duration.as_millis() as u64,
            },
            "error": null,
            "exit_code": summary.exit_code,
            "rules": rules,
        });
        serde_json::to_writer_pretty(&mut self.out, &report)?;
        writeln!(self.out)?;
        self.out.flush()
    }
}

/// A failure and its evidence, as JSON.
fn failure(f: &Finding) -> Value {
    let ev = f.evidence.as_deref();
    json!({
        "message": f.message,
        "breaks": f.claim.map(|c| c.holds),
        "input": f.input,
        "method": ev.map(|e| &e.method),
        "url": ev.map(|e| &e.url),
        "status": ev.and_then(|e| e.status),
        "body": ev.map(|e| &e.body),
        "curl": ev.map(|e| &e.curl),
    })
}
