//! The PostgreSQL fixture starts a real server, answers SQL, and stops.

use aggpay_testkit::PgCluster;

#[test]
fn a_cluster_starts_answers_and_stops() {
    let Some(pg) = PgCluster::start() else { return };
    let url = pg.database("fixture");
    assert!(url.ends_with("/fixture"));
    assert_eq!(pg.sql("fixture", "SELECT 40 + 2"), "42");
    let port = pg.port();
    drop(pg);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the server still listens after the drop"
    );
}

/// Run in a child process by the test below (`--ignored --exact`):
/// starts a cluster with the environment it was given.
#[test]
#[ignore = "a child process of missing_binaries_fail_saying_how_to_install_them"]
fn start_in_a_child() {
    drop(PgCluster::start());
}

/// Run in a child process by the test below (`--ignored --exact`): takes
/// the shared cluster, makes a database in it, prints the port and exits
/// without dropping it.
#[test]
#[ignore = "a child process of the_shared_cluster_stops_after_its_process"]
fn shared_in_a_child() {
    let Some(pg) = PgCluster::shared() else {
        println!("skipped");
        return;
    };
    let again = PgCluster::shared().unwrap();
    assert_eq!(pg.port(), again.port(), "one cluster per process");
    let (a, b) = (pg.fresh("db"), pg.fresh("db"));
    assert_ne!(a, b);
    pg.database(&a);
    assert_eq!(pg.sql(&a, "SELECT 40 + 2"), "42");
    println!("port={}", pg.port());
}

/// The shared cluster is stopped once its process has exited: a static is
/// never dropped, and no server may outlive the tests.
#[test]
fn the_shared_cluster_stops_after_its_process() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "shared_in_a_child", "--nocapture"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    if text.contains("skipped") {
        // The child said why on its stderr; so does this test.
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        return;
    }
    let port: u16 = text
        .split("port=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {text}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "the shared cluster on port {port} still listens 30 s after its process exited"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Without the server binaries the tests fail, saying how to install
/// them; the opt-out skips, saying so. Nothing passes silently.
#[test]
fn missing_binaries_fail_saying_how_to_install_them() {
    let empty = aggpay_testkit::TempDir::new("aggpay-pg-none");
    let child = |skip: bool| {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--ignored",
            "--exact",
            "start_in_a_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("AGGPAY_PG_BIN", empty.path());
        if skip {
            cmd.env(aggpay_testkit::SKIP_POSTGRES, "1");
        } else {
            cmd.env_remove(aggpay_testkit::SKIP_POSTGRES);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    let (passed, text) = child(false);
    assert!(!passed, "{text}");
    assert!(text.contains("apt-get install -y postgresql"), "{text}");
    let (passed, text) = child(true);
    assert!(passed, "{text}");
    assert!(text.contains("PostgreSQL test skipped"), "{text}");
}
