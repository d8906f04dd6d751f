//! The harness, right both ways: it passes the faithful mock, and every rule
//! fails against the mock faults that break it.

use std::net::TcpListener;

use aggpay_conformance::{Args, EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE, Level, catalogue, run};
use aggpay_mock::{Fault, MockConfig, MockServer};
use clap::Parser;
use serde_json::Value;

/// Runs the harness in-process; returns (exit code, stdout, stderr).
fn harness(args: &[&str]) -> (u8, String, String) {
    let mut argv = vec!["aggpay-conformance"];
    argv.extend_from_slice(args);
    let args = Args::try_parse_from(argv).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// The flags that point the harness at `server`, with every input.
fn against(server: &MockServer) -> Vec<String> {
    let info = server.info();
    let mut v = vec![
        "--base-url".to_owned(),
        server.url().to_owned(),
        "--key".into(),
        server.secret_key().expose().to_owned(),
        "--aggregator".into(),
        server.aggregator_id().to_string(),
        "--alias-id".into(),
        info.alias_id.to_string(),
        "--iban".into(),
        info.iban,
        "--mobile".into(),
        info.mobile,
        "--till-code".into(),
        info.till_code,
        "--allow-writes".into(),
        "--format".into(),
        "json".into(),
        "--cases".into(),
        "12".into(),
        "--seed".into(),
        "42".into(),
    ];
    if let Some(id) = info.access_key_id {
        v.extend(["--access-key-id".to_owned(), id.to_string()]);
    }
    v
}

fn json_run(server: &MockServer, extra: &[&str]) -> (u8, Value) {
    let mut args = against(server);
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = harness(&refs);
    let report: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}\n{err}"));
    (code, report)
}

fn status_of<'r>(report: &'r Value, rule: &str) -> &'r str {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == rule)
        .map(|r| r["status"].as_str().unwrap())
        .unwrap_or("absent")
}

#[test]
fn the_faithful_mock_passes_every_rule_even_strictly() {
    let server = MockServer::start(MockConfig::new().seed(9)).unwrap();
    let (code, report) = json_run(&server, &["--strict"]);
    let failed: Vec<&Value> = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] != "passed")
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(code, EXIT_OK);
    assert_eq!(report["summary"]["failed"], 0);
    assert_eq!(report["summary"]["skipped"], 0, "every input was given");
    assert_eq!(report["rules"].as_array().unwrap().len(), catalogue().len());
}

#[test]
fn the_embedded_default_run_passes() {
    let (code, out, err) = harness(&["--cases", "8", "--seed", "3"]);
    assert_eq!(code, EXIT_OK, "{out}\n{err}");
    assert!(
        out.contains("conforms: every required rule passed"),
        "{out}"
    );
    assert!(out.contains("(built-in mock)"));
}

/// Every rule's faults: the full suite runs against the broken mock, exits
/// 1, and the rule is among the failures.
#[test]
fn every_rule_is_caught_by_the_faults_that_break_it() {
    let pairs: Vec<(&'static str, Level, &'static str)> = catalogue()
        .iter()
        .flat_map(|r| r.faults.iter().map(move |f| (r.id, r.level, *f)))
        .collect();
    assert!(pairs.len() >= catalogue().len());
    let chunks: Vec<Vec<(&str, Level, &str)>> = pairs
        .chunks(pairs.len().div_ceil(2))
        .map(<[_]>::to_vec)
        .collect();
    let problems: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for (rule, level, fault) in chunk {
                        let fault: Fault = fault.parse().unwrap();
                        let server =
                            MockServer::start(MockConfig::new().seed(9).fault(fault)).unwrap();
                        let strict: &[&str] = if level == Level::Observation {
                            &["--strict"]
                        } else {
                            &[]
                        };
                        let (code, report) = json_run(&server, strict);
                        let status = status_of(&report, rule);
                        if code != EXIT_FAILED || status != "failed" {
                            problems.push(format!(
                                "fault {fault}: rule {rule} is {status}, exit {code}"
                            ));
                        }
                    }
                    problems
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn observations_fail_the_run_only_when_strict() {
    let server = MockServer::start(MockConfig::new().fault(Fault::Success201)).unwrap();
    let (code, report) = json_run(&server, &[]);
    assert_eq!(status_of(&report, "wire.success-200"), "failed");
    assert_eq!(code, EXIT_OK);
    assert_eq!(report["summary"]["observations_failed"], 1);
    let (strict, _) = json_run(&server, &["--strict"]);
    assert_eq!(strict, EXIT_FAILED);
}

#[test]
fn failures_carry_a_minimal_input_and_a_redacted_reproduction() {
    let server = MockServer::start(MockConfig::new().fault(Fault::LowercaseAsc)).unwrap();
    let key = server.secret_key().expose().to_owned();
    let (code, report) = json_run(&server, &["--rules", "cursor.order"]);
    assert_eq!(code, EXIT_FAILED);
    let failure = &report["rules"][0]["failures"][0];
    let input = failure["input"].as_str().unwrap();
    assert!(
        input.contains("\"asc\"")
            || input.contains("\"aSC\"")
            || input.to_lowercase().contains("asc"),
        "{input}"
    );
    let curl = failure["curl"].as_str().unwrap();
    assert!(
        curl.contains(&format!("{}: <redacted>", aggpay::rules::KEY_HEADER)),
        "{curl}"
    );
    assert!(curl.contains("direction="), "{curl}");
    assert!(!report.to_string().contains(&key));
    // The same seed makes the same run.
    let (_, again) = json_run(&server, &["--rules", "cursor.order"]);
    assert_eq!(again["rules"][0]["failures"][0]["input"], failure["input"]);
}

#[test]
fn no_secret_in_any_report_format() {
    // A failing server whose key lists print secrets in clear.
    let server = MockServer::start(
        MockConfig::new()
            .fault(Fault::NoAuth)
            .fault(Fault::MissingField),
    )
    .unwrap();
    let key = server.secret_key().expose().to_owned();
    let dir = std::env::temp_dir().join(format!("aggpay-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for format in ["human", "json", "junit"] {
        let path = dir.join(format!("report.{format}"));
        let mut args = against(&server);
        let i = args.iter().position(|a| a == "json").unwrap();
        args[i] = format.to_owned();
        args.extend(["--output".to_owned(), path.display().to_string()]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = harness(&refs);
        assert_eq!(code, EXIT_FAILED, "{format}");
        let file = std::fs::read_to_string(&path).unwrap();
        for text in [&out, &err, &file] {
            assert!(!text.contains(&key), "{format}: the key leaked");
            assert!(!text.contains("aggsk_"), "{format}: a secret leaked");
        }
        assert!(file.contains("auth.missing-key"), "{format}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
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
    assert!(err.contains("unreachable"), "{err}");

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
    assert!(err.contains("rejected"), "{err}");
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
    let (code, _, err) = harness(&["--rules", "no.such.rule"]);
    assert_eq!(code, EXIT_UNUSABLE, "{err}");
    assert!(Args::try_parse_from(["aggpay-conformance", "--format", "xml"]).is_err());
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
    ]
    .map(str::to_owned);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, _) = harness(&refs);
    assert_eq!(code, EXIT_OK);
    let report: Value = serde_json::from_str(&out).unwrap();
    let rule = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "keys.rotation")
        .unwrap();
    assert_eq!(rule["status"], "skipped");
    assert!(
        rule["skip_reason"]
            .as_str()
            .unwrap()
            .contains("--allow-writes")
    );
    let alias = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "time.dates")
        .unwrap();
    assert!(
        alias["skip_reason"]
            .as_str()
            .unwrap()
            .contains("--alias-id"),
        "{alias}"
    );

    // The key in use is never rotated, even when named.
    let (_, report) = {
        let mut a = against(&server);
        let keys: Value = {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .http_status_as_error(false)
                .build()
                .into();
            let url = format!(
                "{}/v1/aggregators/{}/keys",
                server.url(),
                server.aggregator_id()
            );
            let mut r = agent
                .get(url)
                .header(aggpay::rules::KEY_HEADER, server.secret_key().expose())
                .call()
                .unwrap();
            serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap()
        };
        let in_use = keys["data"]["keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["secret"] == server.secret_key().expose())
            .unwrap()["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let i = a.iter().position(|x| x == "--access-key-id").unwrap();
        a[i + 1] = in_use;
        a.extend(["--rules".to_owned(), "keys.rotation".to_owned()]);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, out, _) = harness(&refs);
        (code, serde_json::from_str::<Value>(&out).unwrap())
    };
    assert!(
        report["rules"][0]["skip_reason"]
            .as_str()
            .unwrap()
            .contains("key in use"),
        "{report}"
    );
}

#[test]
fn the_rule_catalogue_is_listed_and_documented() {
    let (code, out, _) = harness(&["--list-rules"]);
    assert_eq!(code, EXIT_OK);
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    for rule in catalogue() {
        assert!(out.contains(rule.id));
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{}`", rule.id)));
        let row = row.unwrap_or_else(|| panic!("README's rule table lacks {}", rule.id));
        for fault in rule.faults {
            assert!(
                row.contains(fault),
                "README row of {} lacks fault {fault}",
                rule.id
            );
        }
    }
}

/// A server that misbehaves on purpose: answers the first call, then an
/// endless cursor chain on the batch list, an endless body on transactions,
/// silence on webhooks, and 404 elsewhere. Each connection has its thread;
/// every thread ends when the client hangs up or after 20 s.
fn hostile_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::io::{BufRead, BufReader, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    std::thread::spawn(move || {
        let born = Instant::now();
        while !stopped.load(Ordering::SeqCst) && born.elapsed() < Duration::from_secs(120) {
            let Ok((stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            std::thread::spawn(move || {
                stream.set_nonblocking(false).ok();
                stream.set_read_timeout(Some(Duration::from_secs(20))).ok();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                        break;
                    }
                }
                let target = line.split(' ').nth(1).unwrap_or("").to_owned();
                let (path, query) = target.split_once('?').unwrap_or((&target, ""));
                let mut out = stream;
                let reply = |out: &mut std::net::TcpStream, status: u16, body: String| {
                    let head = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nDate: Wed, 25 Nov 2026 10:00:00 GMT\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = out.write_all(head.as_bytes());
                    let _ = out.write_all(body.as_bytes());
                };
                if path == "/v1/aggregators/agg_hostile" {
                    reply(
                        &mut out,
                        200,
                        r#"{"api_version":"v1","data":{}}"#.to_owned(),
                    );
                } else if path.ends_with("/settlements/batches") {
                    // An endless chain: full pages of fresh, ordered ids.
                    let cursor: u64 = query
                        .split('&')
                        .find_map(|p| p.strip_prefix("cursor="))
                        .and_then(|c| c.parse().ok())
                        .unwrap_or(1_000_000_000_000);
                    let ascending = query.contains("direction=ASC");
                    let ids: Vec<u64> = (1..=30)
                        .map(|i| if ascending { cursor + i } else { cursor - i })
                        .collect();
                    let rows: Vec<String> = ids
                        .iter()
                        .map(|id| {
                            format!(
                                r#"{{"id":"{id}","token":"sb_{:036}","status":"BATCH_COMPLETED"}}"#,
                                id
                            )
                        })
                        .collect();
                    let next = ids.last().unwrap();
                    reply(
                        &mut out,
                        200,
                        format!(
                            r#"{{"api_version":"v1","data":{{"batches":[{}],"next_cursor":"{next}","count":{{"filtered_count":"90","total_count":"90"}}}}}}"#,
                            rows.join(",")
                        ),
                    );
                } else if path.ends_with("/transactions") {
                    let _ = out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"api_version\":\"v1\",\"data\":{\"transactions\":[");
                    let started = Instant::now();
                    while started.elapsed() < Duration::from_secs(20) {
                        if out.write_all(&[b' '; 8192]).is_err() {
                            break;
                        }
                    }
                } else if path.ends_with("/webhooks") {
                    // Silence until the client gives up.
                    let mut buf = [0u8; 64];
                    let _ = std::io::Read::read(&mut reader, &mut buf);
                } else {
                    reply(
                        &mut out,
                        404,
                        r#"{"code":"error.not_found","message":"requested resource not found"}"#
                            .to_owned(),
                    );
                }
            });
        }
    });
    (url, stop)
}

#[test]
fn hostile_servers_fail_rules_and_the_run_ends_within_its_bounds() {
    let (url, stop) = hostile_server();
    let started = std::time::Instant::now();
    let (code, out, err) = harness(&[
        "--base-url",
        &url,
        "--key",
        "hostile-key",
        "--aggregator",
        "agg_hostile",
        "--timeout",
        "0.5",
        "--cases",
        "3",
        "--format",
        "json",
        "--seed",
        "5",
    ]);
    let elapsed = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(code, EXIT_FAILED, "{err}");
    assert!(elapsed < std::time::Duration::from_secs(90), "{elapsed:?}");
    let report: Value = serde_json::from_str(&out).unwrap();
    for rule in [
        "cursor.walk",
        "cursor.only-settlement-txns",
        "envelope.success",
    ] {
        assert_eq!(status_of(&report, rule), "failed", "{rule}");
    }
    let walk = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "cursor.walk")
        .unwrap();
    assert!(
        walk["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no end"),
        "{walk}"
    );
    assert!(!out.contains("hostile-key"));

    // A server that never answers at all: the run cannot be made, quickly.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let started = std::time::Instant::now();
    let (code, _, err) = harness(&[
        "--base-url",
        &silent_url,
        "--key",
        "k",
        "--aggregator",
        "agg_1",
        "--timeout",
        "1",
    ]);
    assert_eq!(code, EXIT_UNUSABLE, "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    drop(silent);
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
