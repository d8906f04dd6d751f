//! own.*: each answer is its own request's. Two requests that differ in
//! one parameter the server reads, sent one right after the other, must
//! not share an answer unless the model says both answers are equal: an
//! answer kept (cached) for one request, or a buffer shared between
//! them, shows as the second request answered with the first's.

use aggpay_mock::Fault;
use serde_json::Value;

use super::near::LOOKUPS;
use super::paging::{judge_rows, read};
use super::support::{Judge, text};
use super::values::candidates;
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{At, Domain, Effect, OPS, Op, Param, Place, Role, names};
use crate::http::{Exchange, Request};
use crate::model::expect::{Expected, Given, Order};
use crate::model::{ListModel, Picker};

const OWN_ANSWER: Claim = Claim {
    holds: "the second of two requests that differ in one parameter is answered as its own request",
    says: &[
        "List operations return their records under a named key of `data` together with a `count`.",
        "account metadata by IBAN or alias.",
        "account title metadata for a till-code alias.",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "own.back-to-back",
        level: Level::Required,
        kind: Kind::Properties,
        source: "API.md Conventions 5 (list operations return their records); Lookups (account metadata by IBAN or alias); Path parameters",
        claims: &[
            OWN_ANSWER,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
            super::paging::COUNT_MEANS,
            super::paging::CURSOR_PAGES,
            super::paging::CURSOR_COUNTS,
            super::ids::ANSWERS_FOR_ID,
            super::envelope::VALID_REQUEST_SUCCEEDS,
        ],
        summary: "every parameter a list reads (page size, offset, each filter, its parts, a cursor list's direction), every lookup value and every id of a read's path: two requests that differ there alone, one right after the other, and the second answered as its own request (exactly the model's rows, the account its value names, the record its id names)",
        faults: &[
            Fault::ShortBatchToken,
            Fault::OffsetTimestamps,
            Fault::OffsetIgnored,
            Fault::OffsetLimitIgnored,
            Fault::RailMerchantWrongRecord,
            Fault::TillAnyAccount,
            Fault::ChargesFirstPayment,
            Fault::OffsetPastEndWraps,
            Fault::LaterPagesDropField,
            Fault::RefundEndDateExclusive,
            Fault::CursorSkipsRow,
            Fault::OffsetOffByOne,
            Fault::LookupCacheIgnoresQuery,
            Fault::StatusFilterIgnored,
            Fault::KeysActiveFilterIgnored,
            Fault::MerchantsEnabledFilterIgnored,
            Fault::RailStatusFilterIgnored,
            Fault::CursorAscAsDesc,
        ],
        judges: &[
            Subject::Param(own_param),
            Subject::PathId(|op, id| id.answers_for.is_some() && op.effect == Effect::Read),
        ],
        run: Run::Check(back_to_back),
    }]
}

/// The parameters whose every value the model can answer for: a list's
/// page size, offset, filters, parts and row kind, a cursor list's
/// direction (an offset list's order is the server's own), and the
/// lookup values.
fn own_param(op: &Op, p: &Param) -> bool {
    match p.role {
        Role::Limit { .. } | Role::Offset | Role::Filter(_) | Role::Part { .. } | Role::RowKind => {
            op.list.is_some()
        }
        Role::Direction => on::cursor_direction(op, p),
        Role::Lookup(_) => op.effect == Effect::Read,
        Role::Cursor | Role::Option => false,
    }
}

/// How the second request of a pair is judged.
enum Second<'a> {
    /// A page of this list: one of these row sequences.
    Page(&'a ListModel, Vec<Option<Vec<Value>>>),
    /// A filtered read of this list, judged by the filter rules' judge
    /// (which sends it).
    Filtered(&'a ListModel, Given),
    /// A lookup of a value no account has, after the known one: never
    /// the account (this IBAN) the known one names.
    NotAccount(String),
    /// A read of the record its path names.
    Record(&'static Op),
}

/// Two requests that differ in one place.
struct Pair<'a> {
    place: Place,
    first: Request,
    second: Request,
    judged: Second<'a>,
    what: String,
}

/// One plain list of each operation (not a part of it), with two rows
/// at least.
fn plain_lists<'a>(c: &Check<'a>) -> Vec<&'a ListModel> {
    let mut seen = std::collections::HashSet::new();
    c.ctx
        .model
        .lists
        .iter()
        .filter_map(|l| l.usable().ok())
        .filter(|l| l.source.base.is_empty() && l.head.len() >= 2)
        .filter(|l| seen.insert(l.source.op.id))
        .collect()
}

/// A page of `list` with `query`.
fn page(list: &ListModel, query: &[(&str, String)]) -> Request {
    list.source.request().with_query(query)
}

fn list_pairs<'a>(c: &Check<'a>, list: &'a ListModel, out: &mut Vec<Pair<'a>>) {
    let op = list.source.op;
    let order = Order::of(list.source.paging(), None);
    let plain = Expected::of(list, &[], order);
    let mut pick = Picker::new(c.ctx.options.seed, &format!("own {}", list.source.label));
    for p in op.params.iter().filter(|p| own_param(op, p)) {
        if !list.reads(p.wire) {
            continue;
        }
        let place = Place::new(op.id, At::Param(p.wire));
        let mut pair = |first: Request, second: Request, judged: Second<'a>, what: String| {
            // A pair that sends a paging name the list shows it does not
            // read (API.md gives it by purpose only) asks nothing of it.
            if !(list.reads_all(&first.query) && list.reads_all(&second.query)) {
                return;
            }
            out.push(Pair {
                place,
                first,
                second,
                judged,
                what: format!("{}: {what}", list.source.label),
            });
        };
        match p.role {
            Role::Limit { .. } => pair(
                page(list, &[(p.wire, "1".into())]),
                page(list, &[(p.wire, "2".into())]),
                Second::Page(list, plain.slice(0, 2)),
                format!("{}=2 after {}=1", p.wire, p.wire),
            ),
            Role::Offset => pair(
                page(list, &[(names::LIMIT, "1".into()), (p.wire, "0".into())]),
                page(list, &[(names::LIMIT, "1".into()), (p.wire, "1".into())]),
                Second::Page(list, plain.slice(1, 1)),
                format!("{}=1 after {}=0", p.wire, p.wire),
            ),
            Role::Direction => {
                let desc = Expected::of(list, &[], Order::of(list.source.paging(), Some("DESC")));
                pair(
                    page(list, &[(names::LIMIT, "1".into()), (p.wire, "ASC".into())]),
                    page(list, &[(names::LIMIT, "1".into()), (p.wire, "DESC".into())]),
                    Second::Page(list, desc.slice(0, 1)),
                    format!("{}=DESC after {}=ASC", p.wire, p.wire),
                );
            }
            Role::Filter(_) => {
                // Two values, the second judged; with one value, the list
                // unfiltered first.
                let values = candidates(list, p, &mut pick);
                let (first, second) = match values.as_slice() {
                    [] => continue,
                    [only] => (None, only.clone()),
                    [a, b, ..] => (Some(a.clone()), b.clone()),
                };
                let given = Given::one(p, second.clone());
                let first_request = match &first {
                    Some(v) => page(
                        list,
                        &Given::one(p, v.clone())
                            .pairs()
                            .iter()
                            .map(|(k, v)| (k.as_str(), v.clone()))
                            .collect::<Vec<_>>(),
                    ),
                    None => page(list, &[]),
                };
                let what = format!(
                    "{} after {}",
                    given.describe(),
                    first.as_deref().unwrap_or("no filter")
                );
                pair(
                    first_request,
                    page(list, &[]),
                    Second::Filtered(list, given),
                    what,
                );
            }
            Role::Part { .. } | Role::RowKind => {
                // The other part is a list of its own in the model.
                let values: Vec<&str> = match (p.role, p.domain) {
                    (_, Domain::Choice(words)) => words.to_vec(),
                    _ => vec!["true"],
                };
                for value in values {
                    // Any list of the operation showing the part (payouts
                    // are of the batches that have them), after the same
                    // path without it.
                    let Some(part) = c.ctx.model.lists.iter().find(|l| {
                        l.source.op.id == op.id
                            && l.source.base == [(p.wire.to_owned(), value.to_owned())]
                            && l.usable().is_ok()
                            && !l.head.is_empty()
                    }) else {
                        continue;
                    };
                    let due = Expected::of(part, &[], Order::of(part.source.paging(), None));
                    pair(
                        Request::get(part.source.path.clone()).q(names::LIMIT, "5"),
                        part.source.request().q(names::LIMIT, "5"),
                        Second::Page(part, due.slice(0, 5)),
                        format!("{}={value} after the list without it", p.wire),
                    );
                }
            }
            Role::Cursor | Role::Lookup(_) | Role::Option => {}
        }
    }
}

fn lookup_pairs<'a>(c: &Check<'a>, out: &mut Vec<Pair<'a>>) {
    for lookup in LOOKUPS {
        let Some((value, known)) = lookup.known(c) else {
            continue;
        };
        let iban = known.data().map_or("", |d| text(d, "iban")).to_owned();
        // The known value, then one no account has: an answer kept for
        // the first must not serve the second.
        let unknown = format!("{value}0");
        out.push(Pair {
            place: Place::new(lookup.op, At::Param(lookup.param)),
            first: lookup.request(&value),
            second: lookup.request(&unknown),
            judged: Second::NotAccount(iban),
            what: format!(
                "{} {} {unknown:?} after {value:?}",
                Op::get(lookup.op).name,
                lookup.param
            ),
        });
    }
}

fn record_pairs<'a>(c: &Check<'a>, out: &mut Vec<Pair<'a>>) {
    for op in OPS
        .iter()
        .filter(|o| o.effect == Effect::Read && o.path_id.is_some_and(|p| p.answers_for.is_some()))
    {
        let known: Vec<String> = c
            .ctx
            .samples(op.id)
            .filter(|e| e.success())
            .filter_map(|e| crate::model::path_id(e).map(str::to_owned))
            .collect();
        let Some(second) = known.last() else { continue };
        let first = known
            .iter()
            .find(|k| *k != second)
            .cloned()
            .unwrap_or_else(|| format!("{second}0"));
        out.push(Pair {
            place: Place::new(op.id, At::PathId),
            first: Request::of(op, Some(&first)),
            second: Request::of(op, Some(second)),
            judged: Second::Record(op),
            what: format!("{} {second} after {first}", op.name),
        });
    }
}

fn back_to_back(c: &Check<'_>) -> Outcome {
    let mut pairs = Vec::new();
    for list in plain_lists(c) {
        list_pairs(c, list, &mut pairs);
    }
    lookup_pairs(c, &mut pairs);
    record_pairs(c, &mut pairs);
    if pairs.is_empty() {
        return Outcome::skipped("the run read no list, lookup or record to ask twice");
    }
    let results = c.map(&pairs, |pair| {
        c.send(pair.first.clone());
        judge_second(c, pair)
    });
    let mut judge = Judge::default();
    for (pair, results) in pairs.iter().zip(results) {
        for r in results {
            judge.at(pair.place, r);
        }
    }
    judge.outcome()
}

/// Sends and judges the second request of a pair.
fn judge_second(c: &Check<'_>, pair: &Pair<'_>) -> Vec<Result<(), Finding>> {
    match &pair.judged {
        Second::Filtered(list, given) => {
            vec![super::filters::judge_page(
                c,
                list,
                std::slice::from_ref(given),
            )]
        }
        Second::Page(list, due) => {
            let got = read(c.send(pair.second.clone()), &list.source);
            vec![judge_rows(c, &got, list, due, &pair.what)]
        }
        Second::NotAccount(iban) => {
            let e = c.send(pair.second.clone());
            vec![not_account(c, &e, iban, &pair.what)]
        }
        Second::Record(op) => {
            let e = c.send(pair.second.clone());
            vec![if e.success() {
                super::ids::answers_for(c, &e, op)
            } else {
                Err(c.fail(
                    &super::envelope::VALID_REQUEST_SUCCEEDS,
                    &e,
                    format!("{}: a known record was not served", pair.what),
                ))
            }]
        }
    }
}

/// The second lookup is not answered with the first's account.
fn not_account(c: &Check<'_>, e: &Exchange, iban: &str, what: &str) -> Result<(), Finding> {
    let got = e.data().map_or("", |d| text(d, "iban"));
    if iban.is_empty() || got != iban {
        return Ok(());
    }
    Err(c.fail(
        &OWN_ANSWER,
        e,
        format!("{what}: answered with the account of the request before it (IBAN {iban:?})"),
    ))
}
