//! Authentication and error shapes.

use proptest::prelude::*;
use serde_json::Value;

use super::support::{Judge, property};
use super::{Failure, Level, Outcome, Rule};
use crate::ctx::Ctx;
use crate::http::{Auth, Exchange, Request, encode, show};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "auth.missing-key",
            level: Level::Required,
            source: "API.md Authentication 1-2; Errors (401 envelope form)",
            summary: "a request without the key header gets 401 in the envelope form with error.unauthorized_access, on every operation",
            faults: &["no-auth"],
            check: missing_key,
        },
        Rule {
            id: "auth.empty-key",
            level: Level::Required,
            source: "API.md Authentication 1-2",
            summary: "an empty key gets 401 error.unauthorized_access, on every operation",
            faults: &["accept-empty-key"],
            check: empty_key,
        },
        Rule {
            id: "auth.wrong-key",
            level: Level::Required,
            source: "API.md Authentication 2",
            summary: "generated wrong keys get 401 error.unauthorized_access, on generated operations",
            faults: &["accept-any-key"],
            check: wrong_key,
        },
        Rule {
            id: "errors.bad-request",
            level: Level::Required,
            source: "API.md Errors (bare form with 400); Settlements (400 error.bad_request)",
            summary: "a malformed batch token gets 400 in the bare form {code: error.bad_request, message}",
            faults: &["bad-request-envelope", "text-errors"],
            check: bad_request,
        },
        Rule {
            id: "errors.not-found",
            level: Level::Required,
            source: "API.md Errors (bare form with 404); Payments (404 error.not_found)",
            summary: "an unknown payment's charges get 404 in the bare form {code: error.not_found, message}",
            faults: &["not-found-envelope", "text-errors"],
            check: not_found,
        },
    ]
}

/// Every operation, with inputs that need no key to be refused.
fn operations(ctx: &Ctx) -> Vec<Request> {
    let batch = ctx
        .found
        .batches
        .first()
        .cloned()
        .unwrap_or_else(|| format!("sb_{}", "0".repeat(36)));
    let payment = ctx
        .inputs
        .payment_id
        .clone()
        .unwrap_or_else(|| "pm_conformance".into());
    let rail = ctx
        .inputs
        .rail_merchant_id
        .clone()
        .unwrap_or_else(|| "mer_conformance".into());
    let alias = ctx
        .inputs
        .alias_id
        .clone()
        .unwrap_or_else(|| "als_conformance".into());
    let mut ops = vec![
        Request::get(""),
        Request::get("/keys"),
        Request::get("/merchants"),
        Request::get("/rail-merchants"),
        Request::get(format!("/rail-merchants/{}", encode(&rail))),
        Request::get("/qrs"),
        Request::get(format!("/payments/{}/charges", encode(&payment))),
        Request::get("/refunds"),
        Request::get("/settlements/batches"),
        Request::get(format!(
            "/settlements/batches/{}/transactions",
            encode(&batch)
        )),
        Request::get("/account-info").q(
            "iban",
            ctx.inputs
                .iban
                .clone()
                .unwrap_or_else(|| "PK00TEST0000000000000000".into()),
        ),
        Request::get("/title-fetch/alias")
            .q("alias_type", "TILL_CODE")
            .q(
                "alias_value",
                ctx.inputs.till_code.clone().unwrap_or_else(|| "0".into()),
            ),
        Request::get(format!("/alias/{}", encode(&alias))),
        Request::get("/ledger/accounts"),
        Request::get("/webhooks"),
    ];
    // Writes are probed only when allowed, and even then with an id that
    // names no key and a body that exports nothing.
    if ctx.options.allow_writes {
        ops.push(Request {
            method: "PUT",
            ..Request::get("/keys/ak_conformance_probe/rotate")
        });
        ops.push(Request {
            method: "POST",
            body: Some("{}".into()),
            ..Request::get("/settlements/report-exports")
        });
    }
    ops
}

/// 401, envelope form, error.unauthorized_access.
fn expect_unauthorized(ctx: &Ctx, e: &Exchange) -> Result<(), Failure> {
    let why = match (e.status(), &e.json) {
        (Some(401), Some(v)) => {
            let code = v.pointer("/error/code");
            if !v.get("api_version").is_some_and(Value::is_string) {
                Some("401 without the envelope's api_version".to_owned())
            } else if code != Some(&Value::from("error.unauthorized_access")) {
                Some(format!("401 with error.code {}", show(code)))
            } else if !v.pointer("/error/message").is_some_and(Value::is_string) {
                Some("401 without error.message".to_owned())
            } else {
                None
            }
        }
        (Some(401), None) => Some("401 with a body that is not JSON".to_owned()),
        (Some(s), _) => Some(format!("answered {s} instead of 401")),
        (None, _) => Some("no answer".to_owned()),
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Failure::at(ctx, e, why)),
    }
}

fn every_operation(ctx: &Ctx, auth: Auth) -> Outcome {
    let mut judge = Judge::default();
    for request in operations(ctx) {
        let e = ctx.http.send(request.auth(auth.clone()));
        judge.case();
        if let Err(f) = expect_unauthorized(ctx, &e) {
            judge.fail(f);
        }
    }
    judge.outcome()
}

fn missing_key(ctx: &Ctx) -> Outcome {
    every_operation(ctx, Auth::Missing)
}

fn empty_key(ctx: &Ctx) -> Outcome {
    every_operation(ctx, Auth::Other(String::new()))
}

fn wrong_key(ctx: &Ctx) -> Outcome {
    let ops = operations(ctx);
    let n = ops.len();
    let keys = prop_oneof![
        "[A-Za-z0-9_-]{1,64}",
        "aggsk_[0-9a-f]{40}",
        "[ -~]{1,80}".prop_filter("header-safe", |s| !s.trim().is_empty() && s.trim() == s),
    ];
    property(ctx, "auth.wrong-key", (0..n, keys), |(i, key)| {
        if ctx.http.key_matches(key) {
            return Ok(());
        }
        let e = ctx
            .http
            .send(ops[*i].clone().auth(Auth::Other(key.clone())));
        expect_unauthorized(ctx, &e)
    })
}

fn bare(ctx: &Ctx, e: &Exchange, status: u16, code: &str) -> Outcome {
    let mut judge = Judge::default();
    let json = e.json.as_ref();
    let why = if e.status() != Some(status) {
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
    };
    judge.check(why.is_none(), || {
        Failure::at(ctx, e, why.unwrap_or_default())
    });
    judge.outcome()
}

fn bad_request(ctx: &Ctx) -> Outcome {
    let e = ctx
        .http
        .send(Request::get("/settlements/batches").q("batch_id", "sb_conformance_too_short"));
    bare(ctx, &e, 400, "error.bad_request")
}

fn not_found(ctx: &Ctx) -> Outcome {
    let e = ctx.http.send(Request::get(
        "/payments/pm_conformance0unknown0payment/charges",
    ));
    bare(ctx, &e, 404, "error.not_found")
}
