//! Where the mirror is kept: a SQLite file or a PostgreSQL server, behind
//! one interface with the same tables, types and guarantees: rows and the
//! walk position after them committed in one transaction, one run at a
//! time per aggregator, a versioned schema that refuses a newer or a
//! foreign one, foreign keys enforced.

mod postgres;
mod sql;
mod sqlite;
pub mod tables;

use std::path::PathBuf;

use aggpay::{AggregatorId, BatchStatus, BatchToken, SettlementBatch};

pub(crate) use crate::error::Refusal;
use crate::error::SyncError;
pub use tables::{Kind, Mirrored, Shape, Value};

/// The schema versions this build writes: SQLite's, PostgreSQL's.
pub const SCHEMA_VERSIONS: (i64, i64) = (sqlite::SCHEMA_VERSION, postgres::SCHEMA_VERSION);

/// Where a run writes: a SQLite file, or a PostgreSQL database.
#[derive(Clone, PartialEq, Eq)]
pub enum Target {
    /// A SQLite file (created when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://user@host:port/dbname`).
    Postgres(String),
}

impl Target {
    /// `postgres://` or `postgresql://` URLs are PostgreSQL; anything else
    /// a SQLite path.
    pub fn parse(text: &str) -> Self {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Target::Postgres(text.to_owned())
        } else {
            Target::Sqlite(PathBuf::from(text))
        }
    }

    /// True for a PostgreSQL URL that carries a password (of the user
    /// part, or a `password=` parameter).
    pub fn password_in_url(&self) -> bool {
        match self {
            Target::Sqlite(_) => false,
            Target::Postgres(url) => redact_url(url) != *url,
        }
    }

    /// How messages name it: a URL's password never shows.
    pub fn shown(&self) -> String {
        match self {
            Target::Sqlite(path) => path.display().to_string(),
            Target::Postgres(url) => redact_url(url),
        }
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

/// A URL with its password (of the user part, or a `password=` parameter)
/// replaced by `<redacted>`.
fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or("");
            format!("{name}:<redacted>@{host}")
        }
        _ => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => {
                        format!("{k}=<redacted>")
                    }
                    _ => p.to_owned(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

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
    pub kind: Kind,
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

/// Every batch kept, oldest first, with whether its transactions and its
/// payouts still need a walk: `token, id, status, bool, bool` (both
/// backends read it).
const BATCH_STATES: &str = "SELECT b.token, b.id, b.status,
    (SELECT verified_at FROM walks w WHERE w.batch_token = b.token AND w.kind = 'transactions') IS NULL,
    (SELECT verified_at FROM walks w WHERE w.batch_token = b.token AND w.kind = 'payouts') IS NULL
 FROM batches b ORDER BY b.id";

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
    fn walk_state(&mut self, batch: &BatchToken, kind: Kind) -> Result<WalkState, SyncError>;
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
    fn count_rows(&mut self, batch_id: i64, kind: Kind) -> Result<u64, SyncError>;
    /// Marks a batch's rows verified.
    fn mark_verified(&mut self, batch: &BatchToken, kind: Kind) -> Result<(), SyncError>;
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
    fn restart_walk(&mut self, batch: &BatchToken, kind: Kind) -> Result<(), SyncError>;
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

/// The columns of `shape` that a row seen again updates, with their
/// place (from 1): all but the key and when the row was first seen.
fn updated(shape: &dyn Shape) -> Vec<(usize, &'static str)> {
    shape
        .columns()
        .iter()
        .enumerate()
        .map(|(i, c)| (i + 1, c.0))
        .filter(|(_, c)| !matches!(*c, "token" | "first_seen_at"))
        .collect()
}

/// The `SET` list of an upsert's conflict: the [`updated`] columns.
fn updates(shape: &dyn Shape) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_their_names() {
        assert!(matches!(Target::parse("m.db"), Target::Sqlite(_)));
        let pg = Target::parse("postgres://sync:hunter2@db.example:5432/mirror");
        assert!(matches!(pg, Target::Postgres(_)));
        assert_eq!(
            pg.shown(),
            "postgres://sync:<redacted>@db.example:5432/mirror"
        );
        assert!(!format!("{pg:?}").contains("hunter2"));
        assert_eq!(
            Target::parse("postgresql://u@h/d").shown(),
            "postgresql://u@h/d"
        );
        assert_eq!(
            Target::parse("postgres://u@h/d?sslmode=disable&password=hunter2").shown(),
            "postgres://u@h/d?sslmode=disable&password=<redacted>"
        );
        assert_eq!(
            Target::parse("postgres://u:hunter2@h?password=x").shown(),
            "postgres://u:<redacted>@h?password=<redacted>"
        );
    }

    /// What a table's definition says of each column: name, SQL type,
    /// nullable; by name (statements name their columns, so their order
    /// in the table is free, and the shipped SQLite one stays).
    fn defined(table: &dyn Shape, sql_type: fn(tables::Type) -> &'static str) -> Vec<String> {
        let mut out: Vec<String> = table
            .columns()
            .into_iter()
            .map(|(name, ty, nullable)| format!("{name} {} {nullable}", sql_type(ty)))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn the_tables_on_both_backends_are_their_definitions() {
        use tables::Type;
        let dir = aggpay_testkit::TempDir::new("aggpay-sync-tables");
        let path = dir.join("m.db");
        drop(sqlite::Sqlite::open(&path).unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        for table in tables::all() {
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT name, type, \"notnull\", pk FROM pragma_table_info('{}') ORDER BY name",
                    table.name()
                ))
                .unwrap();
            let real: Vec<String> = stmt
                .query_map([], |r| {
                    let (name, ty, notnull, pk): (String, String, bool, i64) =
                        (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
                    // SQLite lets a TEXT primary key be NULL unless told;
                    // the store never writes one.
                    Ok(format!("{name} {ty} {}", !(notnull || pk > 0)))
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let expected = defined(table, |ty| match ty {
                Type::Int | Type::Bool => "INTEGER",
                Type::Text => "TEXT",
            });
            assert_eq!(real, expected, "SQLite table {}", table.name());
        }

        let Some(pg) = aggpay_testkit::PgCluster::shared() else {
            return;
        };
        let url = pg.database("tables");
        let aggregator = AggregatorId::parse("agg_tables").unwrap();
        drop(postgres::Postgres::open(&url, &aggregator, &mut drop).unwrap());
        let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
        for table in tables::all() {
            let real: Vec<String> = client
                .query(
                    "SELECT column_name, data_type, is_nullable = 'YES'
                     FROM information_schema.columns
                     WHERE table_schema = $1 AND table_name = $2 ORDER BY column_name",
                    &[&postgres::schema_name(&aggregator), &table.name()],
                )
                .unwrap()
                .iter()
                .map(|r| {
                    format!(
                        "{} {} {}",
                        r.get::<_, String>(0),
                        r.get::<_, String>(1),
                        r.get::<_, bool>(2)
                    )
                })
                .collect();
            let expected = defined(table, |ty| match ty {
                Type::Int => "bigint",
                Type::Text => "text",
                Type::Bool => "boolean",
            });
            assert_eq!(real, expected, "PostgreSQL table {}", table.name());
        }
    }

    /// A row of `table` for `batch_id`: every column a value from `n`
    /// (and `version` in its text), the token `tok-{n}`.
    fn row(table: &dyn Shape, batch_id: i64, n: i64, version: &str) -> Vec<Value<'static>> {
        table.columns()[..table.bound()]
            .iter()
            .map(|(name, ty, _)| match (*name, ty) {
                ("batch_id", _) => Value::Int(batch_id),
                ("token", _) => Value::from(format!("tok-{n}")),
                (_, tables::Type::Int) => Value::Int(n),
                (_, tables::Type::Bool) => Value::Bool(true),
                (_, tables::Type::Text) => Value::from(format!("{name}-{n}-{version}")),
            })
            .collect()
    }

    /// Writes, rewrites and repeats rows through `store`, and reads back
    /// with `read(sql)` the one text a query gives.
    fn rows_kept_again(store: &mut dyn Store, read: &mut dyn FnMut(&str) -> String) {
        let batch: SettlementBatch = serde_json::from_value(serde_json::json!({
            "id": "7",
            "token": "sb_0f8fad5b-d9cb-469f-a165-70867728950e",
            "file_name": "",
            "date": "2026-11-01T00:00:00Z",
            "status": "BATCH_OPEN",
            "version": 1,
            "created_by_job_id": "job_1",
            "partner_id": "partner_1",
            "created_at": "2026-11-01T00:00:00Z"
        }))
        .unwrap();
        store.upsert_batches(&[batch]).unwrap();
        let table = &tables::TRANSACTIONS;
        // New rows, enough for several chunks of a bulk backend.
        let first: Vec<_> = (0..9_000).map(|n| row(table, 7, n, "a")).collect();
        store.write(table, &first).unwrap();
        store.commit(&[]).unwrap();
        // Kept rows again, changed, beside new ones; a row twice.
        let mut again: Vec<_> = (8_990..9_010).map(|n| row(table, 7, n, "b")).collect();
        again.push(row(table, 7, 9_005, "b"));
        store.write(table, &again).unwrap();
        store.commit(&[]).unwrap();
        assert_eq!(store.count_rows(7, Kind::Transactions).unwrap(), 9_010);
        assert_eq!(
            read("SELECT status FROM transactions WHERE token = 'tok-8995'"),
            "status-8995-b"
        );
        assert_eq!(
            read("SELECT status FROM transactions WHERE token = 'tok-100'"),
            "status-100-a"
        );
        // Rolled back: nothing of it is kept, and the next write is whole.
        store.write(table, &[row(table, 7, 20_000, "c")]).unwrap();
        store.rollback();
        store.write(table, &[row(table, 7, 20_001, "c")]).unwrap();
        store.commit(&[]).unwrap();
        assert_eq!(store.count_rows(7, Kind::Transactions).unwrap(), 9_011);
        // A batch walked again: whole chunks of kept rows, each refused by
        // a bulk backend's straight copy and merged through staging.
        let walked_again: Vec<_> = (0..6_000).map(|n| row(table, 7, n, "e")).collect();
        store.write(table, &walked_again).unwrap();
        store.commit(&[]).unwrap();
        assert_eq!(store.count_rows(7, Kind::Transactions).unwrap(), 9_011);
        assert_eq!(
            read("SELECT status FROM transactions WHERE token = 'tok-5999'"),
            "status-5999-e"
        );
        // A row of a batch not kept breaks a foreign key: refused.
        let orphan = row(table, 8, 30_000, "d");
        let refused = store
            .write(table, std::slice::from_ref(&orphan))
            .and_then(|()| store.commit(&[]));
        assert!(refused.is_err());
        store.rollback();
        assert_eq!(store.count_rows(8, Kind::Transactions).unwrap(), 0);
    }

    #[test]
    fn rows_kept_again_are_updated_and_repeats_kept_once_on_both_backends() {
        let aggregator = AggregatorId::parse("agg_rows").unwrap();
        let dir = aggpay_testkit::TempDir::new("aggpay-sync-rows");
        let path = dir.join("m.db");
        {
            let mut store = open(&Target::Sqlite(path.clone()), &aggregator, &mut drop).unwrap();
            let conn = rusqlite::Connection::open(&path).unwrap();
            rows_kept_again(store.as_mut(), &mut |sql| {
                conn.query_row(sql, [], |r| r.get(0)).unwrap()
            });
        }
        let Some(pg) = aggpay_testkit::PgCluster::shared() else {
            return;
        };
        let url = pg.database("rows");
        let mut store = open(&Target::Postgres(url.clone()), &aggregator, &mut drop).unwrap();
        let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
        let schema = postgres::schema_name(&aggregator);
        rows_kept_again(store.as_mut(), &mut |sql| {
            client
                .query_one(&sql.replace("FROM ", &format!("FROM {schema}.")), &[])
                .unwrap()
                .get(0)
        });
    }
}
