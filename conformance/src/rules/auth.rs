//! auth.*: every operation requires the key header; a missing, empty or
//! wrong key gets 401 in the envelope form with error.unauthorized_access
//! and a message saying a partner access key is required.

use aggpay_mock::Fault;
use proptest::prelude::*;

use super::support::Judge;
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject, on};
use crate::contract::{OPS, Op, OpId, Role, names};
use crate::ctx::Ctx;
use crate::http::{Auth, Exchange, KeyPlace, Request};

pub(crate) const UNAUTHORIZED: Claim = Claim {
    holds: "a request without a valid key is answered 401 in the envelope form, with error.unauthorized_access and a message saying a partner access key is required",
    says: &[
        "A request without a valid key receives 401 with error code error.unauthorized_access and a message saying that a partner access key is required in the request header.",
    ],
};
const HEADER_NAME_ANY_CASE: Claim = Claim {
    holds: "the key is read under its header name spelled in any case",
    says: &[
        "Every operation requires the header `X-PAY-AGGREGATOR-SECRET-KEY` carrying an aggregator access key secret",
        "RFC 9110 section 5.1: Field names are case-insensitive",
    ],
};
const HEADER_ONLY: Claim = Claim {
    holds: "the key is read from its header only: offered anywhere else it is no key, and the answer is 401",
    says: &[
        "It is an API-key scheme carried in a request header only.",
        "A request without a valid key receives 401 with error code error.unauthorized_access",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "auth.missing-key",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Authentication 1-2; Errors (401 envelope form)",
            claims: &[UNAUTHORIZED],
            summary: "a request without the key header gets 401 in the envelope form with error.unauthorized_access and a message about the key, on every operation",
            faults: &[
                Fault::NoAuth,
                Fault::TextErrors,
                Fault::UnauthorizedMessage,
                Fault::UnauthorizedKeyMessage,
            ],
            judges: &[
                Subject::KeyHeader(on::every_op),
                Subject::Error(on::unauthorized),
                Subject::Said(Said::JsonWithKey),
                Subject::Said(Said::KeyRequired),
            ],
            run: Run::Check(missing_key),
        },
        Rule {
            id: "auth.empty-key",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Authentication 1-2",
            claims: &[UNAUTHORIZED],
            summary: "an empty key gets 401 error.unauthorized_access, on every operation",
            faults: &[
                Fault::AcceptEmptyKey,
                Fault::TextErrors,
                Fault::UnauthorizedMessage,
                Fault::UnauthorizedKeyMessage,
            ],
            judges: &[
                Subject::KeyHeader(on::every_op),
                Subject::Error(on::unauthorized),
                Subject::Said(Said::KeyRequired),
            ],
            run: Run::Check(empty_key),
        },
        Rule {
            id: "auth.wrong-key",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Authentication 2",
            claims: &[UNAUTHORIZED],
            summary: "generated wrong keys get 401 error.unauthorized_access, on generated operations",
            faults: &[
                Fault::AcceptAnyKey,
                Fault::TextErrors,
                Fault::UnauthorizedMessage,
                Fault::UnauthorizedKeyMessage,
            ],
            judges: &[
                Subject::KeyHeader(on::every_op),
                Subject::Error(on::unauthorized),
                Subject::Said(Said::KeyRequired),
            ],
            run: Run::Check(wrong_key),
        },
        Rule {
            id: HEADER_CASE,
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Authentication 1 (the header X-PAY-AGGREGATOR-SECRET-KEY); RFC 9110 section 5.1 (field names are case-insensitive)",
            claims: &[HEADER_NAME_ANY_CASE],
            summary: "the valid key is taken whatever the spelling of the header's name (as API.md writes it, lower case, mixed case): every read answers the spellings alike",
            faults: &[Fault::KeyHeaderCaseSensitive],
            judges: &[
                Subject::KeyHeader(on::every_op),
                Subject::Said(Said::KeyHeader),
            ],
            run: Run::Check(header_case),
        },
        Rule {
            id: "auth.header-only",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Authentication 1: \"an API-key scheme carried in a request header only\"; 2 (a request without a valid key receives 401)",
            claims: &[HEADER_ONLY],
            summary: "the valid key offered anywhere but its header (query parameters api_key, key, secret_key or the header's name, Authorization, a cookie, X-API-Key) gets 401 in the envelope form, on every read",
            faults: &[
                Fault::KeyInQuery,
                Fault::NoAuth,
                Fault::TextErrors,
                Fault::UnauthorizedMessage,
                Fault::UnauthorizedKeyMessage,
            ],
            judges: &[
                Subject::KeyHeader(on::every_op),
                Subject::Said(Said::KeyHeader),
            ],
            run: Run::Check(header_only),
        },
        Rule {
            id: "auth.key-first",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Authentication 2",
            claims: &[UNAUTHORIZED],
            summary: "a request without the key header is answered 401 whatever else is wrong with it (a negative page size, a direction of no meaning, a malformed path id or body), on every operation: the key is judged before anything else",
            faults: &[
                Fault::ParamsBeforeKey,
                Fault::NoAuth,
                Fault::TextErrors,
                Fault::UnauthorizedMessage,
                Fault::UnauthorizedKeyMessage,
            ],
            judges: &[
                Subject::KeyHeader(on::every_op),
                Subject::Error(on::unauthorized),
            ],
            run: Run::Check(key_first),
        },
    ]
}

/// The id of the rule that judges the key header's spellings: the one
/// rule a run judges when the server refuses the spelling the HTTP client
/// sends.
pub const HEADER_CASE: &str = "auth.header-case";

/// Spellings of the key header's name, as API.md writes it first.
const SPELLINGS: [&str; 3] = [
    aggpay_internal::syntax::KEY_HEADER,
    "x-pay-aggregator-secret-key",
    "X-Pay-Aggregator-Secret-Key",
];

/// Every read with the key under each spelling: answered alike.
fn header_case(c: &Check<'_>) -> Outcome {
    let reads: Vec<Request> = operations(c.ctx)
        .into_iter()
        .filter(|r| r.method == "GET")
        .collect();
    let results = c.map(&reads, |request| {
        let answers: Vec<Exchange> = SPELLINGS
            .iter()
            .map(|s| c.send(request.clone().auth(Auth::Spelled(s))))
            .collect();
        let taken = |e: &Exchange| e.success();
        let Some(refused) = answers.iter().find(|e| !taken(e)) else {
            return Ok(());
        };
        let Some(accepted) = answers.iter().find(|e| taken(e)) else {
            // Refused under every spelling: another rule's business.
            return Ok(());
        };
        let spelled = |e: &Exchange| match e.request.auth {
            Auth::Spelled(s) => s,
            _ => "",
        };
        Err(c.fail(
            &HEADER_NAME_ANY_CASE,
            refused,
            format!(
                "{}: the key header spelled {} got {}, spelled {} got {}: header names are case-insensitive (RFC 9110 section 5.1); accepted: {}",
                refused.op().map_or(request.path.as_str(), |o| o.name),
                spelled(refused),
                refused.status().map_or("no answer".to_owned(), |s| s.to_string()),
                spelled(accepted),
                accepted.status().unwrap_or(0),
                c.ctx.http.curl(&accepted.request),
            ),
        ))
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

/// Where a client might put a key that API.md puts in its header only.
const ELSEWHERE: &[KeyPlace] = &[
    KeyPlace::Query("api_key"),
    KeyPlace::Query("key"),
    KeyPlace::Query("secret_key"),
    KeyPlace::Query("X-PAY-AGGREGATOR-SECRET-KEY"),
    KeyPlace::Header("Authorization", "Bearer "),
    KeyPlace::Header("Authorization", ""),
    KeyPlace::Header("X-API-Key", ""),
    KeyPlace::Cookie("X-PAY-AGGREGATOR-SECRET-KEY"),
];

/// A request of `op` with real inputs where the run knows them: every
/// operation of the table. The writes are probed only when allowed, and
/// even then with an id that names no key and a body that exports
/// nothing. Where the run knows no value, one is made up: a rule that
/// judges more than the key must take [`known_request`] instead.
pub fn request(ctx: &Ctx, op: &Op) -> Option<Request> {
    built(ctx, op).map(|(r, _)| r)
}

/// [`request`], only when every value in it is one the server showed or
/// the run was given: a value the harness made up may be refused for its
/// shape (a 400) by a server stricter than API.md, before anything else
/// is looked at.
pub fn known_request(ctx: &Ctx, op: &Op) -> Option<Request> {
    built(ctx, op).and_then(|(r, made_up)| (!made_up).then_some(r))
}

/// [`request`], and whether a value in it was made up.
fn built(ctx: &Ctx, op: &Op) -> Option<(Request, bool)> {
    let mut made_up = false;
    let mut known = |value: Option<String>, otherwise: &str| {
        value.unwrap_or_else(|| {
            made_up = true;
            otherwise.to_owned()
        })
    };
    let id = match op.id {
        OpId::Transactions => known(
            ctx.model
                .rows(OpId::Batches)
                .first()
                .and_then(|b| b["token"].as_str())
                .map(str::to_owned),
            &format!("sb_{}", "0".repeat(36)),
        ),
        OpId::Charges => known(ctx.inputs.payment_id.clone(), "pm_conformance"),
        OpId::RailMerchant => known(ctx.inputs.rail_merchant_id.clone(), "mer_conformance"),
        OpId::Alias => known(ctx.inputs.alias_id.clone(), "als_conformance"),
        // A rotation is probed with a key id that names no key.
        OpId::Rotate => known(None, "ak_conformance_probe"),
        _ => String::new(),
    };
    if op.is_write() && !ctx.options.allow_writes {
        return None;
    }
    let mut r = Request::of(op, op.path_id.map(|_| id.as_str()));
    // The lookups need their key to be more than a bad request.
    if let Some(lookup) = op.role(|r| matches!(r, Role::Lookup(_))) {
        let value = match (op.id, lookup.wire) {
            (OpId::AccountInfo, names::IBAN) => {
                known(ctx.inputs.iban.clone(), "PK00TEST0000000000000000")
            }
            _ => known(ctx.inputs.till_code.clone(), "0"),
        };
        if op.id == OpId::TitleFetch {
            r = r.q(names::ALIAS_TYPE, "TILL_CODE");
        }
        r = r.q(lookup.wire, value);
    }
    Some((r, made_up))
}

/// Every operation of the table, as [`request`] makes it.
pub fn operations(ctx: &Ctx) -> Vec<Request> {
    OPS.iter().filter_map(|op| request(ctx, op)).collect()
}

/// 401, envelope form, error.unauthorized_access, a message about the key.
pub fn expect_unauthorized(c: &Check<'_>, e: &Exchange) -> Result<(), Finding> {
    match unauthorized_why(e) {
        None => Ok(()),
        Some(why) => Err(c.fail(&UNAUTHORIZED, e, why)),
    }
}

/// Why `e` is not the documented 401, if it is not.
pub(super) fn unauthorized_why(e: &Exchange) -> Option<String> {
    match e.status() {
        Some(401) => super::errors::form(e),
        Some(s) => Some(format!("answered {s} instead of 401")),
        None => Some("no answer".to_owned()),
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

/// The valid key, anywhere but its header, on every read: 401.
fn header_only(c: &Check<'_>) -> Outcome {
    let cases: Vec<(Request, KeyPlace)> = operations(c.ctx)
        .into_iter()
        .filter(|r| r.method == "GET")
        .flat_map(|r| ELSEWHERE.iter().map(move |p| (r.clone(), *p)))
        .collect();
    let results = c.map(&cases, |(request, place)| {
        let e = c.send(request.clone().auth(Auth::Elsewhere(*place)));
        match unauthorized_why(&e) {
            None => Ok(()),
            Some(why) => Err(c.fail(
                &HEADER_ONLY,
                &e,
                format!("the key {} and no key header: {why}", place.shown()),
            )),
        }
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

/// Every operation without a key, and with what else it can carry wrong:
/// "a request without a valid key receives 401" holds whatever the rest
/// of the request is (with a valid key, which of several faults a server
/// reports first is its own choice).
fn key_first(c: &Check<'_>) -> Outcome {
    let cases: Vec<Request> = OPS
        .iter()
        .filter_map(|op| Some(broken(op, request(c.ctx, op)?)))
        .collect();
    let results = c.map(&cases, |request| {
        let e = c.send(request.clone().auth(Auth::Missing));
        expect_unauthorized(c, &e)
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

/// `r` of `op` made wrong in every way its operation has: a negative
/// page size, a direction of no meaning, a malformed path id, a body
/// that is not JSON; a negative page size where it has none of these.
fn broken(op: &Op, mut r: Request) -> Request {
    let mut wrong = false;
    for p in op.params {
        match p.role {
            Role::Limit { .. } => {
                r = r.q(p.wire, "-1");
                wrong = true;
            }
            Role::Direction => {
                r = r.q(p.wire, "sideways");
                wrong = true;
            }
            _ => {}
        }
    }
    if op.path_id.is_some() {
        r.path = op.path_with("not%20an%20id");
        wrong = true;
    }
    if !op.body.is_empty() {
        r.body = Some("{".to_owned());
        wrong = true;
    }
    if !wrong {
        r = r.q(names::LIMIT, "-1");
    }
    r
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
