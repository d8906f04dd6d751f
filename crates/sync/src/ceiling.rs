//! The two ceilings `just bench` holds a sync's speed to, measured by the
//! sync's own code with one half of its work taken away:
//!
//! - the network ceiling: the same run (the same walks, both ends of a
//!   large batch, the same pages in flight), its rows decoded and made
//!   into the store's values, then dropped by a store that keeps only
//!   what the walks need (positions, counts);
//! - the store ceiling: the same rows, made in memory from a page the
//!   server gave, written by the same store code (the same statements,
//!   constraints and indexes, a page at a time, committed in the same
//!   groups with a walk position), with no network.
//!
//! A sync can be no faster than the lower of the two; how close it comes
//! is the figure (`sync_1m_ratio`, `sync_1m_pg_ratio`). Not part of the
//! tool's interface: the bench is its only user.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use aggpay::{
    AggregatorId, BatchToken, Client, NumericId, SettlementBatch, Transaction, TransactionToken,
};

use crate::engine::{Engine, Plan};
use crate::error::{Setup, SyncError};
use crate::progress::Progress;
use crate::store::tables::TRANSACTIONS;
use crate::store::{
    BatchChanges, Pending, RowKind, Shape, Store, Target, Totals, Value, WalkCommit, WalkState,
};
use crate::summary::Summary;

/// The network ceiling: a whole sync run of `client`'s aggregator, `jobs`
/// batches at once, into a store that drops the rows. Its summary (rows
/// walked in `transactions.total`, seconds in `seconds`).
///
/// # Errors
///
/// The run's failure (only the server can fail it here).
pub fn network(client: &Client, jobs: usize) -> Result<Summary, SyncError> {
    let mut store = Dropped::default();
    let progress = Progress::new(false, true);
    let plan = Plan {
        full: false,
        refund_window: jiff::SignedDuration::from_hours(24 * 7),
        jobs,
    };
    let mut summary = Summary::default();
    Engine::new(client, &mut store, &progress, plan).run(&mut summary)?;
    Ok(summary)
}

/// The store ceiling: `rows` transactions of `batch` (copies of `page`,
/// each with an id and a scattered token of its own) written into a new mirror at
/// `target` the way a walk writes them: a page of 100 at a time, a commit
/// with the walk's position each `GROUP_TIME` (a second), the store
/// opened and closed (its last checkpoint) inside the time. The seconds
/// it took.
///
/// # Errors
///
/// The store's failure; a page without rows.
pub fn store(
    target: &Target,
    aggregator: &AggregatorId,
    batch: &SettlementBatch,
    page: &[Transaction],
    rows: u64,
) -> Result<Duration, SyncError> {
    if page.is_empty() {
        return Err(wrong("the store ceiling needs a page of rows"));
    }
    let started = Instant::now();
    let mut store = crate::store::open(target, aggregator, &mut drop)?;
    store.bind_source("ceiling", aggregator)?;
    store.upsert_batches(std::slice::from_ref(batch))?;
    let batch_id = i64::try_from(batch.id.get()).map_err(|_| wrong("a batch id beyond i64"))?;
    let mut page = page.to_vec();
    let mut state = WalkState::default();
    let mut opened: Option<Instant> = None;
    let mut n = 0u64;
    while n < rows {
        let take = usize::try_from((rows - n).min(page.len() as u64)).unwrap_or(page.len());
        for t in &mut page[..take] {
            n += 1;
            t.id = NumericId::new(n);
            // Tokens as a server makes them (the mock's: 20 random hex
            // digits): where a token falls in the primary key's index is
            // much of a write's cost, and counted tokens would all fall
            // at its end.
            t.token =
                TransactionToken::parse(format!("txn_{:016x}{:04x}", mix(n), mix(!n) & 0xffff))
                    .map_err(|e| wrong(&e.to_string()))?;
        }
        let values: Vec<Vec<Value<'_>>> = page[..take]
            .iter()
            .map(|t| TRANSACTIONS.row(Some(batch_id), t))
            .collect();
        store.write(&TRANSACTIONS, &values)?;
        opened.get_or_insert_with(Instant::now);
        state.head = Some(format!("ceiling:{n}"));
        state.head_id = Some(n);
        if n == rows || opened.is_some_and(|t| t.elapsed() >= crate::engine::GROUP_TIME) {
            store.commit(&[WalkCommit {
                batch: &batch.token,
                kind: RowKind::Transactions,
                state: &state,
                server_count: Some(rows),
            }])?;
            opened = None;
        }
    }
    let kept = store.count_rows(batch_id, RowKind::Transactions)?;
    drop(store);
    let took = started.elapsed();
    if kept != rows {
        return Err(wrong(&format!(
            "the store ceiling kept {kept} rows of {rows}"
        )));
    }
    Ok(took)
}

/// A measurement that cannot be made as asked.
fn wrong(why: &str) -> SyncError {
    SyncError::Setup(Setup::Arguments(why.to_owned()))
}

/// A 64-bit mix of `n` (SplitMix64's step: the golden increment, then
/// its finaliser): scattered tokens.
fn mix(n: u64) -> u64 {
    aggpay_internal::mix::splitmix64(n.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// A store that keeps what the walks read back (batches, positions,
/// counts, cursors) and drops the rows.
#[derive(Default)]
struct Dropped {
    /// By batch id: token and status.
    batches: BTreeMap<i64, (BatchToken, String)>,
    walks: HashMap<(String, RowKind), WalkState>,
    verified: HashSet<(String, RowKind)>,
    /// Rows written by batch id and kind; other lists by table.
    rows: HashMap<(i64, RowKind), u64>,
    listed: HashMap<&'static str, u64>,
    cursors: HashMap<String, i64>,
}

impl Store for Dropped {
    fn bind_source(&mut self, _: &str, _: &AggregatorId) -> Result<(), SyncError> {
        Ok(())
    }

    fn start_run(&mut self) -> Result<i64, SyncError> {
        Ok(1)
    }

    fn finish_run(&mut self, _: i64, _: u8, _: &str) -> Result<(), SyncError> {
        Ok(())
    }

    fn totals(&mut self) -> Result<Totals, SyncError> {
        let kind = |k: RowKind| {
            self.rows
                .iter()
                .filter(|((_, kind), _)| *kind == k)
                .map(|(_, n)| n)
                .sum()
        };
        let listed = |table: &str| self.listed.get(table).copied().unwrap_or(0);
        Ok(Totals {
            batches: self.batches.len() as u64,
            transactions: kind(RowKind::Transactions),
            payouts: kind(RowKind::Payouts),
            refunds: listed("refunds"),
            merchants: listed("merchants"),
            rail_merchants: listed("rail_merchants"),
        })
    }

    fn max_batch_id(&mut self) -> Result<Option<u64>, SyncError> {
        Ok(self
            .batches
            .keys()
            .next_back()
            .and_then(|id| u64::try_from(*id).ok()))
    }

    fn upsert_batches(&mut self, batches: &[SettlementBatch]) -> Result<BatchChanges, SyncError> {
        let mut changes = BatchChanges::default();
        for b in batches {
            let id = i64::try_from(b.id.get()).unwrap_or(i64::MAX);
            let before = self.batches.get(&id).map(|(_, s)| s.as_str());
            changes.saw(before, b);
            self.batches
                .insert(id, (b.token.clone(), b.status.as_str().to_owned()));
        }
        Ok(changes)
    }

    fn batch_states(&mut self) -> Result<Vec<Pending>, SyncError> {
        self.batches
            .iter()
            .map(|(id, (token, status))| {
                let unverified = |kind| !self.verified.contains(&(token.as_str().to_owned(), kind));
                crate::store::sql::pending(
                    token.as_str().to_owned(),
                    *id,
                    status,
                    unverified(RowKind::Transactions),
                    unverified(RowKind::Payouts),
                )
            })
            .collect()
    }

    fn walk_state(&mut self, batch: &BatchToken, kind: RowKind) -> Result<WalkState, SyncError> {
        Ok(self
            .walks
            .get(&(batch.as_str().to_owned(), kind))
            .cloned()
            .unwrap_or_default())
    }

    fn write(
        &mut self,
        table: &'static dyn Shape,
        rows: &[Vec<Value<'_>>],
    ) -> Result<(), SyncError> {
        let kind = match table.name() {
            "transactions" => RowKind::Transactions,
            "payouts" => RowKind::Payouts,
            other => {
                *self.listed.entry(other).or_default() += rows.len() as u64;
                return Ok(());
            }
        };
        for row in rows {
            if let Some(Value::Int(batch)) = row.first() {
                *self.rows.entry((*batch, kind)).or_default() += 1;
            }
        }
        Ok(())
    }

    fn commit(&mut self, walks: &[WalkCommit<'_>]) -> Result<(), SyncError> {
        for w in walks {
            self.walks
                .insert((w.batch.as_str().to_owned(), w.kind), w.state.clone());
        }
        Ok(())
    }

    fn rollback(&mut self) {}

    fn count_rows(&mut self, batch_id: i64, kind: RowKind) -> Result<u64, SyncError> {
        Ok(self.rows.get(&(batch_id, kind)).copied().unwrap_or(0))
    }

    fn mark_verified(&mut self, batch: &BatchToken, kind: RowKind) -> Result<(), SyncError> {
        self.verified.insert((batch.as_str().to_owned(), kind));
        Ok(())
    }

    fn integrity_error(&mut self, _: i64, _: &str, _: &str, _: &str) -> Result<(), SyncError> {
        Ok(())
    }

    fn restart_walk(&mut self, batch: &BatchToken, kind: RowKind) -> Result<(), SyncError> {
        self.walks.remove(&(batch.as_str().to_owned(), kind));
        Ok(())
    }

    fn cursor(&mut self, name: &str) -> Result<Option<i64>, SyncError> {
        Ok(self.cursors.get(name).copied())
    }

    fn set_cursor(&mut self, name: &str, value: i64) -> Result<(), SyncError> {
        self.cursors.insert(name.to_owned(), value);
        Ok(())
    }
}
