//! The PostgreSQL store. Several aggregators share one database: each has
//! a schema of its own, `aggpay_<aggregator id>`, with the SQLite file's
//! tables and `meta` (whose schema it is, at what version). One run at a
//! time per aggregator: a session advisory lock on the schema's name.
//! Rows go in bulk: pages are gathered into chunks of a few thousand
//! rows, each chunk one binary COPY, of new rows straight into its table,
//! of a chunk with a row kept before (a batch walked again, refunds read
//! again) into a temporary staging table merged into its table at once
//! (an upsert by token). The walk position commits with the rows.

mod password;
mod schema;

use std::collections::BTreeSet;
use std::io::Write as _;

use aggpay::{AggregatorId, BatchToken, SettlementBatch};
use bytes::{BufMut, BytesMut};
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type as PgType, to_sql_checked};
use postgres::{Client, NoTls};

use super::tables::{
    BATCHES, Kind, MERCHANTS, PAYOUTS, RAIL_MERCHANTS, REFUNDS, TRANSACTIONS, Type,
};
use super::{
    BatchChanges, Pending, Shape, Store, Totals, Value, WalkCommit, WalkState, now, unsigned,
    updates, upsert_sql,
};
use crate::error::SyncError;

/// The schema version this build writes (and the newest it reads).
pub const SCHEMA_VERSION: i64 = schema::MIGRATIONS.len() as i64;

/// An open, locked, migrated schema of one aggregator.
pub struct Postgres {
    client: Client,
    schema: String,
    /// Rows written, not yet sent: one table's.
    chunk: Option<Chunk>,
    /// Tables whose rows go through staging until the commit.
    conflicted: BTreeSet<&'static str>,
    open: bool,
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Postgres")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &PgType,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(n) => n.to_sql(ty, out),
            Value::Text(s) => s.as_ref().to_sql(ty, out),
            Value::Bool(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(ty: &PgType) -> bool {
        matches!(*ty, PgType::INT8 | PgType::TEXT | PgType::BOOL)
    }

    to_sql_checked!();
}

/// The schema of an aggregator: `aggpay_` and its id, lowercase, letters,
/// digits and `_` only, within PostgreSQL's 63 characters.
pub fn schema_name(aggregator: &AggregatorId) -> String {
    let body: String = aggregator
        .as_str()
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("aggpay_{body}").chars().take(63).collect()
}

fn pg_type(ty: Type) -> PgType {
    match ty {
        Type::Int => PgType::INT8,
        Type::Text => PgType::TEXT,
        Type::Bool => PgType::BOOL,
    }
}

/// How long a run waits for the aggregator's lock before calling the
/// schema in use.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Rows gathered for one COPY: one statement per chunk, not per page
/// (a statement's own cost, paid per page of 100 rows, doubled a large
/// sync's time). A few megabytes at most.
const CHUNK_ROWS: usize = 4_000;

/// Rows of one table gathered for one COPY, kept as the bytes COPY's
/// binary format sends: encoded as they come, the rows cost no owned copy
/// of each field (those copies, and the values kept alive for a writer
/// that encodes at sending time, were a quarter of the tool's own CPU
/// time), and a chunk sent twice (to its table, then to staging) is
/// encoded once.
struct Chunk {
    table: &'static dyn Shape,
    types: Vec<PgType>,
    rows: usize,
    data: BytesMut,
}

/// The binary COPY stream's header (signature, no flags, no extension)
/// and trailer: PostgreSQL's documented `COPY ... (FORMAT binary)` file
/// format, around rows of a field count then each field's length and
/// bytes (-1 for NULL), the bytes being what `ToSql` encodes.
const COPY_HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
const COPY_TRAILER: &[u8] = &(-1i16).to_be_bytes();

impl Chunk {
    fn new(table: &'static dyn Shape) -> Self {
        Chunk {
            table,
            types: table.columns().iter().map(|c| pg_type(c.1)).collect(),
            rows: 0,
            data: BytesMut::with_capacity(1 << 20),
        }
    }

    /// Adds one row: its bound values, then `extra` in the tool's own
    /// columns.
    fn push(&mut self, row: &[Value<'_>], extra: &Value<'_>) -> Result<(), EncodeError> {
        let fields =
            i16::try_from(self.types.len()).map_err(|_| EncodeError::from("too many columns"))?;
        self.data.put_i16(fields);
        for (i, ty) in self.types.iter().enumerate() {
            let at = self.data.len();
            self.data.put_i32(0);
            let value = row.get(i).unwrap_or(extra);
            let length = match value
                .to_sql_checked(ty, &mut self.data)
                .map_err(EncodeError)?
            {
                IsNull::Yes => -1,
                IsNull::No => i32::try_from(self.data.len() - at - 4)
                    .map_err(|_| EncodeError::from("a value over 2 GiB"))?,
            };
            self.data[at..at + 4].copy_from_slice(&length.to_be_bytes());
        }
        self.rows += 1;
        Ok(())
    }
}

/// A row that could not be encoded for COPY.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct EncodeError(Box<dyn std::error::Error + Sync + Send>);

impl From<&str> for EncodeError {
    fn from(why: &str) -> Self {
        EncodeError(why.into())
    }
}

/// Why a COPY failed: the server's answer, or the stream to it.
#[derive(Debug, thiserror::Error)]
enum CopyError {
    #[error(transparent)]
    Server(#[from] postgres::Error),
    #[error(transparent)]
    Stream(#[from] std::io::Error),
}

impl CopyError {
    /// A row kept before (or twice in the chunk). The server's answer
    /// comes when the stream ends: sending only fails when the
    /// connection does.
    fn is_unique_violation(&self) -> bool {
        matches!(self, CopyError::Server(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION))
    }
}

/// A table's columns, as a statement names them.
fn column_list(table: &dyn Shape) -> String {
    table
        .columns()
        .iter()
        .map(|c| c.0)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The tables whose rows may go through a staging table.
fn staged_tables() -> [&'static dyn Shape; 5] {
    [
        &TRANSACTIONS,
        &PAYOUTS,
        &REFUNDS,
        &MERCHANTS,
        &RAIL_MERCHANTS,
    ]
}

impl Postgres {
    /// Connects, takes the aggregator's lock, checks and migrates its
    /// schema (created when missing).
    ///
    /// # Errors
    ///
    /// [`SyncError::Refused`] for a schema of another program, a newer
    /// one, or one in use; the server's error otherwise.
    pub fn open(
        url: &str,
        aggregator: &AggregatorId,
        warn: &mut dyn FnMut(String),
    ) -> Result<Self, SyncError> {
        let shown = super::redact_url(url);
        let mut config: postgres::Config = url.parse().map_err(SyncError::db(format!(
            "{shown} is not a usable PostgreSQL URL"
        )))?;
        if config.get_password().is_none() {
            let host = match config.get_hosts().first() {
                Some(postgres::config::Host::Tcp(h)) => h.clone(),
                Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
                None => "localhost".to_owned(),
            };
            let port = config.get_ports().first().copied().unwrap_or(5432);
            let user = config.get_user().map(str::to_owned).unwrap_or_default();
            let database = config.get_dbname().unwrap_or(&user).to_owned();
            let (found, warning) = password::lookup(&host, port, &database, &user);
            warning.into_iter().for_each(&mut *warn);
            if let Some((password, _)) = found {
                config.password(password);
            }
        }
        let mut client = config
            .connect(NoTls)
            .map_err(SyncError::db(format!("cannot connect to {shown}")))?;
        let schema = schema_name(aggregator);
        // A run killed a moment ago holds the lock until its server
        // process notices it is gone (when the statement it runs ends):
        // waited for a little, not taken for a run in use.
        let locked = client
            .batch_execute(&format!("SET lock_timeout = {}", LOCK_WAIT.as_millis()))
            .and_then(|()| client.execute("SELECT pg_advisory_lock(hashtext($1))", &[&schema]))
            .and_then(|_| client.batch_execute("SET lock_timeout = 0"));
        match locked {
            Ok(()) => {}
            Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {
                return Err(SyncError::Refused(format!(
                    "schema {schema} of {shown} is in use by another aggpay-sync run"
                )));
            }
            Err(e) => return Err(SyncError::db("taking the run lock")(e)),
        }
        let exists = |client: &mut Client, sql: &str| -> Result<bool, SyncError> {
            client
                .query_one(sql, &[&schema])
                .map(|r| r.get::<_, bool>(0))
                .map_err(SyncError::db("reading the catalog"))
        };
        let has_schema = exists(
            &mut client,
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
        )?;
        let version = if has_schema {
            let has_meta = exists(
                &mut client,
                "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'meta')",
            )?;
            let foreign = || {
                SyncError::Refused(format!(
                    "schema {schema} of {shown} is not aggpay-sync's; it was left unchanged"
                ))
            };
            if !has_meta {
                return Err(foreign());
            }
            let row = client
                .query_opt(
                    &format!("SELECT application, version FROM {schema}.meta"),
                    &[],
                )
                .map_err(SyncError::db("reading the schema's version"))?
                .ok_or_else(foreign)?;
            let (application, version): (String, i64) = (row.get(0), row.get(1));
            if application != schema::APPLICATION {
                return Err(foreign());
            }
            if version > SCHEMA_VERSION {
                return Err(SyncError::Refused(format!(
                    "schema {schema} of {shown} has version {version}, newer than this aggpay-sync knows ({SCHEMA_VERSION}); use a newer aggpay-sync. It was left unchanged"
                )));
            }
            version
        } else {
            0
        };
        let mut store = Self {
            client,
            schema,
            chunk: None,
            conflicted: BTreeSet::new(),
            open: false,
        };
        store.migrate(version, has_schema)?;
        // Commits do not wait for the disk: a server crash may lose the
        // last ones, each whole (rows with their position), as SQLite's
        // NORMAL synchronous mode may at a power cut.
        let mut setup = format!(
            "SET search_path TO {}; SET synchronous_commit = off;",
            store.schema
        );
        for table in staged_tables() {
            setup.push_str(&format!(
                "CREATE TEMP TABLE staging_{0} (LIKE {0}) ON COMMIT DELETE ROWS;",
                table.name()
            ));
        }
        store
            .client
            .batch_execute(&setup)
            .map_err(SyncError::db("setting up the session"))?;
        Ok(store)
    }

    fn migrate(&mut self, from: i64, has_schema: bool) -> Result<(), SyncError> {
        let schema = self.schema.clone();
        for (i, sql) in schema::MIGRATIONS
            .iter()
            .enumerate()
            .skip(usize::try_from(from).unwrap_or(0))
        {
            let to = i as i64 + 1;
            let mut tx = self
                .client
                .transaction()
                .map_err(SyncError::db("migrating"))?;
            let create = if to == 1 && !has_schema {
                format!("CREATE SCHEMA {schema};")
            } else {
                String::new()
            };
            tx.batch_execute(&format!(
                "{create} SET LOCAL search_path TO {schema}; {sql}"
            ))
            .and_then(|()| {
                tx.execute(
                    "INSERT INTO meta (singleton, application, version) VALUES (1, $1, $2)
                         ON CONFLICT (singleton) DO UPDATE SET version = excluded.version",
                    &[&schema::APPLICATION, &to],
                )
            })
            .and_then(|_| tx.commit())
            .map_err(SyncError::db(format!("migrating to schema version {to}")))?;
        }
        Ok(())
    }

    /// Sends the rows gathered. New rows (each once) are copied into
    /// their table; when one was kept before, the copy fails, is undone
    /// (to a savepoint), and the rows are copied into the staging table
    /// and merged; so are the table's next chunks until the commit (a
    /// batch walked again is all kept rows). Asking first which tokens
    /// are kept cost a fifth of a large sync's time.
    fn flush(&mut self) -> Result<(), SyncError> {
        let Some(chunk) = self.chunk.take() else {
            return Ok(());
        };
        if chunk.rows == 0 {
            return Ok(());
        }
        let table = chunk.table;
        let context = format!("writing {}", table.name());
        // A token twice in the chunk (a server that repeats a row) fails
        // the COPY as a row kept before does, and takes the same way.
        if !self.conflicted.contains(table.name()) {
            self.client
                .batch_execute("SAVEPOINT chunk")
                .map_err(SyncError::db(context.clone()))?;
            match self.copy(&chunk, table.name()) {
                Ok(()) => {
                    return self
                        .client
                        .batch_execute("RELEASE SAVEPOINT chunk")
                        .map_err(SyncError::db(context));
                }
                Err(e) if e.is_unique_violation() => {
                    self.client
                        .batch_execute("ROLLBACK TO SAVEPOINT chunk; RELEASE SAVEPOINT chunk")
                        .map_err(SyncError::db(context.clone()))?;
                    self.conflicted.insert(table.name());
                }
                Err(e) => return Err(SyncError::db(context)(e)),
            }
        }
        let staging = format!("staging_{}", table.name());
        self.copy(&chunk, &staging)
            .map_err(SyncError::db(context))?;
        let names = column_list(table);
        // One row per token (a server that repeats one must not fail the
        // upsert), merged now: later chunks see it.
        self.client
            .batch_execute(&format!(
                "INSERT INTO {t} ({names}) SELECT DISTINCT ON (token) {names} FROM {staging}
                 ON CONFLICT (token) DO UPDATE SET {updates}; TRUNCATE {staging}",
                t = table.name(),
                updates = updates(table)
            ))
            .map_err(SyncError::db(format!("merging {}", table.name())))
    }

    /// One binary COPY of `chunk` into `into` (its table, or the table's
    /// staging table).
    fn copy(&mut self, chunk: &Chunk, into: &str) -> Result<(), CopyError> {
        let mut writer = self.client.copy_in(&format!(
            "COPY {into} ({}) FROM STDIN (FORMAT binary)",
            column_list(chunk.table)
        ))?;
        writer.write_all(COPY_HEADER)?;
        // In pieces: the writer sends what it holds before taking more,
        // so the server reads the first rows while the last are sent.
        for piece in chunk.data.chunks(64 * 1024) {
            writer.write_all(piece)?;
        }
        writer.write_all(COPY_TRAILER)?;
        writer.finish()?;
        Ok(())
    }

    fn begin(&mut self) -> Result<(), SyncError> {
        if !self.open {
            self.client
                .batch_execute("BEGIN")
                .map_err(SyncError::db("opening a transaction"))?;
            self.open = true;
        }
        Ok(())
    }

    fn count(&mut self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, SyncError> {
        self.client
            .query_one(sql, params)
            .map(|r| unsigned(r.get::<_, i64>(0)))
            .map_err(SyncError::db("counting"))
    }
}

impl Store for Postgres {
    fn bind_source(&mut self, base_url: &str, aggregator: &AggregatorId) -> Result<(), SyncError> {
        let bound = self
            .client
            .query_opt("SELECT aggregator_id FROM source", &[])
            .map_err(SyncError::db("reading the source"))?
            .map(|r| r.get::<_, String>(0));
        if let Some(bound) = bound
            && bound != aggregator.as_str()
        {
            return Err(SyncError::Refused(format!(
                "schema {} mirrors aggregator {bound}, not {aggregator}",
                self.schema
            )));
        }
        self.client
            .execute(
                "INSERT INTO source (singleton, aggregator_id, base_url) VALUES (1, $1, $2)
                 ON CONFLICT (singleton) DO UPDATE SET base_url = excluded.base_url",
                &[&aggregator.as_str(), &base_url],
            )
            .map_err(SyncError::db("recording the source"))?;
        Ok(())
    }

    fn start_run(&mut self) -> Result<i64, SyncError> {
        self.client
            .query_one(
                "INSERT INTO runs (started_at) VALUES ($1) RETURNING id",
                &[&now()],
            )
            .map(|r| r.get(0))
            .map_err(SyncError::db("recording the run"))
    }

    fn finish_run(&mut self, run: i64, exit_code: u8, summary: &str) -> Result<(), SyncError> {
        self.client
            .execute(
                "UPDATE runs SET finished_at = $1, exit_code = $2, summary = $3 WHERE id = $4",
                &[&now(), &i64::from(exit_code), &summary, &run],
            )
            .map_err(SyncError::db("recording the run"))?;
        Ok(())
    }

    fn totals(&mut self) -> Result<Totals, SyncError> {
        self.flush()?;
        let row = self
            .client
            .query_one(
                "SELECT (SELECT count(*) FROM batches), (SELECT count(*) FROM transactions),
                    (SELECT count(*) FROM payouts), (SELECT count(*) FROM refunds),
                    (SELECT count(*) FROM merchants), (SELECT count(*) FROM rail_merchants)",
                &[],
            )
            .map_err(SyncError::db("counting rows"))?;
        let n = |i: usize| unsigned(row.get::<_, i64>(i));
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
        self.client
            .query_one("SELECT max(id) FROM batches", &[])
            .map(|r| r.get::<_, Option<i64>>(0).map(unsigned))
            .map_err(SyncError::db("reading the newest batch"))
    }

    fn upsert_batches(&mut self, batches: &[SettlementBatch]) -> Result<BatchChanges, SyncError> {
        let at = now();
        let sql = upsert_sql(&BATCHES, |i| format!("${i}"));
        let mut changes = BatchChanges::default();
        let mut tx = self
            .client
            .transaction()
            .map_err(SyncError::db("writing batches"))?;
        let status = tx
            .prepare("SELECT status FROM batches WHERE token = $1")
            .map_err(SyncError::db("writing batches"))?;
        let upsert = tx.prepare(&sql).map_err(SyncError::db("writing batches"))?;
        for b in batches {
            let before = tx
                .query_opt(&status, &[&b.token.as_str()])
                .map_err(SyncError::db("writing batches"))?
                .map(|r| r.get::<_, String>(0));
            changes.saw(before.as_deref(), b);
            let mut row = BATCHES.row(None, b);
            row.extend([Value::from(at.as_str()), Value::from(at.as_str())]);
            let params: Vec<&(dyn ToSql + Sync)> =
                row.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
            tx.execute(&upsert, &params)
                .map_err(SyncError::db(format!("writing batch {}", b.token)))?;
        }
        tx.commit().map_err(SyncError::db("writing batches"))?;
        Ok(changes)
    }

    fn batch_states(&mut self) -> Result<Vec<Pending>, SyncError> {
        let rows = self
            .client
            .query(super::BATCH_STATES, &[])
            .map_err(SyncError::db("reading batches"))?;
        rows.iter()
            .map(|r| super::pending(r.get(0), r.get(1), r.get::<_, &str>(2), r.get(3), r.get(4)))
            .collect()
    }

    fn walk_state(&mut self, batch: &BatchToken, kind: Kind) -> Result<WalkState, SyncError> {
        self.client
            .query_opt(
                "SELECT position, head_id, tail_position, tail_id FROM walks
                 WHERE batch_token = $1 AND kind = $2",
                &[&batch.as_str(), &kind.as_str()],
            )
            .map(|row| {
                row.map(|r| WalkState {
                    head: r.get(0),
                    head_id: r.get::<_, Option<i64>>(1).map(unsigned),
                    tail: r.get(2),
                    tail_id: r.get::<_, Option<i64>>(3).map(unsigned),
                })
                .unwrap_or_default()
            })
            .map_err(SyncError::db("reading a walk position"))
    }

    fn write(
        &mut self,
        table: &'static dyn Shape,
        rows: &[Vec<Value<'_>>],
    ) -> Result<(), SyncError> {
        self.begin()?;
        if self
            .chunk
            .as_ref()
            .is_some_and(|c| c.table.name() != table.name())
        {
            self.flush()?;
        }
        let chunk = self.chunk.get_or_insert_with(|| Chunk::new(table));
        // The tool's own columns: the time the rows were written.
        let at = now();
        let extra = Value::from(at.as_str());
        for row in rows {
            chunk
                .push(row, &extra)
                .map_err(SyncError::db(format!("encoding a row of {}", table.name())))?;
        }
        if chunk.rows >= CHUNK_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn commit(&mut self, walks: &[WalkCommit<'_>]) -> Result<(), SyncError> {
        self.begin()?;
        self.flush()?;
        for w in walks {
            let int = |n: Option<u64>| n.and_then(|n| i64::try_from(n).ok());
            self.client
                .execute(
                    "INSERT INTO walks (batch_token, kind, position, head_id, tail_position, tail_id, server_count)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)
                     ON CONFLICT (batch_token, kind) DO UPDATE SET
                         position = excluded.position, head_id = excluded.head_id,
                         tail_position = excluded.tail_position, tail_id = excluded.tail_id,
                         server_count = coalesce(excluded.server_count, walks.server_count)",
                    &[
                        &w.batch.as_str(),
                        &w.kind.as_str(),
                        &w.state.head,
                        &int(w.state.head_id),
                        &w.state.tail,
                        &int(w.state.tail_id),
                        &int(w.server_count),
                    ],
                )
                .map_err(SyncError::db(format!("recording the walk of batch {}", w.batch)))?;
        }
        self.client
            .batch_execute("COMMIT")
            .map_err(SyncError::db("committing"))?;
        self.open = false;
        self.conflicted.clear();
        Ok(())
    }

    fn rollback(&mut self) {
        self.chunk = None;
        self.conflicted.clear();
        if self.open {
            let _ = self.client.batch_execute("ROLLBACK");
            self.open = false;
        }
    }

    fn count_rows(&mut self, batch_id: i64, kind: Kind) -> Result<u64, SyncError> {
        self.flush()?;
        self.count(
            &format!("SELECT count(*) FROM {} WHERE batch_id = $1", kind.as_str()),
            &[&batch_id],
        )
    }

    fn mark_verified(&mut self, batch: &BatchToken, kind: Kind) -> Result<(), SyncError> {
        self.client
            .execute(
                "UPDATE walks SET verified_at = $1 WHERE batch_token = $2 AND kind = $3",
                &[&now(), &batch.as_str(), &kind.as_str()],
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
        let mut tx = self
            .client
            .transaction()
            .map_err(SyncError::db("recording an integrity error"))?;
        tx.execute(
            "INSERT INTO integrity_errors (run_id, batch_token, kind, message, found_at)
             VALUES ($1, $2, $3, $4, $5)",
            &[&run, &subject, &kind, &message, &now()],
        )
        .and_then(|_| {
            tx.execute(
                "UPDATE walks SET position = NULL, head_id = NULL, tail_position = NULL,
                     tail_id = NULL, verified_at = NULL
                 WHERE batch_token = $1 AND kind = $2",
                &[&subject, &kind],
            )
        })
        .and_then(|_| tx.commit())
        .map_err(SyncError::db("recording an integrity error"))
    }

    fn restart_walk(&mut self, batch: &BatchToken, kind: Kind) -> Result<(), SyncError> {
        self.client
            .execute(
                "UPDATE walks SET position = NULL, head_id = NULL, tail_position = NULL,
                     tail_id = NULL
                 WHERE batch_token = $1 AND kind = $2",
                &[&batch.as_str(), &kind.as_str()],
            )
            .map_err(SyncError::db("restarting a walk"))?;
        Ok(())
    }

    fn cursor(&mut self, name: &str) -> Result<Option<i64>, SyncError> {
        self.client
            .query_opt("SELECT value FROM cursors WHERE name = $1", &[&name])
            .map(|r| r.map(|r| r.get(0)))
            .map_err(SyncError::db(format!("reading {name}")))
    }

    fn set_cursor(&mut self, name: &str, value: i64) -> Result<(), SyncError> {
        self.client
            .execute(
                "INSERT INTO cursors (name, value) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                &[&name, &value],
            )
            .map_err(SyncError::db(format!("keeping {name}")))?;
        Ok(())
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.rollback();
    }
}
