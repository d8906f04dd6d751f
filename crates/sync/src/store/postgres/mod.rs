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

use std::collections::{BTreeSet, HashMap};
use std::io::Write as _;

use aggpay::AggregatorId;
use bytes::{BufMut, BytesMut};
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type as PgType, to_sql_checked};
use postgres::{Client, NoTls, Statement};

use super::sql::Dialect;
use super::sql::updates;
use super::tables::{MERCHANTS, PAYOUTS, RAIL_MERCHANTS, REFUNDS, TRANSACTIONS, Type};
use super::{Refusal, Shape, Value};
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
    /// The statements prepared on this connection, by their text: each
    /// is parsed once, not once per call.
    prepared: HashMap<String, Statement>,
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
        let shown = super::target::redact_url(url);
        let config = connect_config(url, &shown, warn)?;
        let mut client = config
            .connect(NoTls)
            .map_err(SyncError::db(format!("cannot connect to {shown}")))?;
        let schema = schema_name(aggregator);
        lock(&mut client, &schema, &shown)?;
        let (has_schema, version) = found_version(&mut client, &schema, &shown)?;
        let mut store = Self {
            client,
            schema,
            chunk: None,
            conflicted: BTreeSet::new(),
            prepared: HashMap::new(),
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
    fn send(&mut self) -> Result<(), SyncError> {
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

    /// The prepared statement of `sql`.
    fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.prepared.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql)?;
        self.prepared.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

/// The parameters as the driver takes them.
fn refs<'a>(params: &'a [Value<'_>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

/// A value PostgreSQL gave back, as the store reads it.
fn read(row: &postgres::Row, i: usize) -> Result<Value<'static>, postgres::Error> {
    let ty = row.columns()[i].type_();
    Ok(if *ty == PgType::INT8 {
        row.try_get::<_, Option<i64>>(i)?.into()
    } else if *ty == PgType::INT4 {
        row.try_get::<_, Option<i32>>(i)?.map(i64::from).into()
    } else if *ty == PgType::BOOL {
        row.try_get::<_, Option<bool>>(i)?.into()
    } else {
        row.try_get::<_, Option<String>>(i)?.into()
    })
}

impl Dialect for Postgres {
    type Error = postgres::Error;

    fn batch(&mut self, sql: &str) -> Result<(), postgres::Error> {
        self.client.batch_execute(sql)
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, postgres::Error> {
        let statement = self.statement(sql)?;
        self.client.execute(&statement, &refs(params))
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
    ) -> Result<Vec<Vec<Value<'static>>>, postgres::Error> {
        let statement = self.statement(sql)?;
        self.client
            .query(&statement, &refs(params))?
            .iter()
            .map(|row| (0..row.len()).map(|i| read(row, i)).collect())
            .collect()
    }

    fn write(
        &mut self,
        table: &'static dyn Shape,
        rows: &[Vec<Value<'_>>],
        at: &str,
    ) -> Result<(), SyncError> {
        if self
            .chunk
            .as_ref()
            .is_some_and(|c| c.table.name() != table.name())
        {
            self.send()?;
        }
        let chunk = self.chunk.get_or_insert_with(|| Chunk::new(table));
        // The tool's own columns: the time the rows were written.
        let extra = Value::from(at);
        for row in rows {
            // The error's context is made only on an error, not per row.
            chunk
                .push(row, &extra)
                .map_err(|e| SyncError::db(format!("encoding a row of {}", table.name()))(e))?;
        }
        if chunk.rows >= CHUNK_ROWS {
            self.send()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SyncError> {
        self.send()
    }

    fn ended(&mut self) {
        self.chunk = None;
        self.conflicted.clear();
    }
}

/// The connection settings of `url`, its password read as libpq does
/// when the URL has none (`warn` hears why a password file is not used).
fn connect_config(
    url: &str,
    shown: &str,
    warn: &mut dyn FnMut(String),
) -> Result<postgres::Config, SyncError> {
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
    Ok(config)
}

/// Takes the aggregator's run lock (a session advisory lock on its
/// schema's name): another run holding it refuses this one.
fn lock(client: &mut Client, schema: &str, shown: &str) -> Result<(), SyncError> {
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
            return Err(SyncError::Refused(Refusal::InUse {
                what: format!("schema {schema} of {shown}"),
            }));
        }
        Err(e) => return Err(SyncError::db("taking the run lock")(e)),
    }
    Ok(())
}

/// Whether the aggregator's schema exists, and its version (0 when it
/// does not); a schema of another program, or of a newer version, is
/// refused.
fn found_version(client: &mut Client, schema: &str, shown: &str) -> Result<(bool, i64), SyncError> {
    let exists = |client: &mut Client, sql: &str| -> Result<bool, SyncError> {
        client
            .query_one(sql, &[&schema])
            .map(|r| r.get::<_, bool>(0))
            .map_err(SyncError::db("reading the catalog"))
    };
    let has_schema = exists(
        client,
        "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
    )?;
    let version = if has_schema {
        let has_meta = exists(
            client,
            "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = 'meta')",
        )?;
        let foreign = || {
            SyncError::Refused(Refusal::NotOurs {
                what: format!("schema {schema} of {shown}"),
                why: "no aggpay-sync meta table".into(),
            })
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
            return Err(SyncError::Refused(Refusal::Newer {
                what: format!("schema {schema} of {shown}"),
                found: version,
                known: SCHEMA_VERSION,
            }));
        }
        version
    } else {
        0
    };
    Ok((has_schema, version))
}
