//! ids.*: identifiers carry their prefixes and shapes, and a read answers
//! for the id it was asked.

use aggpay::rules as text_rules;
use serde_json::Value;

use super::fields::strings;
use super::support::{Judge, text};
use super::{Check, Level, Outcome, Rule};
use crate::http::{encode, show};
use crate::schema::Kind;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "ids.prefixes",
            level: Level::Required,
            source: "API.md typing rule 1 and the resource tables",
            summary: "every identifier field carries its type prefix, in every sampled record",
            faults: &["wrong-txn-prefix", "dynamic-qr-prefix"],
            check: prefixes,
            observe: None,
        },
        Rule {
            id: "ids.numeric",
            level: Level::Required,
            source: "API.md typing rule 2; tables (numeric string fields)",
            summary: "numeric ids and numeric string fields are decimal digit strings, nested records included",
            faults: &["bank-account-bad-id"],
            check: numeric,
            observe: None,
        },
        Rule {
            id: "ids.batch-token",
            level: Level::Required,
            source: "API.md typing rule 1 (sb_, exactly 39 characters); Limits",
            summary: "every settlement batch token is sb_ and exactly 39 characters",
            faults: &["short-batch-token"],
            check: batch_tokens,
            observe: None,
        },
        Rule {
            id: "ids.access-key-shapes",
            level: Level::Required,
            source: "API.md typing rule 2",
            summary: "access keys have numeric id with ak_ token, or ak_ id with ak_tok_ token",
            faults: &["mixed-key-shape"],
            check: key_shapes,
            observe: None,
        },
        Rule {
            id: "ids.path-match",
            level: Level::Required,
            source: "API.md Merchants (read a rail merchant), Lookups (read one alias), Payments (charges of {payment-id}); Path parameters",
            summary: "a read with an id in its path answers for that id: the rail merchant's and the alias's token, the charges' payment_id",
            faults: &["rail-merchant-wrong-record"],
            check: path_match,
            observe: None,
        },
    ]
}

fn prefixes(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| matches!(k, Kind::Prefix(_) | Kind::PrefixOrEmpty(_)),
        |kind, s| match kind {
            Kind::PrefixOrEmpty(_) if s.is_empty() => Ok(()),
            Kind::Prefix(p) | Kind::PrefixOrEmpty(p) if text_rules::has_prefix(s, p) => Ok(()),
            Kind::Prefix(p) | Kind::PrefixOrEmpty(p) => Err(format!("{s:?} lacks the prefix {p}")),
            _ => Ok(()),
        },
    )
}

fn numeric(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| matches!(k, Kind::Numeric | Kind::NumStr),
        |_, s| {
            if text_rules::is_numeric_id(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not a numeric string"))
            }
        },
    )
}

fn batch_tokens(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| k == Kind::Batch,
        |_, s| {
            if text_rules::is_batch_token(s) {
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

fn key_shapes(c: &Check<'_>) -> Outcome {
    let mut judge = Judge::default();
    let mut keys: Vec<(&str, &crate::http::Exchange, &Value)> = Vec::new();
    for (e, k) in c.ctx.rows("keys", "keys") {
        keys.push(("keys", e, k));
    }
    for (e, k) in c.ctx.rows("aggregator", "keys") {
        keys.push(("aggregator", e, k));
    }
    for e in c.ctx.samples("rotate") {
        if let Some(k) = e.data() {
            keys.push(("rotate", e, k));
        }
    }
    if keys.is_empty() {
        return Outcome::skipped("no access key was listed");
    }
    for (op, e, key) in keys {
        let id = text(key, "id");
        let token = text(key, "token");
        let first = text_rules::is_numeric_id(id) && text_rules::has_prefix(token, "ak_");
        let second = text_rules::has_prefix(id, "ak_") && text_rules::has_prefix(token, "ak_tok_");
        judge.check(first || second, || {
            c.fail(
                e,
                format!(
                    "{op}: key id {} with token {} is neither shape",
                    show(key.get("id")),
                    show(key.get("token"))
                ),
            )
        });
    }
    judge.outcome()
}

fn path_match(c: &Check<'_>) -> Outcome {
    let mut judge = Judge::default();
    for (op, segment, field) in [
        ("rail-merchant", 2, "token"),
        ("alias", 2, "token"),
        ("charges", 2, "payment_id"),
    ] {
        for e in c.ctx.samples(op) {
            let Some(data) = e.data() else { continue };
            let asked = e.request.path.split('/').nth(segment).unwrap_or("");
            let got = text(data, field);
            judge.check(encode(got) == asked, || {
                c.fail(
                    e,
                    format!("{op}: asked for {asked}, answered for {field} {got:?}"),
                )
            });
        }
    }
    if judge.cases == 0 {
        return Outcome::skipped("no read with an id in its path succeeded");
    }
    judge.outcome()
}
