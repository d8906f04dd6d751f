//! auth.*: every operation requires the key header; a missing, empty or
//! wrong key gets 401 in the envelope form with error.unauthorized_access
//! and a message about the key.

use proptest::prelude::*;
use serde_json::Value;

use super::support::Judge;
use super::{Check, Failure, Level, Outcome, Rule};
use crate::ctx::Ctx;
use crate::http::{Auth, Exchange, Request, encode, show};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "auth.missing-key",
            level: Level::Required,
            source: "API.md Authentication 1-2; Errors (401 envelope form)",
            summary: "a request without the key header gets 401 in the envelope form with error.unauthorized_access and a message about the key, on every operation",
            faults: &["no-auth", "unauthorized-message", "text-errors"],
            check: missing_key,
            observe: None,
        },
        Rule {
            id: "auth.empty-key",
            level: Level::Required,
            source: "API.md Authentication 1-2",
            summary: "an empty key gets 401 error.unauthorized_access, on every operation",
            faults: &["accept-empty-key", "unauthorized-message", "text-errors"],
            check: empty_key,
            observe: None,
        },
        Rule {
            id: "auth.wrong-key",
            level: Level::Required,
            source: "API.md Authentication 2",
            summary: "generated wrong keys get 401 error.unauthorized_access, on generated operations",
            faults: &["accept-any-key", "unauthorized-message", "text-errors"],
            check: wrong_key,
            observe: None,
        },
    ]
}

/// Every operation, with inputs that need no key to be refused. The
/// writes are probed only when allowed, and even then with an id that
/// names no key and a body that exports nothing.
pub fn operations(ctx: &Ctx) -> Vec<Request> {
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
    if ctx.options.allow_writes {
        ops.push(Request::put("/keys/ak_conformance_probe/rotate"));
        ops.push(Request::post("/settlements/report-exports", "{}"));
    }
    ops
}

/// 401, envelope form, error.unauthorized_access, a message about the key.
pub fn expect_unauthorized(c: &Check<'_>, e: &Exchange) -> Result<(), Failure> {
    let why = match (e.status(), &e.json) {
        (Some(401), Some(v)) => {
            let code = v.pointer("/error/code");
            let message = v.pointer("/error/message").and_then(Value::as_str);
            if !v.get("api_version").is_some_and(Value::is_string) {
                Some("401 without the envelope's api_version".to_owned())
            } else if code != Some(&Value::from("error.unauthorized_access")) {
                Some(format!("401 with error.code {}", show(code)))
            } else if !message.is_some_and(|m| m.to_ascii_lowercase().contains("key")) {
                Some(format!(
                    "401 whose error.message {} does not say a key is required",
                    show(v.pointer("/error/message"))
                ))
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
        Some(why) => Err(c.fail(e, why)),
    }
}

fn every_operation(c: &Check<'_>, auth: Auth) -> Outcome {
    let ops = operations(c.ctx);
    let results = c.map(&ops, |request| {
        let e = c.send(request.clone().auth(auth.clone()));
        expect_unauthorized(c, &e)
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

fn missing_key(c: &Check<'_>) -> Outcome {
    every_operation(c, Auth::Missing)
}

fn empty_key(c: &Check<'_>) -> Outcome {
    every_operation(c, Auth::Probe(String::new()))
}

fn wrong_key(c: &Check<'_>) -> Outcome {
    let ops = operations(c.ctx);
    let n = ops.len();
    let keys = prop_oneof![
        "[A-Za-z0-9_-]{1,64}",
        "aggsk_[0-9a-f]{40}",
        "[ -~]{1,80}".prop_filter("header-safe", |s| !s.trim().is_empty() && s.trim() == s),
    ];
    c.property((0..n, keys), |(i, key)| {
        if c.ctx.http.key_matches(key) {
            return Ok(());
        }
        let e = c.send(ops[*i].clone().auth(Auth::Probe(key.clone())));
        expect_unauthorized(c, &e)
    })
}
