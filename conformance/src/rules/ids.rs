//! ids.*: identifiers carry their prefixes and shapes (in every answer),
//! a read answers for the id it was asked and shows the record as its list
//! does (several known ids, not only the first), and an unknown or oddly
//! long id never gets another record.

use aggpay_internal::syntax;
use aggpay_mock::Fault;
use serde_json::Value;

use super::observe::{Cases, Observed, first_of, rows_of, strings};
use super::support::Judge;
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject, on};
use crate::contract::{FieldKind, OPS, Op, OpId};
use crate::http::{Exchange, Request, encode, show};
use crate::model::expect::differs;
use crate::model::path_id;

pub(crate) const ANSWERS_FOR_ID: Claim = Claim {
    holds: "a read with an id in its path answers for that id",
    says: &[
        "**GET /v1/aggregators/{aggregator-id}/rail-merchants/{rail-merchant-id}** - returns `data`: RailMerchant.",
        "**GET /v1/aggregators/{aggregator-id}/alias/{alias-id}** - returns `data`: Alias.",
        "| payment_id | string | payment the charges apply to |",
    ],
};
const READ_IS_LISTED: Claim = Claim {
    holds: "a rail merchant read alone is the record its list shows",
    says: &[
        "### RailMerchant (`data` of read; element of `data.merchants` in the rail-merchant list)",
    ],
};
const READ_ANSWERED: Claim = Claim {
    holds: "a read of a known id is answered",
    says: &[
        "**GET /v1/aggregators/{aggregator-id}/rail-merchants/{rail-merchant-id}** - returns `data`: RailMerchant.",
        "**GET /v1/aggregators/{aggregator-id}/alias/{alias-id}** - returns `data`: Alias.",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "ids.prefixes",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 1 and the resource tables",
            claims: &[Claim {
                holds: "an identifier carries its type prefix",
                says: &["Identifiers are strings with a type prefix."],
            }],
            summary: "every identifier field carries its type prefix, in every record of every answer",
            faults: &[Fault::WrongTxnPrefix, Fault::DynamicQrPrefix],
            judges: &[
                Subject::Field(|k| matches!(k, FieldKind::Prefix(_) | FieldKind::PrefixOrEmpty(_))),
                Subject::Said(Said::Prefixes),
            ],
            run: Run::EveryAnswer(prefixes, Cases::Successes),
        },
        Rule {
            id: "ids.numeric",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 2; tables (numeric string fields)",
            claims: &[Claim {
                holds: "a numeric id or numeric string field is a decimal digit string",
                says: &[
                    "Most records carry a numeric `id` serialized as a string, and a prefixed `token`.",
                ],
            }],
            summary: "numeric ids and numeric string fields are decimal digit strings, nested records included",
            faults: &[Fault::AliasRecordIdBad],
            judges: &[
                Subject::Field(|k| matches!(k, FieldKind::Numeric | FieldKind::NumStr)),
                Subject::Said(Said::NumericIds),
            ],
            run: Run::EveryAnswer(numeric, Cases::Successes),
        },
        Rule {
            id: "ids.batch-token",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 1 (sb_, exactly 39 characters); Limits",
            claims: &[Claim {
                holds: "a settlement batch token is sb_ and exactly 39 characters",
                says: &["sb_ (settlement batch; exactly 39 characters in total)"],
            }],
            summary: "every settlement batch token is sb_ and exactly 39 characters",
            faults: &[Fault::ShortBatchToken],
            judges: &[
                Subject::Field(|k| k == FieldKind::Batch),
                Subject::Said(Said::Prefixes),
            ],
            run: Run::EveryAnswer(batch_tokens, Cases::Successes),
        },
        Rule {
            id: "ids.access-key-shapes",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 2",
            claims: &[Claim {
                holds: "an access key has one of its two shapes",
                says: &[
                    "Access-key records appear in two shapes: `id` numeric string with `token` prefixed ak_; or `id` prefixed ak_ with `token` prefixed ak_tok_.",
                ],
            }],
            summary: "access keys have numeric id with ak_ token, or ak_ id with ak_tok_ token",
            faults: &[Fault::MixedKeyShape],
            judges: &[
                Subject::Field(|k| k == FieldKind::KeyPart),
                Subject::Said(Said::NumericIds),
            ],
            run: Run::EveryAnswer(key_shapes, Cases::Successes),
        },
        Rule {
            id: "ids.path-match",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Merchants (read a rail merchant), Lookups (read one alias), Payments (charges of {payment-id}); Path parameters",
            claims: &[ANSWERS_FOR_ID, READ_IS_LISTED, READ_ANSWERED],
            summary: "a read with an id in its path answers for that id, for several known ids (first, last, deep, without a rail record, non-ASCII), and shows the record exactly as its list does",
            faults: &[
                Fault::RailMerchantWrongRecord,
                Fault::RailMerchantStatusUnknown,
                Fault::ChargesFirstPayment,
                Fault::RailMerchantReadDiffers,
            ],
            judges: &[Subject::PathId(|op, id| {
                id.answers_for.is_some() && on::path_id_not_rotated(op, id)
            })],
            run: Run::Check(path_match),
        },
        Rule {
            id: "ids.unknown",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Path parameters; Payments and Settlements (404 error.not_found); Errors (404: the resource does not exist)",
            claims: &[
                super::errors::NO_SERVER_ERROR,
                super::errors::UNKNOWN_ID_IS_404,
                ANSWERS_FOR_ID,
            ],
            summary: "unknown well-formed ids, and ids far shorter or longer than usual, in every path: never a 5xx, never another record; 404 where API.md lists it",
            faults: &[
                Fault::UnknownRailMerchantFound,
                Fault::ShortBatchToken,
                Fault::UnknownBatchFound,
                Fault::UnknownAliasFound,
                Fault::LongId500,
            ],
            judges: &[
                Subject::PathId(on::path_id_not_rotated),
                Subject::Error(on::unknown_path_id),
            ],
            run: Run::Check(unknown),
        },
    ]
}

fn prefixes(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| matches!(k, FieldKind::Prefix(_) | FieldKind::PrefixOrEmpty(_)),
        |kind, s| match kind {
            FieldKind::PrefixOrEmpty(_) if s.is_empty() => Ok(()),
            FieldKind::Prefix(p) | FieldKind::PrefixOrEmpty(p) if syntax::has_prefix(s, p) => {
                Ok(())
            }
            FieldKind::Prefix(p) | FieldKind::PrefixOrEmpty(p) => {
                Err(format!("{s:?} lacks the prefix {p}"))
            }
            _ => Ok(()),
        },
    )
}

fn numeric(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| matches!(k, FieldKind::Numeric | FieldKind::NumStr),
        |_, s| {
            if syntax::is_numeric_id(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not a numeric string"))
            }
        },
    )
}

fn batch_tokens(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| k == FieldKind::Batch,
        |_, s| {
            if syntax::is_batch_token(s) {
                Ok(())
            } else {
                Err(format!(
                    "{s:?} is not sb_ and 39 characters (it has {})",
                    s.chars().count()
                ))
            }
        },
    )
}

fn key_shape(key: &Value) -> Option<String> {
    let text = |f: &str| key[f].as_str().unwrap_or("");
    let (id, token) = (text("id"), text("token"));
    let first = syntax::is_numeric_id(id) && syntax::has_prefix(token, "ak_");
    let second = syntax::has_prefix(id, "ak_") && syntax::has_prefix(token, "ak_tok_");
    (!(first || second)).then(|| {
        format!(
            "key id {} with token {} is neither shape",
            show(key.get("id")),
            show(key.get("token"))
        )
    })
}

fn key_shapes(e: &Observed<'_>) -> Option<String> {
    let rotated = e
        .op()
        .filter(|o| o.id == OpId::Rotate)
        .and_then(|_| e.data());
    first_of(
        rows_of(e, "keys", "keys")
            .chain(rows_of(e, "aggregator", "keys"))
            .chain(rotated)
            .filter_map(key_shape),
    )
}

/// Whether a read answered for the id asked.
pub(super) fn answers_for(c: &Check<'_>, e: &Exchange, op: &Op) -> Result<(), Finding> {
    let field = op.path_id.and_then(|p| p.answers_for).unwrap_or("token");
    let asked = path_id(e).unwrap_or("");
    let got = e.data().and_then(|d| d[field].as_str()).unwrap_or("");
    if encode(got) == asked {
        Ok(())
    } else {
        Err(c.fail(
            &ANSWERS_FOR_ID,
            e,
            format!(
                "{}: asked for {asked}, answered for {field} {got:?}",
                op.name
            ),
        ))
    }
}

fn path_match(c: &Check<'_>) -> Outcome {
    let mut judge = Judge::default();
    let rail = c.ctx.model.list(OpId::RailMerchants);
    for op in OPS
        .iter()
        .filter(|o| o.path_id.is_some_and(|p| p.answers_for.is_some()))
    {
        for e in c.ctx.samples(op.id) {
            if e.transient.is_some() {
                judge.fail(c.fail(
                    &READ_ANSWERED,
                    e,
                    format!("{}: the read was not answered", op.name),
                ));
                continue;
            }
            if !e.success() {
                // A known id that is not served is `envelope.success`'s.
                continue;
            }
            judge.result(answers_for(c, e, op));
            // The record read alone is the record its list shows.
            if op.id == OpId::RailMerchant
                && let (Some(list), Some(data)) = (rail, e.data())
                && let Some(listed) = list.find(data["token"].as_str().unwrap_or(""))
                && let Some(why) = differs(data, listed, op.data)
            {
                judge.fail(c.fail(
                    &READ_IS_LISTED,
                    e,
                    format!("rail-merchant {}: {why}", show(data.get("token"))),
                ));
            }
        }
    }
    if judge.cases == 0 {
        return Outcome::skipped("no read with an id in its path succeeded");
    }
    judge.outcome()
}

/// Ids that name nothing: a known one with its last characters changed
/// within their alphabet (true: of the server's own shape), and a made-up
/// one (false).
fn unknown_ids(c: &Check<'_>, op: &Op) -> Vec<(String, bool)> {
    let Some(id) = op.path_id else {
        return Vec::new();
    };
    let known = c.ctx.known_ids(op.id).into_iter().next();
    // One of the server's own shape, derived from a known id: judged as
    // an unknown id (404 where API.md lists it). One made up, whose
    // shape the server may refuse: never a 5xx, never a record.
    let mut out: Vec<(String, bool)> = known
        .as_deref()
        .and_then(super::forms::unknown_like)
        .map(|u| (u, true))
        .into_iter()
        .collect();
    let len = id.exact_len.unwrap_or(id.prefix.len() + 16);
    let body_len = len.saturating_sub(id.prefix.len());
    out.push((format!("{}{}", id.prefix, "0".repeat(body_len)), false));
    out
}

/// Ids far from the usual length: one character, and hundreds. A batch
/// token of another length is malformed (`cursor.bad-batch-token`).
fn odd_ids(op: &Op) -> Vec<String> {
    match op.path_id {
        Some(id) if id.exact_len.is_none() => vec![
            format!("{}7", id.prefix),
            format!("{}{}", id.prefix, "a1".repeat(150)),
            format!("{}{}", id.prefix, "9".repeat(2_000)),
        ],
        _ => Vec::new(),
    }
}

fn unknown(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<(&'static Op, String, bool)> = Vec::new();
    for op in OPS.iter().filter(|o| o.path_id.is_some() && !o.is_write()) {
        cases.extend(
            unknown_ids(c, op)
                .into_iter()
                .map(|(id, own_shape)| (op, id, own_shape)),
        );
        cases.extend(odd_ids(op).into_iter().map(|id| (op, id, false)));
    }
    let results = c.map(&cases, |(op, id, well_formed)| {
        let e = c.send(Request::of(op, Some(id)));
        let shown = aggpay_internal::text::excerpt(id, 60);
        use super::errors::UNKNOWN_ID_IS_404;
        if let Some(broken) = super::errors::server_error(c, &e, &format!("{} {shown}", op.name)) {
            return Err(broken);
        }
        match e.status() {
            Some(404) => Ok(()),
            Some(s) if *well_formed && op.lists_error(404) => Err(c.fail(
                &UNKNOWN_ID_IS_404,
                &e,
                format!(
                    "{} {shown}: an unknown id answered {s}, API.md lists 404",
                    op.name
                ),
            )),
            Some(_) if e.success() => match op.path_id.and_then(|p| p.answers_for) {
                Some(_) => answers_for(c, &e, op),
                None => Err(c.fail(
                    &UNKNOWN_ID_IS_404,
                    &e,
                    format!("{} {shown}: an id that names nothing succeeded", op.name),
                )),
            },
            Some(_) | None => Ok(()),
        }
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    if judge.cases == 0 {
        return Outcome::skipped("no operation has an id in its path");
    }
    judge.outcome()
}
