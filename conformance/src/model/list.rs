//! One list as the server shows it, unfiltered: read whole when small,
//! in bounded windows (start, middle, end) when large, so that a
//! million-row batch costs a few pages.

use serde_json::Value;

use super::expect::Given;
use crate::contract::{Many, Op, Paging, names};
use crate::http::{Exchange, Http, Request, show};

/// Rows asked per page when reading a model.
pub const PAGE: u64 = 100;
/// A cursor list up to this many rows is read whole.
const CURSOR_WHOLE: u64 = 300;
/// An offset list up to this many rows is read whole.
const OFFSET_WHOLE: u64 = 1_000;
/// Pages a window holds at each end of a large list.
const WINDOW_PAGES: usize = 2;

/// Which list: an operation, its path, and the query that selects the
/// part of it (`type=DYNAMIC`, `only_settlement_txns=true`).
#[derive(Debug, Clone)]
pub struct Source {
    /// The operation.
    pub op: &'static Op,
    /// The request path (the path id filled in).
    pub path: String,
    /// The query that selects it.
    pub base: Vec<(String, String)>,
    /// The key of its rows under `data`.
    pub rows: &'static str,
    /// How reports name it.
    pub label: String,
}

impl Source {
    /// The rows a page holds when no page size is asked (cursor lists:
    /// 30, Limits); `None` where API.md gives no default.
    pub fn default_page_size(&self) -> Option<u64> {
        self.op.params.iter().find_map(|p| match p.role {
            crate::contract::Role::Limit { default, .. } => default,
            _ => None,
        })
    }

    /// The fields API.md defines for the rows of this list: none for
    /// the payouts, whose element shape API.md does not show.
    pub fn fields(&self) -> &'static [crate::contract::Field] {
        match self.op.list {
            Some(l) if l.rows == self.rows => l.fields,
            _ => &[],
        }
    }

    /// The list of `op` at its own path, unqualified.
    pub fn of(op: &'static Op) -> Self {
        let rows = op.list.map_or("", |l| l.rows);
        Self {
            op,
            path: op.path.to_owned(),
            base: Vec::new(),
            rows,
            label: op.name.to_owned(),
        }
    }

    /// The same list with `name=value` in its base query.
    pub fn with(mut self, name: &str, value: &str) -> Self {
        self.base.push((name.to_owned(), value.to_owned()));
        self.label = format!("{} {name}={value}", self.label);
        self
    }

    /// A request for this list, its base query included.
    pub fn request(&self) -> Request {
        Request::get(self.path.clone()).with_query(&self.base)
    }

    /// How it pages.
    pub fn paging(&self) -> Paging {
        self.op.list.map_or(Paging::Offset, |l| l.paging)
    }
}

/// Why a list could not be read.
#[derive(Debug, Clone)]
pub enum Unread {
    /// Only transient failures came back: nothing is known either way.
    Transient(Box<Exchange>),
    /// The server answered wrongly (a rule that reads it fails on it).
    Broken(Box<Exchange>, String),
}

impl Unread {
    /// The exchange that shows it.
    pub fn exchange(&self) -> &Exchange {
        match self {
            Unread::Transient(e) | Unread::Broken(e, _) => e,
        }
    }
}

/// A list read from the server.
#[derive(Debug, Clone)]
pub struct ListModel {
    /// Which list.
    pub source: Source,
    /// The rows at its start, in its order (cursor lists: ascending id;
    /// offset lists: the server's order). All of them when `complete`.
    pub head: Vec<Value>,
    /// Rows from its middle, in order, when large.
    pub middle: Vec<Value>,
    /// The rows at its end, in order, when large.
    pub tail: Vec<Value>,
    /// True when `head` is the whole list.
    pub complete: bool,
    /// Rows in the list: `head.len()` when complete, else the count the
    /// server gave (cursor lists: `filtered_count`).
    pub len: Option<u64>,
    /// The count as the first page gave it (offset lists: `count`;
    /// cursor lists: `filtered_count`).
    pub count: Option<u64>,
    /// Cursor lists: `total_count`.
    pub total: Option<u64>,
    /// Rows a page holds at most when 100 are asked (offset lists: the
    /// server's cap, if lower).
    pub cap: u64,
    /// Cursor lists: whether `next_cursor` was the last row's id on every
    /// page read (WIRE.md's choice; another is legal).
    pub id_cursors: bool,
    /// The exchanges read.
    pub pages: Vec<Exchange>,
    /// Why it is not (wholly) known, if so.
    pub unread: Option<Unread>,
    /// Offset lists: the paging parameters the server evidently does not
    /// read, when API.md gives their names by purpose only.
    pub named_otherwise: Option<NamedOtherwise>,
    /// The filters the server evidently does not read under WIRE.md's
    /// names, when API.md gives their names by purpose only
    /// ([`ListModel::filters_as_read`]).
    pub filters_named_otherwise: Vec<NamedOtherwise>,
    /// How the server reads several values of a filter whose form for
    /// them API.md does not show ([`Several`]).
    pub several: Several,
    /// The filters the server applies when they are absent, where
    /// API.md does not show what a list holds without them
    /// ([`FilterDefault`]).
    pub defaults: Vec<FilterDefault>,
}

/// A filter a list applies when it is absent: the list unfiltered is the
/// list with `param` at `value`, and `beside` holds the rows it leaves
/// out (the list with the other value), in the server's order. Where
/// API.md does not show a filter's default (the merchant list's enabled
/// filter), a server may apply one. Learned by asking the list with each
/// value of a flag filter (`filter_names::defaults`).
#[derive(Debug, Clone)]
pub struct FilterDefault {
    /// The filter.
    pub param: &'static crate::contract::Param,
    /// The value it takes when absent.
    pub value: String,
    /// The rows the list leaves out when the filter is absent.
    pub beside: Vec<Value>,
}

/// How a list reads several values of one filter where API.md says a
/// filter "accepts one or more values" but not how they are written (the
/// refund list): WIRE.md repeats the key, a server may separate them by
/// commas. Learned by asking two values of the server's own data both
/// ways (`filter_names::several`).
#[derive(Debug, Clone, Default)]
pub enum Several {
    /// The key repeated (`?status=A&status=B`), as WIRE.md writes it.
    #[default]
    Repeated,
    /// One key, the values comma-separated (`?status=A,B`).
    Comma,
    /// Neither form kept the rows of both values: what shows it.
    Neither(NamedOtherwise),
}

/// Paging parameters of an offset list the server does not read under
/// WIRE.md's names (`limit`, `offset`). API.md gives most offset lists'
/// paging parameters by purpose only (Conventions 6: their wire names
/// are not shown), so a server may name them otherwise; one that reads a
/// name (refuses a bad value of it, or answers differently for another
/// value) is held to what API.md says it does.
#[derive(Debug, Clone)]
pub struct NamedOtherwise {
    /// The names not read.
    pub names: Vec<&'static str>,
    /// What showed it.
    pub seen: String,
    /// The page that repeated the first.
    pub evidence: Box<Exchange>,
}

/// A page's rows and counts, if it is a success with rows.
pub(super) struct PageRead {
    pub(super) rows: Vec<Value>,
    pub(super) count: Option<u64>,
    total: Option<u64>,
    pub(super) next: Option<String>,
}

pub(super) fn page_of(e: &Exchange, source: &Source) -> Result<PageRead, Unread> {
    if e.transient.is_some() {
        return Err(Unread::Transient(Box::new(e.clone())));
    }
    let Some(data) = e.data() else {
        return Err(Unread::Broken(
            Box::new(e.clone()),
            format!("{}: a valid request did not succeed", source.label),
        ));
    };
    let Some(rows) = data.get(source.rows).and_then(Value::as_array) else {
        return Err(Unread::Broken(
            Box::new(e.clone()),
            format!("{}: no {} array", source.label, source.rows),
        ));
    };
    let count = &data["count"];
    Ok(PageRead {
        rows: rows.clone(),
        count: num(&count["filtered_count"])
            .or_else(|| num(count))
            .or_else(|| count.as_u64()),
        total: num(&count["total_count"]),
        next: data["next_cursor"].as_str().map(str::to_owned),
    })
}

/// A numeric string (API.md typing rule 2: no sign, no leading zero) as
/// a number. Here, below the rules, so that reading the model needs
/// nothing of them.
pub fn num(v: &Value) -> Option<u64> {
    v.as_str()
        .filter(|s| aggpay_internal::syntax::is_numeric_id(s))
        .and_then(|s| s.parse().ok())
}

/// The numeric id of a row.
pub fn id_of(row: &Value) -> Option<u64> {
    num(&row["id"])
}

/// The identity of a row: its token (every listed resource has one).
pub fn token_of(row: &Value) -> String {
    token_key(row).into_owned()
}

/// [`token_of`], borrowed where the token is a string: the model's
/// lookups run for every row of every page a rule reads, and a copy of
/// each token made them a tenth of a run's CPU.
pub(crate) fn token_key(row: &Value) -> std::borrow::Cow<'_, str> {
    match row.get("token") {
        Some(Value::String(s)) => std::borrow::Cow::Borrowed(s),
        Some(other) => std::borrow::Cow::Owned(other.to_string()),
        None => std::borrow::Cow::Owned(show(Some(row))),
    }
}

impl ListModel {
    /// A list not read yet.
    pub fn new(source: Source) -> Self {
        Self {
            source,
            head: Vec::new(),
            middle: Vec::new(),
            tail: Vec::new(),
            complete: false,
            len: None,
            count: None,
            total: None,
            cap: PAGE,
            id_cursors: true,
            pages: Vec::new(),
            unread: None,
            named_otherwise: None,
            filters_named_otherwise: Vec::new(),
            several: Several::Repeated,
            defaults: Vec::new(),
        }
    }

    /// Whether the server reads the parameter `name` of this list (every
    /// list reads its parameters unless shown otherwise).
    pub fn reads(&self, name: &str) -> bool {
        self.named_otherwise
            .iter()
            .chain(&self.filters_named_otherwise)
            .all(|n| !n.names.contains(&name))
    }

    /// The query that asks `given` of this list, several values of a
    /// filter written as the list reads them ([`ListModel::several`]).
    pub fn query(&self, given: &[Given]) -> Vec<(String, String)> {
        given
            .iter()
            .flat_map(
                |g| match (&self.several, g.param.filter().map(|f| f.many)) {
                    (Several::Comma, Some(Many::Repeated)) => {
                        vec![(g.param.wire.to_owned(), g.values.join(","))]
                    }
                    _ => g.pairs(),
                },
            )
            .collect()
    }

    /// Whether the server reads every parameter named in `query`.
    pub fn reads_all(&self, query: &[(String, String)]) -> bool {
        query.iter().all(|(k, _)| self.reads(k))
    }

    /// The filters of this list the server reads.
    pub fn read_filters(&self) -> impl Iterator<Item = &'static crate::contract::Param> + '_ {
        self.source.op.filters().filter(|p| self.reads(p.wire))
    }

    /// Asks whether the server reads each filter whose name only WIRE.md
    /// gives (see `filter_names`): the filters it does not read, for
    /// [`ListModel::filters_named_otherwise`] (the rules judge them only
    /// as an observation).
    /// Then, of the filters it reads, how it reads several values of one
    /// ([`ListModel::several`]).
    /// And the filters it applies when they are absent
    /// ([`ListModel::defaults`]).
    pub fn filters_as_read(
        &self,
        http: &Http,
    ) -> (Vec<NamedOtherwise>, Several, Vec<FilterDefault>) {
        let unread = super::filter_names::unread(http, self);
        let several = super::filter_names::several(http, self, &unread);
        let defaults = super::filter_names::defaults(http, self, &unread);
        (unread, several, defaults)
    }

    /// Every row known, head, middle and tail, without repeats, and the
    /// rows a filter's default leaves out ([`ListModel::defaults`]).
    pub fn known(&self) -> impl Iterator<Item = &Value> {
        let mut seen = std::collections::HashSet::new();
        self.head
            .iter()
            .chain(&self.middle)
            .chain(&self.tail)
            .chain(self.defaults.iter().flat_map(|d| &d.beside))
            .filter(move |r| seen.insert(token_key(r)))
    }

    /// The known records by token, each the first row that carries it,
    /// as [`ListModel::known`] keeps it: for judging many rows at once,
    /// where [`ListModel::find`] would scan the list for each.
    pub fn by_token(&self) -> std::collections::HashMap<std::borrow::Cow<'_, str>, &Value> {
        let mut index = std::collections::HashMap::new();
        for row in self.head.iter().chain(&self.middle).chain(&self.tail) {
            index.entry(token_key(row)).or_insert(row);
        }
        index
    }

    /// The known record with this token: the first row that carries it,
    /// as [`ListModel::known`] keeps it.
    pub fn find(&self, token: &str) -> Option<&Value> {
        self.head
            .iter()
            .chain(&self.middle)
            .chain(&self.tail)
            .find(|r| token_key(r) == token)
    }

    /// Usable for judging: read, at least in part.
    pub fn usable(&self) -> Result<&Self, &Unread> {
        match &self.unread {
            Some(u) if self.head.is_empty() && !self.complete => Err(u),
            _ => Ok(self),
        }
    }

    /// Reads the list from the server.
    pub fn read(http: &Http, source: Source) -> Self {
        match source.paging() {
            Paging::Cursor => read_cursor(http, source),
            Paging::Offset => read_offset(http, source),
        }
    }
}

impl ListModel {
    /// Keeps the answer for the list's first page: its page, or `None`
    /// with why the list could not be read.
    fn first_page(&mut self, first: Exchange) -> Option<PageRead> {
        let page = page_of(&first, &self.source);
        self.pages.push(first);
        match page {
            Ok(page) => Some(page),
            Err(why) => {
                self.unread = Some(why);
                None
            }
        }
    }
}

/// A cursor list: ascending pages of 100 to the end when it is small;
/// otherwise two pages from each end, and one from the middle when the
/// server's cursors are row ids. Beside the first page, pages of one and
/// two rows ask whether the server reads the page size and give a cursor
/// past the first row; the pages read show whether it reads the
/// direction and the cursor (`paging_names::Cursor`).
/// A list that does not read one of them is read as far as the names it
/// reads take it.
fn read_cursor(http: &Http, source: Source) -> ListModel {
    let mut model = ListModel::new(source);
    let base = model.source.request();
    let ascending = |cursor: Option<&str>, limit: u64| {
        let mut r = base
            .clone()
            .q(names::DIRECTION, "ASC")
            .q(names::LIMIT, limit);
        if let Some(c) = cursor {
            r = r.q(names::CURSOR, c);
        }
        r
    };
    let mut firsts = http.pool().map(
        &[
            ascending(None, PAGE),
            ascending(None, 1),
            ascending(None, 2),
        ],
        |r| http.send(r.clone()),
    );
    let two = firsts.pop().and_then(|e| page_of(&e, &model.source).ok());
    let one = firsts.pop().and_then(|e| page_of(&e, &model.source).ok());
    let Some(page) = firsts.pop().and_then(|e| model.first_page(e)) else {
        return model;
    };
    model.count = page.count;
    model.total = page.total;
    let mut unread = super::paging_names::Cursor::of_first_pages(
        http.names(),
        &model.source,
        &page,
        one.as_ref(),
    )
    .unless_refused(http, &model.source);
    let size = unread.page_size(&model.source, PAGE);
    let promised = page.count.unwrap_or(0);
    let pages_allowed = if promised > CURSOR_WHOLE {
        WINDOW_PAGES
    } else {
        (CURSOR_WHOLE / size) as usize + 1
    };
    let mut cursors = std::collections::HashSet::new();
    let mut current = page;
    let mut fetched = 1;
    loop {
        note_cursor(&mut model, &current, size);
        let short = (current.rows.len() as u64) < size;
        let next = current.next.clone().unwrap_or_default();
        model.head.extend(current.rows);
        if short || next.is_empty() || next == "0" {
            model.complete = true;
            break;
        }
        if !cursors.insert(next.clone()) || fetched >= pages_allowed {
            break;
        }
        let e = http.send(ascending(Some(&next), PAGE));
        fetched += 1;
        match page_of(&e, &model.source) {
            Ok(p)
                if fetched == 2
                    && unread.cursor_repeated(http, &model.source, &p, &model.head, &next) =>
            {
                model.pages.push(e);
                break;
            }
            Ok(p) => {
                model.pages.push(e);
                current = p;
            }
            Err(why) => {
                model.pages.push(e);
                model.unread = Some(why);
                break;
            }
        }
    }
    // A list read in one page showed nothing of its cursor: the page
    // after the two-row page's cursor does. It repeats that page when the
    // cursor is not read; a cursor past the first row tells that apart
    // from a page that starts at its cursor's own row.
    if fetched == 1
        && model.head.len() >= 2
        && let Some(two) = &two
        && let Some(next) = two.next.as_deref().filter(|n| !n.is_empty() && *n != "0")
    {
        let e = http.send(ascending(Some(next), 2));
        if let Ok(after) = page_of(&e, &model.source) {
            unread.cursor_repeated(http, &model.source, &after, &two.rows, next);
        }
    }
    // Served in the server's own order when it does not read the
    // direction: known ascending, as every other list.
    if !unread.reads(names::DIRECTION) {
        model.head.sort_by_key(id_of);
    }
    dedupe_ascending(&mut model.head);
    if model.complete {
        model.len = Some(model.head.len() as u64);
    } else {
        model.len = model.count;
    }
    let evidence = model.pages.last().cloned();
    match (unread.into_named_otherwise(evidence), model.complete) {
        (Some(otherwise), _) => model.named_otherwise = Some(otherwise),
        (None, false) => read_cursor_windows(http, &mut model),
        (None, true) => {}
    }
    model
}

/// Remembers whether the server's cursor was the page's last row id.
fn note_cursor(model: &mut ListModel, page: &PageRead, size: u64) {
    if let (Some(last), Some(next)) = (page.rows.last(), &page.next)
        && (page.rows.len() as u64) == size
        && id_of(last).map(|i| i.to_string()).as_deref() != Some(next.as_str())
    {
        model.id_cursors = false;
    }
}

/// Keeps rows in ascending id order, each once (a server that repeats a
/// row across pages is judged by the rules, not here).
fn dedupe_ascending(rows: &mut Vec<Value>) {
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| seen.insert(token_of(r)));
}

/// The end of a large cursor list (descending pages, kept ascending) and,
/// with id cursors, a page from its middle.
fn read_cursor_windows(http: &Http, model: &mut ListModel) {
    let mut tail: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..WINDOW_PAGES {
        let mut r = model
            .source
            .request()
            .q(names::DIRECTION, "DESC")
            .q(names::LIMIT, PAGE);
        if let Some(c) = &cursor {
            r = r.q(names::CURSOR, c);
        }
        let e = http.send(r);
        let page = page_of(&e, &model.source);
        model.pages.push(e);
        match page {
            Ok(p) => {
                let done = (p.rows.len() as u64) < PAGE;
                cursor = p.next.filter(|n| !n.is_empty() && n != "0");
                tail.extend(p.rows);
                if done || cursor.is_none() {
                    break;
                }
            }
            Err(why) => {
                model.unread.get_or_insert(why);
                break;
            }
        }
    }
    tail.reverse();
    model.tail = tail;
    let (Some(low), Some(high)) = (
        model.head.last().and_then(id_of),
        model.tail.first().and_then(id_of),
    ) else {
        return;
    };
    if model.id_cursors && high > low + 1 {
        let middle = low + (high - low) / 2;
        let e = http.send(
            model
                .source
                .request()
                .q(names::DIRECTION, "ASC")
                .q(names::LIMIT, PAGE)
                .q(names::CURSOR, middle),
        );
        if let Ok(p) = page_of(&e, &model.source) {
            model.middle = p.rows;
        }
        model.pages.push(e);
    }
}

/// An offset list: pages of 100 from offset 0 until an empty page; a
/// list longer than [`OFFSET_WHOLE`] by its count is read at its start,
/// middle and end.
fn read_offset(http: &Http, source: Source) -> ListModel {
    let mut model = ListModel::new(source);
    let base = model.source.request();
    let at = |offset: u64| base.clone().q(names::LIMIT, PAGE).q(names::OFFSET, offset);
    let Some(page) = model.first_page(http.send(at(0))) else {
        return model;
    };
    model.count = page.count;
    let step = page.rows.len() as u64;
    model.cap = step.clamp(1, PAGE);
    let empty = page.rows.is_empty();
    model.head = page.rows;
    if empty {
        model.complete = true;
        model.len = Some(0);
        return model;
    }
    let count = model.count.unwrap_or(0);
    if count > OFFSET_WHOLE && count > step {
        read_offset_windows(http, &mut model, count);
        return model;
    }
    // The pages the count promises, side by side, and one past them.
    let mut offset = step;
    loop {
        let mut offsets = Vec::new();
        let mut o = offset;
        while o < count.max(offset) && (o - offset) / step < 10 {
            offsets.push(o);
            o += step;
        }
        offsets.push(o);
        let exchanges = http.pool().map(&offsets, |o| http.send(at(*o)));
        let mut ended = false;
        for (e, o) in exchanges.into_iter().zip(&offsets) {
            if ended {
                model.pages.push(e);
                continue;
            }
            match page_of(&e, &model.source) {
                Ok(p) if *o == step && repeats_first(&p.rows, &model.head) => {
                    if let Some(otherwise) = super::paging_names::offset(http, &model, &e) {
                        // Only the first page is known: every offset
                        // answers it. It is not taken for the whole list
                        // even when the count says so, as the count may
                        // be the page's (API.md does not show its
                        // meaning).
                        model.pages.push(e);
                        model.len = model.count;
                        model.named_otherwise = Some(otherwise);
                        return model;
                    }
                    ended = p.rows.is_empty();
                    model.head.extend(p.rows);
                }
                Ok(p) => {
                    ended = p.rows.is_empty();
                    model.head.extend(p.rows);
                }
                Err(why) => {
                    model.unread = Some(why);
                    model.pages.push(e);
                    return model;
                }
            }
            model.pages.push(e);
        }
        if ended {
            model.complete = true;
            model.len = Some(model.head.len() as u64);
            return model;
        }
        offset = model.head.len() as u64;
        if offset > OFFSET_WHOLE {
            model.len = model.count;
            return model;
        }
    }
}

/// Whether a page starts with the first page's first row.
pub(super) fn repeats_first(rows: &[Value], first: &[Value]) -> bool {
    match (rows.first(), first.first()) {
        (Some(a), Some(b)) => token_key(a) == token_key(b),
        _ => false,
    }
}

fn read_offset_windows(http: &Http, model: &mut ListModel, count: u64) {
    let step = model.cap;
    let offsets = [
        step,
        count / 2,
        count.saturating_sub(step * 2),
        count.saturating_sub(step),
    ];
    let base = model.source.request();
    let at = |offset: u64| base.clone().q(names::LIMIT, PAGE).q(names::OFFSET, offset);
    let exchanges = http.pool().map(&offsets, |o| http.send(at(*o)));
    let mut parts = Vec::new();
    for e in exchanges {
        parts.push(page_of(&e, &model.source).map(|p| p.rows));
        model.pages.push(e);
    }
    let mut rows = parts.into_iter();
    let mut take = |model: &mut ListModel| match rows.next() {
        Some(Ok(r)) => r,
        Some(Err(why)) => {
            model.unread.get_or_insert(why);
            Vec::new()
        }
        None => Vec::new(),
    };
    let second = take(model);
    model.head.extend(second);
    model.middle = take(model);
    let mut tail = take(model);
    tail.extend(take(model));
    model.tail = tail;
    model.len = Some(count);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_known_once_and_found_by_token() {
        let mut model = ListModel::new(Source::of(crate::contract::Op::get(
            crate::contract::OpId::Batches,
        )));
        model.head = vec![
            serde_json::json!({"id": "1", "token": "a"}),
            serde_json::json!({"id": "2", "token": "b"}),
        ];
        model.tail = vec![serde_json::json!({"id": "2", "token": "b"})];
        assert_eq!(model.known().count(), 2);
        assert_eq!(model.find("b").and_then(id_of), Some(2));
        assert!(model.find("c").is_none());
        let index = model.by_token();
        assert_eq!(index.get("b").copied().and_then(id_of), Some(2));
        assert!(!index.contains_key("c"));
    }
}
