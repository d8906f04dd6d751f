//! state.*: what requests leave behind, judged alone (`Run::Alone`:
//! before every other rule, with no other request in flight). Reads change
//! nothing; exports, again and at once, each make their own export,
//! described by their own body.

use std::collections::BTreeMap;

use aggpay_mock::Fault;
use serde_json::Value;

use super::support::Judge;
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{At, OPS, Op, OpId, Place, Walk};
use crate::http::{Exchange, Request};
use crate::model::{ListModel, Source};

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

pub(crate) const FAILED_ROTATION_UNDONE: Claim = Claim {
    holds: "a rotation answered with an error (other than a 429 or 503, which say it was not handled, or no answer at all) leaves the key as it was: the key list and the aggregator record show the secret it had",
    says: &[
        "Rotates the key and returns `data`: AccessKey with the new secret.",
        "| 500 | error.internal_server_error | internal failure; message carries an internal error description |",
    ],
};

const EVERY_ROTATION_TAKES: Claim = Claim {
    holds: "rotations in a row and at the same time each take effect: afterwards the key list and the aggregator record show, for each key rotated, the secret a rotation of it answered (the last one's, for rotations in a row)",
    says: &[
        "Rotates the key and returns `data`: AccessKey with the new secret.",
        "| secret | string | the key secret, returned in clear by list, get-aggregator and rotate; shown as <ACCESS_KEY_SECRET> |",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "state.reads-safe",
            level: Level::Required,
            kind: Kind::Properties,
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
            kind: Kind::Properties,
            source: "API.md Settlements (report exports: creates an asynchronous report export job); ReportExport (merchant_id)",
            claims: &[EACH_EXPORT_ITS_OWN],
            summary: "exports of one scope sent twice in a row and twice at once each answer an export of their own, and exports whose bodies differ in which members they carry each answer what their own body says (with --allow-writes)",
            faults: &[Fault::ExportUpsert, Fault::ExportBodyPooled],
            judges: &[Subject::BodyField(|op, _| on::report_export(op))],
            run: Run::Writes(exports),
        },
        Rule {
            id: "state.rotations",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md Access keys (rotates the key and returns the AccessKey with the new secret); AccessKey (secret); Errors (500 error.internal_server_error)",
            claims: &[EVERY_ROTATION_TAKES, FAILED_ROTATION_UNDONE],
            summary: "the --access-key-id key rotated twice in a row, then at once beside the --second-access-key-id key (or twice at once, without it): the aggregator record after each step, and the key list at the end, show each key's secret as the answers left it, and a rotation answered with an error changed nothing (with --allow-writes)",
            faults: &[
                Fault::RotationErrorCommits,
                Fault::RotationsLostUpdate,
                Fault::AggregatorKeysMasked,
                Fault::AggregatorKeysStale,
            ],
            judges: &[Subject::Answer(on::shows_keys)],
            run: Run::Writes(rotations),
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
    // The chain shows a server's per-connection state only whole: one
    // cut short, or with a throttled or lost step, is sent again on a new
    // connection (each an export of its own, harmless), a few times; what
    // it still cannot reach is listed not judged.
    let mut answers = Vec::new();
    for _ in 0..STEP_TRIES {
        answers = c.ctx.http.on_one_connection(&chain);
        if answers.len() == chain.len() && answers.iter().all(|e| e.transient.is_none()) {
            break;
        }
    }
    if answers.len() < chain.len() || answers.iter().any(|e| e.transient.is_some()) {
        for field in ["merchant_id", "settlement_batch_id"] {
            judge.not_judged(c.not_judged(
                place(field),
                format!(
                    "the chain of exports on one connection was cut short or met only transient failures {STEP_TRIES} times"
                ),
            ));
        }
    }
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

/// Times a step of `state.rotations` is made when its answers are lost.
const STEP_TRIES: usize = 4;

/// What one rotation answered: the new secret, or why it tells nothing
/// or that nothing should have changed.
enum Rotated {
    /// Answered with a key and its secret.
    To(String),
    /// Answered with an error that is the server's answer: the key must
    /// be as it was.
    Refused(Box<Exchange>),
    /// No answer, or one that says the request was not handled (429,
    /// 503): what it did is not known.
    Unknown,
}

/// What a rotation's exchange says it did.
fn rotated(e: Exchange) -> Rotated {
    if e.transient.is_some()
        || e.status()
            .is_some_and(aggpay_internal::http::is_not_handled_status)
    {
        return Rotated::Unknown;
    }
    match e.data().and_then(|d| d["secret"].as_str()) {
        Some(secret) => Rotated::To(secret.to_owned()),
        None if e.success() => Rotated::Unknown,
        None => Rotated::Refused(Box::new(e)),
    }
}

/// The secret of each key as the key list and the aggregator record show
/// it now, each with its place and the exchange that showed it.
/// With `both` false, the aggregator record alone: one round trip, where
/// the key list is read to its end page by page.
fn shown_secrets(c: &Check<'_>, both: bool) -> Vec<(Place, Exchange, BTreeMap<String, String>)> {
    let reads: &[OpId] = if both {
        &[OpId::Aggregator, OpId::Keys]
    } else {
        &[OpId::Aggregator]
    };
    let secrets = |keys: &mut dyn Iterator<Item = &Value>| -> BTreeMap<String, String> {
        keys.filter_map(|k| {
            Some((
                crate::model::key_id(k).to_owned(),
                k["secret"].as_str()?.to_owned(),
            ))
        })
        .collect()
    };
    c.map(reads, |op| {
        let (e, shown) = if *op == OpId::Keys {
            // Every page of the list.
            let list = ListModel::read(&c.ctx.http, Source::of(Op::get(OpId::Keys)));
            let shown = secrets(&mut list.known());
            (list.pages.first().cloned()?, shown)
        } else {
            let e = c.send(Request::to(OpId::Aggregator));
            let shown = secrets(&mut e.data()?["keys"].as_array()?.iter());
            (e, shown)
        };
        (e.success() && e.transient.is_none()).then(|| (Place::new(*op, At::Answer), e, shown))
    })
    .into_iter()
    .flatten()
    .collect()
}

/// Rotations of the --access-key-id key twice in a row, then at once
/// beside one of the --second-access-key-id key, each followed by a
/// reading of what the aggregator record shows, the key list too at the
/// end.
fn rotations(c: &Check<'_>) -> Outcome {
    if !c.ctx.options.allow_writes {
        return Outcome::skipped("writes are not allowed (--allow-writes)");
    }
    let Some(first) = c.ctx.inputs.access_key_id.clone() else {
        return Outcome::skipped("needs a key to rotate: pass --access-key-id");
    };
    let second = c.ctx.inputs.second_access_key_id.clone();
    let mut judge = Judge::default();
    if second.is_none() {
        judge.not_judged(c.not_judged(
            Place::new(OpId::Rotate, At::Answer),
            "rotations of two keys at once: no --second-access-key-id was given, so the first key was rotated twice at once instead",
        ));
    }
    // Where what the steps left could not be read, what is left is not
    // judged, and the report says so.
    let unsettled = |judge: &mut Judge, step: usize, why: &str| {
        for op in [OpId::Aggregator, OpId::Keys] {
            judge.not_judged(c.not_judged(
                Place::new(op, At::Answer),
                format!(
                    "what the rotations left, from step {} of 3 on: {why}",
                    step + 1
                ),
            ));
        }
    };
    // What each key's secret must be now: the last secret answered, or
    // the one read before.
    let mut due: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut refused: Option<Exchange> = None;
    let before = shown_secrets(c, false);
    let Some((_, _, shown)) = before.first() else {
        return Outcome::skipped("the aggregator record could not be read before the rotations");
    };
    for id in std::iter::once(&first).chain(&second) {
        if let Some(secret) = shown.get(id) {
            if let Some(why) = crate::model::writes::key_in_use(&c.ctx.http, id, Some(secret)) {
                return Outcome::skipped(why);
            }
            due.insert(id.clone(), vec![secret.clone()]);
        }
    }
    // Twice in a row, then at once: the two keys (the first key twice,
    // without a second), in flight together. A step whose answer was
    // lost, or throttled (the server says it did not handle it), is read
    // back and made again, a few times: what a lost rotation did is not
    // known.
    let steps: Vec<(Vec<&String>, bool)> = vec![
        (vec![&first], false),
        (vec![&first], false),
        (vec![&first, second.as_ref().unwrap_or(&first)], true),
    ];
    let last = steps.len() - 1;
    let mut in_a_row = 0;
    for (step, (ids, together)) in steps.into_iter().enumerate() {
        let mut settled = false;
        for _ in 0..STEP_TRIES {
            let requests: Vec<Request> = ids
                .iter()
                .map(|id| Request::to_one(OpId::Rotate, id))
                .collect();
            let (answers, at_once) = if together {
                c.ctx.http.writes_at_once(&requests)
            } else {
                (vec![c.ctx.http.write(requests[0].clone())], false)
            };
            let answers: Vec<Rotated> = answers.into_iter().map(rotated).collect();
            if answers.iter().any(|a| matches!(a, Rotated::Unknown)) {
                // Learn where the keys stand, and make the step again.
                let Some((_, _, shown)) = shown_secrets(c, false).into_iter().next() else {
                    unsettled(
                        &mut judge,
                        step,
                        "a rotation went unanswered, and the aggregator record could not be read after it",
                    );
                    return judge.outcome();
                };
                for id in &ids {
                    if let Some(secret) = shown.get(*id) {
                        due.insert((*id).clone(), vec![secret.clone()]);
                    }
                }
                continue;
            }
            let mut answered: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (id, answer) in ids.iter().zip(answers) {
                match answer {
                    Rotated::To(secret) => answered.entry((*id).clone()).or_default().push(secret),
                    Rotated::Refused(e) => refused = Some(*e),
                    Rotated::Unknown => {}
                }
            }
            due.extend(answered);
            settled = true;
            if !together {
                in_a_row += 1;
                if in_a_row < 2 {
                    break;
                }
            }
            let how = match (together, at_once) {
                (false, _) => "rotated twice in a row",
                (true, true) => "rotated at the same time",
                (true, false) => "rotated one after another (--jobs allows no more in flight)",
            };
            // The key list, read page by page, at the end only.
            if !compare(c, &mut judge, &due, refused.take(), how, step == last) {
                unsettled(
                    &mut judge,
                    step,
                    "the aggregator record could not be read after the step",
                );
                return judge.outcome();
            }
            break;
        }
        if !settled {
            unsettled(
                &mut judge,
                step,
                &format!("the step went unanswered or throttled {STEP_TRIES} times"),
            );
            return judge.outcome();
        }
    }
    judge.outcome()
}

/// Judges what the key list and the aggregator record show against
/// `due` (each key's possible secrets); false when they could not be
/// read.
fn compare(
    c: &Check<'_>,
    judge: &mut Judge,
    due: &BTreeMap<String, Vec<String>>,
    refused: Option<Exchange>,
    how: &str,
    both: bool,
) -> bool {
    let shown = shown_secrets(c, both);
    if shown.is_empty() {
        return false;
    }
    for (place, e, secrets) in shown {
        let wrong = due.iter().find(|(id, want)| {
            secrets
                .get(id.as_str())
                .is_some_and(|now| !want.contains(now))
        });
        let result = match (wrong, &refused) {
            (None, _) => Ok(()),
            (Some((id, _)), Some(error)) => Err(c.fail(
                &FAILED_ROTATION_UNDONE,
                &e,
                format!(
                    "after the key {id} was {how}, one rotation answered {}, yet the key now shows a secret no rotation answered: the refused rotation was performed",
                    error.status().map_or_else(|| "no answer".to_owned(), |s| s.to_string())
                ),
            )),
            (Some((id, want)), None) => Err(c.fail(
                &EVERY_ROTATION_TAKES,
                &e,
                format!(
                    "after the key {id} was {how}, it shows a secret no rotation of it answered last ({} answered): a rotation was lost, or this read does not show the secret the key has",
                    want.len()
                ),
            )),
        };
        judge.at(place, result);
    }
    true
}
