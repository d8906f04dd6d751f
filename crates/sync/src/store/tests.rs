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
    assert_eq!(store.count_rows(7, RowKind::Transactions).unwrap(), 9_010);
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
    assert_eq!(store.count_rows(7, RowKind::Transactions).unwrap(), 9_011);
    // A batch walked again: whole chunks of kept rows, each refused by
    // a bulk backend's straight copy and merged through staging.
    let walked_again: Vec<_> = (0..6_000).map(|n| row(table, 7, n, "e")).collect();
    store.write(table, &walked_again).unwrap();
    store.commit(&[]).unwrap();
    assert_eq!(store.count_rows(7, RowKind::Transactions).unwrap(), 9_011);
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
    assert_eq!(store.count_rows(8, RowKind::Transactions).unwrap(), 0);
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
