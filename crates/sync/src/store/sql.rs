//! The store's methods, once, over a [`Dialect`]: the SQL both databases
//! run alike (written with PostgreSQL's `$n` placeholders, which a
//! dialect may rewrite), transactions, and what each method reads back.
//! A dialect brings only what differs: the connection, its placeholders
//! and types, and the bulk path rows take.

use aggpay::{AggregatorId, BatchStatus, BatchToken, SettlementBatch};

use super::tables::{BATCHES, RowKind, Shape, Value};
use super::{BatchChanges, Pending, Refusal, Store, Totals, WalkCommit, WalkState};
use crate::error::SyncError;

/// What differs between the databases a mirror is kept in.
pub(crate) trait Dialect {
    /// The driver's error.
    type Error: std::error::Error + Send + Sync + 'static;
    /// Runs statements that take no parameters and return nothing.
    fn batch(&mut self, sql: &str) -> Result<(), Self::Error>;
    /// Runs one statement; the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, Self::Error>;
    /// Runs one query; its rows, each value as an integer, text, boolean
    /// or null.
    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Vec<Vec<Value<'static>>>, Self::Error>;
    /// Upserts rows of `table` (by `token`) in the open transaction, the
    /// tool's own columns set to `at`; they may wait in the dialect until
    /// [`Dialect::flush`].
    fn write(
        &mut self,
        table: &'static dyn Shape,
        rows: &[Vec<Value<'_>>],
        at: &str,
    ) -> Result<(), SyncError>;
    /// Sends the rows [`Dialect::write`] holds (before a read or commit).
    fn flush(&mut self) -> Result<(), SyncError>;
    /// The open transaction ended: forgets what it held.
    fn ended(&mut self);
}

/// A store: a dialect, and whether a transaction is open.
pub(crate) struct Sql<D: Dialect> {
    pub(crate) db: D,
    open: bool,
}

/// An integer value read back (a count, an id).
fn int(value: Option<&Value<'_>>) -> Option<i64> {
    match value {
        Some(Value::Int(n)) => Some(*n),
        _ => None,
    }
}

/// A text value read back.
fn text(value: Option<&Value<'_>>) -> Option<String> {
    match value {
        Some(Value::Text(t)) => Some(t.clone().into_owned()),
        _ => None,
    }
}

/// A truth value read back (SQLite answers with an integer).
fn truth(value: Option<&Value<'_>>) -> bool {
    match value {
        Some(Value::Bool(b)) => *b,
        Some(Value::Int(n)) => *n != 0,
        _ => false,
    }
}

/// A count read back, as the store reports it.
fn count(value: Option<&Value<'_>>) -> u64 {
    int(value).map_or(0, unsigned)
}

/// A number that may be absent, as a walk's position keeps it.
fn optional(n: Option<u64>) -> Value<'static> {
    n.and_then(|n| i64::try_from(n).ok()).into()
}

impl<D: Dialect> Sql<D> {
    pub(crate) fn new(db: D) -> Self {
        Self { db, open: false }
    }

    fn begin(&mut self) -> Result<(), SyncError> {
        if !self.open {
            self.db
                .batch("BEGIN")
                .map_err(SyncError::db("opening a transaction"))?;
            self.open = true;
        }
        Ok(())
    }

    fn end(&mut self, sql: &str, context: &str) -> Result<(), SyncError> {
        let ended = self.db.batch(sql).map_err(SyncError::db(context));
        self.open = false;
        self.db.ended();
        ended
    }

    fn exec(&mut self, context: &str, sql: &str, params: &[Value<'_>]) -> Result<u64, SyncError> {
        self.db.execute(sql, params).map_err(SyncError::db(context))
    }

    fn rows(
        &mut self,
        context: &str,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Vec<Vec<Value<'static>>>, SyncError> {
        self.db.query(sql, params).map_err(SyncError::db(context))
    }

    /// The first row of a query, if any.
    fn row(
        &mut self,
        context: &str,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Option<Vec<Value<'static>>>, SyncError> {
        Ok(self.rows(context, sql, params)?.into_iter().next())
    }

    /// Runs `f` in a transaction of its own: committed when it succeeds,
    /// rolled back when it fails.
    fn transaction<R>(
        &mut self,
        context: &str,
        f: impl FnOnce(&mut Self) -> Result<R, SyncError>,
    ) -> Result<R, SyncError> {
        self.begin()?;
        match f(self) {
            Ok(r) => {
                self.end("COMMIT", context)?;
                Ok(r)
            }
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }
}

impl<D: Dialect> Store for Sql<D> {
    fn bind_source(&mut self, base_url: &str, aggregator: &AggregatorId) -> Result<(), SyncError> {
        let bound = self
            .row(
                "reading the source",
                "SELECT aggregator_id FROM source",
                &[],
            )?
            .and_then(|r| text(r.first()));
        if let Some(bound) = bound
            && bound != aggregator.as_str()
        {
            return Err(SyncError::Refused(Refusal::OtherAggregator {
                bound,
                asked: aggregator.to_string(),
            }));
        }
        self.exec(
            "recording the source",
            "INSERT INTO source (singleton, aggregator_id, base_url) VALUES (1, $1, $2)
             ON CONFLICT (singleton) DO UPDATE SET base_url = excluded.base_url",
            &[aggregator.as_str().into(), base_url.into()],
        )?;
        Ok(())
    }

    fn start_run(&mut self) -> Result<i64, SyncError> {
        let context = "recording the run";
        let row = self.row(
            context,
            "INSERT INTO runs (started_at) VALUES ($1) RETURNING id",
            &[now().into()],
        )?;
        row.and_then(|r| int(r.first()))
            .ok_or_else(|| SyncError::Database {
                context: context.to_owned(),
                source: crate::error::DbError::message("no run id came back"),
            })
    }

    fn finish_run(&mut self, run: i64, exit_code: u8, summary: &str) -> Result<(), SyncError> {
        self.exec(
            "recording the run",
            "UPDATE runs SET finished_at = $1, exit_code = $2, summary = $3 WHERE id = $4",
            &[
                now().into(),
                Value::Int(i64::from(exit_code)),
                summary.into(),
                Value::Int(run),
            ],
        )?;
        Ok(())
    }

    fn totals(&mut self) -> Result<Totals, SyncError> {
        self.db.flush()?;
        let row = self
            .row(
                "counting rows",
                "SELECT (SELECT count(*) FROM batches), (SELECT count(*) FROM transactions),
                    (SELECT count(*) FROM payouts), (SELECT count(*) FROM refunds),
                    (SELECT count(*) FROM merchants), (SELECT count(*) FROM rail_merchants)",
                &[],
            )?
            .unwrap_or_default();
        let n = |i: usize| count(row.get(i));
        Ok(Totals {
            batches: n(0),
            transactions: n(1),
            payouts: n(2),
            refunds: n(3),
            merchants: n(4),
            rail_merchants: n(5),
        })
    }

    fn max_batch_id(&mut self) -> Result<Option<u64>, SyncError> {
        Ok(self
            .row(
                "reading the newest batch",
                "SELECT max(id) FROM batches",
                &[],
            )?
            .and_then(|r| int(r.first()))
            .map(unsigned))
    }

    fn upsert_batches(&mut self, batches: &[SettlementBatch]) -> Result<BatchChanges, SyncError> {
        let at = now();
        let upsert = upsert_sql(&BATCHES);
        self.transaction("writing batches", |store| {
            let mut changes = BatchChanges::default();
            for b in batches {
                let before = store
                    .row(
                        "writing batches",
                        "SELECT status FROM batches WHERE token = $1",
                        &[b.token.as_str().into()],
                    )?
                    .and_then(|r| text(r.first()));
                changes.saw(before.as_deref(), b);
                let mut row = BATCHES.row(None, b);
                row.extend([Value::from(at.as_str()), Value::from(at.as_str())]);
                store.exec(&format!("writing batch {}", b.token), &upsert, &row)?;
            }
            Ok(changes)
        })
    }

    fn batch_states(&mut self) -> Result<Vec<Pending>, SyncError> {
        self.rows("reading batches", BATCH_STATES, &[])?
            .into_iter()
            .map(|r| {
                pending(
                    text(r.first()).unwrap_or_default(),
                    int(r.get(1)).unwrap_or_default(),
                    &text(r.get(2)).unwrap_or_default(),
                    truth(r.get(3)),
                    truth(r.get(4)),
                )
            })
            .collect()
    }

    fn walk_state(&mut self, batch: &BatchToken, kind: RowKind) -> Result<WalkState, SyncError> {
        Ok(self
            .row(
                "reading a walk position",
                "SELECT position, head_id, tail_position, tail_id FROM walks
                 WHERE batch_token = $1 AND kind = $2",
                &[batch.as_str().into(), kind.as_str().into()],
            )?
            .map(|r| WalkState {
                head: text(r.first()),
                head_id: int(r.get(1)).map(unsigned),
                tail: text(r.get(2)),
                tail_id: int(r.get(3)).map(unsigned),
            })
            .unwrap_or_default())
    }

    fn write(
        &mut self,
        table: &'static dyn Shape,
        rows: &[Vec<Value<'_>>],
    ) -> Result<(), SyncError> {
        self.begin()?;
        self.db.write(table, rows, &now())
    }

    fn commit(&mut self, walks: &[WalkCommit<'_>]) -> Result<(), SyncError> {
        self.begin()?;
        self.db.flush()?;
        for w in walks {
            self.exec(
                &format!("recording the walk of batch {}", w.batch),
                "INSERT INTO walks (batch_token, kind, position, head_id, tail_position, tail_id, server_count)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (batch_token, kind) DO UPDATE SET
                     position = excluded.position, head_id = excluded.head_id,
                     tail_position = excluded.tail_position, tail_id = excluded.tail_id,
                     server_count = coalesce(excluded.server_count, walks.server_count)",
                &[
                    w.batch.as_str().into(),
                    w.kind.as_str().into(),
                    w.state.head.as_deref().into(),
                    optional(w.state.head_id),
                    w.state.tail.as_deref().into(),
                    optional(w.state.tail_id),
                    optional(w.server_count),
                ],
            )?;
        }
        self.end("COMMIT", "committing")
    }

    fn rollback(&mut self) {
        if self.open {
            let _ = self.end("ROLLBACK", "rolling back");
        } else {
            self.db.ended();
        }
    }

    fn count_rows(&mut self, batch_id: i64, kind: RowKind) -> Result<u64, SyncError> {
        self.db.flush()?;
        let row = self.row(
            "counting rows",
            &format!("SELECT count(*) FROM {} WHERE batch_id = $1", kind.as_str()),
            &[Value::Int(batch_id)],
        )?;
        Ok(row.map_or(0, |r| count(r.first())))
    }

    fn mark_verified(&mut self, batch: &BatchToken, kind: RowKind) -> Result<(), SyncError> {
        self.exec(
            "marking a batch verified",
            "UPDATE walks SET verified_at = $1 WHERE batch_token = $2 AND kind = $3",
            &[now().into(), batch.as_str().into(), kind.as_str().into()],
        )?;
        Ok(())
    }

    fn integrity_error(
        &mut self,
        run: i64,
        subject: &str,
        kind: &str,
        message: &str,
    ) -> Result<(), SyncError> {
        self.rollback();
        let context = "recording an integrity error";
        self.transaction(context, |store| {
            store.exec(
                context,
                "INSERT INTO integrity_errors (run_id, batch_token, kind, message, found_at)
                 VALUES ($1, $2, $3, $4, $5)",
                &[
                    Value::Int(run),
                    subject.into(),
                    kind.into(),
                    message.into(),
                    now().into(),
                ],
            )?;
            store.exec(
                context,
                "UPDATE walks SET position = NULL, head_id = NULL, tail_position = NULL,
                     tail_id = NULL, verified_at = NULL
                 WHERE batch_token = $1 AND kind = $2",
                &[subject.into(), kind.into()],
            )?;
            Ok(())
        })
    }

    fn restart_walk(&mut self, batch: &BatchToken, kind: RowKind) -> Result<(), SyncError> {
        self.exec(
            "restarting a walk",
            "UPDATE walks SET position = NULL, head_id = NULL, tail_position = NULL,
                 tail_id = NULL
             WHERE batch_token = $1 AND kind = $2",
            &[batch.as_str().into(), kind.as_str().into()],
        )?;
        Ok(())
    }

    fn cursor(&mut self, name: &str) -> Result<Option<i64>, SyncError> {
        Ok(self
            .row(
                &format!("reading {name}"),
                "SELECT value FROM cursors WHERE name = $1",
                &[name.into()],
            )?
            .and_then(|r| int(r.first())))
    }

    fn set_cursor(&mut self, name: &str, value: i64) -> Result<(), SyncError> {
        self.exec(
            &format!("keeping {name}"),
            "INSERT INTO cursors (name, value) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            &[name.into(), Value::Int(value)],
        )?;
        Ok(())
    }
}

impl<D: Dialect> Drop for Sql<D> {
    fn drop(&mut self) {
        self.rollback();
    }
}

/// Every batch kept, oldest first, with whether its transactions and its
/// payouts still need a walk: `token, id, status, bool, bool` (both
/// backends read it).
const BATCH_STATES: &str = "SELECT b.token, b.id, b.status,
    (SELECT verified_at FROM walks w WHERE w.batch_token = b.token AND w.kind = 'transactions') IS NULL,
    (SELECT verified_at FROM walks w WHERE w.batch_token = b.token AND w.kind = 'payouts') IS NULL
 FROM batches b ORDER BY b.id";

/// The columns of `shape` that a row seen again updates, with their
/// place (from 1): all but the key and when the row was first seen.
pub(super) fn updated(shape: &dyn Shape) -> Vec<(usize, &'static str)> {
    shape
        .columns()
        .iter()
        .enumerate()
        .map(|(i, c)| (i + 1, c.0))
        .filter(|(_, c)| !matches!(*c, "token" | "first_seen_at"))
        .collect()
}

/// The `SET` list of an upsert's conflict: the [`updated`] columns.
pub(super) fn updates(shape: &dyn Shape) -> String {
    updated(shape)
        .into_iter()
        .map(|(_, c)| format!("{c} = excluded.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The upsert of one row of `shape`, keyed by `token`, with `$n`
/// placeholders. The tool's own columns take a placeholder too (the time
/// now).
fn upsert_sql(shape: &dyn Shape) -> String {
    let columns = shape.columns();
    let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
    let params: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
    format!(
        "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT (token) DO UPDATE SET {}",
        shape.name(),
        names.join(", "),
        params.join(", "),
        updates(shape)
    )
}

/// The time now, as the tool's own columns keep it.
fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// A pending batch from the database's text.
pub(crate) fn pending(
    token: String,
    id: i64,
    status: &str,
    transactions: bool,
    payouts: bool,
) -> Result<Pending, SyncError> {
    let token = BatchToken::parse(token).map_err(SyncError::db(
        "holds a batch token the client refuses (was the database changed by hand?)",
    ))?;
    let status = BatchStatus::from(status);
    Ok(Pending {
        payouts: payouts && status.is_final(),
        token,
        id,
        status,
        transactions,
    })
}

/// An integer the database returned as a count or id.
fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}
