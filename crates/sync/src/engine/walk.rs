//! The walk of one kind of one batch's rows, in parts: where it resumes,
//! the fetchers (one per end of the batch), and the writer that keeps
//! each page with the position after it, meets the two ends, commits in
//! groups, and verifies a final batch at the end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use aggpay::{BatchToken, Client, Direction, Pages, TransactionQuery, WalkPosition};

use super::{Engine, PAGE, Setback};
use crate::error::SyncError;
use crate::store::{Kind, Mirrored, Pending, WalkCommit, WalkState};

/// Pages fetched ahead of the database: the network and the database work
/// at once, and memory stays bounded (a page is at most 100 rows).
const PAGES_AHEAD: usize = 64;
/// A final batch of at least this many rows is walked from both ends.
const TWO_ENDS_FROM: u64 = 5_000;
/// The longest a page waits for its commit: pages that come faster share
/// one transaction (far fewer index pages rewritten per row); a killed
/// run loses at most that much work, and never rows without their
/// position or a position without its rows.
const GROUP_TIME: Duration = Duration::from_millis(1000);

/// The walk of a batch's rows of one kind.
type Walker<T> = fn(&Client, &BatchToken, &TransactionQuery) -> Pages<T>;

/// A page on its way from the network to the database, or why the walk
/// failed.
type Message<T> = Result<Fetched<T>, aggpay::Error>;

/// A page on its way from the network to the database.
struct Fetched<T> {
    side: Side,
    rows: Vec<T>,
    position: String,
    server_count: Option<u64>,
    /// The walk ended with this page.
    last: bool,
}

/// Which end of a batch a walk starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Ascending from the first row.
    Head,
    /// Descending from the last row.
    Tail,
}

/// Where a walk resumes: its saved state, the ascending walk, and the
/// descending one when it had started.
struct Resumed<T> {
    state: WalkState,
    head: Pages<T>,
    tail: Option<Pages<T>>,
}

/// What the writer does after a page.
enum Step {
    /// Wait for the next page.
    Next,
    /// Every row is kept.
    Done,
    /// The walk is set aside.
    Aside(Setback),
}

/// The writer's side of a walk.
struct Writing {
    state: WalkState,
    server_count: Option<u64>,
    /// Rows written since the last commit, and since when.
    pending: u64,
    opened: Instant,
    /// Whether the descending walk runs (or ran).
    tail_started: bool,
}

impl Engine<'_> {
    /// Walks one kind of rows of one batch from where it stopped, writing
    /// pages with the positions after them; verifies a final batch. A
    /// large final batch is walked from both ends at once, until the two
    /// walks meet: twice the pages in flight, half the wait. `Ok(true)`
    /// when the rows were verified; a setback when the walk was set aside.
    pub(super) fn walk<T: Mirrored>(
        &mut self,
        batch: &Pending,
        pages: Walker<T>,
    ) -> Result<Result<bool, Setback>, SyncError> {
        let kind = T::KIND;
        let Resumed { state, head, tail } = self.resume(batch, kind, pages)?;
        self.progress
            .walk_started(batch.token.as_str(), kind.as_str());
        let stop = AtomicBool::new(false);
        let (sender, receiver) = mpsc::sync_channel::<Message<T>>(PAGES_AHEAD);
        let mut writing = Writing {
            tail_started: tail.is_some(),
            state,
            server_count: None,
            pending: 0,
            opened: Instant::now(),
        };
        let ended = std::thread::scope(|scope| -> Result<Step, SyncError> {
            scope.spawn(fetcher(Side::Head, head, sender.clone(), &stop));
            if let Some(tail) = tail {
                scope.spawn(fetcher(Side::Tail, tail, sender.clone(), &stop));
            }
            // Owned here: leaving drops it, the fetchers' next sends fail
            // and end them (the scope then joins them).
            let receiver = receiver;
            let ended = loop {
                let Ok(message) = receiver.recv() else {
                    break Step::Done;
                };
                let step = self.page(batch, &mut writing, message)?;
                if !matches!(step, Step::Next) {
                    break step;
                }
                if self.tail_due(batch, &writing) {
                    writing.tail_started = true;
                    let query = TransactionQuery::new()
                        .direction(Direction::Desc)
                        .limit(PAGE);
                    scope.spawn(fetcher(
                        Side::Tail,
                        pages(self.client, &batch.token, &query),
                        sender.clone(),
                        &stop,
                    ));
                }
            };
            stop.store(true, Ordering::SeqCst);
            drop(sender);
            Ok(ended)
        })?;
        match ended {
            Step::Aside(setback) => Ok(Err(setback)),
            Step::Next | Step::Done if !batch.status.is_final() => Ok(Ok(false)),
            Step::Next | Step::Done => self.verify(batch, kind, writing.server_count),
        }
    }

    /// Where the walks of a batch's rows resume: the saved positions, or,
    /// when a saved position cannot be used by this client, the start
    /// (upserts make walking again harmless).
    fn resume<T: Mirrored>(
        &mut self,
        batch: &Pending,
        kind: Kind,
        pages: Walker<T>,
    ) -> Result<Resumed<T>, SyncError> {
        let open = |direction: Direction, saved: Option<&str>| -> Option<Pages<T>> {
            let query = TransactionQuery::new().direction(direction).limit(PAGE);
            let walk = pages(self.client, &batch.token, &query);
            match saved {
                None => Some(walk),
                Some(text) => text
                    .parse::<WalkPosition>()
                    .and_then(|p| walk.resume_from(&p))
                    .ok(),
            }
        };
        let state = self.store.walk_state(&batch.token, kind)?;
        let head = open(Direction::Asc, state.head.as_deref());
        let tail = state
            .tail
            .as_deref()
            .map(|saved| open(Direction::Desc, Some(saved)));
        match (head, tail) {
            (Some(head), None) => Ok(Resumed {
                state,
                head,
                tail: None,
            }),
            (Some(head), Some(Some(tail))) => Ok(Resumed {
                state,
                head,
                tail: Some(tail),
            }),
            _ => {
                self.store.restart_walk(&batch.token, kind)?;
                let head = open(Direction::Asc, None).unwrap_or_else(|| {
                    unreachable!("a walk opened without a position always opens")
                });
                Ok(Resumed {
                    state: WalkState::default(),
                    head,
                    tail: None,
                })
            }
        }
    }

    /// Keeps one page (the rows the other walk has not kept) with the
    /// position after it; commits a group when due or at the end.
    fn page<T: Mirrored>(
        &mut self,
        batch: &Pending,
        w: &mut Writing,
        message: Message<T>,
    ) -> Result<Step, SyncError> {
        let kind = T::KIND;
        let fetched = match message {
            Ok(fetched) => fetched,
            Err(e) => {
                // What was fetched before the failure is kept.
                self.commit(batch, kind, w)?;
                return self.server(e).map(Step::Aside);
            }
        };
        if pending_is_new(w) {
            w.opened = Instant::now();
        }
        if !fetched.last {
            self.summary.pages += 1;
        }
        w.server_count = fetched.server_count.or(w.server_count);
        if let Some(foreign) = fetched
            .rows
            .iter()
            .find(|r| *r.aggregator() != self.aggregator)
        {
            let message = format!(
                "batch {} ({}): a row names aggregator {}, not {}: not stored",
                batch.token,
                kind.as_str(),
                aggpay_internal::text::excerpt(foreign.aggregator().as_str(), 60),
                self.aggregator
            );
            return self
                .integrity(batch.token.as_str(), kind.as_str(), message)
                .map(Step::Aside);
        }
        let (fresh, met) = fresh_rows(fetched.rows, fetched.side, &w.state);
        let table = T::table();
        let rows: Vec<_> = fresh.iter().map(|r| table.row(Some(batch.id), r)).collect();
        self.store.write(table, &rows)?;
        w.pending += rows.len() as u64;
        let ids = fresh.iter().filter_map(|r| r.order_id().map(|i| i.get()));
        match fetched.side {
            Side::Head => {
                w.state.head = Some(fetched.position);
                w.state.head_id = ids.max().max(w.state.head_id);
            }
            Side::Tail => {
                w.state.tail = Some(fetched.position);
                w.state.tail_id = ids.min().into_iter().chain(w.state.tail_id).min();
            }
        }
        // Meeting the other walk, or the end of either, keeps every row.
        let done = met || fetched.last;
        if done || w.opened.elapsed() >= GROUP_TIME {
            self.commit(batch, kind, w)?;
        }
        self.progress.rows(fresh.len() as u64, w.server_count);
        Ok(if done { Step::Done } else { Step::Next })
    }

    /// Commits the rows written with the position after them.
    fn commit(&mut self, batch: &Pending, kind: Kind, w: &mut Writing) -> Result<(), SyncError> {
        self.store.commit(Some(WalkCommit {
            batch: &batch.token,
            kind,
            state: &w.state,
            server_count: w.server_count,
        }))?;
        w.pending = 0;
        Ok(())
    }

    /// A large final batch: the other end starts once the first page tells
    /// how large.
    fn tail_due(&self, batch: &Pending, w: &Writing) -> bool {
        !w.tail_started
            && batch.status.is_final()
            && w.server_count.is_some_and(|c| c >= TWO_ENDS_FROM)
    }

    /// A final batch's rows against the server's count.
    fn verify(
        &mut self,
        batch: &Pending,
        kind: Kind,
        server_count: Option<u64>,
    ) -> Result<Result<bool, Setback>, SyncError> {
        let kept = self.store.count_rows(batch.id, kind)?;
        if server_count == Some(kept) {
            self.store.mark_verified(&batch.token, kind)?;
            return Ok(Ok(true));
        }
        let message = format!(
            "batch {} ({}): {kept} {} kept, the server counts {}; it will be walked again",
            batch.token,
            // Final statuses only reach here, but a status is the server's
            // text: never printed raw.
            aggpay_internal::text::excerpt(batch.status.as_str(), 40),
            kind.as_str(),
            server_count.map_or_else(|| "none".to_owned(), |n| n.to_string())
        );
        self.integrity(batch.token.as_str(), kind.as_str(), message)
            .map(Err)
    }
}

fn pending_is_new(w: &Writing) -> bool {
    w.pending == 0
}

/// The body of a fetching thread: pages of `walk`, sent to the writer
/// until the walk ends, fails, or the writer stops it.
fn fetcher<'s, T: Mirrored>(
    side: Side,
    mut walk: Pages<T>,
    sender: mpsc::SyncSender<Message<T>>,
    stop: &'s AtomicBool,
) -> impl FnOnce() + Send + 's {
    move || {
        while !stop.load(Ordering::SeqCst) {
            let message = match walk.next_page() {
                Some(Ok(page)) => Ok(Fetched {
                    side,
                    server_count: Some(page.count),
                    rows: page.items,
                    position: walk.position().to_string(),
                    last: false,
                }),
                None => Ok(Fetched {
                    side,
                    rows: Vec::new(),
                    position: walk.position().to_string(),
                    server_count: walk.reported_count(),
                    last: true,
                }),
                Some(Err(e)) => Err(e),
            };
            let end = !matches!(&message, Ok(f) if !f.last);
            // The writer stopped (done, set aside, or a database error).
            if sender.send(message).is_err() || end {
                return;
            }
        }
    }
}

/// The rows of a page the other walk has not kept, and whether the page
/// reached them (the two walks met).
fn fresh_rows<T: aggpay::ListRecord>(
    rows: Vec<T>,
    side: Side,
    state: &WalkState,
) -> (Vec<T>, bool) {
    let id = |r: &T| r.order_id().map(|i| i.get());
    let (bound, beyond): (Option<u64>, fn(u64, u64) -> bool) = match side {
        // Rows at or above the tail's lowest are the tail's.
        Side::Head => (state.tail_id.filter(|_| state.tail.is_some()), |id, b| {
            id >= b
        }),
        // Rows at or below the head's highest are the head's.
        Side::Tail => (state.head_id, |id, b| id <= b),
    };
    let Some(bound) = bound else {
        return (rows, false);
    };
    let mut met = false;
    let fresh = rows
        .into_iter()
        .filter(|r| match id(r) {
            Some(i) if beyond(i, bound) => {
                met = true;
                false
            }
            _ => true,
        })
        .collect();
    (fresh, met)
}
