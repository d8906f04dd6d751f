//! The walks of batches' rows, several side by side: where each resumes,
//! the fetchers (one per end of a batch), and the one writer that keeps
//! each page with the positions after it, meets the two ends of a batch,
//! commits in groups, and verifies a final batch at its end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use aggpay::{BatchToken, Client, Direction, Pages, TransactionQuery, WalkPosition};

use super::{End, Engine, GROUP_TIME, PAGE, Setback};
use crate::error::SyncError;
use crate::store::{Mirrored, Pending, RowKind, WalkCommit, WalkState};

/// Pages fetched ahead of the database: the network and the database work
/// at once, and memory stays bounded (a page is at most 100 rows).
const PAGES_AHEAD: usize = 64;
/// A final batch of at least this many rows is walked from both ends.
const TWO_ENDS_FROM: u64 = 5_000;

/// The walk of a batch's rows of one kind.
pub(super) type Walker<T> = fn(&Client, &BatchToken, &TransactionQuery) -> Pages<T>;

/// A page on its way from the network to the database (tagged with the
/// walk it belongs to), or why the walk failed.
type Message<T> = (usize, Result<Fetched<T>, aggpay::Error>);

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
    /// The server failed: the walk is set aside.
    Failed(aggpay::Error),
    /// The page broke the mirror's rules: recorded, and the walk set aside.
    Broken(String),
}

/// The writer's side of one walk.
struct Writing {
    state: WalkState,
    server_count: Option<u64>,
    /// The position moved since the last commit.
    dirty: bool,
    /// Whether the descending walk runs (or ran).
    tail_started: bool,
}

/// The walks in flight, and the transaction they share.
struct Flight {
    /// By walk: its writer's side while it runs.
    walks: Vec<Option<Writing>>,
    /// When the open transaction got its first rows.
    opened: Option<Instant>,
}

impl Engine<'_> {
    /// Walks one kind of rows of each of `batches` from where it stopped,
    /// `jobs` batches at once, writing pages with the positions after
    /// them; verifies a final batch at its end. A large final batch is
    /// walked from both ends at once, until the two walks meet. One
    /// thread writes: the database sees one writer whatever `jobs` is.
    /// How each walk ended, in the order of `batches`; a walk that failed
    /// is set aside (named in the summary) and the others go on.
    pub(super) fn walk_all<T: Mirrored>(
        &mut self,
        batches: &[Pending],
        pages: Walker<T>,
    ) -> Result<Vec<End>, SyncError> {
        let kind = T::KIND;
        let jobs = self.plan.jobs.max(1);
        let stops: Vec<AtomicBool> = batches.iter().map(|_| AtomicBool::new(false)).collect();
        let (sender, receiver) = mpsc::sync_channel::<Message<T>>(PAGES_AHEAD);
        let mut flight = Flight {
            walks: batches.iter().map(|_| None).collect(),
            opened: None,
        };
        let mut ends: Vec<Option<End>> = vec![None; batches.len()];
        std::thread::scope(|scope| -> Result<(), SyncError> {
            // Owned here: leaving (at the end, or on a database error)
            // drops them, the fetchers' next sends fail and end them (the
            // scope then joins them).
            let receiver = receiver;
            let sender = sender;
            let mut next = 0;
            let mut running = 0;
            loop {
                while running < jobs && next < batches.len() {
                    let i = next;
                    next += 1;
                    let Resumed { state, head, tail } = self.resume(&batches[i], kind, pages)?;
                    self.progress
                        .walk_started(batches[i].token.as_str(), kind.as_str());
                    scope.spawn(fetcher(i, Side::Head, head, sender.clone(), &stops[i]));
                    let tail_started = tail.is_some();
                    if let Some(tail) = tail {
                        scope.spawn(fetcher(i, Side::Tail, tail, sender.clone(), &stops[i]));
                    }
                    flight.walks[i] = Some(Writing {
                        state,
                        server_count: None,
                        dirty: false,
                        tail_started,
                    });
                    running += 1;
                }
                if running == 0 {
                    break;
                }
                let Some((i, message)) = self.receive(&receiver, batches, kind, &mut flight)?
                else {
                    continue;
                };
                // A page of a walk already ended (its fetchers were told to
                // stop) is dropped.
                let Some(writing) = flight.walks[i].as_mut() else {
                    continue;
                };
                let batch = &batches[i];
                let step = self.page(batch, writing, message)?;
                if writing.dirty && flight.opened.is_none() {
                    flight.opened = Some(Instant::now());
                }
                if matches!(step, Step::Next) {
                    if self.tail_due(batch, writing) {
                        writing.tail_started = true;
                        let query = TransactionQuery::new()
                            .direction(Direction::Desc)
                            .limit(PAGE);
                        let walk = pages(self.client, &batch.token, &query);
                        scope.spawn(fetcher(i, Side::Tail, walk, sender.clone(), &stops[i]));
                    }
                    if flight.opened.is_some_and(|t| t.elapsed() >= GROUP_TIME) {
                        self.commit_all(batches, kind, &mut flight)?;
                    }
                    continue;
                }
                // The walk ended: what it fetched is kept (with every other
                // walk's rows and positions), then it is judged.
                stops[i].store(true, Ordering::SeqCst);
                self.commit_all(batches, kind, &mut flight)?;
                let server_count = flight.walks[i].take().and_then(|w| w.server_count);
                running -= 1;
                ends[i] = Some(self.ended(batch, kind, step, server_count)?);
            }
            for stop in &stops {
                stop.store(true, Ordering::SeqCst);
            }
            Ok(())
        })?;
        #[allow(
            clippy::expect_used,
            reason = "the scope above joins every walk it started, and each sets its end"
        )]
        Ok(ends
            .into_iter()
            .map(|end| end.expect("every walk started ends"))
            .collect())
    }

    /// The next page from the fetchers; `None` when none came within what
    /// is left of the open group's time, which is then committed: rows
    /// wait no longer than a group's time for their commit, however slow
    /// the next page.
    fn receive<T: Mirrored>(
        &mut self,
        receiver: &mpsc::Receiver<Message<T>>,
        batches: &[Pending],
        kind: RowKind,
        flight: &mut Flight,
    ) -> Result<Option<Message<T>>, SyncError> {
        let wait = flight
            .opened
            .map_or(GROUP_TIME, |t| GROUP_TIME.saturating_sub(t.elapsed()));
        let ready = match receiver.try_recv() {
            Ok(message) => Ok(message),
            Err(mpsc::TryRecvError::Empty) => {
                let idle = Instant::now();
                let got = receiver.recv_timeout(wait);
                self.summary.idle_seconds += idle.elapsed().as_secs_f64();
                got
            }
            Err(mpsc::TryRecvError::Disconnected) => Err(mpsc::RecvTimeoutError::Disconnected),
        };
        match ready {
            Ok(message) => Ok(Some(message)),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if flight.opened.is_some() {
                    self.commit_all(batches, kind, flight)?;
                }
                Ok(None)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                unreachable!("the writer holds a sender while walks run")
            }
        }
    }

    /// Judges a walk that ended, once what it fetched is committed: an
    /// open batch is walked; a final one is verified against the server's
    /// count; a walk that failed or met a broken page is set aside.
    fn ended(
        &mut self,
        batch: &Pending,
        kind: RowKind,
        step: Step,
        server_count: Option<u64>,
    ) -> Result<End, SyncError> {
        let end = match step {
            Step::Next | Step::Done if !batch.status.is_final() => End::Walked,
            Step::Next | Step::Done => match self.verify(batch, kind, server_count)? {
                Ok(()) => End::Verified,
                Err(setback) => self.aside(batch, kind, &setback),
            },
            Step::Failed(e) => {
                let setback = self.server(e)?;
                self.aside(batch, kind, &setback)
            }
            Step::Broken(message) => {
                let setback = self.integrity(batch.token.as_str(), kind.as_str(), message)?;
                self.aside(batch, kind, &setback)
            }
        };
        self.progress.walk_ended(batch.token.as_str());
        Ok(end)
    }

    /// Names a walk set aside; how it ended.
    fn aside(&mut self, batch: &Pending, kind: RowKind, setback: &Setback) -> End {
        self.set_aside(batch.token.as_str(), kind.as_str(), setback);
        End::Aside {
            transient: setback.transient(),
        }
    }

    /// Commits the rows written, with the position of every walk that
    /// moved since the last commit.
    fn commit_all(
        &mut self,
        batches: &[Pending],
        kind: RowKind,
        flight: &mut Flight,
    ) -> Result<(), SyncError> {
        let commits: Vec<WalkCommit<'_>> = flight
            .walks
            .iter()
            .zip(batches)
            .filter_map(|(w, batch)| {
                w.as_ref().filter(|w| w.dirty).map(|w| WalkCommit {
                    batch: &batch.token,
                    kind,
                    state: &w.state,
                    server_count: w.server_count,
                })
            })
            .collect();
        self.store.commit(&commits)?;
        for w in flight.walks.iter_mut().flatten() {
            w.dirty = false;
        }
        flight.opened = None;
        Ok(())
    }

    /// Where the walks of a batch's rows resume: the saved positions, or,
    /// when a saved position cannot be used by this client, the start
    /// (upserts make walking again harmless).
    fn resume<T: Mirrored>(
        &mut self,
        batch: &Pending,
        kind: RowKind,
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
                #[expect(
                    clippy::expect_used,
                    reason = "a walk opened without a position always opens"
                )]
                let head = open(Direction::Asc, None)
                    .expect("a walk opened without a position always opens");
                Ok(Resumed {
                    state: WalkState::default(),
                    head,
                    tail: None,
                })
            }
        }
    }

    /// Writes one page (the rows the other end has not kept) in the open
    /// transaction and moves the walk's position past it.
    fn page<T: Mirrored>(
        &mut self,
        batch: &Pending,
        w: &mut Writing,
        fetched: Result<Fetched<T>, aggpay::Error>,
    ) -> Result<Step, SyncError> {
        let kind = T::KIND;
        let fetched = match fetched {
            Ok(fetched) => fetched,
            Err(e) => return Ok(Step::Failed(e)),
        };
        if !fetched.last {
            self.summary.pages += 1;
        }
        w.server_count = fetched.server_count.or(w.server_count);
        if let Some(foreign) = fetched
            .rows
            .iter()
            .filter_map(Mirrored::aggregator)
            .find(|a| **a != self.aggregator)
        {
            return Ok(Step::Broken(format!(
                "batch {} ({}): a row names aggregator {}, not {}: not stored",
                batch.token,
                kind.as_str(),
                aggpay_internal::text::excerpt(foreign.as_str(), 60),
                self.aggregator
            )));
        }
        let (fresh, met) = fresh_rows(fetched.rows, fetched.side, &w.state);
        let table = T::table();
        let rows: Vec<_> = fresh.iter().map(|r| table.row(Some(batch.id), r)).collect();
        self.store.write(table, &rows)?;
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
        w.dirty = true;
        self.progress
            .rows(batch.token.as_str(), fresh.len() as u64, w.server_count);
        // Meeting the other walk, or the end of either, keeps every row.
        Ok(if met || fetched.last {
            Step::Done
        } else {
            Step::Next
        })
    }

    /// A large final batch: the other end starts once the first page tells
    /// how large.
    fn tail_due(&self, batch: &Pending, w: &Writing) -> bool {
        !w.tail_started
            && batch.status.is_final()
            && w.server_count.is_some_and(|c| c >= TWO_ENDS_FROM)
    }

    /// A final batch's rows against the server's count; marked verified
    /// when they agree.
    fn verify(
        &mut self,
        batch: &Pending,
        kind: RowKind,
        server_count: Option<u64>,
    ) -> Result<Result<(), Setback>, SyncError> {
        let kept = self.store.count_rows(batch.id, kind)?;
        if server_count == Some(kept) {
            self.store.mark_verified(&batch.token, kind)?;
            return Ok(Ok(()));
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

/// The body of a fetching thread: pages of `walk`, sent to the writer
/// until the walk ends, fails, or the writer stops it.
fn fetcher<'s, T: Mirrored>(
    walk_index: usize,
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
            if sender.send((walk_index, message)).is_err() || end {
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
    // Only the page where the walks meet has rows to leave out: the
    // others are kept as they came, without moving a row.
    if !rows.iter().any(|r| id(r).is_some_and(|i| beyond(i, bound))) {
        return (rows, false);
    }
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

#[cfg(test)]
mod tests {
    use aggpay::{NumericId, Transaction};

    use super::{Side, fresh_rows};
    use crate::store::WalkState;

    /// Transactions with these ids (the client's example otherwise).
    fn rows(ids: impl IntoIterator<Item = u64>) -> Vec<Transaction> {
        ids.into_iter()
            .map(|id| {
                let mut row = Transaction::example();
                row.id = NumericId::new(id);
                row
            })
            .collect()
    }

    /// The head has kept up to 40, the tail down to 61.
    fn both_started() -> WalkState {
        WalkState {
            head: Some("head".into()),
            head_id: Some(40),
            tail: Some("tail".into()),
            tail_id: Some(61),
        }
    }

    /// `fresh_rows` keeps the rows `kept` of a page of rows with ids
    /// `page` from `side`, and tells whether the walks met (`met`).
    fn assert_cut(
        state: &WalkState,
        page: impl IntoIterator<Item = u64>,
        side: Side,
        kept: impl IntoIterator<Item = u64>,
        met: bool,
    ) {
        let (fresh, met_now) = fresh_rows(rows(page), side, state);
        let ids: Vec<u64> = fresh.iter().map(|r| r.id.get()).collect();
        assert_eq!((ids, met_now), (kept.into_iter().collect(), met));
    }

    #[test]
    fn pages_short_of_the_other_walk_are_kept_whole() {
        let state = both_started();
        assert_cut(&state, 41..=50, Side::Head, 41..=50, false);
        assert_cut(&state, (51..=60).rev(), Side::Tail, (51..=60).rev(), false);
    }

    #[test]
    fn the_page_where_the_walks_meet_keeps_only_the_rows_between_them() {
        let state = both_started();
        assert_cut(&state, 55..=64, Side::Head, 55..=60, true);
        assert_cut(&state, (36..=45).rev(), Side::Tail, (41..=45).rev(), true);
    }

    #[test]
    fn before_the_tail_starts_the_head_keeps_everything() {
        let state = WalkState {
            tail: None,
            ..both_started()
        };
        assert_cut(&state, 55..=64, Side::Head, 55..=64, false);
    }
}
