//! A flaky staging is not a broken one: transient failures are retried,
//! evidence made only of them is inconclusive (exit 2), a 500 that comes
//! back is a failure, and writes are never repeated blindly.

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aggpay_conformance::{EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE};
use aggpay_mock::{Chaos, Latency, MockConfig, MockServer};
use aggpay_testkit::{Interruptions, RawRequest, RawServer};
use serde_json::Value;

use crate::support::{against, harness, json_run, rule, set, status_of};

fn chaos(spec: &str) -> Chaos {
    // Retry-After 0: the tests do not wait out a second per 429.
    spec.parse::<Chaos>().unwrap().retry_after(Duration::ZERO)
}

/// The ids of the rules that did not pass.
fn not_passed(report: &Value) -> Vec<&str> {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] != "passed")
        .map(|r| r["id"].as_str().unwrap())
        .collect()
}

#[test]
fn a_flaky_staging_passes_and_the_report_counts_its_retries() {
    let server = MockServer::start(
        MockConfig::new()
            .seed(3)
            .chaos(chaos("503=0.05,429=0.05,reset=0.02")),
    )
    .unwrap();
    let (code, report) = json_run(&server, &[]);
    let unsure: Vec<&Value> = not_passed(&report)
        .into_iter()
        .map(|id| rule(&report, id))
        .collect();
    assert_eq!(code, EXIT_OK, "{unsure:#?}");
    assert_eq!(report["summary"]["required_failed"], 0);
    assert!(
        report["summary"]["retries"].as_u64().unwrap() > 10,
        "{}",
        report["summary"]
    );
}

/// A run stopped and continued again and again (a throttled CI machine,
/// or Ctrl-Z and `fg` in a terminal) is the same run: an interrupted read
/// (EINTR) is read again with the time left, never taken for a transient
/// failure or a server that went silent. Each answer comes after a delay,
/// so that the stops land while reads wait.
#[test]
fn a_run_stopped_and_continued_again_and_again_is_the_same_run() {
    let server = MockServer::start(
        MockConfig::new()
            .seed(3)
            .latency("15..30".parse::<Latency>().unwrap()),
    )
    .unwrap();
    let (code, report) = {
        let _stops = Interruptions::every(Duration::from_millis(10));
        json_run(&server, &["--rules", "auth.*", "--timeout", "5"])
    };
    assert_eq!(code, EXIT_OK, "{:?}", not_passed(&report));
    let summary = &report["summary"];
    assert!(summary["passed"].as_u64().unwrap() >= 5, "{summary}");
    assert_eq!(summary["retries"], 0, "{summary}");
}

#[test]
fn a_lost_rotation_is_recovered_from_the_key_list_and_never_repeated_blindly() {
    // Every write is carried out, and its answer lost.
    let server = MockServer::start(MockConfig::new().chaos(chaos("lost-write=1"))).unwrap();
    let (code, report) = json_run(&server, &["--rules", "keys.*,exports.*"]);
    assert_eq!(status_of(&report, "keys.rotation"), "passed", "{report}");
    assert_eq!(status_of(&report, "keys.consistent"), "passed", "{report}");
    // The list showed the first done: one more, to see an answer, and
    // when that is lost too, recovered; never a third.
    assert_eq!(server.writes().rotations, 2, "{report}");
    // An export makes a new job each time: sent again twice, then left
    // inconclusive (its answer was lost each time), never failed.
    assert_eq!(status_of(&report, "exports.seeded"), "inconclusive");
    assert_eq!(
        server.writes().exports,
        6,
        "two exports, each sent three times"
    );
    let why = rule(&report, "exports.seeded")["inconclusive"][0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(why.contains("transient"), "{why}");
    assert_eq!(code, EXIT_UNUSABLE);
}

/// A relay to `server` that carries out the first PUT (the rotation) and
/// cuts its answer, as a flaky network does once: everything else is
/// passed on whole.
fn losing_the_first_rotation_answer(server: &MockServer) -> RawServer {
    let upstream = server.url().trim_start_matches("http://").to_owned();
    let lost = AtomicBool::new(false);
    RawServer::start(move |request: &RawRequest, out: &mut TcpStream| {
        let Ok(mut to) = TcpStream::connect(&upstream) else {
            return;
        };
        // One request per connection, as the relay serves them.
        let head: String = request
            .head
            .lines()
            .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
            .map(|l| format!("{l}\r\n"))
            .collect();
        let _ = write!(to, "{head}Connection: close\r\n\r\n");
        let _ = to.write_all(&request.body);
        let (answer, _) = aggpay_testkit::read_until_closed(&mut to, Duration::from_secs(10));
        if request.method == "PUT" && !lost.swap(true, Ordering::SeqCst) {
            return;
        }
        let _ = out.write_all(&answer);
    })
}

#[test]
fn a_rotation_whose_answer_was_lost_once_is_judged_by_its_next_answer() {
    let server = MockServer::start(MockConfig::new().seed(3)).unwrap();
    let relay = losing_the_first_rotation_answer(&server);
    let mut args = against(&server);
    set(&mut args, "--base-url", &relay.url());
    // The sampling's one rotation alone: the random sequences and
    // state.rotations rotate too, and requests.write-bodies sends a
    // rotation in forms (a chunked body, Expect: 100-continue) this relay
    // does not speak.
    args.extend([
        "--skip".to_owned(),
        "explore.*,requests.write-bodies,state.rotations".to_owned(),
    ]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = harness(&refs);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let unsure = not_passed(&report);
    assert_eq!(code, EXIT_OK, "{unsure:?}");
    // The first carried out (the key list shows it), the second seen.
    assert_eq!(server.writes().rotations, 2);
    assert!(report["summary"]["retries"].as_u64().unwrap() >= 1);
}

/// A server that knows its aggregator and answers everything else with
/// `status`.
fn always(status: u16) -> RawServer {
    RawServer::start(move |request: &RawRequest, out: &mut TcpStream| {
        let target = request.target.split('?').next().unwrap_or("");
        let (status, body, extra) = if target == "/v1/aggregators/agg_flaky" {
            (200, r#"{"api_version":"v1","data":{}}"#, "")
        } else if status == 503 {
            (
                503,
                r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"busy"}}"#,
                "Retry-After: 0\r\n",
            )
        } else {
            (
                status,
                r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"boom"}}"#,
                "",
            )
        };
        let _ = write!(
            out,
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nDate: Wed, 25 Nov 2026 10:00:00 GMT\r\n{extra}Connection: close\r\n\r\n{body}",
            body.len()
        );
    })
}

fn run_against(server: &RawServer) -> (u8, Value) {
    let url = server.url();
    let (code, out, err) = harness(&[
        "--base-url",
        &url,
        "--key",
        "k",
        "--aggregator",
        "agg_flaky",
        "--rules",
        "envelope.success,offset.pages,cursor.walk",
        "--format",
        "json",
        "--cases",
        "2",
    ]);
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}")),
    )
}

#[test]
fn only_transient_failures_make_a_rule_inconclusive_and_the_run_exit_2() {
    let server = always(503);
    let (code, report) = run_against(&server);
    assert_eq!(
        status_of(&report, "envelope.success"),
        "inconclusive",
        "{report}"
    );
    assert_eq!(report["summary"]["required_failed"], 0);
    assert!(report["summary"]["required_inconclusive"].as_u64().unwrap() >= 1);
    assert!(report["summary"]["retries"].as_u64().unwrap() > 0);
    assert_eq!(code, EXIT_UNUSABLE);
}

#[test]
fn a_500_that_comes_back_is_a_failure() {
    let server = always(500);
    let (code, report) = run_against(&server);
    assert_eq!(status_of(&report, "envelope.success"), "failed", "{report}");
    assert_eq!(code, EXIT_FAILED);
}
