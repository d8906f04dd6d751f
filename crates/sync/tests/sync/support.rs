//! Running the binary and reading its mirror, on either backend: a SQLite
//! file, or a schema of a real PostgreSQL server started for the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use aggpay_mock::MockServer;
use aggpay_testkit::{PgCluster, RawServer, respond};
use rusqlite::Connection;
use serde_json::Value;

/// A mirror under test.
pub enum Db {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database; the schema of the aggregator mirrored.
    Pg { url: String, schema: String },
}

impl Db {
    /// A SQLite file.
    pub fn sqlite(path: impl AsRef<Path>) -> Self {
        Db::Sqlite(path.as_ref().to_owned())
    }

    /// A new database of `pg` (named from `name`), for `server`'s aggregator.
    pub fn pg(pg: &PgCluster, name: &str, server: &MockServer) -> Self {
        Self::pg_at(&pg.database(&pg.fresh(name)), server)
    }

    /// The database at `url`, for `server`'s aggregator.
    pub fn pg_at(url: &str, server: &MockServer) -> Self {
        Db::Pg {
            url: url.to_owned(),
            schema: format!(
                "aggpay_{}",
                server.aggregator_id().as_str().to_ascii_lowercase()
            ),
        }
    }

    /// What `--db` says.
    pub fn arg(&self) -> String {
        match self {
            Db::Sqlite(path) => path.display().to_string(),
            Db::Pg { url, .. } => url.clone(),
        }
    }

    /// The rows of a query, every value as text (NULL as "NULL", booleans
    /// as 0 or 1, as SQLite keeps them).
    pub fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        match self {
            Db::Sqlite(path) => {
                let conn = Connection::open(path).unwrap();
                // A run may be writing (the kill test reads while it does).
                conn.busy_timeout(std::time::Duration::from_secs(10))
                    .unwrap();
                let mut stmt = conn.prepare(sql).unwrap();
                let n = stmt.column_count();
                stmt.query_map([], |r| {
                    (0..n)
                        .map(|i| {
                            Ok(match r.get::<_, rusqlite::types::Value>(i)? {
                                rusqlite::types::Value::Null => "NULL".to_owned(),
                                rusqlite::types::Value::Integer(n) => n.to_string(),
                                rusqlite::types::Value::Real(f) => f.to_string(),
                                rusqlite::types::Value::Text(t) => t,
                                rusqlite::types::Value::Blob(b) => format!("{b:?}"),
                            })
                        })
                        .collect()
                })
                .unwrap()
                .map(Result::unwrap)
                .collect()
            }
            Db::Pg { url, schema } => {
                let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
                client
                    .batch_execute(&format!("SET search_path TO {schema}"))
                    .unwrap();
                client
                    .simple_query(sql)
                    .unwrap()
                    .into_iter()
                    .filter_map(|m| match m {
                        postgres::SimpleQueryMessage::Row(r) => Some(
                            (0..r.len())
                                .map(|i| match r.get(i) {
                                    None => "NULL".to_owned(),
                                    Some("t" | "true") => "1".to_owned(),
                                    Some("f" | "false") => "0".to_owned(),
                                    Some(v) => v.to_owned(),
                                })
                                .collect(),
                        ),
                        _ => None,
                    })
                    .collect()
            }
        }
    }

    /// True when a run created anything: the SQLite file (or its lock),
    /// or the aggregator's PostgreSQL schema.
    pub fn path_exists(&self) -> bool {
        match self {
            Db::Sqlite(path) => {
                let lock = format!("{}.lock", path.display());
                path.exists() || Path::new(&lock).exists()
            }
            Db::Pg { url, schema } => {
                let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
                let row = client
                    .query_one(
                        "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
                        &[schema],
                    )
                    .unwrap();
                row.get::<_, i64>(0) > 0
            }
        }
    }

    /// One integer of one query.
    pub fn scalar(&self, sql: &str) -> i64 {
        self.rows(sql)[0][0].parse().unwrap()
    }

    /// The runs recorded: (unfinished, finished); none before the first
    /// run made the database. Read only while no sync runs.
    pub fn runs(&self) -> (i64, i64) {
        let missing = matches!(self, Db::Sqlite(path) if !path.exists());
        if missing || self.columns("runs").is_empty() {
            return (0, 0);
        }
        let row =
            &self.rows("SELECT count(*) - count(finished_at), count(finished_at) FROM runs")[0];
        (row[0].parse().unwrap(), row[1].parse().unwrap())
    }

    /// Column names of a table, sorted (the backends order them apart).
    fn columns(&self, table: &str) -> Vec<String> {
        let mut names: Vec<String> = match self {
            Db::Sqlite(_) => self
                .rows(&format!("SELECT name FROM pragma_table_info('{table}')"))
                .into_iter()
                .map(|r| r[0].clone())
                .collect(),
            Db::Pg { schema, .. } => self
                .rows(&format!(
                    "SELECT column_name FROM information_schema.columns
                     WHERE table_schema = '{schema}' AND table_name = '{table}'"
                ))
                .into_iter()
                .map(|r| r[0].clone())
                .collect(),
        };
        names.sort();
        names
    }

    /// Everything the mirror holds, in a canonical order, the tool's own
    /// bookkeeping (times, positions) left out: two mirrors of the same
    /// data, on either backend, have the same dump.
    pub fn dump(&self) -> Vec<String> {
        let mut out = Vec::new();
        for table in [
            "batches",
            "transactions",
            "payouts",
            "refunds",
            "merchants",
            "rail_merchants",
        ] {
            let columns: Vec<String> = self
                .columns(table)
                .into_iter()
                .filter(|c| !matches!(c.as_str(), "first_seen_at" | "refreshed_at"))
                .collect();
            let sql = format!(
                "SELECT {} FROM {table} ORDER BY token",
                columns
                    .iter()
                    .map(|c| format!("CAST({c} AS TEXT)"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for row in self.rows(&sql) {
                let fields: Vec<String> = columns
                    .iter()
                    .zip(row)
                    .map(|(c, v)| format!("{c}={v}"))
                    .collect();
                out.push(format!("{table}: {}", fields.join(" ")));
            }
        }
        for row in self.rows(
            "SELECT batch_token, kind, CASE WHEN verified_at IS NULL THEN 0 ELSE 1 END FROM walks ORDER BY batch_token, kind",
        ) {
            out.push(format!("walk: {} {} verified={}", row[0], row[1], row[2]));
        }
        out
    }

    /// Final batches whose rows are not all verified.
    pub fn unverified_final_batches(&self) -> i64 {
        self.scalar(
            "SELECT count(*) FROM batches b WHERE b.status IN ('BATCH_COMPLETED', 'BATCH_FAILED')
             AND (SELECT count(*) FROM walks w WHERE w.batch_token = b.token AND w.verified_at IS NOT NULL) < 2",
        )
    }
}

/// Runs `test` on a SQLite file and on a PostgreSQL database (unless the
/// PostgreSQL tests are skipped on purpose: `AGGPAY_SKIP_POSTGRES`).
pub fn on_both(name: &str, server: &MockServer, test: impl Fn(&Db)) {
    let dir = aggpay_testkit::TempDir::new(name);
    test(&Db::sqlite(dir.join("m.db")));
    if let Some(pg) = PgCluster::shared() {
        test(&Db::pg(pg, "mirror", server));
    }
}

/// The command for a sync of `db` from `server`.
pub fn command(server: &MockServer, db: &Db) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_aggpay-sync"));
    cmd.args(["--db", &db.arg(), "--json"])
        .env("AGGPAY_BASE_URL", server.url())
        .env("AGGPAY_SECRET_KEY", server.secret_key().expose())
        .env("AGGPAY_AGGREGATOR_ID", server.aggregator_id().as_str())
        .env_remove("AGGPAY_CA_CERT")
        .env_remove("AGGPAY_SYNC_DB");
    cmd
}

/// Runs a sync to its end: the exit code, the JSON summary (or null) and
/// stderr.
pub fn sync(server: &MockServer, db: &Db) -> (i32, Value, String) {
    finish(command(server, db).output().unwrap())
}

pub fn finish(out: Output) -> (i32, Value, String) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        summary,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A proxy to `server` that lets `edit` change each answer: the request
/// target, and the status and JSON body the server gave.
pub fn proxy(
    server: &MockServer,
    edit: impl Fn(&str, &mut u16, &mut Value) + Send + Sync + 'static,
) -> RawServer {
    let upstream = server.url().to_owned();
    let key = server.secret_key().expose().to_owned();
    RawServer::start(move |request, out| {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut answer = agent
            .get(format!("{upstream}{}", request.target))
            .header(aggpay_internal::syntax::KEY_HEADER, key.as_str())
            .call()
            .unwrap();
        let mut status = answer.status().as_u16();
        let mut body: Value =
            serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
        edit(&request.target, &mut status, &mut body);
        let text = match body {
            Value::String(raw) => raw,
            other => other.to_string(),
        };
        respond(out, status, &text);
    })
}
