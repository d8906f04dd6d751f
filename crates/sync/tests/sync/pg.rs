//! What only PostgreSQL has: aggregators sharing a database, the run lock
//! of a server, schemas it must leave alone, a URL with a password, and
//! the same mirror as SQLite's.

use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::{PgCluster, TempDir};

use crate::support::{Db, command, finish, sync};

fn mock(seed: u64) -> MockServer {
    MockServer::start(
        MockConfig::new()
            .seed(seed)
            .batches(6)
            .max_batch_transactions(80),
    )
    .unwrap()
}

/// A database of the test's own in the binary's cluster: its name.
fn mirror(pg: &PgCluster) -> String {
    let name = pg.fresh("mirror");
    pg.database(&name);
    name
}

#[test]
fn aggregators_share_a_database_a_schema_each_equal_to_their_sqlite_mirror() {
    let Some(pg) = PgCluster::shared() else {
        return;
    };
    let dir = TempDir::new("aggpay-sync-shared");
    let (a, b) = (mock(11), mock(12));
    assert_ne!(a.aggregator_id(), b.aggregator_id());
    let name = mirror(pg);
    let (pa, pb) = (Db::pg_at(&pg.url(&name), &a), Db::pg_at(&pg.url(&name), &b));
    for (server, db) in [(&a, &pa), (&b, &pb)] {
        let (code, summary, err) = sync(server, db);
        assert_eq!(code, 0, "{err}");
        assert_eq!(summary["left"].as_array().unwrap().len(), 0, "{summary}");
    }
    // Each schema holds its aggregator's rows only, as its SQLite mirror.
    for (server, db, file) in [(&a, &pa, "a.db"), (&b, &pb, "b.db")] {
        let lite = Db::sqlite(dir.join(file));
        assert_eq!(sync(server, &lite).0, 0);
        let dump = db.dump();
        assert!(dump.len() > 100, "{}", dump.len());
        assert_eq!(dump, lite.dump());
        let id = server.aggregator_id().as_str();
        assert_eq!(
            db.scalar(&format!(
                "SELECT count(*) FROM transactions WHERE aggregator_id <> '{id}'"
            )),
            0
        );
    }
    let schemas = pg.sql(
        &name,
        "SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname LIKE 'aggpay_%'",
    );
    assert_eq!(schemas.split(',').count(), 2, "{schemas}");
}

#[test]
fn a_schema_in_use_is_refused_and_a_lock_freed_soon_is_waited_for() {
    let Some(pg) = PgCluster::shared() else {
        return;
    };
    let server = mock(13);
    let db = Db::pg(pg, "mirror", &server);
    let Db::Pg { url, schema } = &db else {
        unreachable!()
    };
    // Another run holds the aggregator's lock (a session of its own).
    let mut holder = postgres::Client::connect(url, postgres::NoTls).unwrap();
    holder
        .execute("SELECT pg_advisory_lock(hashtext($1))", &[schema])
        .unwrap();
    let (code, _, err) = sync(&server, &db);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("in use by another aggpay-sync run"), "{err}");
    // Another aggregator in the same database is not held up.
    let other = mock(14);
    let (code, _, err) = sync(&other, &Db::pg_at(url, &other));
    assert_eq!(code, 0, "{err}");
    // Freed a moment after the run starts (as by a run killed a moment
    // ago, whose server process has not yet noticed): waited for, taken.
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(1));
        drop(holder);
    });
    let (code, _, err) = sync(&server, &db);
    release.join().unwrap();
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_foreign_or_newer_schema_is_refused_and_left_unchanged() {
    let Some(pg) = PgCluster::shared() else {
        return;
    };
    let server = mock(15);
    let name = mirror(pg);
    let db = Db::pg_at(&pg.url(&name), &server);
    let Db::Pg { schema, .. } = &db else {
        unreachable!()
    };
    // A schema of the same name that another program made.
    pg.sql(
        &name,
        &format!(
            "CREATE SCHEMA {schema}; CREATE TABLE {schema}.ledger (n int); INSERT INTO {schema}.ledger VALUES (7)"
        ),
    );
    let (code, _, err) = sync(&server, &db);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not aggpay-sync's"), "{err}");
    assert_eq!(
        pg.sql(
            &name,
            &format!(
                "SELECT string_agg(tablename, ',') FROM pg_tables WHERE schemaname = '{schema}'"
            )
        ),
        "ledger"
    );
    assert_eq!(
        pg.sql(&name, &format!("SELECT n FROM {schema}.ledger")),
        "7"
    );

    // A schema a newer aggpay-sync wrote.
    pg.sql(&name, &format!("DROP SCHEMA {schema} CASCADE"));
    assert_eq!(sync(&server, &db).0, 0);
    pg.sql(&name, &format!("UPDATE {schema}.meta SET version = 99"));
    let before = db.dump();
    let (code, _, err) = sync(&server, &db);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("newer than this aggpay-sync knows"), "{err}");
    assert_eq!(
        pg.sql(&name, &format!("SELECT version FROM {schema}.meta")),
        "99"
    );
    assert_eq!(db.dump(), before);
}

#[test]
fn a_password_in_the_url_is_never_shown() {
    let Some(pg) = PgCluster::shared() else {
        return;
    };
    let server = mock(16);
    let secret = "hunter2-pg-password";
    // Trust authentication ignores the password; the tool must still
    // keep it to itself.
    let url = pg
        .database(&pg.fresh("mirror"))
        .replacen("aggpay@", &format!("aggpay:{secret}@"), 1);
    let db = Db::pg_at(&url, &server);
    let out = command(&server, &db).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, _, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    assert!(!text.contains(secret), "{text}");
    // Nor in the runs table.
    assert_eq!(
        db.scalar(&format!(
            "SELECT count(*) FROM runs WHERE summary LIKE '%{secret}%'"
        )),
        0
    );
    assert_eq!(db.scalar("SELECT count(*) FROM runs"), 1);
    // A server that is not there: the error names the URL, not its password.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let gone = format!("postgres://aggpay:{secret}@127.0.0.1:{port}/mirror?password={secret}");
    let out = command(&server, &Db::pg_at(&gone, &server))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("<redacted>"), "{text}");
    assert!(!text.contains(secret), "{text}");
}
