//! Where the mirror is kept: a SQLite file or a PostgreSQL server, behind
//! one interface with the same tables, types and guarantees: rows and the
//! walk position after them committed in one transaction, one run at a
//! time per aggregator, a versioned schema that refuses a newer or a
//! foreign one, foreign keys enforced.

mod postgres;
pub(crate) mod sql;
mod sqlite;
pub mod tables;
mod target;

use aggpay::{AggregatorId, BatchStatus, BatchToken, SettlementBatch};

pub(crate) use crate::error::Refusal;
use crate::error::SyncError;
pub use tables::{Mirrored, RowKind, Shape, Value};
pub use target::Target;

/// The schema versions this build writes: SQLite's, PostgreSQL's.
pub const SCHEMA_VERSIONS: (i64, i64) = (sqlite::SCHEMA_VERSION, postgres::SCHEMA_VERSION);

/// A batch whose rows are not all mirrored and verified yet.
#[derive(Debug, Clone)]
pub struct Pending {
    /// Its token.
    pub token: BatchToken,
    /// Its numeric id (the `batch_id` of its rows).
    pub id: i64,
    /// Its status now.
    pub status: BatchStatus,
    /// The transactions still need a walk.
    pub transactions: bool,
    /// The payouts still need a walk (final batches only).
    pub payouts: bool,
}

/// Where the walks of one batch's rows stand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkState {
    /// The ascending walk's position.
    pub head: Option<String>,
    /// The highest id it kept.
    pub head_id: Option<u64>,
    /// The descending walk's position (large final batches).
    pub tail: Option<String>,
    /// The lowest id it kept.
    pub tail_id: Option<u64>,
}

/// A walk position committed with the rows before it.
#[derive(Debug, Clone, Copy)]
pub struct WalkCommit<'a> {
    /// The batch.
    pub batch: &'a BatchToken,
    /// Its rows' kind.
    pub kind: RowKind,
    /// Where the walks stand after the rows.
    pub state: &'a WalkState,
    /// The server's count, when a page gave one.
    pub server_count: Option<u64>,
}

/// Rows in the mirror.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Batches.
    pub batches: u64,
    /// Transactions.
    pub transactions: u64,
    /// Payouts.
    pub payouts: u64,
    /// Refunds.
    pub refunds: u64,
    /// Aggregator merchants.
    pub merchants: u64,
    /// Rail merchants.
    pub rail_merchants: u64,
}

/// What upserting a page of batches did.
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchChanges {
    /// Batches not seen before.
    pub new: u64,
    /// Batches whose status changed.
    pub changed: u64,
}

impl BatchChanges {
    /// Counts `batch`, whose kept status was `before` (none: not kept).
    pub(crate) fn saw(&mut self, before: Option<&str>, batch: &SettlementBatch) {
        match before {
            None => self.new += 1,
            Some(s) if s != batch.status.as_str() => self.changed += 1,
            Some(_) => {}
        }
    }
}

/// A database the sync writes to. Every method is one transaction of its
/// own, but [`Store::write`], whose rows wait in an open transaction for
/// [`Store::commit`].
pub trait Store {
    /// Records the server and aggregator the mirror is of; refuses another
    /// aggregator (one database, or one PostgreSQL schema, mirrors one).
    fn bind_source(&mut self, base_url: &str, aggregator: &AggregatorId) -> Result<(), SyncError>;
    /// Opens a run; its id.
    fn start_run(&mut self) -> Result<i64, SyncError>;
    /// Closes a run with its exit code and JSON summary.
    fn finish_run(&mut self, run: i64, exit_code: u8, summary: &str) -> Result<(), SyncError>;
    /// Rows in the mirror.
    fn totals(&mut self) -> Result<Totals, SyncError>;
    /// The highest batch id kept.
    fn max_batch_id(&mut self) -> Result<Option<u64>, SyncError>;
    /// Upserts a page of batches.
    fn upsert_batches(&mut self, batches: &[SettlementBatch]) -> Result<BatchChanges, SyncError>;
    /// Every batch kept, oldest first ([`BATCH_STATES`]).
    fn batch_states(&mut self) -> Result<Vec<Pending>, SyncError>;
    /// The batches not in a final status.
    fn open_batches(&mut self) -> Result<Vec<BatchToken>, SyncError> {
        Ok(self
            .batch_states()?
            .into_iter()
            .filter(|p| !p.status.is_final())
            .map(|p| p.token)
            .collect())
    }
    /// The batches whose rows are not all mirrored and verified, oldest
    /// first.
    fn pending(&mut self) -> Result<Vec<Pending>, SyncError> {
        Ok(self
            .batch_states()?
            .into_iter()
            .filter(|p| p.transactions || p.payouts)
            .collect())
    }
    /// Where the walk of a batch's rows stands.
    fn walk_state(&mut self, batch: &BatchToken, kind: RowKind) -> Result<WalkState, SyncError>;
    /// Upserts rows of `table` (by `token`) in the open transaction,
    /// opening one: they are kept only with the next [`Store::commit`].
    fn write(
        &mut self,
        table: &'static dyn Shape,
        rows: &[Vec<Value<'_>>],
    ) -> Result<(), SyncError>;
    /// Commits the rows written, with the positions after them of every
    /// walk that wrote some (walks run side by side share a transaction).
    fn commit(&mut self, walks: &[WalkCommit<'_>]) -> Result<(), SyncError>;
    /// Drops the rows written since the last commit.
    fn rollback(&mut self);
    /// The rows of a batch in the mirror.
    fn count_rows(&mut self, batch_id: i64, kind: RowKind) -> Result<u64, SyncError>;
    /// Marks a batch's rows verified.
    fn mark_verified(&mut self, batch: &BatchToken, kind: RowKind) -> Result<(), SyncError>;
    /// Records an integrity error about `subject` (a batch token, or a
    /// list); a batch's walk goes back to its start, so that the next run
    /// walks it again whole.
    fn integrity_error(
        &mut self,
        run: i64,
        subject: &str,
        kind: &str,
        message: &str,
    ) -> Result<(), SyncError>;
    /// Sends a walk back to its start (its saved position was unusable).
    fn restart_walk(&mut self, batch: &BatchToken, kind: RowKind) -> Result<(), SyncError>;
    /// A value the sync keeps between runs (the newest refund's time).
    fn cursor(&mut self, name: &str) -> Result<Option<i64>, SyncError>;
    /// Keeps a value between runs.
    fn set_cursor(&mut self, name: &str, value: i64) -> Result<(), SyncError>;
}

/// Opens the store of `target` for `aggregator`: checked, migrated, and
/// locked for this run.
///
/// # Errors
///
/// Why it cannot be used: not an aggpay-sync database, a newer schema, in
/// use by another run, unreachable.
pub fn open(
    target: &Target,
    aggregator: &AggregatorId,
    warn: &mut dyn FnMut(String),
) -> Result<Box<dyn Store>, SyncError> {
    Ok(match target {
        Target::Sqlite(path) => Box::new(sql::Sql::new(sqlite::Sqlite::open(path)?)),
        Target::Postgres(url) => Box::new(sql::Sql::new(postgres::Postgres::open(
            url, aggregator, warn,
        )?)),
    })
}

#[cfg(test)]
mod tests;
