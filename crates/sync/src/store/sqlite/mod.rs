//! The SQLite dialect: one file, opened, checked and migrated; locked for
//! one run at a time (a lock file); written in WAL mode, rows and their
//! walk position in one transaction; readable by its owner only. Rows go
//! in by prepared statements, one row each (SQLite runs in the process:
//! a statement costs no round trip).

mod schema;

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use std::borrow::Cow;

use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, TransactionBehavior};

use super::sql::Dialect;
use super::{Refusal, Shape, Value};
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
    // The store rolled back what was open before its dialect is dropped.
    fn drop(&mut self) {
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
        if lock.try_lock().is_err() {
            return Err(SyncError::Refused(Refusal::InUse {
                what: shown.to_string(),
            }));
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
            return Err(SyncError::Refused(Refusal::NotOurs {
                what: shown.to_string(),
                why: format!("a SQLite file of application id {application:#x}"),
            }));
        }
        if version > SCHEMA_VERSION {
            return Err(SyncError::Refused(Refusal::Newer {
                what: shown.to_string(),
                found: version,
                known: SCHEMA_VERSION,
            }));
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
    let set: Vec<String> = super::sql::updated(table)
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

/// The store's statements with SQLite's placeholders: `$n` is `?n`.
fn placeholders(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        let numbered = c == '$' && chars.peek().is_some_and(char::is_ascii_digit);
        out.push(if numbered { '?' } else { c });
    }
    Cow::Owned(out)
}

/// A value SQLite gave back, as the store reads it.
fn read(value: ValueRef<'_>) -> Value<'static> {
    match value {
        ValueRef::Null | ValueRef::Blob(_) => Value::Null,
        ValueRef::Integer(n) => Value::Int(n),
        ValueRef::Real(x) => Value::from(x.to_string()),
        ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t).into_owned()),
    }
}

impl Dialect for Sqlite {
    type Error = rusqlite::Error;

    fn batch(&mut self, sql: &str) -> Result<(), rusqlite::Error> {
        self.conn.execute_batch(sql)
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, rusqlite::Error> {
        let changed = self
            .conn
            .prepare_cached(&placeholders(sql))?
            .execute(rusqlite::params_from_iter(params))?;
        Ok(changed as u64)
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Vec<Vec<Value<'static>>>, rusqlite::Error> {
        let mut stmt = self.conn.prepare_cached(&placeholders(sql))?;
        let width = stmt.column_count();
        let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
            (0..width).map(|i| r.get_ref(i).map(read)).collect()
        })?;
        rows.collect()
    }

    fn write(
        &mut self,
        table: &'static dyn Shape,
        rows: &[Vec<Value<'_>>],
        at: &str,
    ) -> Result<(), SyncError> {
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
        let extras = table.columns().len() - table.bound();
        let stamp = Value::from(at);
        // Bound by reference (SQLite copies what it keeps), and the error's
        // context made only on an error: per row, nothing is allocated.
        let bind = |stmt: &mut rusqlite::CachedStatement<'_>, row: &[Value<'_>]| {
            let extra = std::iter::repeat_n(&stamp, extras);
            for (i, value) in row.iter().chain(extra).enumerate() {
                stmt.raw_bind_parameter(i + 1, value)?;
            }
            stmt.raw_execute()
        };
        let failed = |e| SyncError::db(context.as_str())(e);
        for row in rows {
            let inserted = bind(&mut insert, row).map_err(failed)?;
            if inserted == 0 {
                bind(&mut update, row).map_err(failed)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SyncError> {
        Ok(())
    }

    fn ended(&mut self) {}
}

#[cfg(test)]
mod tests;
