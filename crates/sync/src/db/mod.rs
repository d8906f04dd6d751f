//! The database: opened, checked and migrated; locked for one run at a
//! time; and every write the sync makes, each in its own transaction.

mod rows;
mod schema;

use std::fs::File;
use std::path::{Path, PathBuf};

use aggpay::{BatchStatus, SettlementBatch};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

pub use rows::{Kind, Mirrored};

use crate::error::SyncError;

/// The schema version this build writes (and the newest it reads).
pub const SCHEMA_VERSION: i64 = schema::MIGRATIONS.len() as i64;

/// An open, locked, migrated database.
pub struct Db {
    conn: Connection,
    /// Copies the write-ahead log into the database beside the writer.
    checkpointer: Option<Checkpointer>,
    /// Held for the whole run: a second run on the same database waits
    /// for nothing and changes nothing, it is refused.
    _lock: File,
}

/// A thread with its own connection that checkpoints the write-ahead log
/// while the writer writes: the copy costs the writer nothing, and the
/// log stays small. Stopped, and the log truncated, when dropped.
struct Checkpointer {
    /// Dropped to stop the thread at once (it waits on the other end).
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// How often the checkpointer copies the log: seldom enough that a page
/// written many times is copied once, often enough that the log stays a
/// few tens of megabytes.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(1000);

impl Checkpointer {
    fn start(path: &Path) -> Result<Self, SyncError> {
        let conn = Connection::open(path).map_err(|e| SyncError::db("checkpointer", e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| SyncError::db("checkpointer", e))?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("aggpay-sync-checkpoint".into())
            .spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(CHECKPOINT_EVERY)
                {
                    // PASSIVE never waits for the writer; what it cannot
                    // copy now it copies next time.
                    let _ = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)");
                }
            })
            .map_err(|e| SyncError::db("checkpointer", e))?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        self.checkpointer.take();
        // Leave a small log behind (the data is safe either way).
        let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").finish_non_exhaustive()
    }
}

/// A batch whose rows are not all mirrored and verified yet.
#[derive(Debug, Clone)]
pub struct Pending {
    /// Its token.
    pub token: String,
    /// Its numeric id (the `batch_id` of its rows).
    pub id: i64,
    /// Its status now.
    pub status: String,
    /// The transactions still need a walk.
    pub transactions: bool,
    /// The payouts still need a walk (final batches only).
    pub payouts: bool,
}

impl Pending {
    /// A batch in a final status: its rows will not change.
    pub fn is_final(&self) -> bool {
        is_final(&self.status)
    }
}

/// `BATCH_COMPLETED` and `BATCH_FAILED` are final: API.md shows no
/// transition out of them.
pub fn is_final(status: &str) -> bool {
    status == BatchStatus::Completed.as_str() || status == BatchStatus::Failed.as_str()
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

/// Rows in the mirror.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Batches.
    pub batches: u64,
    /// Transactions.
    pub transactions: u64,
    /// Payouts.
    pub payouts: u64,
}

/// What upserting a page of batches did.
#[derive(Debug, Clone, Copy, Default)]
pub struct BatchChanges {
    /// Batches not seen before.
    pub new: u64,
    /// Batches whose status changed.
    pub changed: u64,
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

fn lock_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

impl Db {
    /// Opens (or creates) the database: refuses a file that is not an
    /// aggpay-sync database or was written by a newer one, without
    /// changing it; takes the run lock; migrates forward.
    ///
    /// # Errors
    ///
    /// [`SyncError::Database`] saying why.
    pub fn open(path: &Path) -> Result<Self, SyncError> {
        let shown = path.display();
        let lock_file = lock_path(path);
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_file)
            .map_err(|e| {
                SyncError::db(
                    &format!("{shown}: cannot open its lock file {}", lock_file.display()),
                    e,
                )
            })?;
        if let Err(e) = lock.try_lock() {
            return Err(SyncError::Database(format!(
                "{shown} is in use by another aggpay-sync run ({e})"
            )));
        }
        let conn = Connection::open(path)
            .map_err(|e| SyncError::db(&format!("{shown} cannot be opened"), e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| SyncError::db("busy timeout", e))?;
        let read = |pragma: &str| -> Result<i64, SyncError> {
            conn.query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0))
                .map_err(|e| SyncError::db(&format!("{shown} is not a SQLite database"), e))
        };
        let application = read("application_id")?;
        let version = read("user_version")?;
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .map_err(|e| SyncError::db(&format!("{shown} is not a SQLite database"), e))?;
        let fresh = application == 0 && version == 0 && tables == 0;
        if !fresh && application != schema::APPLICATION_ID {
            return Err(SyncError::Database(format!(
                "{shown} is not an aggpay-sync database (application id {application:#x}); it was left unchanged"
            )));
        }
        if version > SCHEMA_VERSION {
            return Err(SyncError::Database(format!(
                "{shown} has schema version {version}, newer than this aggpay-sync knows ({SCHEMA_VERSION}); use a newer aggpay-sync. It was left unchanged"
            )));
        }
        // Durable against a killed process: WAL, every page's transaction
        // atomic. NORMAL syncs at checkpoints; a power cut may lose the
        // last commits, rows and walk position together, never one
        // without the other.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF; PRAGMA cache_size = -32768; PRAGMA wal_autocheckpoint = 0; PRAGMA temp_store = MEMORY;",
        )
        .map_err(|e| SyncError::db("setting up", e))?;
        let mut db = Self {
            conn,
            checkpointer: None,
            _lock: lock,
        };
        db.migrate(version)?;
        db.checkpointer = Some(Checkpointer::start(path)?);
        Ok(db)
    }

    fn migrate(&mut self, from: i64) -> Result<(), SyncError> {
        for (i, sql) in schema::MIGRATIONS
            .iter()
            .enumerate()
            .skip(from.max(0) as usize)
        {
            let to = i as i64 + 1;
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Exclusive)
                .map_err(|e| SyncError::db("migrating", e))?;
            tx.execute_batch(sql)
                .and_then(|()| {
                    tx.execute_batch(&format!(
                        "PRAGMA application_id = {}; PRAGMA user_version = {to};",
                        schema::APPLICATION_ID
                    ))
                })
                .and_then(|()| tx.commit())
                .map_err(|e| SyncError::db(&format!("migrating to schema version {to}"), e))?;
        }
        Ok(())
    }

    /// Records the server and aggregator the mirror is of; refuses another
    /// aggregator (one database mirrors one). A new base URL is noted.
    ///
    /// # Errors
    ///
    /// [`SyncError::Database`] for another aggregator or a failing write.
    pub fn bind_source(&mut self, base_url: &str, aggregator: &str) -> Result<(), SyncError> {
        let bound: Option<String> = self
            .conn
            .query_row("SELECT aggregator_id FROM source", [], |r| r.get(0))
            .optional()
            .map_err(|e| SyncError::db("reading the source", e))?;
        if let Some(bound) = bound
            && bound != aggregator
        {
            return Err(SyncError::Database(format!(
                "mirrors aggregator {bound}, not {aggregator}: use one database per aggregator"
            )));
        }
        self.conn
            .execute(
                "INSERT INTO source (singleton, aggregator_id, base_url) VALUES (1, ?1, ?2)
                 ON CONFLICT (singleton) DO UPDATE SET base_url = excluded.base_url",
                params![aggregator, base_url],
            )
            .map_err(|e| SyncError::db("recording the source", e))?;
        Ok(())
    }

    /// Opens a run; returns its id.
    pub fn start_run(&mut self) -> Result<i64, SyncError> {
        self.conn
            .execute("INSERT INTO runs (started_at) VALUES (?1)", params![now()])
            .map_err(|e| SyncError::db("recording the run", e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Closes a run with its exit code and JSON summary.
    pub fn finish_run(&mut self, run: i64, exit_code: u8, summary: &str) -> Result<(), SyncError> {
        self.conn
            .execute(
                "UPDATE runs SET finished_at = ?1, exit_code = ?2, summary = ?3 WHERE id = ?4",
                params![now(), exit_code, summary, run],
            )
            .map_err(|e| SyncError::db("recording the run", e))?;
        Ok(())
    }

    /// Rows in the mirror.
    pub fn totals(&self) -> Result<Totals, SyncError> {
        let count = |table: &str| -> Result<u64, SyncError> {
            self.conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
                    r.get::<_, i64>(0)
                })
                .map(|n| n.max(0) as u64)
                .map_err(|e| SyncError::db(&format!("counting {table}"), e))
        };
        Ok(Totals {
            batches: count("batches")?,
            transactions: count("transactions")?,
            payouts: count("payouts")?,
        })
    }

    /// The highest batch id kept.
    pub fn max_batch_id(&self) -> Result<Option<u64>, SyncError> {
        self.conn
            .query_row("SELECT max(id) FROM batches", [], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .map(|id| id.map(|i| i.max(0) as u64))
            .map_err(|e| SyncError::db("reading the newest batch", e))
    }

    /// Upserts a page of batches in one transaction.
    pub fn upsert_batches(
        &mut self,
        batches: &[SettlementBatch],
    ) -> Result<BatchChanges, SyncError> {
        let at = now();
        let mut changes = BatchChanges::default();
        let tx = self
            .conn
            .transaction()
            .map_err(|e| SyncError::db("writing batches", e))?;
        {
            let mut status = tx
                .prepare_cached("SELECT status FROM batches WHERE token = ?1")
                .map_err(|e| SyncError::db("writing batches", e))?;
            let mut upsert = tx
                .prepare_cached(
                    "INSERT INTO batches (token, id, file_name, date, status, version,
                         created_by_job_id, partner_id, created_at, first_seen_at, refreshed_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)
                     ON CONFLICT (token) DO UPDATE SET
                         id = excluded.id, file_name = excluded.file_name, date = excluded.date,
                         status = excluded.status, version = excluded.version,
                         created_by_job_id = excluded.created_by_job_id,
                         partner_id = excluded.partner_id, created_at = excluded.created_at,
                         refreshed_at = excluded.refreshed_at",
                )
                .map_err(|e| SyncError::db("writing batches", e))?;
            for b in batches {
                let before: Option<String> = status
                    .query_row(params![b.token.as_str()], |r| r.get(0))
                    .optional()
                    .map_err(|e| SyncError::db("writing batches", e))?;
                match before {
                    None => changes.new += 1,
                    Some(s) if s != b.status.as_str() => changes.changed += 1,
                    Some(_) => {}
                }
                let id = i64::try_from(b.id.get()).map_err(|e| {
                    SyncError::Database(format!("batch {}: id {} ({e})", b.token, b.id))
                })?;
                upsert
                    .execute(params![
                        b.token.as_str(),
                        id,
                        b.file_name,
                        b.date.to_string(),
                        b.status.as_str(),
                        b.version,
                        b.created_by_job_id.as_str(),
                        b.partner_id.as_str(),
                        b.created_at.to_string(),
                        at,
                    ])
                    .map_err(|e| SyncError::db(&format!("writing batch {}", b.token), e))?;
            }
        }
        tx.commit()
            .map_err(|e| SyncError::db("writing batches", e))?;
        Ok(changes)
    }

    /// The batches not in a final status.
    pub fn open_batches(&self) -> Result<Vec<String>, SyncError> {
        let mut stmt = self
            .conn
            .prepare("SELECT token, status FROM batches ORDER BY id")
            .map_err(|e| SyncError::db("reading batches", e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(|e| SyncError::db("reading batches", e))?;
        Ok(rows
            .into_iter()
            .filter(|(_, status)| !is_final(status))
            .map(|(token, _)| token)
            .collect())
    }

    /// The batches whose rows are not all mirrored and verified, oldest
    /// first.
    pub fn pending(&self) -> Result<Vec<Pending>, SyncError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT b.token, b.status,
                    (SELECT verified_at FROM walks w WHERE w.batch_token = b.token AND w.kind = 'transactions'),
                    (SELECT verified_at FROM walks w WHERE w.batch_token = b.token AND w.kind = 'payouts'),
                    b.id
                 FROM batches b ORDER BY b.id",
            )
            .map_err(|e| SyncError::db("reading batches", e))?;
        let rows = stmt
            .query_map([], |r| {
                let status: String = r.get(1)?;
                let transactions_done = r.get::<_, Option<String>>(2)?.is_some();
                let payouts_done = r.get::<_, Option<String>>(3)?.is_some();
                Ok(Pending {
                    token: r.get(0)?,
                    id: r.get(4)?,
                    transactions: !transactions_done,
                    payouts: is_final(&status) && !payouts_done,
                    status,
                })
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(|e| SyncError::db("reading batches", e))?;
        Ok(rows
            .into_iter()
            .filter(|p| p.transactions || p.payouts)
            .collect())
    }

    /// Where the walk of a batch's rows stands.
    pub fn walk_state(&self, batch: &str, kind: Kind) -> Result<WalkState, SyncError> {
        self.conn
            .query_row(
                "SELECT position, head_id, tail_position, tail_id FROM walks
                 WHERE batch_token = ?1 AND kind = ?2",
                params![batch, kind.as_str()],
                |r| {
                    Ok(WalkState {
                        head: r.get(0)?,
                        head_id: r.get::<_, Option<i64>>(1)?.map(|i| i.max(0) as u64),
                        tail: r.get(2)?,
                        tail_id: r.get::<_, Option<i64>>(3)?.map(|i| i.max(0) as u64),
                    })
                },
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(|e| SyncError::db("reading a walk position", e))
    }

    /// A writer of one batch's rows of one kind: rows go into an open
    /// transaction as they come, and [`RowWriter::commit`] commits them
    /// with the walk position that follows them. Rows without their
    /// position, or a position without its rows, are never kept.
    pub fn writer<'d, T: Mirrored>(
        &'d mut self,
        batch: &'d str,
        batch_id: i64,
    ) -> RowWriter<'d, T> {
        RowWriter {
            conn: &mut self.conn,
            batch,
            batch_id,
            upsert: rows::upsert_sql::<T>(),
            open: false,
            pending: 0,
            _rows: std::marker::PhantomData,
        }
    }

    /// The rows of a batch in the mirror.
    pub fn count_rows(&self, batch_id: i64, kind: Kind) -> Result<u64, SyncError> {
        self.conn
            .query_row(
                &format!("SELECT count(*) FROM {} WHERE batch_id = ?1", kind.as_str()),
                params![batch_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n.max(0) as u64)
            .map_err(|e| SyncError::db("counting rows", e))
    }

    /// Marks a batch's rows verified.
    pub fn mark_verified(&mut self, batch: &str, kind: Kind) -> Result<(), SyncError> {
        self.conn
            .execute(
                "UPDATE walks SET verified_at = ?1 WHERE batch_token = ?2 AND kind = ?3",
                params![now(), batch, kind.as_str()],
            )
            .map_err(|e| SyncError::db("marking a batch verified", e))?;
        Ok(())
    }

    /// Records an integrity error and sends the batch's walk back to its
    /// start, so that the next run walks it again whole.
    pub fn integrity_error(
        &mut self,
        run: i64,
        batch: &str,
        kind: Kind,
        message: &str,
    ) -> Result<(), SyncError> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| SyncError::db("recording an integrity error", e))?;
        tx.execute(
            "INSERT INTO integrity_errors (run_id, batch_token, kind, message, found_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run, batch, kind.as_str(), message, now()],
        )
        .and_then(|_| {
            tx.execute(
                "UPDATE walks SET position = NULL, head_id = NULL, tail_position = NULL,
                     tail_id = NULL, verified_at = NULL
                 WHERE batch_token = ?1 AND kind = ?2",
                params![batch, kind.as_str()],
            )
        })
        .and_then(|_| tx.commit())
        .map_err(|e| SyncError::db("recording an integrity error", e))
    }

    /// Sends a walk back to its start (its saved position was unusable).
    pub fn restart_walk(&mut self, batch: &str, kind: Kind) -> Result<(), SyncError> {
        self.conn
            .execute(
                "UPDATE walks SET position = NULL, head_id = NULL, tail_position = NULL,
                     tail_id = NULL
                 WHERE batch_token = ?1 AND kind = ?2",
                params![batch, kind.as_str()],
            )
            .map_err(|e| SyncError::db("restarting a walk", e))?;
        Ok(())
    }
}

/// See [`Db::writer`].
pub struct RowWriter<'d, T> {
    conn: &'d mut Connection,
    batch: &'d str,
    batch_id: i64,
    /// The upsert statement's text (the statement cache's key).
    upsert: String,
    open: bool,
    pending: u64,
    _rows: std::marker::PhantomData<fn(T)>,
}

impl<T: Mirrored> RowWriter<'_, T> {
    fn context(&self) -> String {
        format!("writing {} of batch {}", T::KIND.as_str(), self.batch)
    }

    /// Adds rows to the open transaction (opening one).
    pub fn rows(&mut self, rows: &[T]) -> Result<(), SyncError> {
        if !self.open {
            self.conn
                .execute_batch("BEGIN")
                .map_err(|e| SyncError::db(&self.context(), e))?;
            self.open = true;
        }
        let mut stmt = self
            .conn
            .prepare_cached(&self.upsert)
            .map_err(|e| SyncError::db(&self.context(), e))?;
        for row in rows {
            rows::upsert(&mut stmt, self.batch_id, row)
                .map_err(|e| SyncError::db(&self.context(), e))?;
        }
        self.pending += rows.len() as u64;
        Ok(())
    }

    /// Rows added since the last commit.
    pub fn pending(&self) -> u64 {
        self.pending
    }

    /// Commits the rows added with the walk positions after them.
    pub fn commit(
        &mut self,
        state: &WalkState,
        server_count: Option<u64>,
    ) -> Result<(), SyncError> {
        if !self.open {
            self.conn
                .execute_batch("BEGIN")
                .map_err(|e| SyncError::db(&self.context(), e))?;
            self.open = true;
        }
        let int = |n: Option<u64>| n.and_then(|n| i64::try_from(n).ok());
        self.conn
            .prepare_cached(
                "INSERT INTO walks (batch_token, kind, position, head_id, tail_position, tail_id, server_count)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (batch_token, kind) DO UPDATE SET
                     position = excluded.position, head_id = excluded.head_id,
                     tail_position = excluded.tail_position, tail_id = excluded.tail_id,
                     server_count = coalesce(excluded.server_count, walks.server_count)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    self.batch,
                    T::KIND.as_str(),
                    state.head,
                    int(state.head_id),
                    state.tail,
                    int(state.tail_id),
                    int(server_count)
                ])
            })
            .and_then(|_| self.conn.execute_batch("COMMIT"))
            .map_err(|e| SyncError::db(&self.context(), e))?;
        self.open = false;
        self.pending = 0;
        Ok(())
    }
}

impl<T> Drop for RowWriter<'_, T> {
    /// Rows never committed are rolled back: their position was not
    /// kept either, so the next run fetches them again.
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

#[cfg(test)]
mod tests;
