//! What the list rules share: a page fetched and read, judged exactly
//! against the model (the rows, their order, every record field by field,
//! the counts), and cursor walks that follow the server's own cursors.

use std::collections::HashSet;

use serde_json::Value;

use super::{Check, Claim, Finding};
use crate::contract::{Paging, names};
use crate::http::Exchange;
use crate::model::expect::{Expected, Given, Order, difference, differs, query_text, tokens};
use crate::model::num;
use crate::model::{ListModel, Source, id_of, token_of};

pub(super) const ROWS_ANSWERED: Claim = Claim {
    holds: "a valid list request succeeds with its records under its named key",
    says: &[
        "List operations return their records under a named key of `data` together with a `count`.",
    ],
};
pub(super) const SAME_RECORD: Claim = Claim {
    holds: "a record is the same, field by field, wherever it is listed",
    says: &["Most records carry a numeric `id` serialized as a string, and a prefixed `token`."],
};
pub(super) const COUNT_MEANS: Claim = Claim {
    holds: "an offset list's count is the rows matching, the whole list, or the page",
    says: &[
        "List operations return their records under a named key of `data` together with a `count`.",
    ],
};
pub(super) const CURSOR_PAGES: Claim = Claim {
    holds: "a cursor walk serves each row once, in the order asked, no more rows per page than the page size, and never hands out a cursor twice",
    says: &[
        "| sort direction | ASC or DESC | uppercase only; sorts on the numeric id; invalid or empty means DESC |",
        "| page size | integer | default 30, maximum 100, 0 means the default |",
        "| cursor | integer | pass the previous next_cursor; omit or 0 for the first page |",
    ],
};
pub(super) const CURSOR_COUNTS: Claim = Claim {
    holds: "a cursor list's counts are the same on every page of a walk: filtered_count the rows matching, total_count the unfiltered list's",
    says: &[
        "Cursor lists (settlement batches and batch transactions) also return `next_cursor` and a `count` object with `filtered_count` and `total_count` (numeric strings).",
    ],
};

/// A list page as it came back.
#[derive(Debug)]
pub struct Got {
    /// The exchange.
    pub e: Exchange,
    /// Its rows, when it succeeded with a rows array.
    pub rows: Option<Vec<Value>>,
    /// Offset lists: `count`; cursor lists: `filtered_count`.
    pub count: Option<u64>,
    /// Cursor lists: `total_count`.
    pub total: Option<u64>,
    /// Cursor lists: `next_cursor`.
    pub next: Option<String>,
}

/// The lists of `lists` that read every paging name of `needed`. A list
/// that shows it names one otherwise (API.md gives it by purpose only) is
/// not judged by what that name does: `wire.paging-names` reports it.
pub fn reading<'a>(lists: &[&'a ListModel], needed: &[&str]) -> Vec<&'a ListModel> {
    lists
        .iter()
        .filter(|l| needed.iter().all(|n| l.reads(n)))
        .copied()
        .collect()
}

/// The paging names a cursor walk sends.
pub const WALKED_BY: &[&str] = &[names::DIRECTION, names::LIMIT, names::CURSOR];

/// Why a rule has no case left over `lists` (of `kind`, "offset" or
/// "cursor"): none was read, or those read name their paging parameters
/// otherwise.
pub fn why_none(lists: &[&ListModel], kind: &str) -> String {
    let otherwise: Vec<String> = lists
        .iter()
        .filter_map(|l| {
            let n = l.named_otherwise.as_ref()?;
            Some(format!(
                "{} does not read {}",
                l.source.label,
                n.names.join(" or ")
            ))
        })
        .collect();
    if otherwise.is_empty() {
        format!("no {kind} list could be read")
    } else {
        format!(
            "not applicable: {} (API.md gives those names by purpose only; see wire.paging-names)",
            otherwise.join("; ")
        )
    }
}

/// Sends `query` to `source`'s list (its base query first).
pub fn fetch(c: &Check<'_>, source: &Source, query: &[(String, String)]) -> Got {
    let e = c.send(source.request().with_query(query));
    read(e, source)
}

/// Pages an offset list is read in at most, to its end.
const MAX_PAGES: usize = 200;

/// Reads an offset list to its end by its own pagination: `limit` 100
/// asked, each next page at the offset of the rows received so far, until
/// an empty page. API.md shows no maximum page size for most offset
/// lists, so a server may give fewer rows a page than asked, and a short
/// page is not the end. The rows of every page together, the first page's
/// exchange as evidence (a page that fails is returned as it is).
pub fn fetch_whole(c: &Check<'_>, list: &ListModel, query: &[(String, String)]) -> Got {
    let page = |offset: usize| {
        let mut q = query.to_vec();
        q.push((names::LIMIT.to_owned(), "100".to_owned()));
        q.push((names::OFFSET.to_owned(), offset.to_string()));
        fetch(c, &list.source, &q)
    };
    let mut first = page(0);
    // A list that does not read `offset` answers its first page at
    // every offset: that page is all it shows.
    let Some(mut rows) = first.rows.clone().filter(|_| list.reads(names::OFFSET)) else {
        return first;
    };
    for _ in 0..MAX_PAGES {
        if rows.is_empty() {
            break;
        }
        let next = page(rows.len());
        match next.rows {
            Some(more) if more.is_empty() => break,
            Some(more) => rows.extend(more),
            None => return next,
        }
    }
    first.rows = Some(rows);
    first
}

/// Reads a list page.
pub fn read(e: Exchange, source: &Source) -> Got {
    let data = e.data();
    let rows = data
        .and_then(|d| d.get(source.rows))
        .and_then(Value::as_array)
        .cloned();
    let count = data.map(|d| &d["count"]);
    let count_of = |v: Option<&Value>| v.and_then(|v| num(v).or_else(|| v.as_u64()));
    Got {
        rows,
        count: count_of(count.map(|c| &c["filtered_count"])).or_else(|| count_of(count)),
        total: count_of(count.map(|c| &c["total_count"])),
        next: data
            .and_then(|d| d["next_cursor"].as_str())
            .map(str::to_owned),
        e,
    }
}

impl Got {
    /// The rows, or a failure saying there were none.
    pub fn rows_or_fail(&self, c: &Check<'_>, what: &str) -> Result<&Vec<Value>, Finding> {
        self.rows.as_ref().ok_or_else(|| {
            c.fail(
                &ROWS_ANSWERED,
                &self.e,
                format!("{what}: a valid request did not succeed with a rows array"),
            )
        })
    }
}

/// Every row of `rows` known in `list` must be the same record there,
/// field by field.
pub fn same_records(
    c: &Check<'_>,
    e: &Exchange,
    list: &ListModel,
    rows: &[Value],
    what: &str,
) -> Result<(), Finding> {
    let mut fields = list.source.fields().to_vec();
    if c.ctx.options.allow_writes {
        let written = crate::contract::resources::Written::fields_of(list.source.op.id);
        fields.retain(|f| !written.contains(&f.name));
    }
    let known = list.by_token();
    for row in rows {
        let token = token_of(row);
        if let Some(known) = known.get(token.as_str())
            && let Some(why) = differs(row, known, &fields)
        {
            return Err(c.fail(&SAME_RECORD, e, format!("{what}: record {token}: {why}")));
        }
    }
    Ok(())
}

/// Judges one page against the rows due there: one of the legal
/// alternatives exactly (unknown ones are not judged), every record equal
/// to the model's. The rows due are what the running rule's case asks
/// for: a page that is not them breaks the rule's main claim (a page
/// size's, a filter's, a direction's sentence).
pub fn judge_rows(
    c: &Check<'_>,
    got: &Got,
    list: &ListModel,
    due: &[Option<Vec<Value>>],
    what: &str,
) -> Result<(), Finding> {
    let rows = got.rows_or_fail(c, what)?;
    let known: Vec<&Vec<Value>> = due.iter().flatten().collect();
    if !known.is_empty() && !known.iter().any(|want| tokens(want) == tokens(rows)) {
        let closest = known
            .iter()
            .min_by_key(|w| w.len().abs_diff(rows.len()))
            .copied()
            .unwrap_or(known[0]);
        let legal = if known.len() > 1 {
            format!(" (none of the {} legal readings)", known.len())
        } else {
            String::new()
        };
        return Err(c.fail(
            c.main_claim(),
            &got.e,
            format!("{what}: {}{legal}", difference(rows, closest)),
        ));
    }
    same_records(c, &got.e, list, rows, what)
}

/// What an offset list's `count` may mean (API.md does not say): the rows
/// matching, the whole list, or the rows of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Meanings {
    /// The rows matching the filters.
    pub matching: bool,
    /// The whole list, filters aside.
    pub whole: bool,
    /// The rows of this page.
    pub page: bool,
}

impl Meanings {
    /// Every meaning.
    pub const ALL: Meanings = Meanings {
        matching: true,
        whole: true,
        page: true,
    };

    /// The meanings both allow.
    pub fn and(self, other: Meanings) -> Meanings {
        Meanings {
            matching: self.matching && other.matching,
            whole: self.whole && other.whole,
            page: self.page && other.page,
        }
    }

    /// True when none is left.
    pub fn none(self) -> bool {
        !(self.matching || self.whole || self.page)
    }
}

/// Which meanings an offset list's count fits, for a request whose
/// matching rows may be any of `matching` (one per legal reading).
pub fn meanings(count: u64, matching: &[usize], whole: Option<u64>, page: usize) -> Meanings {
    Meanings {
        matching: matching.iter().any(|m| *m as u64 == count),
        whole: whole == Some(count),
        page: page as u64 == count,
    }
}

/// Judges a filtered, paged request of an offset list: the page is the
/// slice of the expected rows, and the count has one of its meanings.
pub fn offset_case(
    c: &Check<'_>,
    list: &ListModel,
    given: &[Given],
    order: Order,
    extra: &[(String, String)],
    offset: usize,
    limit: usize,
) -> Result<Meanings, Finding> {
    let mut query: Vec<(String, String)> = list.query(given);
    query.extend(extra.iter().cloned());
    query.push((names::LIMIT.into(), limit.to_string()));
    query.push((names::OFFSET.into(), offset.to_string()));
    let what = format!("{}?{}", list.source.label, query_text(&query));
    let got = fetch(c, &list.source, &query);
    let expected = Expected::of(list, given, order);
    // A server may cap a page below what was asked (API.md shows no
    // maximum for these lists): the model's pages tell its cap. A list
    // that names its paging parameters otherwise answers its own first
    // page whatever `limit` and `offset` say.
    let limit = if list.reads(names::LIMIT) {
        limit.min(list.cap as usize)
    } else {
        list.cap as usize
    };
    let offset = if list.reads(names::OFFSET) { offset } else { 0 };
    judge_rows(c, &got, list, &expected.slice(offset, limit), &what)?;
    let rows = got.rows.as_ref().map_or(0, Vec::len);
    let Some(count) = got.count else {
        return Err(c.fail(&COUNT_MEANS, &got.e, format!("{what}: no count")));
    };
    if !expected.whole {
        return Ok(Meanings::ALL);
    }
    let matching: Vec<usize> = expected.alternatives.iter().map(Vec::len).collect();
    let fits = meanings(count, &matching, list.len, rows);
    if fits.none() {
        return Err(c.fail(
            &COUNT_MEANS,
            &got.e,
            format!(
                "{what}: count {count} is neither the rows matching ({}), the whole list ({}) nor the page ({rows})",
                matching
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" or "),
                list.len.map_or("unknown".into(), |l| l.to_string())
            ),
        ));
    }
    Ok(fits)
}

/// A cursor walk's result.
#[derive(Debug, Default)]
pub struct Walked {
    /// Every row, in the order served.
    pub rows: Vec<Value>,
    /// Pages fetched.
    pub pages: u64,
}

/// Walks a cursor list with `query` (direction and filters) at `limit`,
/// following `next_cursor` under WIRE.md's end rules, for at most
/// `max_pages` pages (a walk that reaches it stops there: it is a
/// prefix). Judges every page on the way: rows strictly in order, none
/// twice, no cursor twice, the counts the same on every page.
pub fn walk(
    c: &Check<'_>,
    source: &Source,
    query: &[(String, String)],
    limit: Option<u64>,
    max_pages: u64,
    what: &str,
) -> Result<(Walked, Got), Finding> {
    let effective = limit.filter(|l| *l > 0).unwrap_or(30).min(100) as usize;
    let ascending = query
        .iter()
        .any(|(k, v)| k == names::DIRECTION && v == "ASC");
    let mut q = query.to_vec();
    if let Some(l) = limit {
        q.push((names::LIMIT.into(), l.to_string()));
    }
    let mut walked = Walked::default();
    let mut ids = HashSet::new();
    let mut cursors = HashSet::new();
    let mut current = fetch(c, source, &q);
    let first_counts = (current.count, current.total);
    loop {
        walked.pages += 1;
        let rows = current.rows_or_fail(c, what)?.clone();
        if (current.count, current.total) != first_counts {
            return Err(c.fail(
                &CURSOR_COUNTS,
                &current.e,
                format!(
                    "{what}: page {} says filtered_count {:?} and total_count {:?}, the first page {:?} and {:?}",
                    walked.pages, current.count, current.total, first_counts.0, first_counts.1
                ),
            ));
        }
        if rows.len() > effective {
            return Err(c.fail(
                &CURSOR_PAGES,
                &current.e,
                format!(
                    "{what}: page {} holds {} rows, more than {effective}",
                    walked.pages,
                    rows.len()
                ),
            ));
        }
        for row in &rows {
            let Some(id) = id_of(row) else {
                return Err(c.fail(
                    &CURSOR_PAGES,
                    &current.e,
                    format!(
                        "{what}: row id {} is not numeric",
                        crate::http::show(row.get("id"))
                    ),
                ));
            };
            if !ids.insert(id) {
                return Err(c.fail(
                    &CURSOR_PAGES,
                    &current.e,
                    format!("{what}: row {id} served twice"),
                ));
            }
            if let Some(prev) = walked.rows.last().and_then(id_of) {
                let forward = if ascending { id > prev } else { id < prev };
                if !forward {
                    return Err(c.fail(
                        &CURSOR_PAGES,
                        &current.e,
                        format!("{what}: row {id} after {prev}"),
                    ));
                }
            }
            walked.rows.push(row.clone());
        }
        let next = current.next.clone().unwrap_or_default();
        let ended = rows.is_empty() || rows.len() < effective || next.is_empty() || next == "0";
        if ended || walked.pages >= max_pages {
            return Ok((walked, current));
        }
        if !cursors.insert(next.clone()) {
            return Err(c.fail(
                &CURSOR_PAGES,
                &current.e,
                format!("{what}: next_cursor {next} handed out twice: the walk never ends"),
            ));
        }
        let mut paged = q.clone();
        paged.push((names::CURSOR.into(), next));
        current = fetch(c, source, &paged);
    }
}

/// The rows a cursor walk must serve: the model's, filtered, in order;
/// `None` when the model knows too little.
pub fn due<'a>(list: &'a ListModel, given: &[Given], direction: Option<&str>) -> Expected<'a> {
    Expected::of(list, given, Order::of(Paging::Cursor, direction))
}

/// Judges a cursor walk against the rows due: the whole sequence when the
/// model knows it; its start otherwise.
pub fn judge_walk(
    c: &Check<'_>,
    list: &ListModel,
    walked: &Walked,
    last: &Got,
    expected: &Expected<'_>,
    complete_walk: bool,
    what: &str,
) -> Result<(), Finding> {
    let n = walked.rows.len();
    let due: Vec<Option<Vec<Value>>> = if complete_walk && expected.whole {
        expected.owned()
    } else {
        expected.slice(0, n)
    };
    let as_page = Got {
        e: last.e.clone(),
        rows: Some(walked.rows.clone()),
        count: last.count,
        total: last.total,
        next: None,
    };
    judge_rows(c, &as_page, list, &due, what)?;
    if expected.whole
        && let Some(count) = last.count
    {
        let matching: Vec<u64> = expected
            .alternatives
            .iter()
            .map(|a| a.len() as u64)
            .collect();
        if !matching.contains(&count) {
            return Err(c.fail(
                &CURSOR_COUNTS,
                &last.e,
                format!(
                    "{what}: filtered_count {count}, but {} rows match",
                    matching
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
    }
    if let (Some(total), Some(want)) = (last.total, list.total)
        && total != want
    {
        return Err(c.fail(
            &CURSOR_COUNTS,
            &last.e,
            format!("{what}: total_count {total}, the unfiltered list says {want}"),
        ));
    }
    Ok(())
}
