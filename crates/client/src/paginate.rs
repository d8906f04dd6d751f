//! Iterators that walk the lists page by page, in constant memory, and can
//! stop and resume.
//!
//! A walk holds one page at a time. Cursor walks check that ids strictly
//! move in the walk's direction, which catches a repeated cursor or record
//! without remembering past ones; offset walks remember the tokens they
//! have yielded (their lists are small) to catch a record served twice.
//! Every walk stops after the client's `max_pages`.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::str::FromStr;

use crate::NumericId;
use crate::error::Error;
use crate::page::Page;
use crate::query::Direction;

/// Page size a walk asks for when the query sets none: the largest API.md
/// allows for cursor lists, and WIRE.md's for offset lists.
pub(crate) const WALK_PAGE: u32 = 100;

/// Where a fetch starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum At<'a> {
    Cursor(Option<&'a str>),
    Offset(u64),
}

pub(crate) type Fetch<T> = Box<dyn FnMut(At<'_>) -> Result<Page<T>, Error> + Send>;

mod sealed {
    pub trait Sealed {}
}

/// A record of a list that [`Pages`] can walk: it tells the walk what to
/// check. Implemented for every list record type of this crate; sealed.
pub trait ListRecord: sealed::Sealed {
    /// The numeric id cursor lists are ordered on (`None` for offset lists).
    fn order_id(&self) -> Option<NumericId> {
        None
    }
    /// A stable identity, used to catch a record served twice.
    fn identity(&self) -> String;
}

/// Where a walk stands: save it after a page, and a new walk (in another
/// process, after a crash) continues from there with
/// [`Pages::resume_from`], with no record lost or repeated.
///
/// It is a short string ([`Display`](fmt::Display) and
/// [`FromStr`]), meant to be stored next to the records of the page it
/// follows, in one transaction.
///
/// - A cursor walk's position is the cursor of the page it is on and the
///   id of the last record it yielded. Resuming fetches that page again
///   and skips what was already yielded, so a position taken at the end of
///   an ascending walk also picks up records added since.
/// - An offset walk's position is the number of records before the next
///   one to yield.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WalkPosition(Position);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Position {
    Cursor {
        direction: Direction,
        cursor: Option<String>,
        last_id: Option<u64>,
    },
    Offset {
        offset: u64,
    },
}

impl fmt::Display for WalkPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Position::Cursor {
                direction,
                cursor,
                last_id,
            } => {
                let last = last_id.map_or_else(|| "-".to_owned(), |id| id.to_string());
                write!(
                    f,
                    "cursor:{}:{last}:{}",
                    direction.as_str(),
                    cursor.as_deref().unwrap_or("")
                )
            }
            Position::Offset { offset } => write!(f, "offset:{offset}"),
        }
    }
}

impl FromStr for WalkPosition {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || {
            Error::invalid_input(
                "walk position",
                format!(
                    "`{}` is not a position this crate wrote",
                    crate::text::excerpt(s, 80)
                ),
            )
        };
        if let Some(n) = s.strip_prefix("offset:") {
            let offset = n.parse().map_err(|_| bad())?;
            return Ok(Self(Position::Offset { offset }));
        }
        let rest = s.strip_prefix("cursor:").ok_or_else(bad)?;
        // The cursor comes last: it is the server's text and may hold ':'.
        let mut parts = rest.splitn(3, ':');
        let (Some(direction), Some(last), Some(cursor)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let direction = match direction {
            "ASC" => Direction::Asc,
            "DESC" => Direction::Desc,
            _ => return Err(bad()),
        };
        let last_id = match last {
            "-" => None,
            n => Some(n.parse().map_err(|_| bad())?),
        };
        let cursor = Some(cursor.to_owned()).filter(|c| !c.is_empty());
        Ok(Self(Position::Cursor {
            direction,
            cursor,
            last_id,
        }))
    }
}

/// How a walk moves through its list, and where it stands: by the
/// server's cursors ([`CursorWalk`]) or by offsets ([`OffsetWalk`]).
/// [`Pages`] holds what both share: the fetch, the rows of the page at
/// hand, the page count and the counts the server sent.
trait Walk<T>: Send {
    /// Continues from `position`, taken by a walk of the same list and
    /// query.
    fn resume(&mut self, position: &Position) -> Result<(), Error>;
    /// Where the walk stands; `buffer_empty` when no row of a fetched
    /// page is left, `done` when the list ended.
    fn position(&self, buffer_empty: bool, done: bool) -> Position;
    /// The cursor the next fetch starts from (cursor walks only).
    fn next_cursor(&self) -> Option<String> {
        None
    }
    /// `count` rows up to `last` were handed to the caller.
    fn yielded(&mut self, last: &T, count: u64);
    /// Fetches the next page: its rows the walk has not yielded yet (all
    /// of them but after a resume), and whether the list ended there.
    /// The counts the server sent go to `counts` even when the page
    /// breaks the walk.
    fn fetch_next(
        &mut self,
        fetch: &mut Fetch<T>,
        counts: &mut Option<(u64, Option<u64>)>,
    ) -> Result<(Vec<T>, bool), Error>;
}

/// A walk that follows the server's cursors, checking that ids move in
/// its direction.
struct CursorWalk {
    direction: Direction,
    /// Rows a full page holds (0 or absent asked: 30; at most 100).
    effective_limit: u64,
    /// The cursor of the next fetch.
    next: Option<String>,
    /// The cursor the buffered (or last) page was fetched with.
    page_cursor: Option<String>,
    /// The last id accepted from the server, for the order check.
    last_fetched: Option<u64>,
    /// The last id handed to the caller.
    last_yielded: Option<u64>,
    /// After a resume: rows up to this id were already yielded.
    skip_through: Option<u64>,
}

/// A walk by offsets, remembering the identities it yielded to catch a
/// record served twice.
struct OffsetWalk {
    limit: u64,
    /// The offset of the next fetch.
    next: u64,
    /// The offset of the buffered page, and how much of it was yielded.
    page_offset: u64,
    yielded_in_page: u64,
    seen: HashSet<String>,
}

/// A position of the other kind of walk.
fn other_kind() -> Error {
    Error::invalid_input(
        "walk position",
        "it belongs to the other kind of list (cursor or offset)",
    )
}

impl<T: ListRecord> Walk<T> for CursorWalk {
    fn resume(&mut self, position: &Position) -> Result<(), Error> {
        let Position::Cursor {
            direction: saved,
            cursor,
            last_id,
        } = position
        else {
            return Err(other_kind());
        };
        if self.direction != *saved {
            return Err(Error::invalid_input(
                "walk position",
                format!(
                    "it was taken in a {} walk; this walk is {}",
                    saved.as_str(),
                    self.direction.as_str()
                ),
            ));
        }
        self.next.clone_from(cursor);
        self.page_cursor.clone_from(cursor);
        self.last_fetched = *last_id;
        self.last_yielded = *last_id;
        self.skip_through = *last_id;
        Ok(())
    }

    fn position(&self, buffer_empty: bool, done: bool) -> Position {
        let at_boundary = buffer_empty && !done;
        Position::Cursor {
            direction: self.direction,
            cursor: if at_boundary {
                self.next.clone()
            } else {
                self.page_cursor.clone()
            },
            last_id: self.last_yielded,
        }
    }

    fn next_cursor(&self) -> Option<String> {
        self.next.clone()
    }

    fn yielded(&mut self, last: &T, _count: u64) {
        if let Some(id) = last.order_id() {
            self.last_yielded = Some(id.get());
        }
    }

    fn fetch_next(
        &mut self,
        fetch: &mut Fetch<T>,
        counts: &mut Option<(u64, Option<u64>)>,
    ) -> Result<(Vec<T>, bool), Error> {
        let asked = self.next.clone();
        let page = fetch(At::Cursor(asked.as_deref()))?;
        *counts = Some((page.count, page.total_count));
        self.page_cursor.clone_from(&asked);
        let n = page.items.len() as u64;
        let skip = self.skip_through.take();
        let direction = self.direction;
        let forward = |id: u64, than: u64| match direction {
            Direction::Asc => id > than,
            Direction::Desc => id < than,
        };
        // Filtered in place: a page that keeps every row (all but the
        // first after a resume) is not moved.
        let mut rows = page.items;
        let mut broken = None;
        let last_fetched = &mut self.last_fetched;
        // Whether the last id accepted came from this very page.
        let mut in_page = false;
        rows.retain(|row| {
            let Some(id) = row.order_id().map(NumericId::get) else {
                return broken.is_none();
            };
            // After a resume the page is fetched again: what was already
            // yielded is skipped, not an error.
            if broken.is_some() || skip.is_some_and(|s| !forward(id, s)) {
                return false;
            }
            if let Some(prev) = *last_fetched
                && !forward(id, prev)
            {
                broken = Some(Error::pagination(out_of_order(
                    id, prev, direction, in_page,
                )));
                return false;
            }
            *last_fetched = Some(id);
            in_page = true;
            true
        });
        if let Some(broken) = broken {
            return Err(broken);
        }
        let cursor = page.next_cursor.filter(|c| c != "0");
        let ended = n == 0 || n < self.effective_limit || cursor.is_none();
        if !ended && cursor == asked {
            return Err(Error::pagination(format!(
                "the server repeated cursor {}",
                crate::text::excerpt(asked.as_deref().unwrap_or(""), 40)
            )));
        }
        self.next = if ended { None } else { cursor };
        Ok((rows, ended))
    }
}

impl<T: ListRecord> Walk<T> for OffsetWalk {
    fn resume(&mut self, position: &Position) -> Result<(), Error> {
        let Position::Offset { offset } = position else {
            return Err(other_kind());
        };
        self.next = *offset;
        self.page_offset = *offset;
        self.yielded_in_page = 0;
        self.seen.clear();
        Ok(())
    }

    fn position(&self, buffer_empty: bool, _done: bool) -> Position {
        Position::Offset {
            offset: if buffer_empty {
                self.next
            } else {
                self.page_offset + self.yielded_in_page
            },
        }
    }

    fn yielded(&mut self, _last: &T, count: u64) {
        self.yielded_in_page += count;
    }

    fn fetch_next(
        &mut self,
        fetch: &mut Fetch<T>,
        counts: &mut Option<(u64, Option<u64>)>,
    ) -> Result<(Vec<T>, bool), Error> {
        let page = fetch(At::Offset(self.next))?;
        *counts = Some((page.count, page.total_count));
        let n = page.items.len() as u64;
        let ids: Vec<String> = page.items.iter().map(ListRecord::identity).collect();
        if let Some(again) = ids.iter().find(|id| self.seen.contains(*id)) {
            return Err(Error::pagination(served_again(
                &ids, &self.seen, again, self.next,
            )));
        }
        for (i, id) in ids.into_iter().enumerate() {
            if !self.seen.insert(id) {
                return Err(Error::pagination(format!(
                    "record {} was served twice in the page at offset {}",
                    crate::text::excerpt(&page.items[i].identity(), 60),
                    self.next
                )));
            }
        }
        self.page_offset = self.next;
        self.yielded_in_page = 0;
        self.next += n;
        // A server may cap pages below the limit: a short page ends the
        // walk only once the count is reached too.
        let ended = n == 0 || (n < self.limit && self.next >= page.count);
        Ok((page.items, ended))
    }
}

/// A lazy walk over every row of a list, yielding `Result<T, Error>`.
///
/// After the first error the walk ends. Rows already yielded stay valid,
/// and [`Pages::position`] tells where a new walk can resume.
///
/// ```no_run
/// use aggpay::{Client, Direction, TransactionQuery, WalkPosition};
///
/// # fn save(_: &[aggpay::Transaction], _: &str) {}
/// # fn saved() -> Option<String> { None }
/// # let client = Client::from_env()?;
/// # let batch: aggpay::BatchToken = "sb_0f8fad5b-d9cb-469f-a165-70867728950e".parse()?;
/// let query = TransactionQuery::new().direction(Direction::Asc);
/// let mut walk = client.batch_transactions(&batch, &query);
/// if let Some(text) = saved() {
///     walk = walk.resume_from(&text.parse::<WalkPosition>()?)?;
/// }
/// while let Some(page) = walk.next_page() {
///     // Commit the rows and the position together: a crash between
///     // pages loses nothing and repeats nothing.
///     save(&page?.items, &walk.position().to_string());
/// }
/// # Ok::<(), aggpay::Error>(())
/// ```
pub struct Pages<T> {
    fetch: Fetch<T>,
    walk: Box<dyn Walk<T>>,
    buffer: VecDeque<T>,
    pages: u64,
    max_pages: u64,
    done: bool,
    /// The counts of the latest page fetched: (count, total_count).
    counts: Option<(u64, Option<u64>)>,
    /// The client method that made the walk: the context of its errors.
    operation: &'static str,
}

impl<T> fmt::Debug for Pages<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pages")
            .field("pages_fetched", &self.pages)
            .field("buffered", &self.buffer.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<T: ListRecord> Pages<T> {
    pub(crate) fn cursor(
        operation: &'static str,
        limit: Option<u32>,
        direction: Direction,
        start: Option<String>,
        max_pages: u64,
        fetch: Fetch<T>,
    ) -> Self {
        // API.md: 0 or absent means 30, never more than 100.
        let effective_limit = match limit {
            None | Some(0) => 30,
            Some(n) => u64::from(n.min(100)),
        };
        let start = start.filter(|c| !c.is_empty() && c != "0");
        Self::new(
            operation,
            fetch,
            Box::new(CursorWalk {
                direction,
                effective_limit,
                next: start.clone(),
                page_cursor: start,
                last_fetched: None,
                last_yielded: None,
                skip_through: None,
            }),
            max_pages,
        )
    }

    pub(crate) fn offset(
        operation: &'static str,
        limit: u32,
        offset: u64,
        max_pages: u64,
        fetch: Fetch<T>,
    ) -> Self {
        Self::new(
            operation,
            fetch,
            Box::new(OffsetWalk {
                limit: u64::from(limit.max(1)),
                next: offset,
                page_offset: offset,
                yielded_in_page: 0,
                seen: HashSet::new(),
            }),
            max_pages,
        )
    }

    fn new(
        operation: &'static str,
        fetch: Fetch<T>,
        walk: Box<dyn Walk<T>>,
        max_pages: u64,
    ) -> Self {
        Self {
            operation,
            fetch,
            walk,
            buffer: VecDeque::new(),
            pages: 0,
            max_pages,
            done: false,
            counts: None,
        }
    }

    /// Continues a walk from a position an earlier walk of the same list
    /// and query gave ([`Pages::position`]). Call it before iterating.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) when the position belongs to another kind of
    /// list (cursor or offset) or to a walk in the other direction.
    pub fn resume_from(mut self, position: &WalkPosition) -> Result<Self, Error> {
        self.buffer.clear();
        self.done = false;
        self.walk.resume(&position.0)?;
        Ok(self)
    }

    /// Where this walk stands: a new walk resumed from it yields exactly
    /// the records this one has not yielded yet. Exact at any point; at a
    /// page boundary (after [`Pages::next_page`]) it also costs no page
    /// fetched twice for offset lists.
    pub fn position(&self) -> WalkPosition {
        WalkPosition(self.walk.position(self.buffer.is_empty(), self.done))
    }

    /// Pages fetched so far.
    pub fn pages_fetched(&self) -> u64 {
        self.pages
    }

    /// The count the server sent with the latest page: `filtered_count` of
    /// a cursor list, `count` of an offset list; `None` before the first
    /// fetch. After a whole walk, compare it with the records kept to
    /// verify nothing was lost. (Not `count`: that name is
    /// [`Iterator::count`]'s, which would consume the walk.)
    pub fn reported_count(&self) -> Option<u64> {
        self.counts.map(|(count, _)| count)
    }

    /// Cursor lists: the `total_count` the server sent with the latest
    /// page.
    pub fn reported_total(&self) -> Option<u64> {
        self.counts.and_then(|(_, total)| total)
    }

    /// The rest of the current page, or the next page, with the counts
    /// the server sent with it: one call, one fetch at most. `None` at the
    /// end; afterwards [`position`](Pages::position) is at a page
    /// boundary.
    pub fn next_page(&mut self) -> Option<Result<Page<T>, Error>> {
        loop {
            if !self.buffer.is_empty() {
                // The rest of a page the row iterator started.
                let rows = Vec::from(std::mem::take(&mut self.buffer));
                return Some(Ok(self.page(rows)));
            }
            if self.done {
                return None;
            }
            // A fresh page goes to the caller as the server's rows came,
            // without passing through the buffer (two copies of every
            // row fewer).
            match self.refill() {
                Err(err) => return Some(Err(self.fail(err))),
                Ok(rows) if rows.is_empty() => {}
                Ok(rows) => return Some(Ok(self.page(rows))),
            }
        }
    }

    /// `rows` handed to the caller as a page, with the counts of the
    /// latest fetch.
    fn page(&mut self, rows: Vec<T>) -> Page<T> {
        if let Some(last) = rows.last() {
            self.yielded(last, rows.len() as u64);
        }
        let (count, total_count) = self.counts.unwrap_or((0, None));
        Page::new(rows, count, total_count, self.walk.next_cursor())
    }

    fn fail(&mut self, err: Error) -> Error {
        self.done = true;
        self.buffer.clear();
        err.during(self.operation, None)
    }

    /// Notes that `count` rows up to `last` were handed to the caller.
    fn yielded(&mut self, last: &T, count: u64) {
        self.walk.yielded(last, count);
    }

    /// Fetches the next page: its rows the walk has not yielded yet (all
    /// of them but after a resume); marks the walk done at the end.
    fn refill(&mut self) -> Result<Vec<T>, Error> {
        if self.pages >= self.max_pages {
            return Err(Error::pagination(format!(
                "the list did not end within {} pages",
                self.max_pages
            )));
        }
        self.pages += 1;
        let (rows, ended) = self.walk.fetch_next(&mut self.fetch, &mut self.counts)?;
        self.done = ended;
        Ok(rows)
    }
}

/// Why a cursor walk broke where record `id` came after `prev`, in words
/// that say what it likely means: within one page, the server does not
/// sort as asked; across pages, a cursor or record came again (a server
/// that does not read the cursor answers the first page again).
fn out_of_order(id: u64, prev: u64, direction: Direction, in_page: bool) -> String {
    const NAMES: &str = "API.md gives the cursor lists' paging parameters by purpose only: the server may name `cursor`, `limit` and `direction` otherwise";
    let walk = match direction {
        Direction::Asc => "an ASC",
        Direction::Desc => "a DESC",
    };
    if in_page {
        format!(
            "record {id} came after {prev} in one page of {walk} walk: the server does not sort as asked, so it likely does not read the direction ({NAMES})"
        )
    } else {
        format!(
            "record {id} came after {prev} in {walk} walk: a repeated cursor or record (a server that does not read the cursor answers the first page again; {NAMES})"
        )
    }
}

/// Why a page at `offset` that holds records served before breaks the
/// walk, in words that say what it likely means.
fn served_again(
    ids: &[String],
    seen: &std::collections::HashSet<String>,
    again: &str,
    offset: u64,
) -> String {
    let repeated = ids.iter().filter(|id| seen.contains(*id)).count();
    if repeated == ids.len() {
        format!(
            "the page at offset {offset} holds only records served before ({repeated}, from {}): the server answered the same rows for another offset, so it likely does not read this list's `offset` and `limit` (API.md gives some lists' paging parameters by purpose only: the server may name them otherwise)",
            crate::text::excerpt(again, 60)
        )
    } else {
        format!(
            "record {} was served twice (again in the page at offset {offset})",
            crate::text::excerpt(again, 60)
        )
    }
}

impl<T: ListRecord> Iterator for Pages<T> {
    type Item = Result<T, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(row) = self.buffer.pop_front() {
                self.yielded(&row, 1);
                return Some(Ok(row));
            }
            if self.done {
                return None;
            }
            match self.refill() {
                // The buffer is empty: the page's own allocation becomes it.
                Ok(rows) => self.buffer = VecDeque::from(rows),
                Err(err) => return Some(Err(self.fail(err))),
            }
        }
    }
}

impl<T: ListRecord> std::iter::FusedIterator for Pages<T> {}

mod rows {
    use super::{ListRecord, sealed::Sealed};
    use crate::{
        AccessKey, AggregatorMerchant, NumericId, QrCode, RailMerchant, Refund, SettlementBatch,
        SettlementPayout, Transaction, WebhookEndpoint,
    };

    macro_rules! cursor_row {
        ($t:ty) => {
            impl Sealed for $t {}
            impl ListRecord for $t {
                fn order_id(&self) -> Option<NumericId> {
                    Some(self.id)
                }
                fn identity(&self) -> String {
                    self.id.to_string()
                }
            }
        };
    }

    macro_rules! token_row {
        ($t:ty) => {
            impl Sealed for $t {}
            impl ListRecord for $t {
                fn identity(&self) -> String {
                    self.token.to_string()
                }
            }
        };
    }

    cursor_row!(SettlementBatch);
    cursor_row!(Transaction);
    // API.md does not show a payout's shape: ordered on its id where it
    // has one, known by its key.
    impl Sealed for SettlementPayout {}
    impl ListRecord for SettlementPayout {
        fn order_id(&self) -> Option<NumericId> {
            self.id
        }
        fn identity(&self) -> String {
            self.key()
        }
    }
    token_row!(AccessKey);
    token_row!(AggregatorMerchant);
    token_row!(RailMerchant);
    token_row!(QrCode);
    token_row!(Refund);
    token_row!(WebhookEndpoint);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct R(u64);

    impl sealed::Sealed for R {}

    impl ListRecord for R {
        fn order_id(&self) -> Option<NumericId> {
            Some(NumericId::new(self.0))
        }
        fn identity(&self) -> String {
            self.0.to_string()
        }
    }

    fn page(rows: Vec<u64>, next: &str, count: u64) -> Page<R> {
        Page::new(
            rows.into_iter().map(R).collect(),
            count,
            Some(count),
            Some(next.to_owned()).filter(|n| !n.is_empty()),
        )
    }

    fn scripted(pages: Vec<(Vec<u64>, &'static str)>, limit: u32, dir: Direction) -> Pages<R> {
        let mut pages = pages.into_iter();
        let fetch: Fetch<R> = Box::new(move |_| {
            let (rows, next) = pages.next().unwrap_or((vec![], ""));
            Ok(page(rows, next, 0))
        });
        Pages::cursor("test", Some(limit), dir, None, 50, fetch)
    }

    /// A server over ids 1..=n: pages after the cursor, next_cursor the
    /// last id (WIRE.md's convention); counts the fetches.
    fn server(n: u64, dir: Direction) -> impl FnMut(At<'_>) -> Result<Page<R>, Error> + Send {
        move |at| {
            let At::Cursor(cursor) = at else {
                unreachable!()
            };
            let c: Option<u64> = cursor.map(|c| c.parse().unwrap());
            let ids: Vec<u64> = match dir {
                Direction::Asc => (c.map_or(1, |c| c + 1)..=n).take(3).collect(),
                _ => (1..c.unwrap_or(n + 1)).rev().take(3).collect(),
            };
            let next = ids.last().map(u64::to_string).unwrap_or_default();
            Ok(Page::new(
                ids.into_iter().map(R).collect(),
                n,
                Some(n),
                Some(next),
            ))
        }
    }

    #[test]
    fn cursor_walk_ends_on_short_page_or_empty_cursor() {
        let out = scripted(vec![(vec![9, 8], "8"), (vec![7], "7")], 2, Direction::Desc);
        assert_eq!(out.map(|r| r.unwrap().0).collect::<Vec<_>>(), [9, 8, 7]);
        let out = scripted(vec![(vec![1, 2], "2"), (vec![3, 4], "")], 2, Direction::Asc);
        assert_eq!(out.count(), 4);
        let out = scripted(vec![(vec![1, 2], "2"), (vec![], "")], 2, Direction::Asc);
        assert_eq!(out.count(), 2);
    }

    #[test]
    fn a_repeated_cursor_or_record_is_an_error_not_a_loop() {
        let out: Vec<_> = scripted(
            vec![(vec![9, 8], "8"), (vec![9, 8], "8"), (vec![9, 8], "8")],
            2,
            Direction::Desc,
        )
        .collect();
        assert_eq!(out.len(), 3);
        assert!(
            matches!(
                out[2].as_ref().map_err(Error::kind),
                Err(crate::ErrorKind::Pagination(_))
            ),
            "{:?}",
            out[2]
        );
        let endless: Fetch<R> = Box::new(|_| Ok(page(vec![1, 2], "5", 0)));
        let out: Vec<_> =
            Pages::cursor("test", Some(2), Direction::Asc, None, 50, endless).collect();
        assert!(matches!(
            out.last().map(|r| r.as_ref().map_err(Error::kind)),
            Some(Err(crate::ErrorKind::Pagination(_)))
        ));
        assert!(out.len() <= 4);
    }

    #[test]
    fn rows_and_pages_mix_and_a_broken_page_gives_none_of_its_rows() {
        let mut walk = scripted(
            vec![
                (vec![1, 2, 3], "3"),
                (vec![4, 5, 6], "6"),
                (vec![7, 9, 8], "8"),
            ],
            3,
            Direction::Asc,
        );
        assert_eq!(walk.next().unwrap().unwrap(), R(1));
        // The rest of the page the rows started, then whole pages.
        assert_eq!(walk.next_page().unwrap().unwrap().items, [R(2), R(3)]);
        assert_eq!(walk.position().to_string(), "cursor:ASC:3:3");
        assert_eq!(walk.next_page().unwrap().unwrap().items, [R(4), R(5), R(6)]);
        let broken = walk.next_page().unwrap();
        assert!(
            matches!(
                broken.as_ref().map_err(Error::kind),
                Err(crate::ErrorKind::Pagination(_))
            ),
            "{broken:?}"
        );
        assert!(walk.next_page().is_none());
        assert_eq!(walk.position().to_string(), "cursor:ASC:6:6");
    }

    #[test]
    fn page_budget_bounds_every_walk() {
        let mut next = 0u64;
        let fetch: Fetch<R> = Box::new(move |_| {
            next += 2;
            Ok(page(vec![next - 1, next], "x", 0).with_cursor(next.to_string()))
        });
        let out: Vec<_> = Pages::cursor("test", Some(2), Direction::Asc, None, 5, fetch).collect();
        assert_eq!(out.len(), 11);
        assert!(matches!(
            out[10].as_ref().map_err(Error::kind),
            Err(crate::ErrorKind::Pagination(_))
        ));
    }

    impl<T> Page<T> {
        fn with_cursor(mut self, c: String) -> Self {
            self.next_cursor = Some(c);
            self
        }
    }

    #[test]
    fn offset_walk_uses_the_count_and_catches_duplicates() {
        let data: Vec<u64> = (0..7).collect();
        let fetch: Fetch<R> = Box::new(move |at| {
            let At::Offset(offset) = at else {
                unreachable!()
            };
            let rows = data.iter().skip(offset as usize).take(3).copied().collect();
            Ok(page(rows, "", 7))
        });
        let out: Vec<_> = Pages::offset("test", 3, 0, 50, fetch)
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!(out, (0..7).collect::<Vec<_>>());
        // A server capping pages below the asked limit is still walked to the end.
        let capped: Fetch<R> = Box::new(move |at| {
            let At::Offset(offset) = at else {
                unreachable!()
            };
            Ok(page((offset..(offset + 2).min(7)).collect(), "", 7))
        });
        assert_eq!(Pages::offset("test", 3, 0, 50, capped).count(), 7);
        let stuck: Fetch<R> = Box::new(|_| Ok(page(vec![1], "", 9)));
        let out: Vec<_> = Pages::offset("test", 3, 0, 50, stuck).collect();
        assert!(matches!(
            out.last().map(|r| r.as_ref().map_err(Error::kind)),
            Some(Err(crate::ErrorKind::Pagination(_)))
        ));
    }

    #[test]
    fn positions_round_trip_as_text() {
        for text in [
            "offset:0",
            "offset:120",
            "cursor:ASC:-:",
            "cursor:DESC:1234:1234",
            "cursor:ASC:7:opaque:with:colons",
        ] {
            let pos: WalkPosition = text.parse().unwrap();
            assert_eq!(pos.to_string(), text);
        }
        for bad in [
            "",
            "cursor:",
            "cursor:UP:1:2",
            "offset:-1",
            "cursor:ASC:x:1",
            "page:3",
        ] {
            assert!(bad.parse::<WalkPosition>().is_err(), "{bad}");
        }
    }

    /// Stopping anywhere (mid-page or at a page boundary) and resuming in a
    /// new walk yields every row exactly once, both ways.
    #[test]
    fn a_walk_resumes_exactly_where_it_stopped() {
        for dir in [Direction::Asc, Direction::Desc] {
            let all: Vec<u64> =
                Pages::cursor("test", Some(3), dir, None, 100, Box::new(server(10, dir)))
                    .map(|r| r.unwrap().0)
                    .collect();
            assert_eq!(all.len(), 10);
            for stop in 0..=10 {
                let mut first =
                    Pages::cursor("test", Some(3), dir, None, 100, Box::new(server(10, dir)));
                let mut got: Vec<u64> = (&mut first).take(stop).map(|r| r.unwrap().0).collect();
                let saved = first.position().to_string();
                let second =
                    Pages::cursor("test", Some(3), dir, None, 100, Box::new(server(10, dir)))
                        .resume_from(&saved.parse().unwrap())
                        .unwrap();
                got.extend(second.map(|r| r.unwrap().0));
                assert_eq!(got, all, "{dir:?} stop {stop} at {saved}");
            }
            // Page by page.
            let mut walk =
                Pages::cursor("test", Some(3), dir, None, 100, Box::new(server(10, dir)));
            let first = walk.next_page().unwrap().unwrap();
            let saved = walk.position();
            let rest: Vec<u64> =
                Pages::cursor("test", Some(3), dir, None, 100, Box::new(server(10, dir)))
                    .resume_from(&saved)
                    .unwrap()
                    .map(|r| r.unwrap().0)
                    .collect();
            assert_eq!(first.items.len() + rest.len(), 10);
        }
        // The other direction or kind is refused.
        let walk = Pages::cursor(
            "test",
            None,
            Direction::Asc,
            None,
            5,
            Box::new(server(3, Direction::Asc)),
        );
        let desc: WalkPosition = "cursor:DESC:-:".parse().unwrap();
        assert!(walk.resume_from(&desc).is_err());
        let walk = Pages::cursor(
            "test",
            None,
            Direction::Asc,
            None,
            5,
            Box::new(server(3, Direction::Asc)),
        );
        assert!(walk.resume_from(&"offset:3".parse().unwrap()).is_err());
    }

    /// A position taken at the end of an ascending walk picks up rows
    /// added since: an incremental sync.
    #[test]
    fn the_end_of_an_ascending_walk_resumes_onto_new_rows() {
        let mut walk = Pages::cursor(
            "test",
            Some(3),
            Direction::Asc,
            None,
            100,
            Box::new(server(7, Direction::Asc)),
        );
        assert_eq!(walk.by_ref().count(), 7);
        let end = walk.position();
        let later: Vec<u64> = Pages::cursor(
            "test",
            Some(3),
            Direction::Asc,
            None,
            100,
            Box::new(server(11, Direction::Asc)),
        )
        .resume_from(&end)
        .unwrap()
        .map(|r| r.unwrap().0)
        .collect();
        assert_eq!(later, [8, 9, 10, 11]);
    }

    #[test]
    fn offset_positions_resume_mid_page() {
        let fetch = || -> Fetch<R> {
            Box::new(move |at| {
                let At::Offset(offset) = at else {
                    unreachable!()
                };
                Ok(page((offset..(offset + 3).min(8)).collect(), "", 8))
            })
        };
        let mut walk = Pages::offset("test", 3, 0, 50, fetch());
        let got: Vec<u64> = walk.by_ref().take(4).map(|r| r.unwrap().0).collect();
        let pos = walk.position();
        assert_eq!(pos.to_string(), "offset:4");
        let rest: Vec<u64> = Pages::offset("test", 3, 0, 50, fetch())
            .resume_from(&pos)
            .unwrap()
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!([got, rest].concat(), (0..8).collect::<Vec<_>>());
    }
}
