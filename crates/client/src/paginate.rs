//! Iterators that walk the lists page by page, in constant memory.
//!
//! A walk holds one page at a time. Cursor walks check that ids strictly
//! move in the walk's direction, which catches a repeated cursor or record
//! without remembering past ones; offset walks remember the tokens they
//! have yielded (their lists are small) to catch a record served twice.
//! Every walk stops after the client's `max_pages`.

use std::collections::{HashSet, VecDeque};
use std::fmt;

use crate::NumericId;
use crate::error::Error;
use crate::query::Direction;

/// Page size a walk asks for when the query sets none: the largest allowed.
pub(crate) const WALK_PAGE: u32 = 100;

/// A fetched page: its rows and where the next page starts.
pub(crate) struct Page<T> {
    pub(crate) rows: Vec<T>,
    /// The cursor of the next page (cursor lists) or the list's count
    /// (offset lists).
    pub(crate) next: PageNext,
}

pub(crate) enum PageNext {
    Cursor(String),
    Count(u64),
}

pub(crate) type Fetch<T> = Box<dyn FnMut(Option<&str>, u64) -> Result<Page<T>, Error> + Send>;

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

/// How the walk moves.
enum Mode {
    Cursor {
        direction: Direction,
        effective_limit: u64,
        cursor: Option<String>,
        last_id: Option<u64>,
    },
    Offset {
        limit: u64,
        offset: u64,
        seen: HashSet<String>,
    },
}

/// A lazy walk over every row of a list, yielding `Result<T, Error>`.
///
/// After the first error the walk ends. Rows already yielded stay valid.
pub struct Pages<T> {
    fetch: Fetch<T>,
    mode: Mode,
    buffer: VecDeque<T>,
    pages: u64,
    max_pages: u64,
    done: bool,
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
        let cursor = start.filter(|c| !c.is_empty() && c != "0");
        let last_id = cursor.as_deref().and_then(|c| c.parse().ok());
        Self::new(
            fetch,
            Mode::Cursor {
                direction,
                effective_limit,
                cursor,
                last_id,
            },
            max_pages,
        )
    }

    pub(crate) fn offset(limit: Option<u32>, offset: u64, max_pages: u64, fetch: Fetch<T>) -> Self {
        let limit = u64::from(limit.filter(|l| *l > 0).unwrap_or(WALK_PAGE));
        Self::new(
            fetch,
            Mode::Offset {
                limit,
                offset,
                seen: HashSet::new(),
            },
            max_pages,
        )
    }

    fn new(fetch: Fetch<T>, mode: Mode, max_pages: u64) -> Self {
        Self {
            fetch,
            mode,
            buffer: VecDeque::new(),
            pages: 0,
            max_pages,
            done: false,
        }
    }

    fn fail(&mut self, message: String) -> Option<Result<T, Error>> {
        self.done = true;
        self.buffer.clear();
        Some(Err(Error::Pagination(message)))
    }

    /// Fetches the next page into the buffer; `Ok(false)` at the end.
    fn refill(&mut self) -> Result<bool, Error> {
        if self.pages >= self.max_pages {
            return Err(Error::Pagination(format!(
                "the list did not end within {} pages",
                self.max_pages
            )));
        }
        self.pages += 1;
        let (cursor, offset) = match &self.mode {
            Mode::Cursor { cursor, .. } => (cursor.clone(), 0),
            Mode::Offset { offset, .. } => (None, *offset),
        };
        let page = (self.fetch)(cursor.as_deref(), offset)?;
        let n = page.rows.len() as u64;
        if n == 0 {
            return Ok(false);
        }
        match (&mut self.mode, page.next) {
            (
                Mode::Cursor {
                    direction,
                    effective_limit,
                    cursor,
                    last_id,
                },
                PageNext::Cursor(next),
            ) => {
                for row in &page.rows {
                    let Some(id) = row.order_id().map(NumericId::get) else {
                        continue;
                    };
                    if let Some(prev) = *last_id {
                        let forward = match direction {
                            Direction::Asc => id > prev,
                            Direction::Desc => id < prev,
                        };
                        if !forward {
                            return Err(Error::Pagination(format!(
                                "record {id} came after {prev} in a {} walk: a repeated cursor or record",
                                direction.as_str()
                            )));
                        }
                    }
                    *last_id = Some(id);
                }
                let ended = n < *effective_limit || next.is_empty() || next == "0";
                if !ended && cursor.as_deref() == Some(next.as_str()) {
                    return Err(Error::Pagination(format!(
                        "the server repeated cursor {next}"
                    )));
                }
                *cursor = if ended { None } else { Some(next) };
                if ended {
                    self.done = true;
                }
            }
            (
                Mode::Offset {
                    limit,
                    offset,
                    seen,
                },
                PageNext::Count(count),
            ) => {
                for row in &page.rows {
                    if !seen.insert(row.identity()) {
                        return Err(Error::Pagination(format!(
                            "record {} was served twice",
                            row.identity()
                        )));
                    }
                }
                *offset += n;
                if n < *limit && *offset >= count {
                    self.done = true;
                }
            }
            _ => return Err(Error::Pagination("internal: page kind mismatch".to_owned())),
        }
        self.buffer.extend(page.rows);
        Ok(true)
    }
}

impl<T: ListRecord> Iterator for Pages<T> {
    type Item = Result<T, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(row) = self.buffer.pop_front() {
                return Some(Ok(row));
            }
            if self.done {
                return None;
            }
            match self.refill() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(Error::Pagination(message)) => return self.fail(message),
                Err(err) => {
                    self.done = true;
                    return Some(Err(err));
                }
            }
        }
    }
}

impl<T: ListRecord> std::iter::FusedIterator for Pages<T> {}

mod rows {
    use super::{ListRecord, sealed::Sealed};
    use crate::*;

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
    cursor_row!(SettlementPayout);
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

    fn cursor_walk(
        pages: Vec<(Vec<u64>, &'static str)>,
        direction: Direction,
    ) -> Vec<Result<R, Error>> {
        let mut pages = pages.into_iter();
        let fetch: Fetch<R> = Box::new(move |_, _| {
            let (rows, next) = pages.next().unwrap_or((vec![], ""));
            Ok(Page {
                rows: rows.into_iter().map(R).collect(),
                next: PageNext::Cursor(next.to_owned()),
            })
        });
        Pages::cursor(Some(2), direction, None, 50, fetch).collect()
    }

    #[test]
    fn cursor_walk_ends_on_short_page_or_empty_cursor() {
        let out = cursor_walk(vec![(vec![9, 8], "8"), (vec![7], "7")], Direction::Desc);
        assert_eq!(
            out.into_iter().map(|r| r.unwrap().0).collect::<Vec<_>>(),
            [9, 8, 7]
        );
        let out = cursor_walk(vec![(vec![1, 2], "2"), (vec![3, 4], "")], Direction::Asc);
        assert_eq!(out.len(), 4);
        let out = cursor_walk(vec![(vec![1, 2], "2"), (vec![], "")], Direction::Asc);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn a_repeated_cursor_or_record_is_an_error_not_a_loop() {
        let out = cursor_walk(
            vec![(vec![9, 8], "8"), (vec![9, 8], "8"), (vec![9, 8], "8")],
            Direction::Desc,
        );
        assert_eq!(out.len(), 3);
        assert!(matches!(out[2], Err(Error::Pagination(_))), "{:?}", out[2]);
        let endless: Fetch<R> = Box::new(|_, _| {
            Ok(Page {
                rows: vec![R(1), R(2)],
                next: PageNext::Cursor("5".into()),
            })
        });
        let out: Vec<_> = Pages::cursor(Some(2), Direction::Asc, None, 50, endless).collect();
        assert!(matches!(out.last(), Some(Err(Error::Pagination(_)))));
        assert!(out.len() <= 4);
    }

    #[test]
    fn page_budget_bounds_every_walk() {
        let mut next = 0u64;
        let fetch: Fetch<R> = Box::new(move |_, _| {
            next += 2;
            Ok(Page {
                rows: vec![R(next - 1), R(next)],
                next: PageNext::Cursor(next.to_string()),
            })
        });
        let out: Vec<_> = Pages::cursor(Some(2), Direction::Asc, None, 5, fetch).collect();
        assert_eq!(out.len(), 11);
        assert!(matches!(out[10], Err(Error::Pagination(_))));
    }

    #[test]
    fn offset_walk_uses_the_count_and_catches_duplicates() {
        let data: Vec<u64> = (0..7).collect();
        let fetch: Fetch<R> = Box::new(move |_, offset| {
            let rows = data
                .iter()
                .skip(offset as usize)
                .take(3)
                .map(|v| R(*v))
                .collect();
            Ok(Page {
                rows,
                next: PageNext::Count(7),
            })
        });
        let out: Vec<_> = Pages::offset(Some(3), 0, 50, fetch)
            .map(|r| r.unwrap().0)
            .collect();
        assert_eq!(out, (0..7).collect::<Vec<_>>());
        // A server capping pages below the asked limit is still walked to the end.
        let capped: Fetch<R> = Box::new(move |_, offset| {
            let rows = (offset..(offset + 2).min(7)).map(R).collect();
            Ok(Page {
                rows,
                next: PageNext::Count(7),
            })
        });
        assert_eq!(Pages::offset(Some(3), 0, 50, capped).count(), 7);
        let stuck: Fetch<R> = Box::new(|_, _| {
            Ok(Page {
                rows: vec![R(1)],
                next: PageNext::Count(9),
            })
        });
        let out: Vec<_> = Pages::offset(Some(3), 0, 50, stuck).collect();
        assert!(matches!(out.last(), Some(Err(Error::Pagination(_)))));
    }
}
