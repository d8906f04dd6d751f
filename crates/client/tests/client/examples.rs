//! The examples run as a user runs them: separate processes configured by
//! the environment, against the mock, a redirecting server and a server
//! behind a private CA.

use std::path::PathBuf;
use std::process::{Command, Output};

use aggpay::*;
use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::{TempDir, TestCa, TlsServer};

use crate::support::{Act, KEY, Scripted, client_for, json};

/// The example binary cargo built beside this test binary
/// (`target/<profile>/examples/NAME`).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let path = profile.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: `cargo test` builds the examples",
        path.display()
    );
    path
}

fn run(mut command: Command) -> Output {
    command.output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `rotate_key` against an external mock, with the mock's key.
fn rotate_key(server: &MockServer, args: &[&str]) -> Command {
    let mut command = Command::new(example("rotate_key"));
    command
        .args(args)
        .env_clear()
        .env(ENV_BASE_URL, server.url())
        .env(ENV_AGGREGATOR_ID, server.aggregator_id().as_str())
        .env(ENV_SECRET_KEY, server.secret_key().expose());
    command
}

/// The current secret of the rotatable key.
fn secret_of(server: &MockServer, id: &AccessKeyId) -> String {
    client_for(server)
        .access_keys(&KeyQuery::new())
        .map(Result::unwrap)
        .find(|k| k.access_key_id() == Some(id))
        .unwrap()
        .secret
        .expose()
        .to_owned()
}

#[test]
fn rotate_key_stores_the_new_secret_safely() {
    let server = MockServer::start(MockConfig::new()).unwrap();
    let id = server.info().access_key_id.unwrap();
    let dir = TempDir::new("aggpay-rotate");
    let dest = dir.join("secret.txt");
    let dest_arg = dest.to_str().unwrap();
    let before = secret_of(&server, &id);
    let out = run(rotate_key(&server, &[dest_arg, id.as_str()]));
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    let stored = std::fs::read_to_string(&dest).unwrap();
    assert_eq!(stored, secret_of(&server, &id));
    assert_ne!(stored, before);
    assert!(!stdout.contains(&stored) && !stderr.contains(&stored));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dest).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // No temporary file is left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // It exists now: refused without --force, nothing rotated.
    let current = secret_of(&server, &id);
    let out = run(rotate_key(&server, &[dest_arg, id.as_str()]));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("pass --force") && stderr.contains("nothing was rotated"),
        "{stderr}"
    );
    assert_eq!(secret_of(&server, &id), current);
    // With --force it is replaced.
    let out = run(rotate_key(&server, &["--force", dest_arg, id.as_str()]));
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&dest).unwrap(),
        secret_of(&server, &id)
    );
    assert_ne!(secret_of(&server, &id), current);
}

#[test]
fn rotate_key_checks_the_destination_before_rotating() {
    let server = MockServer::start(MockConfig::new()).unwrap();
    let id = server.info().access_key_id.unwrap();
    let dir = TempDir::new("aggpay-rotate");
    let before = secret_of(&server, &id);

    // A folder that does not exist.
    let missing = dir.join("no/such/folder/secret.txt");
    let out = run(rotate_key(
        &server,
        &[missing.to_str().unwrap(), id.as_str()],
    ));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("nothing was rotated"), "{stderr}");
    assert!(stderr.contains("no/such/folder"), "{stderr}");

    // A symbolic link as the destination, even with --force.
    #[cfg(unix)]
    {
        let victim = dir.join("victim.txt");
        std::fs::write(&victim, "keep me").unwrap();
        let link = dir.join("link.txt");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let out = run(rotate_key(
            &server,
            &["--force", link.to_str().unwrap(), id.as_str()],
        ));
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr.contains("symbolic link"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(secret_of(&server, &id), before, "nothing was rotated");

        // A link planted where the old example put its temporary file is
        // never written through.
        let dest = dir.join("fresh.txt");
        let planted = dir.join("fresh.tmp");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let out = run(rotate_key(&server, &[dest.to_str().unwrap(), id.as_str()]));
        assert!(out.status.success(), "{:?}", text(&out));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(
            std::fs::read_to_string(&dest).unwrap(),
            secret_of(&server, &id)
        );
    }
    #[cfg(not(unix))]
    assert_eq!(secret_of(&server, &id), before, "nothing was rotated");
}

/// Storing fails after the rotation (no room to write: a file size limit
/// of zero). The message says the key was rotated and which path failed;
/// the secret is printed only when asked, and the printed one works.
#[cfg(unix)]
#[test]
fn rotate_key_never_loses_a_secret_silently() {
    let server = MockServer::start(MockConfig::new()).unwrap();
    let id = server.info().access_key_id.unwrap();
    let dir = TempDir::new("aggpay-rotate");
    let dest = dir.join("secret.txt");
    // SIGXFSZ ignored: writing fails with EFBIG instead of killing it.
    let no_room = |args: &[&str]| {
        let mut sh = Command::new("/bin/sh");
        sh.args(["-c", r#"trap "" XFSZ; ulimit -f 0; exec "$0" "$@""#])
            .arg(example("rotate_key"))
            .args(args)
            .env_clear()
            .env(ENV_BASE_URL, server.url())
            .env(ENV_AGGREGATOR_ID, server.aggregator_id().as_str())
            .env(ENV_SECRET_KEY, server.secret_key().expose());
        sh
    };
    let before = secret_of(&server, &id);
    let out = run(no_room(&[dest.to_str().unwrap(), id.as_str()]));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("WAS ROTATED"), "{stderr}");
    assert!(stderr.contains(dir.path().to_str().unwrap()), "{stderr}");
    let now = secret_of(&server, &id);
    assert_ne!(now, before, "the rotation happened");
    assert!(!stdout.contains(&now) && !stderr.contains(&now));
    assert!(!dest.exists());

    let out = run(no_room(&[
        "--print-secret-on-failure",
        dest.to_str().unwrap(),
        id.as_str(),
    ]));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let printed = stdout.trim();
    assert_eq!(printed, secret_of(&server, &id));
    assert!(!stderr.contains(printed));
    let with_printed = Client::builder(server.url(), server.aggregator_id().clone(), printed)
        .build()
        .unwrap();
    with_printed.get_ledger_account().unwrap();
}

#[test]
fn rotate_key_refuses_bad_arguments_with_exit_2() {
    let out = run({
        let mut c = Command::new(example("rotate_key"));
        c.arg("--no-such-flag").env_clear();
        c
    });
    assert_eq!(out.status.code(), Some(2));
}

/// The examples against a server that redirects: they fail with the
/// redirect named, and the target never hears from them.
#[test]
fn examples_never_follow_a_redirect() {
    let target = Scripted::start(vec![json(200, "{}")]);
    let origin = Scripted::start(vec![Act::Reply(
        307,
        vec![(
            "Location",
            format!("{}/v1/aggregators/agg_test/", target.url()),
        )],
        Vec::new(),
    )]);
    for (name, args) in [
        ("payment_charges", vec!["pm_0000000000000001"]),
        ("batches_to_csv", vec![]),
    ] {
        let out = run({
            let mut c = Command::new(example(name));
            c.args(&args)
                .env_clear()
                .env(ENV_BASE_URL, origin.url())
                .env(ENV_AGGREGATOR_ID, "agg_test")
                .env(ENV_SECRET_KEY, KEY);
            c
        });
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{name}: {stdout}");
        assert!(stderr.contains("redirect"), "{name}: {stderr}");
        assert!(!stderr.contains(KEY), "{name}: {stderr}");
    }
    assert!(target.requests().is_empty(), "{:?}", target.requests());
}

/// `payment_charges` against a server behind a private CA: refused with
/// the way out named, then reached with `AGGPAY_CA_CERT`.
#[test]
fn examples_reach_a_private_ca_server_with_aggpay_ca_cert() {
    const CHARGES: &str = r#"{"api_version":"v1","data":{"payment_id":"pm_0000000000000001","gross_amount":"500","currency":"PKR","fee_amount":"2","net_amount":"483","sales_tax_on_fee_amount":"0","sales_tax_withholding_amount":"10","income_tax_withholding_amount":"5","digital_tax_amount":"0"}}"#;
    let ca = TestCa::new("aggpay staging CA");
    let server = TlsServer::start(&ca.issue(&["localhost"]), 200, CHARGES);
    let dir = TempDir::new("aggpay-ca");
    let ca_file = dir.join("staging-ca.pem");
    ca.write_pem(&ca_file);
    let charges = |with_ca: bool| {
        let mut c = Command::new(example("payment_charges"));
        c.arg("pm_0000000000000001")
            .env_clear()
            .env(ENV_BASE_URL, server.localhost_url())
            .env(ENV_AGGREGATOR_ID, "agg_test")
            .env(ENV_SECRET_KEY, KEY);
        if with_ca {
            c.env(ENV_CA_CERT, &ca_file);
        }
        run(c)
    };
    let out = charges(false);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("AGGPAY_CA_CERT"), "{stderr}");
    let out = charges(true);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("483"), "{stdout}");
}

/// The whole CSV export through HTTPS from a mock behind a private CA, as a
/// user runs it against staging: `AGGPAY_CA_CERT` is all it takes.
#[test]
fn batches_to_csv_runs_against_a_private_ca_mock() {
    let ca = TestCa::new("aggpay staging CA");
    let identity = ca.issue(&["localhost", "127.0.0.1"]);
    let server = MockServer::start(MockConfig::new().batches(12).tls(
        aggpay_mock::TlsIdentity::from_pem(identity.cert_pem, identity.key_pem),
    ))
    .unwrap();
    let dir = TempDir::new("aggpay-ca");
    let ca_file = dir.join("staging-ca.pem");
    ca.write_pem(&ca_file);
    let mut c = Command::new(example("batches_to_csv"));
    c.env_clear()
        .env(ENV_BASE_URL, server.url())
        .env(ENV_AGGREGATOR_ID, server.aggregator_id().as_str())
        .env(ENV_SECRET_KEY, server.secret_key().expose())
        .env(ENV_CA_CERT, &ca_file);
    let out = run(c);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let rows = stdout.lines().count();
    assert!(rows > 10, "{rows} lines");
    assert!(stderr.contains("wrote"), "{stderr}");
}

/// The dependency lines the README gives resolve for a user with a
/// checkout beside their crate: cargo resolves them (offline, from this
/// workspace's lock, so that no registry is asked and no source is
/// fetched).
#[test]
fn the_documented_dependency_lines_resolve() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let block = readme
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README shows the dependency lines in a toml block");
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .canonicalize()
        .unwrap();
    // The user's crate, beside a checkout named `aggpay`.
    let dir = TempDir::new("deps");
    std::os::unix::fs::symlink(&root, dir.path().join("aggpay")).unwrap();
    let user = dir.path().join("user");
    std::fs::create_dir_all(user.join("src")).unwrap();
    std::fs::write(user.join("src/lib.rs"), "").unwrap();
    let manifest = format!(
        "[package]\nname = \"user\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n\n{block}"
    );
    std::fs::write(user.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root.join("Cargo.lock"), user.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = run({
        let mut c = Command::new(cargo);
        c.args(["generate-lockfile", "--offline"])
            .current_dir(&user);
        c
    });
    assert!(
        out.status.success(),
        "the README's dependency lines do not resolve:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lock = std::fs::read_to_string(user.join("Cargo.lock")).unwrap();
    assert!(lock.contains("name = \"aggpay\""), "{lock}");
    assert!(lock.contains("name = \"aggpay-mock\""), "{lock}");
}
