//! errors.*: the two error forms API.md shows with 400 and 404.

use serde_json::Value;

use super::support::Judge;
use super::{Check, Level, Outcome, Rule};
use crate::http::{Exchange, Request, show};

/// A batch token of the right shape that names no batch.
pub const UNKNOWN_BATCH: &str = "sb_00000000-0000-4000-8000-c0f0a0c0e0d0";
/// A payment id of the right shape that names no payment.
pub const UNKNOWN_PAYMENT: &str = "pm_conformance0unknown0payment";
/// API.md Errors: the 404 message.
const NOT_FOUND_MESSAGE: &str = "requested resource not found";

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "errors.bad-request",
            level: Level::Required,
            source: "API.md Errors (bare form with 400); Settlements (400 error.bad_request)",
            summary: "a malformed batch token gets 400 in the bare form {code: error.bad_request, message}",
            faults: &[
                "bad-request-envelope",
                "text-errors",
                "batch-filter-ignored",
                "lenient-batch-token",
            ],
            check: bad_request,
            observe: None,
        },
        Rule {
            id: "errors.not-found",
            level: Level::Required,
            source: "API.md Errors (bare form with 404, message: requested resource not found); Payments and Settlements (404 error.not_found)",
            summary: "an unknown payment's charges and an unknown batch's transactions get 404 in the bare form, code error.not_found, message \"requested resource not found\"",
            faults: &[
                "not-found-envelope",
                "text-errors",
                "unknown-batch-found",
                "not-found-other-message",
            ],
            check: not_found,
            observe: None,
        },
    ]
}

/// Why `e` is not `status` in the bare form with `code`, if it is not.
pub fn bare(e: &Exchange, status: u16, code: &str) -> Option<String> {
    let json = e.json.as_ref();
    if e.status() != Some(status) {
        Some(format!(
            "answered {} instead of {status}",
            e.status().map_or("nothing".into(), |s| s.to_string())
        ))
    } else if json.is_none() {
        Some("the body is not JSON".to_owned())
    } else if json.and_then(|v| v.get("code")) != Some(&Value::from(code)) {
        Some(format!(
            "code is {} (bare form: a top-level code {code:?})",
            show(json.and_then(|v| v.get("code")))
        ))
    } else if !json
        .and_then(|v| v.get("message"))
        .is_some_and(Value::is_string)
    {
        Some("the bare form needs a string message".to_owned())
    } else {
        None
    }
}

fn bad_request(c: &Check<'_>) -> Outcome {
    let e = c.send(Request::get("/settlements/batches").q("batch_id", "sb_conformance_too_short"));
    let mut judge = Judge::default();
    let why = bare(&e, 400, "error.bad_request");
    judge.check(why.is_none(), || c.fail(&e, why.unwrap_or_default()));
    judge.outcome()
}

fn not_found(c: &Check<'_>) -> Outcome {
    let requests = [
        Request::get(format!("/payments/{UNKNOWN_PAYMENT}/charges")),
        Request::get(format!("/settlements/batches/{UNKNOWN_BATCH}/transactions")),
    ];
    let mut judge = Judge::default();
    for e in c.map(&requests, |r| c.send(r.clone())) {
        let why = bare(&e, 404, "error.not_found").or_else(|| {
            let message = e
                .json
                .as_ref()
                .and_then(|v| v["message"].as_str())
                .unwrap_or("");
            (!message.trim().eq_ignore_ascii_case(NOT_FOUND_MESSAGE))
                .then(|| format!("message {message:?}, not {NOT_FOUND_MESSAGE:?}"))
        });
        judge.check(why.is_none(), || c.fail(&e, why.unwrap_or_default()));
    }
    judge.outcome()
}
