//! near.*: a value that differs from one the server knows is not taken
//! for it. Every value the run learns or is given (the key, path ids,
//! filter values, lookup values, page positions) is sent again in its near
//! misses (`forms`) at every place of the contract table that takes such
//! a value, and each near miss must be treated like a value the server
//! does not know: no access, no record, the documented error, or exactly
//! the rows its literal value keeps.

use std::collections::HashSet;

use aggpay_mock::Fault;

use super::forms::{Carrier, NearMiss, Slip, near_misses, wrapped};
use super::support::{Judge, text, unless_refused};
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject, on};
use crate::contract::{At, Domain, Many, OPS, Op, OpId, Paging, Place, Role, names};
use crate::ctx::Sampled;
use crate::http::{Auth, Exchange, Request};
use crate::model::expect::{Expected, Given, Order};
use crate::model::{ListModel, Picker};

const NEAR_KEY: Claim = Claim {
    holds: "a key one slip from the valid one is not valid: 401 in its form",
    says: &[
        "Every operation requires the header `X-PAY-AGGREGATOR-SECRET-KEY` carrying an aggregator access key secret",
        "A request without a valid key receives 401 with error code error.unauthorized_access and a message saying that a partner access key is required in the request header.",
    ],
};
const NEAR_ID: Claim = Claim {
    holds: "an id one slip from a known one names nothing: never a record, never a success where API.md lists 404",
    says: &[
        "| 404 | error.not_found | requested resource does not exist (message: requested resource not found) |",
    ],
};
const NEAR_FILTER: Claim = Claim {
    holds: "a filter value one slip from a known one keeps exactly the rows its literal value keeps, or is refused with a 400",
    says: &[
        "Query filters (purpose only; each accepts one or more values):",
        "| 400 | error.bad_request | invalid request parameters (message says so) |",
    ],
};
const NEAR_LOOKUP: Claim = Claim {
    holds: "a lookup value one slip from a known one is not answered with the known value's account",
    says: &[
        "account metadata by IBAN or alias.",
        "account title metadata for a till-code alias.",
    ],
};
const FAR_POSITION: Claim = Claim {
    holds: "a far offset is past the end, a far page size the largest page, or a 400: never the page of the small number",
    says: &[
        "| settlement batch list and batch transaction list | page size default 30, maximum 100; 0 is treated as 30 |",
        "| offset | integer | QR codes skipped before the result set |",
        "| 400 | error.bad_request | invalid request parameters (message says so) |",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "near.key",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md Authentication 1-2",
            claims: &[NEAR_KEY],
            summary: "the key in use, one slip away (its case swapped, cut short, lengthened, its end changed, a wildcard in it, a character encoded as text), on every operation: 401, like any key that is not valid",
            faults: &[
                Fault::TextErrors,
                Fault::AcceptAnyKey,
                Fault::UnauthorizedMessage,
                Fault::UnauthorizedKeyMessage,
                Fault::SecretPrefix32,
            ],
            judges: &[
                Subject::KeyHeader(on::every_op),
                Subject::Said(Said::KeyRequired),
            ],
            run: Run::Check(key),
        },
        Rule {
            id: "near.path-ids",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md Path parameters; Errors (404: the resource does not exist)",
            claims: &[
                NEAR_ID,
                super::errors::NO_SERVER_ERROR,
                super::ids::ANSWERS_FOR_ID,
            ],
            summary: "every known id of every read with an id in its path, one slip away: never a 5xx, never a record (a read that names its record names the id asked), never a success where API.md lists 404",
            faults: &[
                Fault::UnknownBatchFound,
                Fault::UnknownAliasFound,
                Fault::UnknownRailMerchantFound,
                Fault::TokensCaseInsensitive,
            ],
            judges: &[Subject::PathId(|op, id| {
                op.effect == crate::contract::Effect::Read && on::path_id_not_rotated(op, id)
            })],
            run: Run::Check(path_ids),
        },
        Rule {
            id: "near.filters",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md Access keys, Merchants, QR codes, Refunds, Settlements (every query filter); Errors (400 for invalid request parameters)",
            claims: &[
                NEAR_FILTER,
                super::paging::ROWS_ANSWERED,
                super::paging::SAME_RECORD,
                super::paging::COUNT_MEANS,
            ],
            summary: "every filter of every list, with values the list shows one slip away (case, prefix, appended, end changed, SQL and glob wildcards, whitespace, look-alikes, fullwidth forms, double encoding, numbers past 2^31, 2^32, 2^53, 2^63 and 2^64): exactly the rows the literal value keeps under API.md's readings, or a 400",
            faults: &[
                Fault::OffsetIgnored,
                Fault::UnicodeQuery500,
                Fault::OffsetPastEndWraps,
                Fault::HugeNumber500,
                Fault::NameFragmentPrefixOnly,
                Fault::NonAsciiNameFilter,
                Fault::FilterLikeWildcards,
                Fault::TokensCaseInsensitive,
            ],
            judges: &[Subject::Param(learned_filter)],
            run: Run::Check(filters),
        },
        Rule {
            id: "near.lookups",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md Lookups (account metadata by IBAN or alias; account title metadata for a till-code alias)",
            claims: &[NEAR_LOOKUP],
            summary: "every lookup (IBAN, mobile alias, till code) with its known value one slip away: never answered with the account the known value names",
            faults: &[Fault::TillAnyAccount, Fault::LookupCacheIgnoresQuery],
            judges: &[Subject::Param(|op, p| {
                on::lookup(op, p) && op.effect == crate::contract::Effect::Read
            })],
            run: Run::Check(lookups),
        },
        Rule {
            id: "near.positions",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md Limits (page size default 30, maximum 100); Access keys (offset at least 0); QR codes (offset: QR codes skipped before the result set); Errors (400 for invalid request parameters)",
            claims: &[
                FAR_POSITION,
                super::paging::ROWS_ANSWERED,
                super::paging::SAME_RECORD,
                super::paging::COUNT_MEANS,
            ],
            summary: "every list's page size, and every offset list's offset, given a small number plus 2^31, 2^32, 2^53, 2^63 or 2^64: an offset that far is past the end (an empty page), a page size that large is the largest page, or a 400; never the page of the small number",
            faults: &[
                Fault::NoLimitCap,
                Fault::OffsetIgnored,
                Fault::OffsetPastEndWraps,
                Fault::HugeNumber500,
                Fault::LaterPagesDropField,
                Fault::CursorSkipsRow,
                Fault::OffsetTruncated32,
                Fault::CursorAscAsDesc,
            ],
            judges: &[Subject::Param(|_, p| {
                matches!(p.role, Role::Offset | Role::Limit { .. })
            })],
            run: Run::Check(positions),
        },
    ]
}

/// A filter whose values the run learns from the rows (names, tokens,
/// dates, the integer codes of a status), not a word of a fixed set.
fn learned_filter(op: &Op, p: &crate::contract::Param) -> bool {
    on::filter(op, p) && !matches!(p.domain, Domain::Bool | Domain::Choice(_))
}

/// How many known values of each place a rule tries: one by default,
/// more with `--cases` (one per 32 cases).
fn per_place(c: &Check<'_>) -> usize {
    (c.ctx.options.cases as usize / 32).max(1)
}

/// Every secret the run has seen: a near miss equal to one is a valid
/// key, not a near miss.
fn known_secrets(c: &Check<'_>) -> HashSet<String> {
    let aggregator = c
        .ctx
        .data(OpId::Aggregator)
        .and_then(|a| a["keys"].as_array())
        .into_iter()
        .flatten();
    c.ctx
        .model
        .rows(OpId::Keys)
        .into_iter()
        .chain(aggregator)
        .map(|k| text(k, "secret").to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn key(c: &Check<'_>) -> Outcome {
    let known = known_secrets(c);
    let mut pick = Picker::new(c.ctx.options.seed, c.rule);
    let mut misses = c
        .ctx
        .http
        .with_key(|k| near_misses(k, Carrier::Header, &mut pick));
    misses.retain(|m| !known.contains(&m.value) && !c.ctx.http.key_matches(&m.value));
    // Derived from the key: as secret as the key itself.
    for m in &misses {
        c.ctx.http.learn_secret(&m.value);
    }
    let ops: Vec<(&'static Op, Request)> = OPS
        .iter()
        .filter_map(|op| super::auth::request(c.ctx, op).map(|r| (op, r)))
        .collect();
    if misses.is_empty() || ops.is_empty() {
        return Outcome::skipped("no near miss of the key could be made");
    }
    // Every operation meets a near miss, and every near miss an operation.
    let cases: Vec<(&'static Op, Request, &NearMiss)> = (0..ops.len().max(misses.len()))
        .map(|i| {
            let (op, request) = &ops[i % ops.len()];
            (*op, request.clone(), &misses[i % misses.len()])
        })
        .collect();
    let results = c.map(&cases, |(op, request, miss)| {
        let e = c.send(request.clone().auth(Auth::Secret(miss.value.clone())));
        match super::auth::unauthorized_why(&e) {
            None => Ok(()),
            Some(why) => Err(c.fail(
                &NEAR_KEY,
                &e,
                format!(
                    "{}: the key in use {} was taken for a valid key: {why}",
                    op.name,
                    miss.slip.describe()
                ),
            )),
        }
    });
    let mut judge = Judge::default();
    for ((op, _, _), result) in cases.iter().zip(results) {
        judge.at(Place::new(op.id, At::KeyHeader), result);
    }
    judge.outcome()
}

/// Known ids of `op`'s path, up to `n`: the first, the last and deep
/// ones where a list shows many.
fn known_ids(c: &Check<'_>, op: &Op, n: usize) -> Vec<String> {
    let all = c.ctx.known_ids(op.id);
    let mut pick = Picker::new(c.ctx.options.seed, &format!("near ids {}", op.name));
    let mut ids: Vec<String> = pick
        .positions(all.len(), 1)
        .into_iter()
        .map(|i| all[i].clone())
        .collect();
    ids.truncate(n);
    ids
}

fn path_ids(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<(&'static Op, String, NearMiss)> = Vec::new();
    for op in OPS.iter().filter(|o| o.path_id.is_some() && !o.is_write()) {
        let known = known_ids(c, op, per_place(c));
        let mut pick = Picker::new(c.ctx.options.seed, &format!("near {}", op.name));
        for id in &known {
            for miss in near_misses(id, Carrier::Text, &mut pick) {
                if !known.contains(&miss.value) {
                    cases.push((op, id.clone(), miss));
                }
            }
        }
    }
    if cases.is_empty() {
        return Outcome::skipped("no id of a read with an id in its path is known");
    }
    let results = c.map(&cases, |(op, known, miss)| {
        let e = c.send(Request::of(op, Some(&miss.value)));
        let what = format!("{} {known} {}", op.name, miss.slip.describe());
        if let Some(broken) = super::errors::server_error(c, &e, &what) {
            return Err(broken);
        }
        if !e.success() {
            return Ok(());
        }
        match op.path_id.and_then(|p| p.answers_for) {
            Some(_) => super::ids::answers_for(c, &e, op),
            None => Err(c.fail(
                &NEAR_ID,
                &e,
                format!("{what}: an id that names nothing succeeded (API.md lists 404)"),
            )),
        }
    });
    let mut judge = Judge::default();
    for ((op, _, _), result) in cases.iter().zip(results) {
        judge.at(Place::new(op.id, At::PathId), result);
    }
    judge.outcome()
}

/// The near misses of a filter value: its text forms, or its wrapped
/// forms for a number. A comma-separated list's values travel without
/// their surrounding spaces (where a list is split is not shown), so
/// that form is left out there.
fn filter_misses(param: &crate::contract::Param, value: &str, pick: &mut Picker) -> Vec<NearMiss> {
    let numeric = matches!(param.domain, Domain::Int | Domain::Unix)
        || param
            .filter()
            .is_some_and(|f| matches!(f.matching, crate::contract::Matching::Code(_)));
    let mut misses = if numeric {
        wrapped(value)
    } else {
        near_misses(value, Carrier::Text, pick)
    };
    if param.filter().is_some_and(|f| f.many == Many::Comma) {
        misses.retain(|m| m.slip != super::forms::Slip::Whitespace);
    }
    misses
}

fn filters(c: &Check<'_>) -> Outcome {
    // A filter that takes several values is asked once with every near
    // miss of a value at once: the literal values keep the rows any of
    // them keeps. Only a failing case is asked again value by value, to
    // name the slip.
    let mut cases: Vec<(&ListModel, &'static crate::contract::Param, Vec<NearMiss>)> = Vec::new();
    for list in super::filters::filterable(c) {
        let mut pick = Picker::new(c.ctx.options.seed, &format!("near {}", list.source.label));
        for param in list.read_filters() {
            if !learned_filter(list.source.op, param) {
                continue;
            }
            let several = param.filter().is_some_and(|f| f.many != Many::One);
            for value in super::values::candidates(list, param, &mut pick)
                .into_iter()
                .take(per_place(c))
            {
                // Together only the near misses that keep no row under any
                // reading: one that a legal reading matches (a case-swapped
                // fragment, where case may not count) would hide the rows
                // the others wrongly keep.
                let (together, alone): (Vec<NearMiss>, Vec<NearMiss>) =
                    filter_misses(param, &value, &mut pick)
                        .into_iter()
                        .partition(|m| {
                            several
                                && super::values::matched(
                                    list,
                                    &[Given::one(param, m.value.clone())],
                                ) == 0
                        });
                if !together.is_empty() {
                    cases.push((list, param, together));
                }
                cases.extend(alone.into_iter().map(|m| (list, param, vec![m])));
            }
        }
    }
    if cases.is_empty() {
        return Outcome::skipped("no list showed a value to filter by");
    }
    let results = c.map(&cases, |(list, param, misses)| {
        let ask = |misses: &[NearMiss]| {
            let values = misses.iter().map(|m| m.value.clone()).collect();
            vec![unless_refused(super::filters::judge_page(
                c,
                list,
                &[Given { param, values }],
            ))]
        };
        let together = ask(misses);
        let failed =
            |rs: &[Result<(), Finding>]| rs.iter().any(|r| matches!(r, Err(f) if !f.inconclusive));
        if misses.len() < 2 || !failed(&together) {
            return together;
        }
        misses
            .chunks(1)
            .map(ask)
            .find(|alone| failed(alone))
            .unwrap_or(together)
    });
    let mut judge = Judge::default();
    for ((list, param, _), results) in cases.iter().zip(results) {
        for r in results {
            judge.at(Place::new(list.source.op.id, At::Param(param.wire)), r);
        }
    }
    judge.outcome()
}

/// A lookup by a value.
pub(super) struct Lookup {
    /// The sample that holds a known value's answer.
    pub sample: Sampled,
    /// Its operation.
    pub op: OpId,
    /// The parameters beside the value.
    pub fixed: &'static [(&'static str, &'static str)],
    /// The parameter that carries the value.
    pub param: &'static str,
}

/// Every lookup of the table with a known value: by IBAN, by mobile
/// alias, by till code.
pub(super) const LOOKUPS: &[Lookup] = &[
    Lookup {
        sample: Sampled::Op(OpId::AccountInfo),
        op: OpId::AccountInfo,
        fixed: &[],
        param: names::IBAN,
    },
    Lookup {
        sample: Sampled::AccountInfoByMobile,
        op: OpId::AccountInfo,
        fixed: &[(names::ALIAS_TYPE, "MOBILE")],
        param: names::ALIAS_VALUE,
    },
    Lookup {
        sample: Sampled::Op(OpId::TitleFetch),
        op: OpId::TitleFetch,
        fixed: &[
            (names::ALIAS_TYPE, "TILL_CODE"),
            (names::WITH_TITLE_FETCH, "false"),
        ],
        param: names::ALIAS_VALUE,
    },
];

impl Lookup {
    /// The lookup of `value`.
    pub(super) fn request(&self, value: &str) -> Request {
        let mut request = Request::to(self.op);
        for (k, v) in self.fixed {
            request = request.q(k, v);
        }
        request.q(self.param, value)
    }

    /// Its known value, and the answer it got, when the run has one.
    pub(super) fn known<'c>(&self, c: &Check<'c>) -> Option<(String, &'c Exchange)> {
        let e = c.ctx.samples(self.sample).find(|e| e.success())?;
        Some((e.request.query_value(self.param)?.to_owned(), e))
    }
}

/// The IBAN an account answer is for ("" when none).
fn account(e: &Exchange) -> &str {
    e.data().map_or("", |d| text(d, "iban"))
}

fn lookups(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<(&Lookup, String, &Exchange, NearMiss)> = Vec::new();
    for lookup in LOOKUPS {
        let Some((value, known)) = lookup.known(c) else {
            continue;
        };
        let mut pick = Picker::new(c.ctx.options.seed, &format!("near {}", lookup.param));
        // A lookup may normalise its value's case and the whitespace
        // around it (room `lookup-normalising`): those slips are no
        // other value for it.
        for miss in near_misses(&value, Carrier::Text, &mut pick)
            .into_iter()
            .filter(|m| !matches!(m.slip, Slip::Case | Slip::Whitespace))
        {
            cases.push((lookup, value.clone(), known, miss));
        }
    }
    if cases.is_empty() {
        return Outcome::skipped(c.ctx.why_no_lookup("no lookup by a known value succeeded"));
    }
    let results = c.map(&cases, |(lookup, value, known, miss)| {
        let e = c.send(lookup.request(&miss.value));
        let named = account(known);
        if named.is_empty() || account(&e) != named {
            return Ok(());
        }
        Err(c.fail(
            &NEAR_LOOKUP,
            &e,
            format!(
                "{} {value:?} {} was answered with the account of {value:?} (IBAN {named:?}): the value is not looked up",
                lookup.param,
                miss.slip.describe()
            ),
        ))
    });
    let mut judge = Judge::default();
    for ((lookup, ..), result) in cases.iter().zip(results) {
        judge.at(Place::new(lookup.op, At::Param(lookup.param)), result);
    }
    judge.outcome()
}

/// A page position or size, far: one of `small`'s wrapped forms.
struct Far {
    list: &'static str,
    param: &'static str,
    small: u64,
    miss: NearMiss,
}

fn positions(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<(&ListModel, Far)> = Vec::new();
    let mut seen = HashSet::new();
    for list in &c.ctx.model.lists {
        let Ok(list) = list.usable() else { continue };
        let len = list.len.unwrap_or(list.head.len() as u64);
        // One plain list of each operation (not a part of it), with rows
        // enough that the page of the small number is not empty.
        if !list.source.base.is_empty()
            || !(2..1 << 31).contains(&len)
            || !seen.insert(list.source.op.id)
        {
            continue;
        }
        let op = list.source.op;
        for param in op.params {
            let (small, wire) = match param.role {
                Role::Offset if list.reads(param.wire) => (1, param.wire),
                Role::Limit { .. } if list.reads(param.wire) => (1, param.wire),
                _ => continue,
            };
            // 2^53 rounds in a double to a far number, not a near one.
            for miss in wrapped(&small.to_string())
                .into_iter()
                .filter(|m| m.slip != super::forms::Slip::Wrapped(53))
            {
                cases.push((
                    list,
                    Far {
                        list: op.name,
                        param: wire,
                        small,
                        miss,
                    },
                ));
            }
        }
    }
    if cases.is_empty() {
        return Outcome::skipped("no list showed two rows");
    }
    let results = c.map(&cases, |(list, far)| position(c, list, far));
    let mut judge = Judge::default();
    for ((list, far), result) in cases.iter().zip(results) {
        judge.at(
            Place::new(list.source.op.id, At::Param(far.param)),
            unless_refused(result),
        );
    }
    judge.outcome()
}

/// One far position or size: an offset past the end is an empty page; a
/// page size past every maximum is the largest page the list gives.
fn position(c: &Check<'_>, list: &ListModel, far: &Far) -> Result<(), Finding> {
    let cursor = list.source.paging() == Paging::Cursor;
    let query: Vec<(String, String)> = if far.param == names::OFFSET {
        vec![
            (names::LIMIT.into(), "1".into()),
            (names::OFFSET.into(), far.miss.value.clone()),
        ]
    } else {
        vec![(names::LIMIT.into(), far.miss.value.clone())]
    };
    let got = super::paging::fetch(c, &list.source, &query);
    let what = format!(
        "{}: {} {} ({} {})",
        far.list,
        far.param,
        far.miss.value,
        far.small,
        far.miss.slip.describe()
    );
    let rows = got.rows_or_fail(c, &what)?;
    if far.param == names::OFFSET {
        if rows.is_empty() {
            return Ok(());
        }
        return Err(c.fail(
            &FAR_POSITION,
            &got.e,
            format!(
                "{what}: an offset past the end answered {} rows, as if it were {}",
                rows.len(),
                far.small
            ),
        ));
    }
    // The largest page: 100 rows at most on a cursor list (Limits), the
    // list's own cap on an offset list, as its model read it.
    let cap = if cursor { 100 } else { list.cap as usize };
    let order = Order::of(list.source.paging(), None);
    let due = Expected::of(list, &[], order).slice(0, cap);
    super::paging::judge_rows(c, &got, list, &due, &what)
}
