//! cursor.*: cursor pagination of settlement batches and of a batch's
//! transactions and payouts, judged exactly against the model: the
//! default and largest pages, the order, whole walks, the counts on every
//! page, the end of a walk.

use aggpay_mock::Fault;
use proptest::prelude::*;
use serde_json::Value;

use super::paging::{Got, WALKED_BY, due, fetch, judge_rows, judge_walk, reading, walk, why_none};
use super::support::Judge;
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::Role;
use crate::contract::subject::{Said, Subject, on};
use crate::contract::{OpId, names};
use crate::http::Request;
use crate::model::ListModel;
use crate::model::expect::{Expected, Order};

/// Pages a walk at a small page size takes: at a remote staging every
/// page is a round trip.
const SMALL_WALK_PAGES: u64 = 8;
/// Pages a walk of a large list (read in windows) takes.
const PREFIX_PAGES: u64 = 3;
/// A list up to this many rows (by its count) is walked to its end.
const WHOLE_WALK_ROWS: u64 = 300;

/// The family's rules, as the catalogue lists them.
const RULES: &[Rule] = &[
    Rule {
        id: "cursor.default-limit",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Settlements (page size default 30, 0 means the default; invalid or empty direction means DESC); Limits",
        claims: &[
            DEFAULT_LIMIT,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
        ],
        summary: "without a limit, or with 0, a cursor list's first page is exactly its first 30 rows (newest first without a direction)",
        faults: &[
            Fault::DefaultLimit10,
            Fault::LaterPagesDropField,
            Fault::CursorSkipsRow,
            Fault::CursorAscAsDesc,
        ],
        judges: &[Subject::Param(on::cursor_limit)],
        run: Run::Check(default_limit),
    },
    Rule {
        id: "cursor.max-limit",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Settlements (maximum 100); Limits",
        claims: &[
            MAX_LIMIT,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
        ],
        summary: "limits 1 to 100 give exactly that many first rows; above 100 (beyond 64 bits too), 400 or exactly the first 100",
        faults: &[Fault::NoLimitCap, Fault::HugeNumber500],
        judges: &[Subject::Param(on::cursor_limit)],
        run: Run::Check(max_limit),
    },
    Rule {
        id: "cursor.order",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Settlements (sort direction: uppercase only, on the numeric id, invalid or empty means DESC); Limits",
        claims: &[
            DIRECTION,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
        ],
        summary: "generated directions: exactly ASC gives the first rows ascending on id; anything else (lowercase, empty, garbage) the last rows descending",
        faults: &[
            Fault::LowercaseAsc,
            Fault::LaterPagesDropField,
            Fault::CursorSkipsRow,
            Fault::CursorAscAsDesc,
        ],
        judges: &[Subject::Param(on::cursor_direction)],
        run: Run::Check(order),
    },
    Rule {
        id: "cursor.walk",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Settlements (cursor: pass the previous next_cursor); Conventions 5",
        claims: &[
            WALK,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
            super::paging::CURSOR_PAGES,
            super::paging::CURSOR_COUNTS,
        ],
        summary: "walks ASC and DESC at several page sizes serve exactly the list's rows, once each, in order, with the same counts on every page, and end",
        faults: &[
            Fault::CursorRepeat,
            Fault::NumericIdAsNumber,
            Fault::DefaultLimit10,
            Fault::CursorInclusive,
            Fault::PayoutsInTransactions,
            Fault::PastEndWraps,
            Fault::LaterPagesDropField,
            Fault::LaterPagesCountDrift,
            Fault::CursorSkipsRow,
            Fault::CursorAscAsDesc,
        ],
        judges: &[
            Subject::Param(|_, p| p.role == Role::Cursor),
            Subject::Said(Said::CursorCounts),
        ],
        run: Run::Check(walks),
    },
    Rule {
        id: "cursor.counts",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Conventions 5 (filtered_count and total_count, numeric strings)",
        claims: &[COUNTS],
        summary: "filtered_count is the rows matching and total_count the whole list, numeric strings, on every cursor list and status filter",
        faults: &[
            Fault::FilteredExceedsTotal,
            Fault::PayoutsInTransactions,
            Fault::CursorSkipsRow,
            Fault::StatusFilterIgnored,
            Fault::CursorAscAsDesc,
        ],
        judges: &[Subject::Said(Said::CursorCounts)],
        run: Run::Check(counts),
    },
    Rule {
        id: "cursor.bad-batch-token",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Limits (sb_, exactly 39 characters); Settlements (400 error.bad_request); Path parameters",
        claims: &[super::errors::MALFORMED_TOKEN_REFUSED],
        summary: "generated malformed batch tokens (every wrong length, wrong prefixes) get 400, in the query and in the path",
        faults: &[Fault::LenientBatchToken],
        judges: &[
            Subject::PathId(|op, id| id.exact_len.is_some() && on::path_id_not_rotated(op, id)),
            Subject::Error(on::bad_request),
        ],
        run: Run::Check(bad_batch_token),
    },
    Rule {
        id: "cursor.only-settlement-txns",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Settlements (only_settlement_txns)",
        claims: &[
            ONLY_SETTLEMENT_TXNS,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
            super::envelope::VALID_REQUEST_SUCCEEDS,
        ],
        summary: "only_settlement_txns=true gives the batch's payouts and no transactions; false, or no flag (the default), its transactions and no payouts",
        faults: &[Fault::PayoutsInTransactions, Fault::ShortBatchToken],
        judges: &[Subject::Param(|_, p| p.role == Role::RowKind)],
        run: Run::Check(only_settlement_txns),
    },
    Rule {
        id: "cursor.end",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Settlements (cursor: omit or 0 for the first page; pass the previous next_cursor); Limits",
        claims: &[
            END,
            super::paging::ROWS_ANSWERED,
            super::paging::SAME_RECORD,
            super::paging::CURSOR_PAGES,
            super::paging::CURSOR_COUNTS,
        ],
        summary: "cursor=0 is the first page; a walk whose rows are an exact multiple of the page ends with every row once, the last page's cursor giving an empty page",
        faults: &[
            Fault::CursorZeroLiteral,
            Fault::NumericIdAsNumber,
            Fault::CursorRepeat,
            Fault::CursorInclusive,
            Fault::PastEndWraps,
            Fault::LaterPagesDropField,
            Fault::LaterPagesCountDrift,
            Fault::CursorSkipsRow,
            Fault::CursorAscAsDesc,
        ],
        judges: &[Subject::Param(|_, p| p.role == Role::Cursor)],
        run: Run::Check(end),
    },
];

const DEFAULT_LIMIT: Claim = Claim {
    holds: "without a page size, or with 0, a cursor list's first page is its first 30 rows",
    says: &["| page size | integer | default 30, maximum 100, 0 means the default |"],
};
const MAX_LIMIT: Claim = Claim {
    holds: "a page size of 1 to 100 gives that many first rows; above 100, a 400 or the first 100",
    says: &["| page size | integer | default 30, maximum 100, 0 means the default |"],
};
const DIRECTION: Claim = Claim {
    holds: "exactly ASC sorts ascending on the numeric id; anything else sorts descending",
    says: &[
        "| sort direction | ASC or DESC | uppercase only; sorts on the numeric id; invalid or empty means DESC |",
    ],
};
const WALK: Claim = Claim {
    holds: "a walk that follows next_cursor serves the list's rows and ends",
    says: &["| cursor | integer | pass the previous next_cursor; omit or 0 for the first page |"],
};
const COUNTS: Claim = Claim {
    holds: "filtered_count is the rows matching and total_count the whole list, numeric strings",
    says: &[
        "Cursor lists (settlement batches and batch transactions) also return `next_cursor` and a `count` object with `filtered_count` and `total_count` (numeric strings).",
    ],
};
const ONLY_SETTLEMENT_TXNS: Claim = Claim {
    holds: "only_settlement_txns=true gives the payouts and no transactions; false or no flag, the transactions and no payouts",
    says: &[
        "default false; when true, settlement payouts are returned in `settlement_transactions` instead of the payment and refund transactions in `transactions`",
    ],
};
const END: Claim = Claim {
    holds: "cursor 0 is the first page, and the cursor after the last row gives an empty page",
    says: &["| cursor | integer | pass the previous next_cursor; omit or 0 for the first page |"],
};

pub fn rules() -> Vec<Rule> {
    RULES.to_vec()
}

/// The cursor lists judged: the batches, the largest transactions list
/// read, a small one, and payouts.
fn cursor_lists<'a>(c: &Check<'a>) -> Vec<&'a ListModel> {
    let model = &c.ctx.model;
    let mut out: Vec<&ListModel> = model.list(OpId::Batches).into_iter().collect();
    let txns = model.transaction_lists();
    out.extend(txns.first().copied());
    out.extend(
        txns.iter()
            .rev()
            .find(|l| l.complete && l.len.is_some_and(|n| (2..=100).contains(&n)))
            .copied(),
    );
    out.extend(
        model
            .lists(OpId::Transactions)
            .filter(|l| !l.source.base.is_empty())
            .take(1),
    );
    out.retain(|l| l.usable().is_ok());
    let mut seen = std::collections::HashSet::new();
    out.retain(|l| seen.insert(l.source.label.clone()));
    out
}

fn query(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// The first page for `query`, judged as `expected.slice(0, rows)`.
fn first_page(
    c: &Check<'_>,
    list: &ListModel,
    q: &[(String, String)],
    expected: &Expected<'_>,
    rows: usize,
    what: &str,
) -> Result<Got, Finding> {
    let got = fetch(c, &list.source, q);
    judge_rows(c, &got, list, &expected.slice(0, rows), what)?;
    Ok(got)
}

fn default_limit(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    for list in cursor_lists(c) {
        for (q, direction) in [
            (vec![], None),
            (vec![(names::LIMIT, "0".to_owned())], None),
            (
                vec![
                    (names::LIMIT, "0".to_owned()),
                    (names::DIRECTION, "ASC".to_owned()),
                ],
                Some("ASC"),
            ),
        ] {
            let q = query(&q);
            if list.reads_all(&q) {
                cases.push((list, q, direction));
            }
        }
    }
    let results = c.map(&cases, |(list, q, direction)| {
        let what = format!("{} {q:?}", list.source.label);
        first_page(c, list, q, &due(list, &[], *direction), 30, &what).map(|_| ())
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

fn max_limit(c: &Check<'_>) -> Outcome {
    let limits = [
        "1",
        "7",
        "99",
        "100",
        "101",
        "1000",
        "18446744073709551615",
        "99999999999999999999999",
    ];
    let lists = cursor_lists(c);
    let reading = reading(&lists, &[names::LIMIT, names::DIRECTION]);
    if reading.is_empty() {
        return Outcome::skipped(why_none(&lists, "cursor"));
    }
    let mut cases = Vec::new();
    for (i, list) in reading.into_iter().enumerate() {
        // Every size on the batches; on the other lists, the edges.
        for limit in limits
            .iter()
            .filter(|l| i == 0 || ["1", "100", "101", "99999999999999999999999"].contains(l))
        {
            cases.push((list, *limit));
        }
    }
    let results = c.map(&cases, |(list, limit)| {
        let q = query(&[
            (names::LIMIT, (*limit).to_owned()),
            (names::DIRECTION, "ASC".into()),
        ]);
        let got = fetch(c, &list.source, &q);
        let asked = limit.parse::<u64>().unwrap_or(u64::MAX);
        let what = format!("{} limit {limit}", list.source.label);
        if got.e.refused() && asked > 100 {
            return Ok(());
        }
        let rows = asked.min(100) as usize;
        judge_rows(
            c,
            &got,
            list,
            &due(list, &[], Some("ASC")).slice(0, rows),
            &what,
        )
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

fn order(c: &Check<'_>) -> Outcome {
    let all = cursor_lists(c);
    let lists = reading(&all, &[names::DIRECTION, names::LIMIT]);
    if lists.is_empty() {
        return Outcome::skipped(why_none(&all, "cursor"));
    }
    let n = lists.len();
    let directions = prop_oneof![
        Just("ASC".to_owned()),
        Just("DESC".to_owned()),
        Just("asc".to_owned()),
        Just("desc".to_owned()),
        Just(String::new()),
        Just("Asc".to_owned()),
        "[A-Za-z]{1,8}",
    ];
    c.property((0..n, directions, 2u64..=60), |(i, direction, limit)| {
        let list = lists[*i];
        let q = query(&[
            (names::DIRECTION, direction.clone()),
            (names::LIMIT, limit.to_string()),
        ]);
        let expected = due(list, &[], Some(direction));
        let what = format!(
            "{} direction {direction:?} limit {limit}",
            list.source.label
        );
        first_page(c, list, &q, &expected, *limit as usize, &what).map(|_| ())
    })
}

/// The walks of one list: whole ones when the model knows the whole list,
/// prefixes of a few pages otherwise.
fn walks_of(list: &ListModel) -> Vec<(&'static str, Option<u64>, u64)> {
    // A list the server says is small is walked whole even when its model
    // is not (its walk did not end where the count said it would).
    let len = list.len.unwrap_or(0);
    if !list.complete && len > WHOLE_WALK_ROWS {
        return vec![
            ("ASC", Some(37), PREFIX_PAGES),
            ("DESC", Some(100), PREFIX_PAGES),
            ("DESC", None, PREFIX_PAGES),
        ];
    }
    let small = len.div_ceil(SMALL_WALK_PAGES).clamp(2, 100);
    let pages = |limit: u64| len.div_ceil(limit) + 2;
    vec![
        ("DESC", None, pages(30)),
        ("ASC", Some(100), pages(100)),
        ("ASC", Some(small), pages(small)),
    ]
}

fn walks(c: &Check<'_>) -> Outcome {
    let all = cursor_lists(c);
    let lists = reading(&all, WALKED_BY);
    if lists.is_empty() {
        return Outcome::skipped(why_none(&all, "cursor"));
    }
    let mut cases = Vec::new();
    for list in lists {
        for (direction, limit, pages) in walks_of(list) {
            cases.push((list, direction, limit, pages));
        }
    }
    let results = c.map(&cases, |(list, direction, limit, pages)| {
        let q = query(&[(names::DIRECTION, (*direction).to_owned())]);
        let what = format!("{} {direction} walk at limit {limit:?}", list.source.label);
        let (walked, last) = walk(c, &list.source, &q, *limit, *pages, &what)?;
        let whole = list.complete || list.len.is_some_and(|n| n <= WHOLE_WALK_ROWS);
        if whole && walked.pages >= *pages {
            return Err(c.fail(
                &WALK,
                &last.e,
                format!(
                    "{what}: no end after {} pages ({} rows promised)",
                    walked.pages,
                    list.len.unwrap_or(0)
                ),
            ));
        }
        judge_walk(
            c,
            list,
            &walked,
            &last,
            &due(list, &[], Some(direction)),
            whole,
            &what,
        )
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

fn counts(c: &Check<'_>) -> Outcome {
    let mut cases: Vec<(&ListModel, Vec<(String, String)>)> = cursor_lists(c)
        .into_iter()
        .map(|l| (l, Vec::new()))
        .collect();
    if let Some(batches) = c
        .ctx
        .model
        .list(OpId::Batches)
        .filter(|l| l.usable().is_ok() && l.reads(names::STATUS))
    {
        for s in 0..4 {
            cases.push((batches, query(&[(names::STATUS, s.to_string())])));
        }
    }
    let results = c.map(&cases, |(list, q)| {
        let got = fetch(c, &list.source, q);
        let what = format!("{} {q:?}", list.source.label);
        let data = got.e.data();
        let raw = |k: &str| data.map(|d| &d["count"][k]);
        let (Some(filtered), Some(total)) = (got.count, got.total) else {
            return Err(c.fail(
                &COUNTS,
                &got.e,
                format!(
                    "{what}: counts {} / {} are not numeric strings",
                    crate::http::show(raw("filtered_count")),
                    crate::http::show(raw("total_count"))
                ),
            ));
        };
        if !raw("filtered_count").is_some_and(Value::is_string) {
            return Err(c.fail(
                &COUNTS,
                &got.e,
                format!("{what}: filtered_count is not a string"),
            ));
        }
        if filtered > total {
            return Err(c.fail(
                &COUNTS,
                &got.e,
                format!("{what}: filtered_count {filtered} > total_count {total}"),
            ));
        }
        let given: Vec<_> = q
            .iter()
            .filter_map(|(k, v)| {
                list.source
                    .op
                    .param(k)
                    .map(|p| crate::model::expect::Given::one(p, v.clone()))
            })
            .collect();
        let expected = Expected::of(list, &given, Order::Forward);
        if expected.whole
            && !expected
                .alternatives
                .iter()
                .any(|a| a.len() as u64 == filtered)
        {
            return Err(c.fail(
                &COUNTS,
                &got.e,
                format!(
                    "{what}: filtered_count {filtered}, but {} rows match",
                    expected.alternatives.first().map_or(0, Vec::len)
                ),
            ));
        }
        match list.total {
            Some(want) if want != total => Err(c.fail(
                &COUNTS,
                &got.e,
                format!("{what}: total_count {total}, the unfiltered list says {want}"),
            )),
            _ => Ok(()),
        }
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

fn bad_batch_token(c: &Check<'_>) -> Outcome {
    let prefixes = prop::sample::select(vec![
        "sb_", "sB_", "SB_", "sb-", "xb_", "s_b", "sb", "txn_", "",
    ]);
    let tokens = (prefixes, "[a-z0-9-]{0,50}")
        .prop_map(|(p, tail)| format!("{p}{tail}"))
        .prop_filter("malformed", |t| {
            !(t.is_empty() || (t.starts_with("sb_") && t.len() == 39))
        });
    // The batch token filter's name is WIRE.md's (API.md gives it by
    // purpose only): a server that does not read it is asked in the path.
    let filter_read = c
        .ctx
        .model
        .list(OpId::Batches)
        .is_none_or(|l| l.reads(names::BATCH_ID));
    c.property((tokens, any::<bool>()), |(token, in_path)| {
        let in_path = *in_path || !filter_read;
        let e = if in_path {
            c.send(Request::to_one(OpId::Transactions, token))
        } else {
            c.send(Request::to(OpId::Batches).q(names::BATCH_ID, token))
        };
        if e.refused() {
            Ok(())
        } else {
            let place = if in_path { "path" } else { "batch_id" };
            Err(c.fail(
                &super::errors::MALFORMED_TOKEN_REFUSED,
                &e,
                format!(
                    "malformed token {token:?} ({} characters) in the {place}: not refused as a bad request",
                    token.chars().count()
                ),
            ))
        }
    })
}

fn only_settlement_txns(c: &Check<'_>) -> Outcome {
    let model = &c.ctx.model;
    // No batch's rows could be read at all: that is the answer to judge.
    if let Some(unread) = model
        .lists(OpId::Transactions)
        .filter(|l| l.source.base.is_empty())
        .all(|l| l.usable().is_err())
        .then(|| {
            model
                .lists(OpId::Transactions)
                .find_map(|l| l.usable().err())
        })
        .flatten()
    {
        return Outcome::judged(
            1,
            vec![c.fail(
                &super::envelope::VALID_REQUEST_SUCCEEDS,
                unread.exchange(),
                "no batch's transactions could be read to judge only_settlement_txns",
            )],
        );
    }
    let Some(payouts) = model
        .lists(OpId::Transactions)
        .find(|l| !l.source.base.is_empty() && l.usable().is_ok())
    else {
        return Outcome::skipped("no batch's payouts could be read");
    };
    let Some(txns) = model
        .lists(OpId::Transactions)
        .find(|l| l.source.base.is_empty() && l.source.path == payouts.source.path)
        .filter(|l| l.usable().is_ok())
    else {
        return Outcome::skipped("no batch's transactions could be read");
    };
    // Each flag, and the rows it must give: (flag, the list, the other
    // rows key that must be empty).
    let cases: [(Option<&str>, &ListModel, &str); 3] = [
        (Some("true"), payouts, "transactions"),
        (Some("false"), txns, "settlement_transactions"),
        (None, txns, "settlement_transactions"),
    ];
    let results = c.map(&cases, |(flag, list, empty)| {
        // Ascending pages of 100 where the list reads those names; its
        // default order and page size where it names them otherwise.
        let mut r = Request::get(list.source.path.clone());
        let direction = list.reads(names::DIRECTION).then_some("ASC");
        if let Some(d) = direction {
            r = r.q(names::DIRECTION, d);
        }
        let rows = if list.reads(names::LIMIT) {
            r = r.q(names::LIMIT, 100);
            100
        } else {
            list.source.default_page_size().map_or(100, |d| d as usize)
        };
        if let Some(f) = flag {
            r = r.q(names::ONLY_SETTLEMENT_TXNS, f);
        }
        let asked = flag.map_or_else(
            || "no only_settlement_txns".to_owned(),
            |f| format!("only_settlement_txns={f}"),
        );
        let e = c.send(r);
        let data = e.data();
        if !data
            .and_then(|d| d[*empty].as_array())
            .is_some_and(Vec::is_empty)
        {
            return Err(c.fail(
                &ONLY_SETTLEMENT_TXNS,
                &e,
                format!(
                    "{asked}: {empty} is {}, expected []",
                    crate::http::show(data.and_then(|d| d.get(*empty)))
                ),
            ));
        }
        let got = super::paging::read(e, &list.source);
        judge_rows(
            c,
            &got,
            list,
            &due(list, &[], direction).slice(0, rows),
            &asked,
        )
    });
    let mut judge = Judge::default();
    results.into_iter().for_each(|r| judge.result(r));
    judge.outcome()
}

/// A page size that makes `count` rows an exact multiple of it, in a few
/// pages (at most 30), or `None`.
fn exact_limit(count: u64) -> Option<u64> {
    if count == 0 {
        return None;
    }
    (2..=100)
        .rev()
        .find(|l| count.is_multiple_of(*l) && count / l <= 30 && count / l >= 2)
        .or((count <= 100).then_some(count))
}

fn end(c: &Check<'_>) -> Outcome {
    let all = cursor_lists(c);
    let lists = reading(&all, WALKED_BY);
    if lists.is_empty() {
        return Outcome::skipped(why_none(&all, "cursor"));
    }
    let jobs: Vec<(&ListModel, &str)> = lists
        .iter()
        .flat_map(|l| [(*l, "ASC"), (*l, "DESC")])
        .collect();
    let results = c.map(&jobs, |(list, direction)| end_of(c, list, direction));
    let mut judge = Judge::default();
    results.into_iter().flatten().for_each(|r| judge.result(r));
    if judge.cases == 0 {
        return Outcome::skipped("no cursor list could be read");
    }
    judge.outcome()
}

/// `cursor.end` on one list in one direction.
fn end_of(c: &Check<'_>, list: &ListModel, direction: &str) -> Vec<Result<(), Finding>> {
    let mut out = Vec::new();
    let expected = due(list, &[], Some(direction));
    let zero = query(&[
        (names::DIRECTION, direction.to_owned()),
        (names::LIMIT, "5".into()),
        (names::CURSOR, "0".into()),
    ]);
    let what = format!("{} {direction} cursor=0", list.source.label);
    out.push(first_page(c, list, &zero, &expected, 5, &what).map(|_| ()));
    let Some(limit) = list.len.filter(|_| list.complete).and_then(exact_limit) else {
        return out;
    };
    let q = query(&[(names::DIRECTION, direction.to_owned())]);
    let what = format!(
        "{} {direction} walk at limit {limit} ({} rows: an exact multiple)",
        list.source.label,
        list.len.unwrap_or(0)
    );
    let pages = list.len.unwrap_or(0) / limit + 2;
    out.push(
        walk(c, &list.source, &q, Some(limit), pages, &what).and_then(|(walked, last)| {
            judge_walk(c, list, &walked, &last, &expected, true, &what)?;
            // The last page was full: whatever its cursor gives next must
            // be empty (the walk above followed it, unless the cursor said
            // the end).
            match last.rows.as_ref() {
                Some(rows)
                    if rows.is_empty()
                        || last
                            .next
                            .as_deref()
                            .is_none_or(|n| n.is_empty() || n == "0") =>
                {
                    Ok(())
                }
                _ => Err(c.fail(
                    &END,
                    &last.e,
                    format!("{what}: the page after the last row is not empty"),
                )),
            }
        }),
    );
    out
}
