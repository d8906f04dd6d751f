//! A setup that does not work creates nothing: no silent mock, no
//! database bound to a wrong aggregator, the key from a file, the summary
//! on every exit.

use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::{PgCluster, TempDir};

use crate::support::{Db, command, finish};

fn small() -> MockServer {
    MockServer::start(
        MockConfig::new()
            .seed(5)
            .batches(4)
            .max_batch_transactions(40),
    )
    .unwrap()
}

/// Without a base URL and without `--mock`: exit 2, nothing created, the
/// message names both ways, the JSON summary says why.
fn nothing_without_a_server(server: &MockServer, db: &Db) {
    let out = command(server, db)
        .env_remove("AGGPAY_BASE_URL")
        .output()
        .unwrap();
    let (code, summary, err) = finish(out);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--base-url") && err.contains("--mock"),
        "{err}"
    );
    assert!(
        !db.path_exists(),
        "a run without a server created the mirror"
    );
    assert_eq!(summary["exit_code"], 2, "{summary}");
    assert!(
        summary["error"]
            .as_str()
            .unwrap()
            .contains("no server given"),
        "{summary}"
    );
}

#[test]
fn no_base_url_creates_nothing_on_either_backend() {
    let server = small();
    let dir = TempDir::new("aggpay-sync-no-server");
    nothing_without_a_server(&server, &Db::sqlite(dir.join("m.db")));
    if let Some(pg) = PgCluster::shared() {
        nothing_without_a_server(&server, &Db::pg(pg, "finance", &server));
    }
}

#[test]
fn a_wrong_aggregator_or_prefix_creates_nothing_and_names_the_cause() {
    let server = small();
    let dir = TempDir::new("aggpay-sync-wrong-setup");
    let db = Db::sqlite(dir.join("m.db"));
    let out = command(&server, &db)
        .env("AGGPAY_AGGREGATOR_ID", "agg_0000000000000000000000")
        .output()
        .unwrap();
    let (code, summary, err) = finish(out);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is not the aggregator the key belongs to"),
        "{err}"
    );
    assert_eq!(summary["exit_code"], 2);
    assert!(!db.path_exists());

    let out = command(&server, &db)
        .env("AGGPAY_BASE_URL", format!("{}/v1", server.url()))
        .output()
        .unwrap();
    let (code, _, err) = finish(out);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("drop /v1 from the base URL"), "{err}");
    assert!(!db.path_exists());
}

#[test]
fn the_key_comes_from_a_file_and_the_command_line_is_warned_about() {
    let server = small();
    let dir = TempDir::new("aggpay-sync-key-file");
    let key = dir.join("key");
    std::fs::write(&key, format!("{}\n", server.secret_key().expose())).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let db = Db::sqlite(dir.join("m.db"));
    let out = command(&server, &db)
        .env_remove("AGGPAY_SECRET_KEY")
        .args(["--key-file", &key.display().to_string()])
        .output()
        .unwrap();
    let (code, _, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    #[cfg(unix)]
    assert!(err.contains("mode 0644): chmod 600"), "{err}");
    assert!(!err.contains("--key puts"), "{err}");

    // From standard input.
    let mut child = command(&server, &db)
        .env_remove("AGGPAY_SECRET_KEY")
        .args(["--key-file", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{}", server.secret_key().expose()).unwrap();
    }
    let (code, _, err) = finish(child.wait_with_output().unwrap());
    assert_eq!(code, 0, "{err}");

    // On the command line: taken, with a warning naming the file; never
    // printed.
    let out = command(&server, &db)
        .env_remove("AGGPAY_SECRET_KEY")
        .args(["--key", server.secret_key().expose()])
        .output()
        .unwrap();
    let (code, _, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: --key puts the secret"), "{err}");
    assert!(err.contains("--key-file"), "{err}");
    assert!(!err.contains(server.secret_key().expose()), "{err}");
}

/// A sync of `server` into `db_url` (given on the command line, or in
/// `AGGPAY_SYNC_DB` when `from_env`).
fn sync_into(server: &MockServer, db_url: &str, from_env: bool) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_aggpay-sync"));
    cmd.arg("--json")
        .env("AGGPAY_BASE_URL", server.url())
        .env("AGGPAY_SECRET_KEY", server.secret_key().expose())
        .env("AGGPAY_AGGREGATOR_ID", server.aggregator_id().as_str())
        .env_remove("AGGPAY_CA_CERT")
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE");
    if from_env {
        cmd.env("AGGPAY_SYNC_DB", db_url);
    } else {
        cmd.env_remove("AGGPAY_SYNC_DB").args(["--db", db_url]);
    }
    cmd
}

#[test]
fn a_database_password_comes_from_libpq_places_and_on_the_command_line_is_warned_about() {
    let Some(pg) = PgCluster::shared() else {
        return;
    };
    let server = small();
    let name = pg.fresh("pw");
    let url = pg.database(&name);
    pg.require_password(&name, "db-s3cret");
    let dir = TempDir::new("aggpay-sync-pgpass");
    // Nothing given: refused by the server, exit 2.
    let (code, _, err) = finish(sync_into(&server, &url, false).output().unwrap());
    assert_eq!(code, 2, "{err}");
    // In the URL on the command line: works, with a warning, never shown.
    let typed = url.replacen("aggpay@", "aggpay:db-s3cret@", 1);
    let (code, _, err) = finish(sync_into(&server, &typed, false).output().unwrap());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("carries a password") && err.contains("PGPASSWORD"),
        "{err}"
    );
    assert!(!err.contains("db-s3cret"), "{err}");
    // In the URL from the environment: no warning.
    let (code, _, err) = finish(sync_into(&server, &typed, true).output().unwrap());
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("carries a password"), "{err}");
    // PGPASSWORD.
    let out = sync_into(&server, &url, false)
        .env("PGPASSWORD", "db-s3cret")
        .output()
        .unwrap();
    let (code, _, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    // A password file, private: used; readable by others: not used, said so.
    let pgpass = dir.join("pgpass");
    std::fs::write(
        &pgpass,
        format!("# test\n127.0.0.1:{}:{name}:aggpay:db-s3cret\n", pg.port()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = sync_into(&server, &url, false)
        .env("PGPASSFILE", &pgpass)
        .output()
        .unwrap();
    let (code, _, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = sync_into(&server, &url, false)
        .env("PGPASSFILE", &pgpass)
        .output()
        .unwrap();
    let (code, _, err) = finish(out);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("so it is not used"), "{err}");
}
