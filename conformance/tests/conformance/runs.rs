//! Runs as a whole: exit codes, selection, pacing, parallelism, the run
//! budget, and the writes.

use std::net::TcpListener;
use std::time::Duration;

use aggpay_conformance::{Args, EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE};
use aggpay_mock::{Fault, Latency, MockConfig, MockServer};
use clap::Parser;
use serde_json::Value;

use crate::support::{against, harness, json_run, keys, rule, set, status_of};

#[test]
fn the_embedded_default_run_passes() {
    let (code, out, err) = harness(&["--mock", "--cases", "8", "--seed", "3"]);
    assert_eq!(code, EXIT_OK, "{out}\n{err}");
    // The mock sends no ETag (its own choice): the conditional reads are
    // not judged, and the verdict says so.
    assert!(
        out.contains("conforms as far as judged: every required rule passed"),
        "{out}"
    );
    assert!(
        out.contains("requests.conditional") && out.contains("no strong ETag"),
        "{out}"
    );
    assert!(out.contains("(built-in mock)"));
}

#[test]
fn observations_fail_the_run_only_when_strict() {
    let server = MockServer::start(MockConfig::new().fault(Fault::Success201)).unwrap();
    let (code, report) = json_run(&server, &[]);
    assert_eq!(status_of(&report, "wire.success-200"), "failed");
    // The charges' 201 fails the run through the required rule…
    assert_eq!(code, EXIT_FAILED);
    assert_eq!(report["summary"]["required_failed"], 1);
    // …and an observation alone does not.
    let server = MockServer::start(MockConfig::new().fault(Fault::NegativeLimitAccepted)).unwrap();
    let (code, report) = json_run(&server, &[]);
    assert_eq!(status_of(&report, "wire.limit-validation"), "failed");
    assert_eq!(code, EXIT_OK);
    assert_eq!(report["summary"]["observations_failed"], 1);
    let (strict, _) = json_run(&server, &["--strict"]);
    assert_eq!(strict, EXIT_FAILED);
}

#[test]
fn unusable_runs_exit_2() {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let (code, _, err) = harness(&[
        "--base-url",
        &url,
        "--key",
        "k",
        "--aggregator",
        "agg_1",
        "--timeout",
        "2",
    ]);
    assert_eq!(code, EXIT_UNUSABLE);
    assert!(err.contains("connection refused"), "{err}");

    let server = MockServer::start(MockConfig::new()).unwrap();
    let agg = server.aggregator_id().to_string();
    let (code, _, err) = harness(&[
        "--base-url",
        server.url(),
        "--key",
        "wrong",
        "--aggregator",
        &agg,
    ]);
    assert_eq!(code, EXIT_UNUSABLE);
    assert!(err.contains("the key was refused"), "{err}");
    let (code, _, err) = harness(&["--base-url", server.url(), "--aggregator", &agg]);
    assert_eq!(code, EXIT_UNUSABLE, "{err}");
    let (code, _, _) = harness(&[
        "--base-url",
        server.url(),
        "--key",
        "k",
        "--aggregator",
        "merchant_1",
    ]);
    assert_eq!(code, EXIT_UNUSABLE);
    let (code, _, err) = harness(&["--mock", "--rules", "no.such.rule"]);
    assert_eq!(code, EXIT_UNUSABLE, "{err}");
    assert!(Args::try_parse_from(["aggpay-conformance", "--format", "xml"]).is_err());
}

/// Values out of range are refused by the binary with exit 2 and a clear
/// message, before anything runs.
#[test]
fn out_of_range_values_exit_2() {
    for (flag, value, says) in [
        ("--timeout", "1e20", "--timeout"),
        ("--timeout", "0", "--timeout"),
        ("--timeout", "NaN", "--timeout"),
        ("--rate-limit", "1e-300", "--rate-limit"),
        ("--rate-limit=-5", "", "--rate-limit"),
        ("--max-duration", "0", "--max-duration"),
        ("--max-duration", "inf", "--max-duration"),
        ("--jobs", "0", "--jobs"),
        ("--jobs", "257", "--jobs"),
        ("--cases", "0", "--cases"),
        ("--cases", "99999999999", "--cases"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_aggpay-conformance"))
            .args([flag, value].into_iter().filter(|a| !a.is_empty()))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(says), "{flag} {value}: {stderr}");
        assert!(!stderr.contains("panicked"), "{flag} {value}: {stderr}");
    }
}

/// `--max-duration` bounds the whole run, pacing included: a rate limit
/// does not stretch it (turns past the deadline are not waited for).
#[test]
fn the_run_budget_bounds_a_paced_run() {
    let server = MockServer::start(MockConfig::new()).unwrap();
    let started = std::time::Instant::now();
    let (code, report) = json_run(&server, &["--max-duration", "1", "--rate-limit", "10"]);
    let took = started.elapsed();
    assert_eq!(code, EXIT_UNUSABLE, "{report}");
    assert_eq!(report["summary"]["budget_spent"], true);
    // One second of budget and a 10 s request timeout at most: far less
    // than the tens of seconds queued turns took when they were waited for.
    assert!(took < Duration::from_secs(8), "{took:?}");
}

#[test]
fn writes_and_rotation_are_skipped_with_their_reason_unless_allowed() {
    let server = MockServer::start(MockConfig::new()).unwrap();
    let key = server.secret_key();
    let args = [
        "--base-url",
        server.url(),
        "--key",
        key.expose(),
        "--aggregator",
        server.aggregator_id().as_str(),
        "--format",
        "json",
        "--cases",
        "4",
    ];
    let (code, out, _) = harness(&args);
    assert_eq!(code, EXIT_OK);
    let report: Value = serde_json::from_str(&out).unwrap();
    let rotation = rule(&report, "keys.rotation");
    assert_eq!(rotation["status"], "skipped");
    assert!(
        rotation["skip_reason"]
            .as_str()
            .unwrap()
            .contains("--allow-writes")
    );
    let dates = rule(&report, "time.dates");
    assert!(
        dates["skip_reason"]
            .as_str()
            .unwrap()
            .contains("--alias-id"),
        "{dates}"
    );

    // The key in use is never rotated, even when named.
    let in_use = keys(&server)
        .iter()
        .find(|k| k["secret"] == key.expose())
        .unwrap()["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut a = against(&server);
    set(&mut a, "--access-key-id", &in_use);
    a.extend(["--rules".to_owned(), "keys.rotation".to_owned()]);
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    let (_, out, _) = harness(&refs);
    let report: Value = serde_json::from_str(&out).unwrap();
    let reason = report["rules"][0]["skip_reason"].as_str().unwrap();
    assert!(reason.contains("key in use"), "{report}");
}

#[test]
fn rules_can_be_selected_and_requests_paced() {
    let server = MockServer::start(MockConfig::new()).unwrap();
    let (code, report) = json_run(
        &server,
        &[
            "--skip",
            "auth.*,cursor.*,offset.*,filters.*,wire.*",
            "--rate-limit",
            "100",
        ],
    );
    assert_eq!(code, EXIT_OK);
    let ids: Vec<&str> = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.iter()
            .all(|id| !id.starts_with("auth.") && !id.starts_with("cursor.")),
        "{ids:?}"
    );
    assert!(ids.contains(&"fields.required"));
    // Pacing is a floor: n requests at 100/s take at least (n - 1) / 100 s.
    let requests = report["summary"]["requests"].as_u64().unwrap();
    let ms = report["summary"]["duration_ms"].as_u64().unwrap();
    assert!(requests > 10);
    assert!(
        ms + 20 >= (requests - 2) * 10,
        "{requests} requests in {ms} ms"
    );
}

/// What a report says, times and parallelism left out.
fn verdicts(report: &Value) -> Value {
    let mut rules = report["rules"].clone();
    for r in rules.as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("duration_ms");
    }
    rules
}

#[test]
fn the_report_is_the_same_whatever_the_jobs() {
    let server = MockServer::start(
        MockConfig::new()
            .seed(4)
            .fault(Fault::LowercaseAsc)
            .fault(Fault::NetMismatch)
            .fault(Fault::MerchantIdsFirstOnly),
    )
    .unwrap();
    let (one, serial) = json_run(&server, &["--jobs", "1"]);
    let (many, parallel) = json_run(&server, &["--jobs", "16"]);
    assert_eq!(one, EXIT_FAILED);
    assert_eq!(many, EXIT_FAILED);
    assert_eq!(parallel["jobs"], 16);
    assert_eq!(verdicts(&serial), verdicts(&parallel));
}

#[test]
fn the_run_budget_stops_the_run_cleanly_with_exit_2() {
    // 20 ms a request, one at a time: the full suite needs many seconds.
    let server =
        MockServer::start(MockConfig::new().latency(Latency::fixed(Duration::from_millis(20))))
            .unwrap();
    let started = std::time::Instant::now();
    let (code, report) = json_run(&server, &["--jobs", "1", "--max-duration", "1.5"]);
    let elapsed = started.elapsed();
    assert_eq!(code, EXIT_UNUSABLE);
    assert!(elapsed < Duration::from_secs(6), "{elapsed:?}");
    assert_eq!(report["summary"]["budget_spent"], true);
    let not_run = report["summary"]["not_run"].as_u64().unwrap();
    assert!(not_run > 0, "{report}");
    let listed = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "not_run")
        .count() as u64;
    assert_eq!(listed, not_run);

    // The human report names the rules that did not run.
    let mut args = against(&server);
    set(&mut args, "--format", "human");
    args.extend(["--jobs", "1", "--max-duration", "1.5"].map(str::to_owned));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, _) = harness(&refs);
    assert_eq!(code, EXIT_UNUSABLE);
    assert!(
        out.contains("Not run: the run budget (--max-duration) ran out first"),
        "{out}"
    );
    assert!(
        out.contains("incomplete: the run budget ran out (exit 2)"),
        "{out}"
    );
}
