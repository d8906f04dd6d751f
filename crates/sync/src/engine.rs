//! One sync run: the batches (new ones, then the open ones again), then
//! the rows of every batch not yet verified, each page committed with the
//! walk position after it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use aggpay::{
    BatchQuery, BatchToken, Client, Direction, Pages, SettlementPayout, Transaction,
    TransactionQuery, WalkPosition,
};

use crate::db::{Db, Kind, Mirrored, Pending, WalkState};
use crate::error::SyncError;
use crate::progress::Progress;
use crate::summary::Summary;

/// Pages fetched ahead of the database: the network and SQLite work at
/// once, and memory stays bounded (a page is at most 100 rows).
const PAGES_AHEAD: usize = 16;
/// Rows a page asks for (API.md's maximum).
const PAGE: u32 = 100;
/// A final batch of at least this many rows is walked from both ends.
const TWO_ENDS_FROM: u64 = 5_000;
/// The longest a page waits for its commit: pages that come faster share
/// one transaction (far fewer index pages rewritten per row); a killed
/// run loses at most that much work, and never rows without their
/// position or a position without its rows.
const GROUP_TIME: std::time::Duration = std::time::Duration::from_millis(1000);

/// A run in progress.
pub struct Engine<'a> {
    client: &'a Client,
    db: &'a mut Db,
    progress: &'a Progress,
    full: bool,
    summary: Summary,
    run: i64,
}

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

impl<'a> Engine<'a> {
    pub fn new(client: &'a Client, db: &'a mut Db, progress: &'a Progress, full: bool) -> Self {
        Self {
            client,
            db,
            progress,
            full,
            summary: Summary::default(),
            run: 0,
        }
    }

    /// Runs the sync; the summary of a finished run (integrity errors
    /// included), or why it could not finish.
    pub fn run(mut self) -> Result<Summary, SyncError> {
        let started = Instant::now();
        let before = self.db.totals()?;
        self.run = self.db.start_run()?;
        let outcome = self.batches().and_then(|()| self.rows());
        let after = self.db.totals()?;
        let stats = self.client.stats();
        let s = &mut self.summary;
        s.batches_total = after.batches;
        s.transactions_new = after.transactions.saturating_sub(before.transactions);
        s.transactions_total = after.transactions;
        s.payouts_new = after.payouts.saturating_sub(before.payouts);
        s.payouts_total = after.payouts;
        s.requests = stats.requests;
        s.retries = stats.retries;
        s.seconds = started.elapsed().as_secs_f64();
        s.peak_rss_mb = crate::summary::peak_rss_mb();
        let code = match &outcome {
            Ok(()) => s.exit_code(),
            Err(_) => crate::EXIT_UNUSABLE,
        };
        self.db
            .finish_run(self.run, code, &self.summary.to_json().to_string())?;
        outcome.map(|()| self.summary)
    }

    /// New batches (after the newest kept, or all with `--full`), then
    /// every batch still open that the walk did not show, one by one.
    fn batches(&mut self) -> Result<(), SyncError> {
        let after = if self.full {
            None
        } else {
            self.db.max_batch_id()?
        };
        let mut query = BatchQuery::new().direction(Direction::Asc).limit(PAGE);
        if let Some(id) = after {
            query = query.cursor(id.to_string());
        }
        self.progress.stage("batches");
        let mut seen: HashSet<String> = HashSet::new();
        let mut walk = self.client.settlement_batches(&query);
        while let Some(page) = walk.next_page() {
            let page = page.map_err(SyncError::client("listing batches"))?;
            self.summary.pages += 1;
            let changes = self.db.upsert_batches(&page)?;
            self.summary.batches_new += changes.new;
            self.summary.batches_changed += changes.changed;
            seen.extend(page.iter().map(|b| b.token.to_string()));
            self.progress.batches(page.len() as u64);
        }
        for token in self.db.open_batches()? {
            if seen.contains(&token) {
                continue;
            }
            let parsed = BatchToken::parse(token.as_str()).map_err(|e| {
                SyncError::Database(format!("holds a batch token the client refuses: {e}"))
            })?;
            let page = self
                .client
                .list_settlement_batches(&BatchQuery::new().batch_id(parsed))
                .map_err(SyncError::client(format!("refreshing batch {token}")))?;
            self.summary.pages += 1;
            match page.items.first() {
                Some(batch) if batch.token.as_str() == token => {
                    let changes = self.db.upsert_batches(std::slice::from_ref(batch))?;
                    self.summary.batches_changed += changes.changed;
                }
                _ => {
                    let message = format!("batch {token} was listed before and is not found now");
                    self.db
                        .integrity_error(self.run, &token, Kind::Transactions, &message)?;
                    self.summary.integrity_errors.push(message);
                }
            }
        }
        Ok(())
    }

    /// The rows of every batch not verified yet, oldest batch first.
    fn rows(&mut self) -> Result<(), SyncError> {
        let pending = self.db.pending()?;
        self.progress.stage("rows");
        self.progress.pending(pending.len() as u64);
        for batch in &pending {
            let mut verified = true;
            if batch.transactions {
                verified &=
                    self.walk::<Transaction>(batch, |c, t, q| c.batch_transactions(t, q))?;
            }
            if batch.payouts {
                verified &=
                    self.walk::<SettlementPayout>(batch, |c, t, q| c.batch_payouts(t, q))?;
            }
            if !batch.is_final() {
                self.summary.batches_open += 1;
            } else if verified {
                self.summary.batches_verified += 1;
            }
            self.progress.batch_done();
        }
        Ok(())
    }

    /// Walks one kind of rows of one batch from where it stopped, writing
    /// pages with the positions after them; verifies a final batch. A
    /// large final batch is walked from both ends at once, until the two
    /// walks meet: twice the pages in flight, half the wait. True when
    /// the rows were verified.
    fn walk<T: Mirrored + aggpay::ListRecord>(
        &mut self,
        batch: &Pending,
        pages: fn(&Client, &BatchToken, &TransactionQuery) -> Pages<T>,
    ) -> Result<bool, SyncError> {
        let kind = T::KIND;
        let token = BatchToken::parse(batch.token.as_str()).map_err(|e| {
            SyncError::Database(format!("holds a batch token the client refuses: {e}"))
        })?;
        let mut state = self.db.walk_state(&batch.token, kind)?;
        let open = |direction: Direction, saved: &Option<String>| -> Option<Pages<T>> {
            let query = TransactionQuery::new().direction(direction).limit(PAGE);
            let walk = pages(self.client, &token, &query);
            match saved {
                None => Some(walk),
                Some(text) => text
                    .parse::<WalkPosition>()
                    .and_then(|p| walk.resume_from(&p))
                    .ok(),
            }
        };
        let (head, tail) = match (open(Direction::Asc, &state.head), &state.tail) {
            (Some(head), None) => (head, None),
            (Some(head), Some(_)) => match open(Direction::Desc, &state.tail) {
                Some(tail) => (head, Some(tail)),
                None => return self.restart(batch, kind, pages),
            },
            // A position this client cannot use: walk again from the start
            // (upserts make that harmless).
            (None, _) => return self.restart(batch, kind, pages),
        };
        self.progress.walk_started(&batch.token, kind.as_str());
        let stop = AtomicBool::new(false);
        let (sender, receiver) = mpsc::sync_channel::<Message<T>>(PAGES_AHEAD);
        let mut server_count = None;
        let outcome = std::thread::scope(|scope| -> Result<(), SyncError> {
            let fetch = |side: Side, mut walk: Pages<T>, sender: mpsc::SyncSender<Message<T>>| {
                let stop = &stop;
                move || {
                    while !stop.load(Ordering::SeqCst) {
                        let message = match walk.next_page() {
                            Some(Ok(rows)) => Ok(Fetched {
                                side,
                                rows,
                                position: walk.position().to_string(),
                                server_count: walk.reported_count(),
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
                        // The writer stopped (done, or a database error).
                        if sender.send(message).is_err() || end {
                            return;
                        }
                    }
                }
            };
            scope.spawn(fetch(Side::Head, head, sender.clone()));
            let mut tail_walk = tail;
            if let Some(tail) = tail_walk.take() {
                scope.spawn(fetch(Side::Tail, tail, sender.clone()));
            }
            let mut tail_started = state.tail.is_some();
            // Owned here: an early return drops it, and the fetchers' next
            // sends fail and end them (the scope then joins them).
            let receiver = receiver;
            let mut writer = self.db.writer::<T>(&batch.token, batch.id);
            let mut opened = Instant::now();
            loop {
                let Ok(message) = receiver.recv() else {
                    break;
                };
                let fetched = message.map_err(SyncError::client(format!(
                    "walking the {} of batch {}",
                    kind.as_str(),
                    batch.token
                )))?;
                if writer.pending() == 0 {
                    opened = Instant::now();
                }
                if !fetched.last {
                    self.summary.pages += 1;
                }
                server_count = fetched.server_count.or(server_count);
                // Keep what the other walk has not kept; meeting it, or the
                // end of either walk, means every row is kept.
                let Fetched {
                    side,
                    rows,
                    position,
                    last,
                    ..
                } = fetched;
                let (fresh, met) = fresh_rows(rows, side, &state);
                writer.rows(&fresh)?;
                let n = fresh.len() as u64;
                let ids = fresh.iter().filter_map(|r| r.order_id().map(|i| i.get()));
                match side {
                    Side::Head => {
                        state.head = Some(position);
                        state.head_id = ids.max().max(state.head_id);
                    }
                    Side::Tail => {
                        state.tail = Some(position);
                        state.tail_id = ids.min().into_iter().chain(state.tail_id).min();
                    }
                }
                let done = met || last;
                if done || opened.elapsed() >= GROUP_TIME {
                    writer.commit(&state, server_count)?;
                }
                self.progress.rows(n, server_count);
                if done {
                    stop.store(true, Ordering::SeqCst);
                    break;
                }
                // A large final batch: the other end starts once the
                // first page tells how large.
                if !tail_started
                    && batch.is_final()
                    && server_count.is_some_and(|c| c >= TWO_ENDS_FROM)
                {
                    tail_started = true;
                    let query = TransactionQuery::new()
                        .direction(Direction::Desc)
                        .limit(PAGE);
                    scope.spawn(fetch(
                        Side::Tail,
                        pages(self.client, &token, &query),
                        sender.clone(),
                    ));
                }
            }
            drop(sender);
            Ok(())
        });
        outcome?;
        if !batch.is_final() {
            return Ok(false);
        }
        self.verify(batch, kind, server_count)
    }

    /// Sends a walk whose saved position is unusable back to its start.
    fn restart<T: Mirrored + aggpay::ListRecord>(
        &mut self,
        batch: &Pending,
        kind: Kind,
        pages: fn(&Client, &BatchToken, &TransactionQuery) -> Pages<T>,
    ) -> Result<bool, SyncError> {
        self.db.restart_walk(&batch.token, kind)?;
        self.walk(batch, pages)
    }

    /// A final batch's rows against the server's count.
    fn verify(
        &mut self,
        batch: &Pending,
        kind: Kind,
        server_count: Option<u64>,
    ) -> Result<bool, SyncError> {
        let kept = self.db.count_rows(batch.id, kind)?;
        if server_count == Some(kept) {
            self.db.mark_verified(&batch.token, kind)?;
            return Ok(true);
        }
        let message = format!(
            "batch {} ({}): {kept} {} kept, the server counts {}; it will be walked again",
            batch.token,
            // Final statuses only reach here, but a status is the server's
            // text: never printed raw.
            aggpay::util::excerpt(&batch.status, 40),
            kind.as_str(),
            server_count.map_or_else(|| "none".to_owned(), |n| n.to_string())
        );
        self.db
            .integrity_error(self.run, &batch.token, kind, &message)?;
        self.summary.integrity_errors.push(message);
        Ok(false)
    }
}

/// Which end of a batch a walk starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Ascending from the first row.
    Head,
    /// Descending from the last row.
    Tail,
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
