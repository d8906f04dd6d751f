//! The database refuses what it must not alter.

use super::*;
use crate::store::Store;
use aggpay::AggregatorId;

fn temp() -> aggpay_testkit::TempDir {
    aggpay_testkit::TempDir::new("aggpay-sync-db")
}

#[test]
fn a_new_database_is_created_at_the_current_version() {
    let dir = temp();
    let path = dir.join("m.db");
    drop(Sqlite::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    // Opened again: nothing to migrate, nothing refused.
    drop(Sqlite::open(&path).unwrap());
}

#[test]
fn a_newer_database_is_refused_unchanged() {
    let dir = temp();
    let path = dir.join("newer.db");
    drop(Sqlite::open(&path).unwrap());
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 1))
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Sqlite::open(&path).unwrap_err().to_string();
    assert!(err.contains("newer"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was altered"
    );
}

#[test]
fn another_programs_database_and_other_files_are_refused_unchanged() {
    let dir = temp();
    let path = dir.join("other.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE notes (x TEXT)").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Sqlite::open(&path).unwrap_err().to_string();
    assert!(err.contains("is not aggpay-sync's"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);

    let text = dir.join("notes.txt");
    std::fs::write(&text, "hello, this is not SQLite at all, just some text").unwrap();
    let err = Sqlite::open(&text).unwrap_err().to_string();
    assert!(err.contains("not a SQLite database"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&text).unwrap(),
        "hello, this is not SQLite at all, just some text"
    );
}

#[test]
fn one_run_at_a_time() {
    let dir = temp();
    let path = dir.join("busy.db");
    let first = Sqlite::open(&path).unwrap();
    let err = Sqlite::open(&path).unwrap_err().to_string();
    assert!(err.contains("in use"), "{err}");
    drop(first);
    drop(Sqlite::open(&path).unwrap());
}

#[test]
fn one_aggregator_per_database() {
    let dir = temp();
    let path = dir.join("agg.db");
    let mut db = crate::store::sql::Sql::new(Sqlite::open(&path).unwrap());
    let one = AggregatorId::parse("agg_one").unwrap();
    db.bind_source("http://a", &one).unwrap();
    db.bind_source("http://b", &one).unwrap();
    let err = db
        .bind_source("http://a", &AggregatorId::parse("agg_two").unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("agg_one"), "{err}");
}

#[test]
fn the_database_is_its_owners_only_and_enforces_foreign_keys() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp();
    let path = dir.join("private.db");
    let db = Sqlite::open(&path).unwrap();
    for file in [path.clone(), lock_path(&path)] {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    let on: i64 = db
        .conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(on, 1);
    // A row of a batch the mirror does not hold is refused.
    let err = db
        .conn
        .execute_batch(
            "INSERT INTO walks (batch_token, kind) VALUES ('sb_nowhere', 'transactions')",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("FOREIGN KEY"), "{err}");
}

#[test]
fn a_version_2_mirror_keeps_its_payouts_with_their_element_rebuilt() {
    let dir = temp();
    let path = dir.join("v2.db");
    {
        let conn = Connection::open(&path).unwrap();
        for sql in &schema::MIGRATIONS[..2] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(&format!(
            "PRAGMA application_id = {}; PRAGMA user_version = 2;
             INSERT INTO batches VALUES ('sb_1', 7, 'f', '2024-01-01', 'BATCH_COMPLETED', 1,
                 'job_1', 'partner_1', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z',
                 '2024-01-01T00:00:00Z');
             INSERT INTO payouts VALUES ('stxn_1', 41, 7, 'sb_1', 'agg_1', 'am_1', 'mer_1',
                 'SETTLEMENT_TXN_POSTED', 1, 100, 2, 98, 0, 0, 0, 0, 'acct_1', 'acct_2', '',
                 '2024-01-01T00:00:00Z', '2024-01-01T00:10:00Z');",
            schema::APPLICATION_ID
        ))
        .unwrap();
    }
    drop(Sqlite::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let (net, element): (i64, String) = conn
        .query_row(
            "SELECT net_amount, element FROM payouts WHERE token = 'stxn_1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(net, 98);
    let element: serde_json::Value = serde_json::from_str(&element).unwrap();
    assert_eq!(element["id"], "41");
    assert_eq!(element["net_amount"], "98");
    assert_eq!(element["token"], "stxn_1");
    // The element reads back as the reference's payout.
    let payout: aggpay::SettlementPayout = serde_json::from_value(element).unwrap();
    assert_eq!(payout.net_amount.map(|a| a.get()), Some(98));
    assert_eq!(payout.key(), "stxn_1");
}

#[test]
fn a_version_3_mirror_keeps_its_rail_merchants_their_ids_as_text() {
    let dir = temp();
    let path = dir.join("v3.db");
    {
        let conn = Connection::open(&path).unwrap();
        for sql in &schema::MIGRATIONS[..3] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(&format!(
            "PRAGMA application_id = {}; PRAGMA user_version = 3;
             INSERT INTO rail_merchants VALUES ('mer_1', 9001, 'partner_1', 'r1', 'Active',
                 'CNIC', '1', 'A shop', 'CNIC', '1', '{{}}', '{{}}', '{{}}', '{{}}',
                 '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z');",
            schema::APPLICATION_ID
        ))
        .unwrap();
    }
    drop(Sqlite::open(&path).unwrap());
    let conn = Connection::open(&path).unwrap();
    let (id, name): (String, String) = conn
        .query_row(
            "SELECT id, name FROM rail_merchants WHERE token = 'mer_1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((id.as_str(), name.as_str()), ("9001", "A shop"));
    // A UUID, as a server that does not give numeric ids sends it.
    conn.execute(
        "UPDATE rail_merchants SET id = '4f6c2a9e-1b7d-4c3e-9a2f-0d5e8b7c6a41'",
        [],
    )
    .unwrap();
}
