//! What reports show: minimal inputs, reproductions, and never a secret
//! or a raw control character.

use aggpay_conformance::EXIT_FAILED;
use aggpay_mock::{Fault, MockConfig, MockServer};
use aggpay_testkit::TempDir;

use crate::support::{against, hand_server, harness, json_run, keys, set};

#[test]
fn failures_carry_a_minimal_input_and_a_redacted_reproduction() {
    let server = MockServer::start(MockConfig::new().fault(Fault::LowercaseAsc)).unwrap();
    let key = server.secret_key().expose().to_owned();
    let (code, report) = json_run(&server, &["--rules", "cursor.order"]);
    assert_eq!(code, EXIT_FAILED);
    let failure = &report["rules"][0]["failures"][0];
    let input = failure["input"].as_str().unwrap();
    assert!(input.to_lowercase().contains("asc"), "{input}");
    let curl = failure["curl"].as_str().unwrap();
    assert!(
        curl.contains(&format!(
            "{}: <redacted>",
            aggpay_internal::syntax::KEY_HEADER
        )),
        "{curl}"
    );
    assert!(curl.contains("direction="), "{curl}");
    assert!(!report.to_string().contains(&key));
    // The same seed makes the same run.
    let (_, again) = json_run(&server, &["--rules", "cursor.order"]);
    assert_eq!(again["rules"][0]["failures"][0]["input"], failure["input"]);
}

/// Every secret of the aggregator's keys.
fn secrets(server: &MockServer) -> Vec<String> {
    keys(server)
        .iter()
        .map(|k| k["secret"].as_str().unwrap().to_owned())
        .collect()
}

/// A failing server whose failures quote key lists (secrets in clear)
/// and a rotation whose old secret keeps working: no secret, old or new,
/// the key in use or another, reaches any output of any format.
#[test]
fn no_secret_in_any_report_format() {
    let server = MockServer::start(
        MockConfig::new()
            .fault(Fault::NoAuth)
            .fault(Fault::MixedKeyShape)
            .fault(Fault::RotateKeepsOldSecret),
    )
    .unwrap();
    let before = secrets(&server);
    let dir = TempDir::new("aggpay-conformance-secrets");
    let mut outputs = Vec::new();
    for format in ["human", "json", "junit"] {
        let path = dir.join(&format!("report.{format}"));
        let mut args = against(&server);
        set(&mut args, "--format", format);
        args.extend(["--strict", "--output"].map(str::to_owned));
        args.push(path.display().to_string());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = harness(&refs);
        assert_eq!(code, EXIT_FAILED, "{format}");
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(file.contains("auth.missing-key"), "{format}");
        assert!(file.contains("wire.rotation-revokes-old"), "{format}");
        assert!(
            file.contains("redacted&gt;") || file.contains("<redacted>"),
            "{format}"
        );
        outputs.extend([out, err, file]);
    }
    let after = secrets(&server);
    assert_ne!(before, after, "the rotation happened");
    for secret in before.iter().chain(&after) {
        for text in &outputs {
            assert!(!text.contains(secret.as_str()), "a secret leaked: {text}");
        }
    }
}

/// A server that answers with escape sequences, NUL, BEL and line breaks
/// in its JSON and in a field it declares a secret.
fn control_answer(target: &str) -> Option<(u16, String)> {
    let body = if target.starts_with("/v1/aggregators/agg_ctl?")
        || target == "/v1/aggregators/agg_ctl"
    {
        r#"{"api_version":"v1","data":{"token":"agg_ctl\u001b[2J\u001b]0;pwned\u0007","secret":"s3cr3t-\u0000-value","name":"a\r\nFAKE LINE"}}"#
    } else {
        r#"{"code":"error.not_found\u001b[31m","message":"nope\u0007\u0000\r\nPASS  everything"}"#
    };
    let status = if body.contains("\"data\"") { 200 } else { 404 };
    Some((status, body.to_owned()))
}

#[test]
fn control_characters_from_a_server_never_reach_the_terminal() {
    let server = hand_server(control_answer);
    for format in ["human", "json", "junit"] {
        let (_, out, err) = harness(&[
            "--base-url",
            &server.url(),
            "--key",
            "ctl-key",
            "--aggregator",
            "agg_ctl",
            "--cases",
            "2",
            "--seed",
            "1",
            "--timeout",
            "2",
            "--format",
            format,
        ]);
        for text in [&out, &err] {
            let raw: Vec<char> = text
                .chars()
                .filter(|c| c.is_control() && *c != '\n')
                .collect();
            assert!(raw.is_empty(), "{format}: raw control characters {raw:?}");
            assert!(!text.contains("s3cr3t"), "{format}: a secret leaked");
            assert!(!text.contains("ctl-key"), "{format}: the key leaked");
        }
        if format == "human" {
            assert!(out.contains("\\u{1b}"), "{out}");
            assert!(
                !out.contains("\nFAKE LINE") && !out.contains("\nPASS  everything"),
                "{out}"
            );
        }
    }
}
