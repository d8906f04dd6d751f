//! state.*: what requests leave behind, judged alone (`Run::Alone`:
//! before every other rule, with no other request in flight). Reads change
//! nothing; exports, again and at once, each make their own export,
//! described by their own body.

use std::collections::BTreeMap;

use aggpay_mock::Fault;
use serde_json::Value;

use super::support::Judge;
use super::{Check, Claim, Finding, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{At, OPS, Op, OpId, Place, Walk};
use crate::http::{Exchange, Request};

const READS_CHANGE_NOTHING: Claim = Claim {
    holds: "a read changes no record: every field the contract defines, updated_at included, reads the same after any other read",
    says: &[
        super::message::JSON_OVER_HTTP,
        "RFC 9110 section 9.2.1: Request methods are considered \"safe\" if their defined semantics are essentially read-only; i.e., the client does not request, and does not expect, any state change on the origin server as a result of applying a safe method to a target resource.",
        "RFC 9110 section 9.2.1: Of the request methods defined by this specification, the GET, HEAD, OPTIONS, and TRACE methods are defined to be safe.",
    ],
};

const EACH_EXPORT_ITS_OWN: Claim = Claim {
    holds: "each export request, sent again or at the same time as another, creates an export of its own, described by its own body (merchant_id empty for a batch export)",
    says: &[
        "creates an asynchronous report export job for a batch or merchant scope.",
        "empty string when the export is of kind REPORT_KIND_BATCH",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "state.reads-safe",
            level: Level::Required,
            source: "API.md (a JSON-over-HTTP API; GET for every read); RFC 9110 section 9.2.1",
            claims: &[READS_CHANGE_NOTHING],
            summary: "every record the run can read, read twice with only reads between: every field the contract defines is unchanged (updated_at included); a change is traced to the read that made it",
            faults: &[Fault::ReadsWrite],
            judges: &[Subject::Answer(on::read)],
            run: Run::Alone(reads_safe),
        },
        Rule {
            id: "state.exports",
            level: Level::Required,
            source: "API.md Settlements (report exports: creates an asynchronous report export job); ReportExport (merchant_id)",
            claims: &[EACH_EXPORT_ITS_OWN],
            summary: "exports of one scope sent twice in a row and twice at once each answer an export of their own, and exports whose bodies differ in which members they carry each answer what their own body says (with --allow-writes)",
            faults: &[Fault::ExportUpsert, Fault::ExportBodyPooled],
            judges: &[Subject::BodyField(|op, _| on::report_export(op))],
            run: Run::Alone(exports),
        },
    ]
}

/// The fields of an answer's `data` the contract defines, by path, each
/// a value of its own: what a record is, without what a server may add
/// and change at will (an object or a list is compared through the
/// fields the contract defines in it, which are walked too, never whole:
/// it may carry members of the server's own).
fn defined(e: &Exchange) -> Option<BTreeMap<String, Value>> {
    let (data, op) = (e.data()?, e.op()?);
    let walk = Walk::new(data, op.data);
    Some(
        walk.fields()
            .iter()
            .filter_map(|m| {
                let value = m.value.filter(|v| !v.is_object() && !v.is_array())?;
                Some((walk.path(m.at).to_string(), value.clone()))
            })
            .collect(),
    )
}

/// The first field that differs between two readings, in words.
fn first_change(
    before: &BTreeMap<String, Value>,
    after: &BTreeMap<String, Value>,
) -> Option<String> {
    let keys = before.keys().chain(after.keys());
    for key in keys {
        let (a, b) = (before.get(key), after.get(key));
        if a != b {
            let shown = |v: Option<&Value>| crate::http::show(v);
            return Some(format!("{key} was {}, now {}", shown(a), shown(b)));
        }
    }
    None
}

/// A reading of `request`: its defined fields, when it succeeded.
fn reading(c: &Check<'_>, request: &Request) -> (Exchange, Option<BTreeMap<String, Value>>) {
    let e = c.send(request.clone());
    let fields = defined(&e).filter(|_| e.transient.is_none());
    (e, fields)
}

fn reads_safe(c: &Check<'_>) -> Outcome {
    let reads: Vec<(&'static Op, Request)> = OPS
        .iter()
        .filter(|op| on::read(op))
        .filter_map(|op| Some((op, super::auth::request(c.ctx, op)?)))
        .collect();
    // Two readings of everything, with only reads between them.
    let first = c.map(&reads, |(_, r)| reading(c, r));
    let second = c.map(&reads, |(_, r)| reading(c, r));
    let mut judge = Judge::default();
    for (i, (op, request)) in reads.iter().enumerate() {
        let place = Place::new(op.id, At::Answer);
        let (Some(a), Some(b)) = (&first[i].1, &second[i].1) else {
            judge.at(place, Ok(()));
            continue;
        };
        if a == b {
            judge.at(place, Ok(()));
            continue;
        }
        // Which read changed it: its own, or another's.
        judge.at(place, culprit(c, op, request, &reads));
    }
    judge.outcome()
}

/// The read that changes `changed`'s record: its own read (two in a row
/// differ), else the first other read after which it differs. A change
/// no read repeats is not pinned on any (a write of the server's own
/// between the readings).
fn culprit(
    c: &Check<'_>,
    op: &Op,
    changed: &Request,
    reads: &[(&'static Op, Request)],
) -> Result<(), Finding> {
    let (_, Some(mut last)) = reading(c, changed) else {
        return Ok(());
    };
    let (again, now) = reading(c, changed);
    let Some(now) = now else { return Ok(()) };
    if let Some(change) = first_change(&last, &now) {
        return Err(c.fail(
            &READS_CHANGE_NOTHING,
            &again,
            format!("reading {} changes what it reads: {change}", op.name),
        ));
    }
    last = now;
    for (other, request) in reads.iter().filter(|(o, _)| o.id != op.id) {
        let (read, _) = reading(c, request);
        let (after, now) = reading(c, changed);
        let Some(now) = now else { continue };
        if let Some(change) = first_change(&last, &now) {
            return Err(c.fail(
                &READS_CHANGE_NOTHING,
                &read,
                format!(
                    "reading {} changed the record {} reads: {change} (as read after it: {})",
                    other.name, op.name, after.url
                ),
            ));
        }
        last = now;
    }
    Ok(())
}

/// An export of `body` (sent again when its answer is lost: it makes a
/// new job each time).
fn export(c: &Check<'_>, body: &Value) -> Exchange {
    crate::model::writes::export(&c.ctx.http, &body.to_string())
}

fn text<'e>(e: &'e Exchange, field: &str) -> Option<&'e str> {
    e.data()?.get("report_export")?.get(field)?.as_str()
}

/// The id of an export answer (its id, else its token).
fn export_id(e: &Exchange) -> Option<String> {
    let data = e.data()?.get("report_export")?;
    data.get("token")
        .or_else(|| data.get("id"))
        .map(ToString::to_string)
}

fn exports(c: &Check<'_>) -> Outcome {
    if !c.ctx.options.allow_writes {
        return Outcome::skipped("writes are not allowed (--allow-writes)");
    }
    // The oldest batch the run knows: a server that fills an absent
    // batch with its newest would not answer with it by chance.
    let Some(batch) = c
        .ctx
        .model
        .rows(OpId::Batches)
        .last()
        .and_then(|b| b["token"].as_str().map(str::to_owned))
    else {
        return Outcome::skipped("no batch is known to export");
    };
    let merchant = c.ctx.inputs.rail_merchant_id.clone();
    let of_batch = serde_json::json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"});
    let place = |field: &'static str| Place::new(OpId::ReportExport, At::Body(field));
    let mut judge = Judge::default();
    // Answered with an export at all: another rule's business otherwise.
    let made = |e: &Exchange| e.success() && e.transient.is_none() && export_id(e).is_some();
    let distinct = |es: &[Exchange], how: &str| -> Result<(), Finding> {
        if !es.iter().all(made) {
            return Ok(());
        }
        if export_id(&es[0]) == export_id(&es[1]) {
            return Err(c.fail(
                &EACH_EXPORT_ITS_OWN,
                &es[1],
                format!(
                    "two exports of one scope sent {how} answered one export, {}",
                    export_id(&es[1]).unwrap_or_default()
                ),
            ));
        }
        Ok(())
    };
    // One chain on one connection, each request's check resting on the
    // one before it (a round trip each, and nothing else in flight; state
    // a server keeps per connection, a decoder's buffer, shows only on
    // one): a merchant export; a batch export without merchant_id (its
    // merchant_id is its own, empty); the same again (an export of its
    // own); an export naming no batch after one naming a batch (no batch
    // inherited). Then two exports of one scope at once, every member
    // given. A connection the server closes midway ends the chain: what
    // was not sent is not judged.
    let whole = serde_json::json!({
        "settlement_batch_id": batch,
        "kind": "REPORT_KIND_BATCH",
        "merchant_id": "",
    });
    let post = |body: &Value| Request::to(OpId::ReportExport).json(body.to_string());
    let mut chain = Vec::new();
    if let Some(merchant) = &merchant {
        chain.push(post(&serde_json::json!({
            "settlement_batch_id": batch,
            "kind": "REPORT_KIND_MERCHANT",
            "merchant_id": merchant,
        })));
    }
    chain.extend([post(&of_batch), post(&of_batch)]);
    if let Some(merchant) = &merchant {
        chain.push(post(
            &serde_json::json!({"kind": "REPORT_KIND_MERCHANT", "merchant_id": merchant}),
        ));
    }
    let answers = c.ctx.http.on_one_connection(&chain);
    let skip = usize::from(merchant.is_some());
    if let Some(e) = answers.get(skip).filter(|_| merchant.is_some()) {
        let result = match text(e, "merchant_id") {
            Some(m) if made(e) && !m.is_empty() => Err(c.fail(
                &EACH_EXPORT_ITS_OWN,
                e,
                format!(
                    "a batch export whose body has no merchant_id, sent after a merchant export on one connection, answered merchant_id {m:?}"
                ),
            )),
            _ => Ok(()),
        };
        judge.at(place("merchant_id"), result);
    }
    if let Some(pair) = answers.get(skip..skip + 2) {
        judge.at(place("kind"), distinct(pair, "one after the other"));
    }
    if let Some(e) = answers.get(skip + 2).filter(|_| merchant.is_some()) {
        let result = match text(e, "settlement_batch_id") {
            Some(b) if made(e) && b == batch => Err(c.fail(
                &EACH_EXPORT_ITS_OWN,
                e,
                format!(
                    "an export whose body names no batch, sent after one naming {batch} on one connection, answered settlement_batch_id {b:?}"
                ),
            )),
            _ => Ok(()),
        };
        judge.at(place("settlement_batch_id"), result);
    }
    let bodies = [whole.clone(), whole];
    let at_once = c.map(&bodies, |b| export(c, b));
    judge.at(place("kind"), distinct(&at_once, "at the same time"));
    judge.outcome()
}
