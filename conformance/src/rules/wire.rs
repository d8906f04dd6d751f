//! Rules judged on every exchange of the run: envelope, headers, JSON; and
//! the observations of WIRE.md about them.

use aggpay::rules as text;

use super::support::{Judge, sample};
use super::{Failure, Level, Outcome, Rule};
use crate::ctx::Ctx;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "envelope.success",
            level: Level::Required,
            source: "API.md Conventions 3; Versioning 1",
            summary: "every operation sampled succeeds with 2xx, and every 2xx body is {api_version: \"v1\", data: {...}}",
            faults: &["wrong-api-version"],
            check: envelope,
        },
        Rule {
            id: "headers.content-length",
            level: Level::Required,
            source: "API.md Conventions 4",
            summary: "every response carries Content-Length, equal to the body's length",
            faults: &["chunked"],
            check: |ctx| from_log(ctx, "headers.content-length"),
        },
        Rule {
            id: "headers.date",
            level: Level::Required,
            source: "API.md Conventions 4",
            summary: "every response carries a Date header holding an HTTP date",
            faults: &["bad-date-header"],
            check: |ctx| from_log(ctx, "headers.date"),
        },
        Rule {
            id: "body.json",
            level: Level::Required,
            source: "API.md Conventions 2; Errors (both body shapes are JSON)",
            summary: "every response body, success or error, is JSON",
            faults: &["text-errors"],
            check: |ctx| from_log(ctx, "body.json"),
        },
        Rule {
            id: "wire.success-200",
            level: Level::Observation,
            source: "WIRE.md Status codes (success: 200 everywhere; API.md allows any 2xx)",
            summary: "success answers are 200",
            faults: &["success-201"],
            check: |ctx| from_log(ctx, "wire.success-200"),
        },
        Rule {
            id: "wire.content-type-json",
            level: Level::Observation,
            source: "common practice (JSON bodies labelled application/json)",
            summary: "every response is labelled Content-Type: application/json",
            faults: &["content-type-text"],
            check: |ctx| from_log(ctx, "wire.content-type-json"),
        },
        Rule {
            id: "wire.payout-shape",
            level: Level::Observation,
            source: "WIRE.md Cursor pagination (the reference's payout element)",
            summary: "payouts carry stxn_ tokens, sb_ batch tokens, paisa amounts and acct_ accounts, and the client decodes them",
            faults: &["payout-prefix"],
            check: payouts,
        },
    ]
}

/// The violations the exchange log collected for `rule`.
fn from_log(ctx: &Ctx, rule: &'static str) -> Outcome {
    let log = ctx.http.log();
    if log.answered == 0 {
        return Outcome::skipped("the server answered nothing");
    }
    let (violations, total) = log.of(rule);
    let mut failures: Vec<Failure> = violations
        .iter()
        .map(|v| Failure::at(ctx, &v.exchange, v.message.clone()))
        .collect();
    if total > failures.len() as u64
        && let Some(last) = failures.last_mut()
    {
        last.message
            .push_str(&format!(" ({} responses in all broke this rule)", total));
    }
    let cases = if rule == "envelope.success" || rule == "wire.success-200" {
        log.successes
    } else {
        log.answered
    };
    Outcome::judged(cases, failures)
}

fn envelope(ctx: &Ctx) -> Outcome {
    let mut outcome = from_log(ctx, "envelope.success");
    // Valid requests of the sampling must succeed.
    for (op, e) in &ctx.corpus {
        outcome.cases += 1;
        if !e.success() && outcome.failures.len() < 5 {
            outcome.failures.push(Failure::at(
                ctx,
                e,
                format!("{op}: a valid request did not succeed"),
            ));
        }
    }
    Outcome::judged(outcome.cases, outcome.failures)
}

fn payouts(ctx: &Ctx) -> Outcome {
    let e = match sample(ctx, "payouts") {
        Ok(e) => e,
        Err(why) => return Outcome::skipped(why),
    };
    let rows = e
        .data()
        .and_then(|d| d["settlement_transactions"].as_array())
        .cloned()
        .unwrap_or_default();
    if rows.is_empty() {
        return Outcome::skipped("the sampled batch has no payouts");
    }
    let mut judge = Judge::default();
    for p in &rows {
        let s = |f: &str| p[f].as_str().unwrap_or("");
        let amounts = [
            "gross_amount",
            "fee_amount",
            "net_amount",
            "sales_tax_on_fee_amount",
        ]
        .iter()
        .all(|f| text::is_paisa(s(f)));
        let ok = text::has_prefix(s("token"), "stxn_")
            && text::is_batch_token(s("settlement_batch_id"))
            && text::has_prefix(s("debitor_account_id"), "acct_")
            && text::has_prefix(s("creditor_account_id"), "acct_")
            && amounts
            && serde_json::from_value::<aggpay::SettlementPayout>(p.clone()).is_ok();
        judge.check(ok, || {
            Failure::at(
                ctx,
                e,
                format!("payout {} differs from the reference's shape", p["token"]),
            )
        });
    }
    judge.outcome()
}
