//! Running the binary and reading its database.

use std::path::Path;
use std::process::{Command, Output};

use aggpay_mock::MockServer;
use rusqlite::Connection;
use serde_json::Value;

/// The command for a sync of `db` from `server`.
pub fn command(server: &MockServer, db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_aggpay-sync"));
    cmd.args(["--db", &db.display().to_string(), "--json"])
        .env("AGGPAY_BASE_URL", server.url())
        .env("AGGPAY_SECRET_KEY", server.secret_key().expose())
        .env("AGGPAY_AGGREGATOR_ID", server.aggregator_id().as_str())
        .env_remove("AGGPAY_CA_CERT");
    cmd
}

/// Runs a sync to its end: the exit code, the JSON summary (or null) and
/// stderr.
pub fn sync(server: &MockServer, db: &Path) -> (i32, Value, String) {
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

/// Everything the mirror holds, in a canonical order, the tool's own
/// bookkeeping (times, positions) left out: two databases that mirror
/// the same data have the same dump.
pub fn dump(db: &Path) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    let mut out = Vec::new();
    for (table, skip) in [
        ("batches", &["first_seen_at", "refreshed_at"][..]),
        ("transactions", &[][..]),
        ("payouts", &[][..]),
    ] {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY token"))
            .unwrap();
        let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
        let rows = stmt
            .query_map([], |r| {
                let mut line = format!("{table}:");
                for (i, name) in names.iter().enumerate() {
                    if skip.contains(&name.as_str()) {
                        continue;
                    }
                    let v: rusqlite::types::Value = r.get(i)?;
                    line.push_str(&format!(" {name}={v:?}"));
                }
                Ok(line)
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    let mut stmt = conn
        .prepare(
            "SELECT batch_token, kind, verified_at IS NOT NULL FROM walks ORDER BY batch_token, kind",
        )
        .unwrap();
    let walks = stmt
        .query_map([], |r| {
            Ok(format!(
                "walk: {} {} verified={}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?
            ))
        })
        .unwrap();
    out.extend(walks.map(Result::unwrap));
    out
}

/// One value of one query.
pub fn scalar(db: &Path, sql: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

/// Final batches whose rows are not all verified.
pub fn unverified_final_batches(db: &Path) -> i64 {
    scalar(
        db,
        "SELECT count(*) FROM batches b WHERE b.status IN ('BATCH_COMPLETED', 'BATCH_FAILED')
         AND (SELECT count(*) FROM walks w WHERE w.batch_token = b.token AND w.verified_at IS NOT NULL) < 2",
    )
}
