//! input.*: whatever a client sends, in every query parameter and path id
//! of every operation, the server answers without a 5xx, and a rejection
//! comes in the documented shape.

use aggpay_mock::Fault;
use proptest::prelude::*;

use super::support::Judge;
use super::{Check, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{Domain, OPS, Op, Param};
use crate::http::{Exchange, Request};
use crate::model::Picker;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "input.hostile",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Errors (400 error.bad_request bare, 404 error.not_found bare, 500 only for an internal failure); every operation's query and path parameters",
            claims: &[super::errors::NO_SERVER_ERROR, super::errors::ERROR_FORM],
            summary: "every query parameter and path id of every read, against a catalogue of hostile values (numbers beyond 64 bits, negative, fractional, empty, very long, non-ASCII, percent-encoded, repeated): never a 5xx; a 400 or 404 in the bare form with its code",
            faults: &[
                Fault::HugeNumber500,
                Fault::TextErrors,
                Fault::BadRequestEnvelope,
                Fault::NotFoundEnvelope,
                Fault::NotFoundOtherMessage,
                Fault::UnicodeQuery500,
                Fault::LongId500,
                Fault::BadRequestMessage,
                Fault::RailMerchant404Message,
            ],
            judges: &[
                Subject::PathId(on::path_id_not_rotated),
                Subject::Param(on::every_param),
                Subject::Error(|_, s| !matches!(s, 400 | 401 | 404)),
            ],
            run: Run::Check(hostile),
        },
        Rule {
            id: "input.arbitrary",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Errors (400 error.bad_request bare, 404 error.not_found bare, 500 only for an internal failure); every operation's query and path parameters",
            claims: &[super::errors::NO_SERVER_ERROR, super::errors::ERROR_FORM],
            summary: "generated values (non-ASCII, long, empty, boundary numbers, garbage) for every query parameter and path id never get a 5xx; a 400 or 404 comes in the bare form with its code",
            faults: &[
                Fault::UnicodeQuery500,
                Fault::TextErrors,
                Fault::BadRequestEnvelope,
                Fault::HugeNumber500,
                Fault::BadRequestMessage,
            ],
            judges: &[Subject::Param(on::every_param)],
            run: Run::Check(arbitrary),
        },
    ]
}

/// Numbers a parser may choke on.
const NUMBERS: &[&str] = &[
    "18446744073709551616",
    "-1",
    "1.5",
    "99999999999999999999999999",
    "9223372036854775808",
    "-9223372036854775809",
    "1e3",
    "",
    " 1",
    "+1",
    "0x10",
    "NaN",
    "\u{661}\u{662}",
];
/// Words and text a parser or a query may choke on.
const TEXTS: &[&str] = &[
    "ñandú—✓ 東京",
    "",
    "%zz",
    " ",
    "%",
    ",",
    "a,,b",
    "'",
    "\"<script>",
    "\u{0}",
    "\\",
    "../../etc/passwd",
    "null",
];

/// Values of a kind every parameter of it gets: the boundaries a parser
/// most often fails on (beyond 64 bits, very long, non-ASCII, empty).
const ALWAYS: usize = 2;
/// Further values of the kind's catalogue each parameter gets, seeded.
const DRAWN: usize = 1;

/// The hostile values of a parameter of `kind`: the first [`ALWAYS`] of
/// its catalogue, and [`DRAWN`] more drawn from the rest.
fn values_for(kind: Domain, pick: &mut Picker) -> Vec<String> {
    let all = catalogue(kind);
    let mut out: Vec<String> = all.iter().take(ALWAYS).cloned().collect();
    let rest: Vec<&String> = all.iter().skip(ALWAYS).collect();
    for _ in 0..DRAWN {
        if let Some(v) = pick.pick(&rest)
            && !out.contains(v)
        {
            out.push((*v).clone());
        }
    }
    out
}

/// The hostile values of a parameter of `kind`, the ones every parameter
/// gets first: the kind's catalogue and one very long value.
fn catalogue(kind: Domain) -> Vec<String> {
    let long = |prefix: &str| format!("{prefix}{}", "x".repeat(3_000));
    let mut out: Vec<String> = match kind {
        Domain::Int | Domain::Unix => NUMBERS.iter().map(|s| (*s).to_owned()).collect(),
        Domain::Bool => ["TRUE", "", "yes", "1", "truefalse"]
            .map(str::to_owned)
            .to_vec(),
        Domain::Choice(words) => {
            let mut v: Vec<String> = ["", "ÄSC"].map(str::to_owned).to_vec();
            v.extend(words.iter().map(|w| w.to_lowercase()));
            v.push("0".to_owned());
            v
        }
        Domain::Text => TEXTS.iter().map(|s| (*s).to_owned()).collect(),
        Domain::Token(prefix) => vec![
            format!("{prefix}é"),
            prefix.to_owned(),
            format!("{prefix}%2F.."),
            "sb_".to_owned(),
        ],
        Domain::BatchToken => vec![
            "sb_".to_owned(),
            format!("sb_{}é", "0".repeat(35)),
            format!("SB_{}", "0".repeat(36)),
        ],
    };
    out.insert(
        1,
        long(match kind {
            Domain::Token(p) => p,
            Domain::BatchToken => "sb_",
            _ => "",
        }),
    );
    out
}

/// Values an id in a path must survive.
fn path_values(prefix: &str) -> Vec<String> {
    vec![
        format!("{prefix}{}", "x".repeat(1_000)),
        format!("{prefix}é"),
        format!("{prefix}%00"),
        prefix.trim_end_matches('_').to_owned(),
    ]
}

/// Never a 5xx or no answer; 400 and 404 in the bare form; 401 (a server
/// may refuse odd input as unauthenticated) in the envelope form.
fn judge(c: &Check<'_>, e: &Exchange, what: &str) -> Result<(), Finding> {
    if let Some(broken) = super::errors::server_error(c, e, what) {
        return Err(broken);
    }
    let why = match e.status() {
        Some(400 | 401 | 404) => super::errors::form(e),
        _ => None,
    };
    match why {
        None => Ok(()),
        Some(why) => Err(c.fail(&super::errors::ERROR_FORM, e, format!("{what}: {why}"))),
    }
}

/// A read with every parameter legal but `param`, which gets `value`.
fn with(base: &Request, param: &Param, value: &str, twice: bool) -> Request {
    let mut r = base.clone();
    r.query.retain(|(k, _)| k != param.wire);
    r = r.q(param.wire, value);
    if twice {
        r = r.q(param.wire, value);
    }
    r
}

fn hostile(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<(String, Request)> = Vec::new();
    for op in OPS.iter().filter(|o| !o.is_write()) {
        let Some(base) = super::auth::request(c.ctx, op) else {
            continue;
        };
        let mut pick = Picker::new(c.ctx.options.seed, &format!("hostile {}", op.name));
        for param in op.params {
            for value in values_for(param.domain, &mut pick) {
                let what = format!(
                    "{} {}={}",
                    op.name,
                    param.wire,
                    aggpay_internal::text::excerpt(&value, 40)
                );
                cases.push((what, with(&base, param, &value, false)));
            }
        }
        // A legal value, repeated, in one parameter drawn of each
        // operation.
        if let Some(param) = pick.pick(op.params) {
            let legal = match param.domain {
                Domain::Choice(words) => words[pick.below(words.len())].to_owned(),
                Domain::Bool => "true".to_owned(),
                Domain::Int | Domain::Unix => "1".to_owned(),
                _ => "x".to_owned(),
            };
            cases.push((
                format!("{} {}={legal} twice", op.name, param.wire),
                with(&base, param, &legal, true),
            ));
        }
        if let Some(id) = op.path_id {
            for value in path_values(id.prefix) {
                let what = format!(
                    "{} path id {}",
                    op.name,
                    aggpay_internal::text::excerpt(&value, 40)
                );
                let mut r = base.clone();
                r.path = op.path_with(&value);
                cases.push((what, r));
            }
        }
    }
    let results = c.map(&cases, |(what, r)| {
        let e = c.send(r.clone());
        judge(c, &e, what)
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

/// Values a server must survive.
fn values() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        prop::sample::select(NUMBERS.iter().chain(TEXTS).copied().collect::<Vec<_>>())
            .prop_map(str::to_owned),
        "\\PC{1,40}",
        "[ -~]{1,60}",
        "[a-z0-9]{1000,3000}",
        "[\\u{80}-\\u{10ffff}]{1,20}",
    ]
}

fn arbitrary(c: &Check<'_>) -> Outcome {
    let ops: Vec<(&Op, Request)> = OPS
        .iter()
        .filter(|o| !o.is_write())
        .filter_map(|op| super::auth::request(c.ctx, op).map(|r| (op, r)))
        .collect();
    let strategy = (0..ops.len(), any::<prop::sample::Index>(), values(), 0..3u8);
    c.property(strategy, |(i, param, value, extra)| {
        let (op, base) = &ops[*i];
        let params = op.params;
        let request = if params.is_empty() || (*extra == 0 && op.path_id.is_some()) {
            // The generated value is the path id.
            let mut r = base.clone();
            if op.path_id.is_some() {
                r.path = op.path_with(value);
            }
            r
        } else {
            let p = &params[param.index(params.len())];
            let mut r = with(base, p, value, *extra == 1);
            if *extra == 2 {
                let other = &params[(param.index(params.len()) + 1) % params.len()];
                r = r.q(other.wire, value);
            }
            r
        };
        let e = c.send(request);
        judge(c, &e, op.name)
    })
}
