//! The SQLite store: one file, opened, checked and migrated; locked for
//! one run at a time (a lock file); written in WAL mode, rows and their
//! walk position in one transaction; readable by its owner only.

mod schema;

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use aggpay::{AggregatorId, BatchToken, SettlementBatch};
use rusqlite::types::{ToSql, ToSqlOutput};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::tables::{BATCHES, Kind};
use super::{
    BatchChanges, Pending, Shape, Store, Totals, Value, WalkCommit, WalkState, now, unsigned,
    upsert_sql,
};
use crate::error::SyncError;

/// The schema version this build writes (and the newest it reads).
pub const SCHEMA_VERSION: i64 = schema::MIGRATIONS.len() as i64;

/// An open, locked, migrated SQLite database.
pub struct Sqlite {
    conn: Connection,
    /// Copies the write-ahead log into the database beside the writer.
    checkpointer: Option<Checkpointer>,
    /// The statements that write a table's rows: insert, update.
    writes: HashMap<&'static str, (String, String)>,
    /// A transaction holds rows written, not yet committed.
    open: bool,
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
        let conn = Connection::open(path).map_err(SyncError::db("starting the checkpointer"))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(SyncError::db("starting the checkpointer"))?;
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
            .map_err(SyncError::db("starting the checkpointer"))?;
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

impl Drop for Sqlite {
    fn drop(&mut self) {
        self.rollback();
        self.checkpointer.take();
        // Leave a small log behind (the data is safe either way).
        let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    }
}

impl std::fmt::Debug for Sqlite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sqlite").finish_non_exhaustive()
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

/// Creates `path` readable and writable by its owner only, when missing:
/// it holds a company's settlement data. (SQLite gives its log files the
/// database's permissions.)
fn create_private(path: &Path) -> std::io::Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
}

impl ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::from(rusqlite::types::Null),
            Value::Int(n) => ToSqlOutput::from(*n),
            Value::Text(s) => ToSqlOutput::from(s.as_ref()),
            Value::Bool(b) => ToSqlOutput::from(i64::from(*b)),
        })
    }
}

/// Why a file could not be read as a mirror, in words that point at the
/// fix: not a SQLite file at all, or a directory the mirror cannot write
/// its journal in (an intact mirror in a read-only directory), or else
/// the database's own error.
fn unreadable(path: &Path, e: rusqlite::Error) -> SyncError {
    let shown = path.display();
    let code = match &e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
        _ => None,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let read_only_dir =
        std::fs::metadata(dir).is_ok_and(|m| m.permissions().readonly()) || tempfile_refused(dir);
    match code {
        Some(rusqlite::ErrorCode::NotADatabase) => {
            SyncError::db(format!("{shown} is not a SQLite database"))(e)
        }
        _ if read_only_dir => SyncError::db(format!(
            "{shown} cannot be opened for writing: the mirror keeps its journal (-wal and -shm files) beside it, and {} is not writable",
            dir.display()
        ))(e),
        _ => SyncError::db(format!("{shown} cannot be read"))(e),
    }
}

/// True when no file can be created in `dir` (permissions, a read-only
/// mount): tried, and removed at once.
fn tempfile_refused(dir: &Path) -> bool {
    let probe = dir.join(format!(".aggpay-sync-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            false
        }
        Err(e) => e.kind() != std::io::ErrorKind::AlreadyExists,
    }
}

impl Sqlite {
    /// Opens (or creates) the database: refuses a file that is not an
    /// aggpay-sync database or was written by a newer one, without
    /// changing it; takes the run lock; migrates forward.
    ///
    /// # Errors
    ///
    /// [`SyncError::Refused`] saying why, or the database's error.
    pub fn open(path: &Path) -> Result<Self, SyncError> {
        let shown = path.display();
        let lock_file = lock_path(path);
        let lock = create_private(&lock_file).map_err(SyncError::db(format!(
            "{shown}: cannot open its lock file {}",
            lock_file.display()
        )))?;
        if let Err(e) = lock.try_lock() {
            return Err(SyncError::Refused(format!(
                "{shown} is in use by another aggpay-sync run ({e})"
            )));
        }
        if !path.exists() {
            create_private(path).map_err(SyncError::db(format!("{shown} cannot be created")))?;
        }
        let conn =
            Connection::open(path).map_err(SyncError::db(format!("{shown} cannot be opened")))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(SyncError::db("setting the busy timeout"))?;
        let read = |sql: &str| -> Result<i64, SyncError> {
            conn.query_row(sql, [], |r| r.get(0))
                .map_err(|e| unreadable(path, e))
        };
        let application = read("PRAGMA application_id")?;
        let version = read("PRAGMA user_version")?;
        let tables = read("SELECT count(*) FROM sqlite_schema")?;
        let fresh = application == 0 && version == 0 && tables == 0;
        if !fresh && application != schema::APPLICATION_ID {
            return Err(SyncError::Refused(format!(
                "{shown} is not an aggpay-sync database (application id {application:#x}); it was left unchanged"
            )));
        }
        if version > SCHEMA_VERSION {
            return Err(SyncError::Refused(format!(
                "{shown} has schema version {version}, newer than this aggpay-sync knows ({SCHEMA_VERSION}); use a newer aggpay-sync. It was left unchanged"
            )));
        }
        // Durable against a killed process: WAL, every transaction atomic.
        // NORMAL syncs at checkpoints; a power cut may lose the last
        // commits, rows and walk position together, never one without the
        // other. Foreign keys are enforced: rows are written after the
        // batch they belong to.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32768; PRAGMA wal_autocheckpoint = 0; PRAGMA temp_store = MEMORY;",
        )
        .map_err(SyncError::db("setting up"))?;
        let mut db = Self {
            conn,
            checkpointer: None,
            writes: HashMap::new(),
            open: false,
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
            .skip(usize::try_from(from).unwrap_or(0))
        {
            let to = i as i64 + 1;
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Exclusive)
                .map_err(SyncError::db("migrating"))?;
            tx.execute_batch(sql)
                .and_then(|()| {
                    tx.execute_batch(&format!(
                        "PRAGMA application_id = {}; PRAGMA user_version = {to};",
                        schema::APPLICATION_ID
                    ))
                })
                .and_then(|()| tx.commit())
                .map_err(SyncError::db(format!("migrating to schema version {to}")))?;
        }
        Ok(())
    }

    fn begin(&mut self) -> Result<(), SyncError> {
        if !self.open {
            self.conn
                .execute_batch("BEGIN")
                .map_err(SyncError::db("opening a transaction"))?;
            self.open = true;
        }
        Ok(())
    }

    fn count(&self, table: &str) -> Result<u64, SyncError> {
        self.conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .map(unsigned)
            .map_err(SyncError::db(format!("counting {table}")))
    }
}

/// The statements that write a row of `table`: an insert that does
/// nothing when the token is kept, and the update of a kept row. (One
/// upsert would do both, but with foreign keys on, SQLite keeps a
/// statement journal for an upsert that may update: a sixth of a large
/// sync's time. A plain insert needs none.)
fn write_sql(table: &dyn Shape) -> (String, String) {
    let columns = table.columns();
    let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
    let params: Vec<String> = (1..=columns.len()).map(param).collect();
    let key = names
        .iter()
        .position(|c| *c == "token")
        .map_or(0, |i| i + 1);
    let insert = format!(
        "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT (token) DO NOTHING",
        table.name(),
        names.join(", "),
        params.join(", ")
    );
    let set: Vec<String> = super::updated(table)
        .into_iter()
        .map(|(i, c)| format!("{c} = ?{i}"))
        .collect();
    let update = format!(
        "UPDATE {} SET {} WHERE token = ?{key}",
        table.name(),
        set.join(", ")
    );
    (insert, update)
}

/// The SQLite placeholder `?n`.
fn param(i: usize) -> String {
    format!("?{i}")
}

impl Store for Sqlite {
    fn bind_source(&mut self, base_url: &str, aggregator: &AggregatorId) -> Result<(), SyncError> {
        let bound: Option<String> = self
            .conn
            .query_row("SELECT aggregator_id FROM source", [], |r| r.get(0))
            .optional()
            .map_err(SyncError::db("reading the source"))?;
        if let Some(bound) = bound
            && bound != aggregator.as_str()
        {
            return Err(SyncError::Refused(format!(
                "mirrors aggregator {bound}, not {aggregator}: use one database per aggregator"
            )));
        }
        self.conn
            .execute(
                "INSERT INTO source (singleton, aggregator_id, base_url) VALUES (1, ?1, ?2)
                 ON CONFLICT (singleton) DO UPDATE SET base_url = excluded.base_url",
                params![aggregator.as_str(), base_url],
            )
            .map_err(SyncError::db("recording the source"))?;
        Ok(())
    }

    fn start_run(&mut self) -> Result<i64, SyncError> {
        self.conn
            .execute("INSERT INTO runs (started_at) VALUES (?1)", params![now()])
            .map_err(SyncError::db("recording the run"))?;
        Ok(self.conn.last_insert_rowid())
    }

    fn finish_run(&mut self, run: i64, exit_code: u8, summary: &str) -> Result<(), SyncError> {
        self.conn
            .execute(
                "UPDATE runs SET finished_at = ?1, exit_code = ?2, summary = ?3 WHERE id = ?4",
                params![now(), exit_code, summary, run],
            )
            .map_err(SyncError::db("recording the run"))?;
        Ok(())
    }

    fn totals(&mut self) -> Result<Totals, SyncError> {
        Ok(Totals {
            batches: self.count("batches")?,
            transactions: self.count("transactions")?,
            payouts: self.count("payouts")?,
            refunds: self.count("refunds")?,
            merchants: self.count("merchants")?,
            rail_merchants: self.count("rail_merchants")?,
        })
    }

    fn max_batch_id(&mut self) -> Result<Option<u64>, SyncError> {
        self.conn
            .query_row("SELECT max(id) FROM batches", [], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .map(|id| id.map(unsigned))
            .map_err(SyncError::db("reading the newest batch"))
    }

    fn upsert_batches(&mut self, batches: &[SettlementBatch]) -> Result<BatchChanges, SyncError> {
        let at = now();
        let mut changes = BatchChanges::default();
        let sql = upsert_sql(&BATCHES, param);
        let tx = self
            .conn
            .transaction()
            .map_err(SyncError::db("writing batches"))?;
        {
            let mut status = tx
                .prepare_cached("SELECT status FROM batches WHERE token = ?1")
                .map_err(SyncError::db("writing batches"))?;
            let mut upsert = tx
                .prepare_cached(&sql)
                .map_err(SyncError::db("writing batches"))?;
            for b in batches {
                let before: Option<String> = status
                    .query_row(params![b.token.as_str()], |r| r.get(0))
                    .optional()
                    .map_err(SyncError::db("writing batches"))?;
                changes.saw(before.as_deref(), b);
                let mut row = BATCHES.row(None, b);
                row.extend([Value::from(at.as_str()), Value::from(at.as_str())]);
                upsert
                    .execute(rusqlite::params_from_iter(row.iter()))
                    .map_err(SyncError::db(format!("writing batch {}", b.token)))?;
            }
        }
        tx.commit().map_err(SyncError::db("writing batches"))?;
        Ok(changes)
    }

    fn batch_states(&mut self) -> Result<Vec<Pending>, SyncError> {
        let mut stmt = self
            .conn
            .prepare(super::BATCH_STATES)
            .map_err(SyncError::db("reading batches"))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, bool>(3)?,
                    r.get::<_, bool>(4)?,
                ))
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(SyncError::db("reading batches"))?;
        rows.into_iter()
            .map(|(token, id, status, transactions, payouts)| {
                super::pending(token, id, &status, transactions, payouts)
            })
            .collect()
    }

    fn walk_state(&mut self, batch: &BatchToken, kind: Kind) -> Result<WalkState, SyncError> {
        self.conn
            .query_row(
                "SELECT position, head_id, tail_position, tail_id FROM walks
                 WHERE batch_token = ?1 AND kind = ?2",
                params![batch.as_str(), kind.as_str()],
                |r| {
                    Ok(WalkState {
                        head: r.get(0)?,
                        head_id: r.get::<_, Option<i64>>(1)?.map(unsigned),
                        tail: r.get(2)?,
                        tail_id: r.get::<_, Option<i64>>(3)?.map(unsigned),
                    })
                },
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(SyncError::db("reading a walk position"))
    }

    fn write(
        &mut self,
        table: &'static dyn Shape,
        rows: &[Vec<Value<'_>>],
    ) -> Result<(), SyncError> {
        self.begin()?;
        let (insert, update) = self
            .writes
            .entry(table.name())
            .or_insert_with(|| write_sql(table))
            .clone();
        let context = format!("writing {}", table.name());
        let mut insert = self
            .conn
            .prepare_cached(&insert)
            .map_err(SyncError::db(context.clone()))?;
        let mut update = self
            .conn
            .prepare_cached(&update)
            .map_err(SyncError::db(context.clone()))?;
        let at = now();
        let extras = table.columns().len() - table.bound();
        let bind = |stmt: &mut rusqlite::CachedStatement<'_>, row: &[Value<'_>]| {
            let extra = std::iter::repeat_n(Value::from(at.as_str()), extras);
            for (i, value) in row.iter().cloned().chain(extra).enumerate() {
                stmt.raw_bind_parameter(i + 1, value)?;
            }
            stmt.raw_execute()
        };
        for row in rows {
            let inserted = bind(&mut insert, row).map_err(SyncError::db(context.clone()))?;
            if inserted == 0 {
                bind(&mut update, row).map_err(SyncError::db(context.clone()))?;
            }
        }
        Ok(())
    }

    fn commit(&mut self, walks: &[WalkCommit<'_>]) -> Result<(), SyncError> {
        self.begin()?;
        for w in walks {
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
                        w.batch.as_str(),
                        w.kind.as_str(),
                        w.state.head,
                        int(w.state.head_id),
                        w.state.tail,
                        int(w.state.tail_id),
                        int(w.server_count)
                    ])
                })
                .map_err(SyncError::db(format!("recording the walk of batch {}", w.batch)))?;
        }
        self.conn
            .execute_batch("COMMIT")
            .map_err(SyncError::db("committing"))?;
        self.open = false;
        Ok(())
    }

    fn rollback(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("ROLLBACK");
            self.open = false;
        }
    }

    fn count_rows(&mut self, batch_id: i64, kind: Kind) -> Result<u64, SyncError> {
        self.conn
            .query_row(
                &format!("SELECT count(*) FROM {} WHERE batch_id = ?1", kind.as_str()),
                params![batch_id],
                |r| r.get::<_, i64>(0),
            )
            .map(unsigned)
            .map_err(SyncError::db("counting rows"))
    }

    fn mark_verified(&mut self, batch: &BatchToken, kind: Kind) -> Result<(), SyncError> {
        self.conn
            .execute(
                "UPDATE walks SET verified_at = ?1 WHERE batch_token = ?2 AND kind = ?3",
                params![now(), batch.as_str(), kind.as_str()],
            )
            .map_err(SyncError::db("marking a batch verified"))?;
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
        let tx = self
            .conn
            .transaction()
            .map_err(SyncError::db("recording an integrity error"))?;
        tx.execute(
            "INSERT INTO integrity_errors (run_id, batch_token, kind, message, found_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run, subject, kind, message, now()],
        )
        .and_then(|_| {
            tx.execute(
                "UPDATE walks SET position = NULL, head_id = NULL, tail_position = NULL,
                     tail_id = NULL, verified_at = NULL
                 WHERE batch_token = ?1 AND kind = ?2",
                params![subject, kind],
            )
        })
        .and_then(|_| tx.commit())
        .map_err(SyncError::db("recording an integrity error"))
    }

    fn restart_walk(&mut self, batch: &BatchToken, kind: Kind) -> Result<(), SyncError> {
        self.conn
            .execute(
                "UPDATE walks SET position = NULL, head_id = NULL, tail_position = NULL,
                     tail_id = NULL
                 WHERE batch_token = ?1 AND kind = ?2",
                params![batch.as_str(), kind.as_str()],
            )
            .map_err(SyncError::db("restarting a walk"))?;
        Ok(())
    }

    fn cursor(&mut self, name: &str) -> Result<Option<i64>, SyncError> {
        self.conn
            .query_row(
                "SELECT value FROM cursors WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )
            .optional()
            .map_err(SyncError::db(format!("reading {name}")))
    }

    fn set_cursor(&mut self, name: &str, value: i64) -> Result<(), SyncError> {
        self.conn
            .execute(
                "INSERT INTO cursors (name, value) VALUES (?1, ?2)
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                params![name, value],
            )
            .map_err(SyncError::db(format!("keeping {name}")))?;
        Ok(())
    }
}

impl Sqlite {}

#[cfg(test)]
mod tests;
