//! writes.*: a write acts on the record it names, or on none. Every write
//! of the table, with every record it names (a rotation's key in its
//! path, an export's batch and merchant in its body) given one slip away
//! from a known one: a server that takes the near miss for another
//! record, or falls back to a default one, is carried out on a record
//! nobody asked for.

use aggpay_mock::Fault;
use serde_json::{Value, json};

use super::forms::{Carrier, NearMiss, near_misses};
use super::support::{Judge, text};
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::Subject;
use crate::contract::{At, BodyField, Effect, OPS, OpId, Place};
use crate::http::{Exchange, Request};
use crate::model::Picker;

const NAMED_TARGET: Claim = Claim {
    holds: "a write naming a record one slip from a known one is refused, or carried out on the very value named",
    says: &[
        "| settlement_batch_id | string | batch token to export |",
        "| merchant_id | string | optional; rail merchant (mer_) for kind REPORT_KIND_MERCHANT; empty for REPORT_KIND_BATCH |",
        "Rotates the key and returns `data`: AccessKey with the new secret.",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "writes.named-target",
        level: Level::Required,
        kind: Kind::Properties,
        source: "API.md Settlements (the report export's body: the batch token to export, the rail merchant of a merchant export); Access keys (rotates the key of the path)",
        claims: &[NAMED_TARGET, super::errors::NO_SERVER_ERROR],
        summary: "every write, with every record it names (the key of a rotation's path, the batch and the merchant of an export's body) one slip away from a known one: refused, or carried out on the very value named; never on another record",
        faults: &[
            Fault::RotateUnknownActs,
            Fault::TokensCaseInsensitive,
            Fault::UnknownTargetActs,
        ],
        judges: &[
            Subject::BodyField(|_, field| field.names.is_some()),
            Subject::PathId(|op, _| op.effect == Effect::Rotation),
        ],
        run: Run::Check(named_target),
    }]
}

/// A write naming a near miss of a known record.
struct Case {
    place: Place,
    request: Request,
    /// What the answer must name when the write succeeds: the field of
    /// `data` (a path into it) and the value.
    named: Vec<(&'static [&'static str], String)>,
    what: String,
}

/// A known record of the list `names` (deep where the list shows more).
fn known(c: &Check<'_>, names: OpId) -> Option<String> {
    match names {
        OpId::RailMerchants => c.ctx.found.rail_merchants.first().cloned(),
        other => {
            let rows = c.ctx.model.rows(other);
            let mut pick = Picker::new(c.ctx.options.seed, "writes known");
            let at = *pick.positions(rows.len(), 1).last()?;
            rows.get(at).map(|r| text(r, "token").to_owned())
        }
    }
    .filter(|v| !v.is_empty())
}

/// The export body naming `value` in `field`, every other field known.
fn export_body(c: &Check<'_>, field: &BodyField, value: &str) -> Option<Value> {
    let batch = known(c, OpId::Batches)?;
    Some(match field.name {
        "settlement_batch_id" => json!({
            "settlement_batch_id": value,
            "kind": "REPORT_KIND_BATCH",
        }),
        "merchant_id" => json!({
            "settlement_batch_id": batch,
            "kind": "REPORT_KIND_MERCHANT",
            "merchant_id": value,
        }),
        _ => return None,
    })
}

fn cases(c: &Check<'_>) -> Vec<Case> {
    let mut out = Vec::new();
    let mut pick = Picker::new(c.ctx.options.seed, c.rule);
    for op in OPS.iter().filter(|o| o.is_write()) {
        if op.effect == Effect::Rotation
            && let Some(key) = c.ctx.known_ids(op.id).into_iter().next()
        {
            for miss in near_misses(&key, Carrier::Text, &mut pick) {
                out.push(Case {
                    place: Place::new(op.id, At::PathId),
                    request: Request::of(op, Some(&miss.value)),
                    named: vec![(&[], miss.value.clone())],
                    what: format!("a rotation of key {key} {}", miss.slip.describe()),
                });
            }
        }
        for field in op.body.iter().filter(|f| f.names.is_some()) {
            let Some(value) = field.names.and_then(|names| known(c, names)) else {
                continue;
            };
            for NearMiss { slip, value: miss } in near_misses(&value, Carrier::Text, &mut pick) {
                let Some(body) = export_body(c, field, &miss) else {
                    continue;
                };
                let mut named: Vec<(&'static [&'static str], String)> = Vec::new();
                for (name, path) in [
                    (
                        "settlement_batch_id",
                        &["report_export", "settlement_batch_id"][..],
                    ),
                    ("merchant_id", &["report_export", "merchant_id"][..]),
                ] {
                    if let Some(v) = body[name].as_str() {
                        named.push((path, v.to_owned()));
                    }
                }
                out.push(Case {
                    place: Place::new(op.id, At::Body(field.name)),
                    request: Request::of(op, None).json(body.to_string()),
                    named,
                    what: format!(
                        "{} naming {} {value} {}",
                        op.name,
                        field.name,
                        slip.describe()
                    ),
                });
            }
        }
    }
    out
}

fn named_target(c: &Check<'_>) -> Outcome {
    if !c.ctx.options.allow_writes {
        return Outcome::skipped("writes are not allowed (--allow-writes)");
    }
    let cases = cases(c);
    if cases.is_empty() {
        return Outcome::skipped("no record a write names is known");
    }
    let results = c.map(&cases, |case| {
        // A near miss is a write the server must refuse, so sending it
        // again after a lost answer is safe where a true write's is not;
        // on a server that carries it out, the answer seen still names
        // the record it acted on.
        let e = c.ctx.http.repeatable_write(case.request.clone());
        judge_write(c, &e, case)
    });
    let mut judge = Judge::default();
    for (case, result) in cases.iter().zip(results) {
        judge.at(case.place, result);
    }
    judge.outcome()
}

/// A write refused, or done on exactly what it named.
fn judge_write(c: &Check<'_>, e: &Exchange, case: &Case) -> Result<(), Finding> {
    if let Some(broken) = super::errors::server_error(c, e, &case.what) {
        return Err(broken);
    }
    if !e.success() {
        return Ok(());
    }
    let Some(data) = e.data() else {
        return Err(c.fail(
            &NAMED_TARGET,
            e,
            format!("{}: a success without data", case.what),
        ));
    };
    for (path, want) in &case.named {
        let at = path.iter().try_fold(data, |v, k| v.get(k));
        let got: Vec<&str> = match (path.is_empty(), at) {
            // A rotation's answer is the key: its id or its token is the
            // one of the path (typing rule 2: either may be the ak_ one).
            (true, Some(key)) => vec![text(key, "id"), text(key, "token")],
            (false, Some(v)) => vec![v.as_str().unwrap_or("")],
            (_, None) => vec![""],
        };
        if !got.contains(&want.as_str()) {
            return Err(c.fail(
                &NAMED_TARGET,
                e,
                format!(
                    "{}: carried out on {:?}, not on the value named",
                    case.what,
                    got.iter().find(|g| !g.is_empty()).unwrap_or(&"")
                ),
            ));
        }
    }
    Ok(())
}
