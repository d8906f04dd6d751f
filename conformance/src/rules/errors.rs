//! errors.*: API.md's error table, checked for status, form, code and
//! message on every operation where each condition can occur, and on
//! every error answer of the run.

use aggpay_mock::Fault;
use serde_json::Value;

use super::observe::{Cases, Observed};
use super::support::Judge;
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{Domain, Form, OPS, Op, Role, error_case};
use crate::http::{Exchange, Request, show};

pub(crate) const ERROR_FORM: Claim = Claim {
    holds: "an error answer has its status's form (envelope for 401 and 500, bare for 400 and 404), its code and API.md's message",
    says: &[
        "Envelope form: { api_version (string), error: { code (string), message (string) } }. Seen with 401 and 500 responses.",
        "Bare form: { code (string), message (string) }. Seen with 400 and 404 responses.",
        "| 400 | error.bad_request | invalid request parameters (message says so) |",
        "| 404 | error.not_found | requested resource does not exist (message: requested resource not found) |",
    ],
};
pub(crate) const MALFORMED_TOKEN_REFUSED: Claim = Claim {
    holds: "a malformed batch token is refused as a bad request: a client error saying error.bad_request (400 as the table lists it; another number is observed by wire.bad-request-400)",
    says: &[
        "| 400 | error.bad_request | invalid request parameters (message says so) |",
        "HTTP status numbers for error.bad_request and error.internal_server_error responses: not shown.",
        "{settlement-batch-id} (sb_..., exactly 39 characters, must start with sb_)",
        "| settlement batch token | starts with sb_, exactly 39 characters |",
        "Errors: 400 error.bad_request, 401.",
    ],
};
pub(crate) const UNKNOWN_ID_IS_404: Claim = Claim {
    holds: "an id in the path that names nothing is answered 404",
    says: &[
        "| 404 | error.not_found | requested resource does not exist (message: requested resource not found) |",
        "Errors: 401 error.unauthorized_access, 404 error.not_found.",
    ],
};

pub(crate) const NO_SERVER_ERROR: Claim = Claim {
    holds: "a request, however odd, is answered, and never with a 5xx: a 500 is an internal failure, and bad parameters are a 400",
    says: &[
        "| 400 | error.bad_request | invalid request parameters (message says so) |",
        "| 500 | error.internal_server_error | internal failure; message carries an internal error description |",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "errors.bad-request",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Errors (bare form with 400); Settlements (400 error.bad_request); Limits (batch token shape)",
            claims: &[MALFORMED_TOKEN_REFUSED, ERROR_FORM],
            summary: "on every operation that lists 400, a malformed batch token (query or path) gets 400 in the bare form with error.bad_request and a message saying the parameters are invalid",
            faults: &[
                Fault::TextErrors,
                Fault::BadRequestEnvelope,
                Fault::LenientBatchToken,
                Fault::BadRequestMessage,
            ],
            judges: &[Subject::Error(on::bad_request)],
            run: Run::Check(bad_request),
        },
        Rule {
            id: "errors.not-found",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Errors (bare form with 404, message: requested resource not found); Payments and Settlements (404 error.not_found)",
            claims: &[UNKNOWN_ID_IS_404, ERROR_FORM],
            summary: "on every operation that lists 404 with an id in its path, an unknown id gets 404 in the bare form, code error.not_found, message \"requested resource not found\"",
            faults: &[
                Fault::UnknownBatchFound,
                Fault::ShortBatchToken,
                Fault::TextErrors,
                Fault::NotFoundEnvelope,
                Fault::NotFoundOtherMessage,
            ],
            judges: &[Subject::Error(on::unknown_path_id)],
            run: Run::Check(not_found),
        },
        Rule {
            id: "errors.shape",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Errors (envelope form with 401 and 500, bare form with 400 and 404; the codes; 404: requested resource not found; 401: a partner access key is required in the request header)",
            claims: &[ERROR_FORM],
            summary: "every 400, 401, 404 and 500 of the run, whatever the operation, has its form, its code and API.md's message",
            faults: &[
                Fault::RailMerchant404Message,
                Fault::TextErrors,
                Fault::BadRequestEnvelope,
                Fault::NotFoundEnvelope,
                Fault::UnauthorizedMessage,
                Fault::NotFoundOtherMessage,
                Fault::BadRequestMessage,
                Fault::UnauthorizedKeyMessage,
            ],
            judges: &[Subject::Error(on::every_error), Subject::ErrorTable],
            run: Run::EveryAnswer(observe, Cases::Answers),
        },
    ]
}

/// The one judge of "no answer, or a 5xx" ([`NO_SERVER_ERROR`]): the
/// failure when `e` has no answer or a server error, `what` naming the
/// request; `None` otherwise. Whatever else a rule expects of an odd
/// request, this comes first.
pub(crate) fn server_error(c: &Check<'_>, e: &Exchange, what: &str) -> Option<Finding> {
    let why = match e.status() {
        None => "no answer".to_owned(),
        Some(s) if s >= 500 => format!("answered {s}"),
        Some(_) => return None,
    };
    Some(c.fail(&NO_SERVER_ERROR, e, format!("{what}: {why}")))
}

/// Why `e`'s error body does not have its status's form, code and
/// message (API.md's error table), if it does not.
pub fn form(e: &Exchange) -> Option<String> {
    let case = error_case(e.status()?)?;
    let Some(json) = e.json.as_ref() else {
        return Some(format!("a {} whose body is not JSON", case.status));
    };
    let error = match case.form {
        Form::Envelope => {
            if !json.get("api_version").is_some_and(Value::is_string) || !json["error"].is_object()
            {
                return Some(format!(
                    "a {} not in the envelope form {{api_version, error: {{code, message}}}}",
                    case.status
                ));
            }
            &json["error"]
        }
        Form::Bare => {
            if json.get("error").is_some() || json.get("api_version").is_some() {
                return Some(format!(
                    "a {} in the envelope form, not the bare {{code, message}}",
                    case.status
                ));
            }
            json
        }
    };
    if error.get("code") != Some(&Value::from(case.code)) {
        return Some(format!(
            "a {} with code {}, not {}",
            case.status,
            show(error.get("code")),
            case.code
        ));
    }
    let Some(message) = error.get("message").and_then(Value::as_str) else {
        return Some(format!("a {} without a string message", case.status));
    };
    case.message
        .judge(message)
        .map(|why| format!("a {}: {why}", case.status))
}

fn observe(e: &Observed<'_>) -> Option<String> {
    form(e).map(|why| match e.op() {
        Some(op) => format!("{}: {why}", op.name),
        None => why,
    })
}

/// The bad-request probes: a malformed batch token where an operation
/// that lists 400 takes one, in the path and in the batch token filter
/// where the server reads it (API.md gives its name by purpose only).
fn bad_requests(c: &Check<'_>) -> Vec<(&'static Op, Request)> {
    let malformed = "sb_conformance_too_short";
    let mut out = Vec::new();
    for op in OPS
        .iter()
        .filter(|o| o.errors.contains(&400) && !o.is_write())
    {
        if op.path_id.is_some_and(|p| p.exact_len.is_some()) {
            out.push((op, Request::of(op, Some(malformed))));
        }
        for p in op.params {
            let read = c.ctx.model.list(op.id).is_none_or(|l| l.reads(p.wire));
            if p.domain == Domain::BatchToken && matches!(p.role, Role::Filter(_)) && read {
                out.push((op, Request::of(op, None).q(p.wire, malformed)));
            }
        }
    }
    out
}

/// `e` answered `status` (as `claim` holds), in its form; for 400, any
/// refusal as a bad request ([`Exchange::refused`]).
fn judge_error(
    c: &Check<'_>,
    claim: &'static Claim,
    op: &Op,
    e: &Exchange,
    status: u16,
) -> Result<(), super::Finding> {
    let answered = if status == 400 {
        e.refused()
    } else {
        e.status() == Some(status)
    };
    if !answered {
        return Err(c.fail(
            claim,
            e,
            format!(
                "{}: answered {} instead of {status}",
                op.name,
                e.status().map_or("nothing".into(), |s| s.to_string())
            ),
        ));
    }
    match form(e) {
        None => Ok(()),
        Some(why) => Err(c.fail(&ERROR_FORM, e, format!("{}: {why}", op.name))),
    }
}

fn bad_request(c: &Check<'_>) -> Outcome {
    let probes = bad_requests(c);
    let results = c.map(&probes, |(op, r)| {
        let e = c.send(r.clone());
        judge_error(c, &MALFORMED_TOKEN_REFUSED, op, &e, 400)
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

fn not_found(c: &Check<'_>) -> Outcome {
    // An id that names nothing, of the server's own shape: a known one
    // with its end changed within its alphabet. A made-up one could fail
    // a server that checks its own ids more strictly than API.md does.
    let probes: Vec<(&Op, Request)> = OPS
        .iter()
        .filter(|o| o.errors.contains(&404) && o.path_id.is_some() && !o.is_write())
        .filter_map(|op| {
            let id = super::forms::unknown_like(c.ctx.known_ids(op.id).last()?)?;
            Some((op, Request::of(op, Some(&id))))
        })
        .collect();
    if probes.is_empty() {
        return Outcome::skipped("no id of an operation that lists 404 is known");
    }
    let results = c.map(&probes, |(op, r)| {
        let e = c.send(r.clone());
        judge_error(c, &UNKNOWN_ID_IS_404, op, &e, 404)
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}
