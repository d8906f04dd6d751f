//! One sync run: the batches (new ones, then the open ones again), the
//! merchants, rail merchants and refunds, then the rows of every batch not
//! yet verified, each page committed with the walk position after it.
//!
//! What fails on the server's side is set aside, never the end of the
//! run: a batch whose walk fails (its retries spent, a 500, a loop, a body
//! that does not decode, a row of another aggregator) is named in the
//! summary with why, the others go on, and the ones that failed only for
//! now are tried once more before the run ends. Only the database failing
//! ends a run early.

mod lists;
mod walk;

use std::collections::HashSet;
use std::time::Instant;

use aggpay::{AggregatorId, BatchQuery, Client, Direction};

use crate::error::SyncError;
use crate::progress::Progress;
use crate::store::{Pending, RowKind, Store};
use crate::summary::{Left, Summary};

/// Rows a page asks for (API.md's maximum).
const PAGE: u32 = 100;

/// The longest a page waits for its commit: pages that come faster share
/// one transaction (far fewer index pages rewritten per row); a killed
/// run loses at most that much work, and never rows without their
/// position or a position without its rows.
pub(crate) const GROUP_TIME: std::time::Duration = std::time::Duration::from_millis(1000);

/// How a walk of one kind of a batch's rows ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// A final batch's rows, counted against the server's count.
    Verified,
    /// An open batch's rows, as far as they go.
    Walked,
    /// Set aside.
    Aside {
        /// It failed only for now (a transient failure outlasted the
        /// retries): it is tried once more before the run ends.
        transient: bool,
    },
}

/// The kinds of rows a batch still needs walked.
fn wanted(batch: &Pending) -> Vec<RowKind> {
    let mut out = Vec::new();
    if batch.transactions {
        out.push(RowKind::Transactions);
    }
    if batch.payouts {
        out.push(RowKind::Payouts);
    }
    out
}

/// What a run is told to do.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Walk the whole batch list, not only the batches after the newest.
    pub full: bool,
    /// Refunds created within this long before the newest one mirrored
    /// are read again (their status may still change).
    pub refund_window: jiff::SignedDuration,
    /// Batches walked at once (1: one after another).
    pub jobs: usize,
}

/// A run in progress.
pub struct Engine<'a> {
    client: &'a Client,
    store: &'a mut dyn Store,
    progress: &'a Progress,
    plan: Plan,
    aggregator: AggregatorId,
    summary: Summary,
    run: i64,
}

/// Why a piece of the run was set aside.
#[derive(Debug)]
enum Setback {
    /// The server failed: transient failures outlasting the retries, or
    /// a fault (a 500, a loop, a body that does not decode).
    Server(aggpay::Error),
    /// The server's answer broke the mirror's rules (a row of another
    /// aggregator, a count its rows do not match): already recorded.
    Integrity(String),
}

impl Setback {
    /// True when trying again later may succeed: transient failures, not
    /// a 500 that came back on every retry.
    fn transient(&self) -> bool {
        match self {
            Setback::Server(e) => e.is_retryable() && e.status() != Some(500),
            Setback::Integrity(_) => false,
        }
    }

    fn reason(&self) -> String {
        match self {
            Setback::Server(e) => aggpay_internal::text::chain(e),
            Setback::Integrity(message) => message.clone(),
        }
    }
}

impl<'a> Engine<'a> {
    pub fn new(
        client: &'a Client,
        store: &'a mut dyn Store,
        progress: &'a Progress,
        plan: Plan,
    ) -> Self {
        Self {
            aggregator: client.aggregator_id().clone(),
            client,
            store,
            progress,
            plan,
            summary: Summary::default(),
            run: 0,
        }
    }

    /// Runs the sync, filling `summary` (integrity errors and what was
    /// set aside included); the database's failure, if it ended the run
    /// early. The `runs` row records the run's true exit code.
    pub fn run(mut self, summary: &mut Summary) -> Result<(), SyncError> {
        self.summary = std::mem::take(summary);
        let result = self.run_recorded();
        *summary = std::mem::take(&mut self.summary);
        if let Err(e) = &result {
            summary.error.get_or_insert_with(|| e.chain());
        }
        result
    }

    fn run_recorded(&mut self) -> Result<(), SyncError> {
        let started = Instant::now();
        let before = self.store.totals()?;
        self.run = self.store.start_run()?;
        let outcome = self.stages();
        let after = self.store.totals()?;
        let verified_total = self
            .store
            .batch_states()?
            .iter()
            .filter(|b| b.status.is_final() && !b.transactions && !b.payouts)
            .count() as u64;
        let stats = self.client.stats();
        let s = &mut self.summary;
        s.batches_total = after.batches;
        s.transactions_new = after.transactions.saturating_sub(before.transactions);
        s.transactions_total = after.transactions;
        s.payouts_new = after.payouts.saturating_sub(before.payouts);
        s.payouts_total = after.payouts;
        s.refunds_new = after.refunds.saturating_sub(before.refunds);
        s.refunds_total = after.refunds;
        s.merchants_total = after.merchants;
        s.rail_merchants_total = after.rail_merchants;
        s.requests = stats.requests;
        s.retries = stats.retries;
        s.waited_seconds = stats.waited.as_secs_f64();
        s.seconds = started.elapsed().as_secs_f64();
        s.peak_rss_mb = crate::summary::peak_rss_mb();
        s.batches_verified_total = verified_total;
        if let Err(e) = &outcome {
            s.error = Some(e.chain());
        }
        let code = s.exit_code();
        self.store
            .finish_run(self.run, code, &self.summary.to_json().to_string())?;
        outcome
    }

    fn stages(&mut self) -> Result<(), SyncError> {
        self.batches()?;
        self.lists()?;
        let pending = self.store.pending()?;
        self.progress.stage("rows");
        self.progress
            .pending(pending.iter().map(|b| wanted(b).len() as u64).sum());
        let mut ends = self.rows(&pending)?;
        // What failed only for now gets one more try before the run ends.
        let again: Vec<(usize, RowKind)> = ends
            .iter()
            .enumerate()
            .flat_map(|(i, e)| e.iter().map(move |(kind, end)| (i, *kind, *end)))
            .filter(|(_, _, end)| *end == End::Aside { transient: true })
            .map(|(i, kind, _)| (i, kind))
            .collect();
        for &(i, kind) in &again {
            let subject = pending[i].token.as_str();
            self.summary
                .left
                .retain(|l| !(l.subject == subject && l.kind == kind.as_str()));
        }
        for kind in [RowKind::Transactions, RowKind::Payouts] {
            let which: Vec<usize> = again
                .iter()
                .filter(|(_, k)| *k == kind)
                .map(|(i, _)| *i)
                .collect();
            let batches: Vec<Pending> = which.iter().map(|&i| pending[i].clone()).collect();
            for (i, end) in which.into_iter().zip(self.walk_kind(kind, &batches)?) {
                for (k, e) in &mut ends[i] {
                    if *k == kind {
                        *e = end;
                    }
                }
            }
        }
        for (batch, ends) in pending.iter().zip(&ends) {
            if !batch.status.is_final() {
                self.summary.batches_open += 1;
            } else if ends.iter().all(|(_, e)| *e == End::Verified) {
                self.summary.batches_verified += 1;
            }
        }
        Ok(())
    }

    /// Walks the rows every pending batch still needs: how each kind of
    /// each batch ended. With one job, batch after batch (its transactions,
    /// then its payouts); with more, the transactions of all of them
    /// `jobs` at a time, then the payouts.
    fn rows(&mut self, pending: &[Pending]) -> Result<Vec<Vec<(RowKind, End)>>, SyncError> {
        let mut ends: Vec<Vec<(RowKind, End)>> = vec![Vec::new(); pending.len()];
        if self.plan.jobs <= 1 {
            for (batch, ends) in pending.iter().zip(&mut ends) {
                for kind in wanted(batch) {
                    let end = self.walk_kind(kind, std::slice::from_ref(batch))?;
                    ends.extend(end.into_iter().map(|e| (kind, e)));
                }
            }
            return Ok(ends);
        }
        for kind in [RowKind::Transactions, RowKind::Payouts] {
            let which: Vec<usize> = (0..pending.len())
                .filter(|&i| wanted(&pending[i]).contains(&kind))
                .collect();
            let batches: Vec<Pending> = which.iter().map(|&i| pending[i].clone()).collect();
            for (i, end) in which.into_iter().zip(self.walk_kind(kind, &batches)?) {
                ends[i].push((kind, end));
            }
        }
        Ok(ends)
    }

    /// Walks one kind of rows of `batches` ([`Engine::walk_all`]).
    fn walk_kind(&mut self, kind: RowKind, batches: &[Pending]) -> Result<Vec<End>, SyncError> {
        if batches.is_empty() {
            return Ok(Vec::new());
        }
        match kind {
            RowKind::Transactions => {
                self.walk_all::<aggpay::Transaction>(batches, |c, t, q| c.batch_transactions(t, q))
            }
            RowKind::Payouts => {
                self.walk_all::<aggpay::SettlementPayout>(batches, |c, t, q| c.batch_payouts(t, q))
            }
        }
    }

    /// Names a piece of the run set aside, and why.
    fn set_aside(&mut self, subject: &str, kind: &str, setback: &Setback) {
        self.summary.left.push(Left {
            subject: subject.to_owned(),
            kind: kind.to_owned(),
            reason: setback.reason(),
            transient: setback.transient(),
            integrity: matches!(setback, Setback::Integrity(_)),
        });
    }

    /// The setback of a request that failed for good; a key refused (401)
    /// ends the run instead: nothing else can be synced.
    fn server(&self, e: aggpay::Error) -> Result<Setback, SyncError> {
        if e.is_unauthorized() {
            return Err(SyncError::client("the key was refused")(e));
        }
        Ok(Setback::Server(e))
    }

    /// Records an integrity error; the setback that sets its subject aside.
    fn integrity(
        &mut self,
        subject: &str,
        kind: &str,
        message: String,
    ) -> Result<Setback, SyncError> {
        self.store
            .integrity_error(self.run, subject, kind, &message)?;
        self.summary.integrity_errors.push(message.clone());
        Ok(Setback::Integrity(message))
    }

    /// New batches (after the newest kept, or all with `--full`), then
    /// every batch still open that the walk did not show, one by one.
    /// A list that fails is set aside: the rows of the batches known go on.
    fn batches(&mut self) -> Result<(), SyncError> {
        let after = if self.plan.full {
            None
        } else {
            self.store.max_batch_id()?
        };
        let mut query = BatchQuery::new().direction(Direction::Asc).limit(PAGE);
        if let Some(id) = after {
            query = query.cursor(id.to_string());
        }
        self.progress.stage("batches");
        let mut seen: HashSet<String> = HashSet::new();
        let mut walk = self.client.settlement_batches(&query);
        let mut first = true;
        while let Some(page) = walk.next_page() {
            let page = match page {
                // The run's first request: a server that cannot answer it,
                // or refuses the key, cannot be synced from.
                Err(e) if first => return Err(SyncError::client("listing batches")(e)),
                Err(e) => {
                    let setback = self.server(e)?;
                    self.set_aside("batch list", "batches", &setback);
                    break;
                }
                Ok(page) => page.items,
            };
            first = false;
            self.summary.pages += 1;
            let changes = self.store.upsert_batches(&page)?;
            self.summary.batches_new += changes.new;
            self.summary.batches_changed += changes.changed;
            seen.extend(page.iter().map(|b| b.token.to_string()));
            self.progress.batches(page.len() as u64);
        }
        for token in self.store.open_batches()? {
            if seen.contains(token.as_str()) {
                continue;
            }
            let page = match self
                .client
                .list_settlement_batches(&BatchQuery::new().batch_id(token.clone()))
            {
                Ok(page) => page,
                Err(e) => {
                    let setback = self.server(e)?;
                    self.set_aside(token.as_str(), "batches", &setback);
                    continue;
                }
            };
            self.summary.pages += 1;
            match page.items.first() {
                Some(batch) if batch.token == token => {
                    let changes = self.store.upsert_batches(std::slice::from_ref(batch))?;
                    self.summary.batches_changed += changes.changed;
                }
                _ => {
                    let message = format!("batch {token} was listed before and is not found now");
                    let setback = self.integrity(token.as_str(), "transactions", message)?;
                    self.set_aside(token.as_str(), "batches", &setback);
                }
            }
        }
        Ok(())
    }
}
