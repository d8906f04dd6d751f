//! filters.*: every filter of every list, alone, in pairs and with several
//! values, judged exactly against the model: the rows the table's
//! matching keeps, in the list's order, paged, with their count.

use aggpay_mock::Fault;
use serde_json::Value;

use super::paging::{due, judge_walk, offset_case, walk};
use super::support::Judge;
use super::values::{by_size, candidates, matched, pairs};
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject, on};
use crate::contract::{Many, OpId, Paging, Role, names};
use crate::model::expect::{Given, Order, query_text};
use crate::model::{ListModel, Picker, Several, token_of};

/// The family's rules, as the catalogue lists them.
const RULES: &[Rule] = &[
    Rule {
        id: "filters.alone",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Access keys, Merchants, QR codes, Refunds, Settlements (every query filter); States (batch status integers)",
        claims: &[
            FILTER_KEEPS,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
            super::paging::COUNT_MEANS,
            super::paging::CURSOR_PAGES,
            super::paging::CURSOR_COUNTS,
        ],
        summary: "every filter of every list alone, with values that discriminate (rows deep in the list, few matches, non-ASCII, fragments from inside names, inclusive date bounds), paged: exactly the rows it keeps, in order, every record as the list shows it, with its count",
        faults: &[
            Fault::NumericIdAsNumber,
            Fault::ShortBatchToken,
            Fault::OffsetTimestamps,
            Fault::CursorRepeat,
            Fault::CursorInclusive,
            Fault::FilteredExceedsTotal,
            Fault::OffsetIgnored,
            Fault::OffsetLimitIgnored,
            Fault::PastEndWraps,
            Fault::UnicodeQuery500,
            Fault::OffsetPastEndWraps,
            Fault::LaterPagesDropField,
            Fault::LaterPagesCountDrift,
            Fault::NameFragmentPrefixOnly,
            Fault::RefundEndDateExclusive,
            Fault::CursorSkipsRow,
            Fault::OffsetOffByOne,
            Fault::NonAsciiNameFilter,
            Fault::StatusFilterIgnored,
            Fault::KeysActiveFilterIgnored,
            Fault::MerchantsEnabledFilterIgnored,
            Fault::RailStatusFilterIgnored,
            Fault::CursorAscAsDesc,
        ],
        judges: &[Subject::Param(on::filter), Subject::Said(Said::BatchStatus)],
        run: Run::Check(alone),
    },
    Rule {
        id: "filters.combined",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Access keys, Merchants, QR codes, Refunds, Settlements (their filters, given together)",
        claims: &[
            FILTERS_COMBINE,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
            super::paging::COUNT_MEANS,
            super::paging::CURSOR_PAGES,
            super::paging::CURSOR_COUNTS,
        ],
        summary: "every pair of filters of one list, with values whose rows together differ from either alone: exactly the rows matching both",
        faults: &[
            Fault::NumericIdAsNumber,
            Fault::ShortBatchToken,
            Fault::OffsetTimestamps,
            Fault::CursorInclusive,
            Fault::FilteredExceedsTotal,
            Fault::OffsetIgnored,
            Fault::OffsetLimitIgnored,
            Fault::PastEndWraps,
            Fault::BatchFilterDropsStatus,
            Fault::UnicodeQuery500,
            Fault::RefundDateDropsStatus,
            Fault::OffsetPastEndWraps,
            Fault::LaterPagesDropField,
            Fault::LaterPagesCountDrift,
            Fault::NameFragmentPrefixOnly,
            Fault::RefundEndDateExclusive,
            Fault::OffsetOffByOne,
            Fault::NonAsciiNameFilter,
            Fault::StatusFilterIgnored,
            Fault::KeysActiveFilterIgnored,
            Fault::MerchantsEnabledFilterIgnored,
            Fault::RailStatusFilterIgnored,
        ],
        judges: &[Subject::Param(on::combined_filter)],
        run: Run::Check(combined),
    },
    Rule {
        id: "filters.multi-value",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Access keys (comma-separated name fragments), Merchants (comma-separated identifiers and names), Refunds (each filter accepts one or more values)",
        claims: &[
            FILTER_VALUES,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
            super::paging::COUNT_MEANS,
            super::paging::CURSOR_PAGES,
            super::paging::CURSOR_COUNTS,
        ],
        summary: "a filter given two, three and all of its candidate values (comma-separated or repeated, as the contract says) keeps the rows of every one of them (values chosen so that all of them, only the first, only the first two, and the list read as one value or split once answer apart)",
        faults: &[
            Fault::MerchantIdsFirstOnly,
            Fault::KeyNamesNotSplit,
            Fault::NameFragmentPrefixOnly,
            Fault::OffsetIgnored,
            Fault::OffsetLimitIgnored,
            Fault::RefundStatusFirstOnly,
            Fault::OffsetPastEndWraps,
            Fault::LaterPagesDropField,
            Fault::LaterPagesCountDrift,
            Fault::OffsetOffByOne,
            Fault::MerchantNamesSplitOnce,
            Fault::NonAsciiNameFilter,
            Fault::UnicodeQuery500,
        ],
        judges: &[Subject::Param(on::multi_value_filter)],
        run: Run::Check(multi_value),
    },
    Rule {
        id: "filters.qrs",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md QR codes (type STATIC or DYNAMIC, defaults to STATIC when omitted); Limits",
        claims: &[
            QR_TYPE,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
        ],
        summary: "without type the QR list is exactly the type=STATIC list; every row of a type is of that type",
        faults: &[
            Fault::QrDefaultDynamic,
            Fault::LaterPagesDropField,
            Fault::OffsetOffByOne,
        ],
        judges: &[Subject::Param(|_, p| matches!(p.role, Role::Part { .. }))],
        run: Run::Check(qr_type),
    },
];

const FILTER_KEEPS: Claim = Claim {
    holds: "a filter keeps exactly the rows its value selects",
    says: &[
        "| active filter | boolean | true or false |",
        "Query filters (purpose only; each accepts one or more values):",
    ],
};
const FILTERS_COMBINE: Claim = Claim {
    holds: "two filters together keep exactly the rows both select",
    says: &["Query filters (purpose only; each accepts one or more values):"],
};
const FILTER_VALUES: Claim = Claim {
    holds: "a filter given several values keeps the rows of every one of them",
    says: &[
        "| name filter | string | comma-separated list of name fragments |",
        "| merchant identifiers | comma-separated list of am_ identifiers |",
        "Query filters (purpose only; each accepts one or more values):",
    ],
};
const QR_TYPE: Claim = Claim {
    holds: "without type the QR list is the STATIC list, and every row of a type is of that type",
    says: &["| type | STATIC or DYNAMIC | defaults to STATIC when omitted |"],
};

pub fn rules() -> Vec<Rule> {
    RULES.to_vec()
}

/// The lists with filters, as read.
pub(super) fn filterable<'a>(c: &Check<'a>) -> Vec<&'a ListModel> {
    c.ctx
        .model
        .lists
        .iter()
        .filter(|l| l.read_filters().next().is_some() && l.usable().is_ok())
        .filter(|l| l.source.op.id != OpId::Transactions)
        .collect()
}

/// Judges `given` on `list`: an offset list page by page (the first two
/// pages of a small limit), a cursor list by a short walk.
pub(super) fn judge(
    c: &Check<'_>,
    list: &ListModel,
    given: &[Given],
    pick: &mut Picker,
) -> Vec<Result<(), Finding>> {
    let n = matched(list, given);
    // A page size that makes the rows span two pages where it can.
    let limit = n.div_ceil(2).clamp(1, 100);
    match list.source.paging() {
        Paging::Offset => {
            let mut offsets = vec![0];
            if n > limit {
                offsets.push(limit);
            }
            offsets
                .into_iter()
                .map(|offset| {
                    offset_case(c, list, given, Order::Forward, &[], offset, limit).map(|_| ())
                })
                .collect()
        }
        // A list that names its paging parameters otherwise: its first
        // page, in its default order and size.
        Paging::Cursor if !super::paging::WALKED_BY.iter().all(|n| list.reads(n)) => {
            vec![first_page(c, list, given)]
        }
        Paging::Cursor => {
            let direction = if pick.below(2) == 0 { "ASC" } else { "DESC" };
            let mut query: Vec<(String, String)> = list.query(given);
            query.push((names::DIRECTION.into(), direction.into()));
            let what = format!("{}?{}", list.source.label, query_text(&query));
            let expected = due(list, given, Some(direction));
            let result = walk(c, &list.source, &query, Some(limit as u64), 3, &what).and_then(
                |(walked, last)| {
                    let whole = walked.rows.len() < limit * 3;
                    judge_walk(c, list, &walked, &last, &expected, whole, &what)
                },
            );
            vec![result]
        }
    }
}

/// Judges `given` on `list` in one request: the first page of up to 100
/// rows (the list's default order), for a rule that asks many values and
/// only needs to know which rows a value keeps.
pub(super) fn judge_page(c: &Check<'_>, list: &ListModel, given: &[Given]) -> Result<(), Finding> {
    let limit = 100.min(list.cap as usize).max(1);
    match list.source.paging() {
        Paging::Offset => offset_case(c, list, given, Order::Forward, &[], 0, limit).map(|_| ()),
        Paging::Cursor if !list.reads(names::LIMIT) => first_page(c, list, given),
        Paging::Cursor => {
            let mut query: Vec<(String, String)> = list.query(given);
            query.push((names::LIMIT.into(), limit.to_string()));
            let what = format!("{}?{}", list.source.label, query_text(&query));
            let got = super::paging::fetch(c, &list.source, &query);
            let expected = due(list, given, None);
            super::paging::judge_rows(c, &got, list, &expected.slice(0, limit), &what)
        }
    }
}

/// `given` on a cursor list's first page asked with no paging parameter:
/// the rows it keeps, in the default order (DESC), the default page size
/// of them (Limits).
fn first_page(c: &Check<'_>, list: &ListModel, given: &[Given]) -> Result<(), Finding> {
    let query: Vec<(String, String)> = list.query(given);
    let what = format!("{}?{}", list.source.label, query_text(&query));
    let got = super::paging::fetch(c, &list.source, &query);
    let expected = due(list, given, None);
    let size = list.source.default_page_size().unwrap_or(100) as usize;
    super::paging::judge_rows(c, &got, list, &expected.slice(0, size), &what)
}

fn run(c: &Check<'_>, cases: Vec<(&ListModel, Vec<Given>)>) -> Outcome {
    if cases.is_empty() {
        return Outcome::skipped(
            "no list showed rows to filter by a filter the server reads (wire.filter-names lists the filters it does not read under WIRE.md's names)",
        );
    }
    let results = c.map(&cases, |(list, given)| {
        let mut pick = Picker::new(
            c.ctx.options.seed,
            &format!(
                "{}{:?}",
                c.rule,
                given.iter().map(Given::describe).collect::<Vec<_>>()
            ),
        );
        judge(c, list, given, &mut pick)
    });
    let mut judge = Judge::default();
    results.into_iter().flatten().for_each(|r| judge.result(r));
    judge.outcome()
}

fn alone(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    for list in filterable(c) {
        let mut pick = Picker::new(c.ctx.options.seed, &format!("alone {}", list.source.label));
        for param in list.read_filters() {
            for value in candidates(list, param, &mut pick) {
                cases.push((list, vec![Given::one(param, value)]));
            }
        }
    }
    run(c, cases)
}

fn combined(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    for list in filterable(c) {
        let mut pick = Picker::new(c.ctx.options.seed, &format!("pairs {}", list.source.label));
        let params: Vec<_> = list.read_filters().collect();
        for (i, a) in params.iter().enumerate() {
            for b in &params[i + 1..] {
                for (x, y) in pairs(list, a, b, &mut pick) {
                    cases.push((list, vec![Given::one(a, x.clone()), Given::one(b, y)]));
                }
            }
        }
    }
    run(c, cases)
}

fn multi_value(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    for list in filterable(c) {
        let mut pick = Picker::new(
            c.ctx.options.seed,
            &format!("several {}", list.source.label),
        );
        for param in list.read_filters() {
            // A list that kept the rows of one value at most, whichever
            // form several were written in (`wire.filter-names` reports
            // it), is not asked for several in WIRE.md's form.
            let written = match (&list.several, param.filter().map(|f| f.many)) {
                (Several::Neither(_), Some(Many::Repeated)) => false,
                (_, many) => many.is_some_and(|m| m != Many::One),
            };
            if written {
                for values in by_size(list, param, &mut pick) {
                    cases.push((list, vec![Given { param, values }]));
                }
            }
        }
    }
    if cases.is_empty() {
        return Outcome::skipped(
            "no list showed two rows to filter by a filter the server reads (wire.filter-names lists the filters it does not read under WIRE.md's names)",
        );
    }
    run(c, cases)
}

/// The QR list's parts: without `type` it is the `STATIC` part.
fn qr_type(c: &Check<'_>) -> Outcome {
    let qrs = crate::contract::Op::get(OpId::Qrs);
    let Some(param) = qrs.role(|r| matches!(r, Role::Part { .. })) else {
        return Outcome::skipped("the QR list has no type");
    };
    let Role::Part { field, default } = param.role else {
        return Outcome::skipped("the QR list has no type");
    };
    let Some(plain) = c.ctx.model.list(OpId::Qrs) else {
        return Outcome::skipped("the QR list was not read");
    };
    let plain = match plain.usable() {
        Ok(l) => l,
        Err(u) => {
            return Outcome::judged(
                1,
                vec![c.fail(
                    &super::paging::ROWS_ANSWERED,
                    u.exchange(),
                    "the QR list could not be read",
                )],
            );
        }
    };
    let mut judge = Judge::default();
    // Every row of every part is of its type.
    for list in c.ctx.model.lists(OpId::Qrs) {
        let want = list
            .source
            .base
            .iter()
            .find(|(k, _)| k == param.wire)
            .map_or(default, |(_, v)| v.as_str());
        for (e, row) in list.pages.iter().flat_map(|e| {
            e.rows(list.source.rows)
                .into_iter()
                .flatten()
                .map(move |r| (e, r))
        }) {
            judge.check(row[field] == want, || {
                c.fail(
                    &QR_TYPE,
                    e,
                    format!(
                        "{}: QR code {} has type {}, not {want}",
                        list.source.label,
                        token_of(row),
                        crate::http::show(row.get(field))
                    ),
                )
            });
        }
    }
    // type=STATIC given is the list without type, page for page.
    let explicit = plain.source.clone().with(param.wire, default);
    let limit = (plain.len.unwrap_or(0) as usize).clamp(1, 100);
    let pages: Vec<usize> = vec![0, limit / 2];
    for offset in pages {
        let got = super::paging::fetch(
            c,
            &explicit,
            &[
                (names::LIMIT.into(), limit.to_string()),
                (names::OFFSET.into(), offset.to_string()),
            ],
        );
        let due: Vec<Value> = plain
            .head
            .iter()
            .skip(offset)
            .take(limit.min(plain.cap as usize))
            .cloned()
            .collect();
        let what = format!("qrs type={default} limit {limit} offset {offset}");
        judge.result(super::paging::judge_rows(
            c,
            &got,
            plain,
            &[plain.complete.then_some(due)],
            &what,
        ));
    }
    judge.outcome()
}
