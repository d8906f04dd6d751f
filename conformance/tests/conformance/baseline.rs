//! Baselines: known failures do not fail the run, new ones do, fixed ones
//! are reported; a failure is known whatever the seed.

use aggpay_conformance::{EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE};
use aggpay_mock::{Fault, MockConfig, MockServer};
use aggpay_testkit::TempDir;

use crate::support::{against, harness, json_run, rule, set};

#[test]
fn known_failures_pass_new_ones_fail_fixed_ones_are_reported() {
    let dir = TempDir::new("aggpay-baseline-run");
    let file = dir.join("baseline.json");
    let path = file.display().to_string();
    let broken = MockServer::start(MockConfig::new().fault(Fault::NetMismatch)).unwrap();

    let (code, first) = json_run(&broken, &["--write-baseline", &path]);
    assert_eq!(code, EXIT_FAILED);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        written["known"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["rule"] == "amounts.net"),
        "{written}"
    );
    assert!(first["rules"].as_array().is_some());

    // The same server, another seed: the same failures, known.
    let mut args = against(&broken);
    set(&mut args, "--seed", "7");
    args.extend(["--baseline".to_owned(), path.clone()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, _) = harness(&refs);
    let known: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, EXIT_OK, "{known}");
    assert_eq!(rule(&known, "amounts.net")["known"], true);
    assert!(known["summary"]["known"].as_u64().unwrap() >= 1);
    assert_eq!(known["summary"]["failed"], 0);

    // A new failure beside the known one fails the run.
    let worse = MockServer::start(
        MockConfig::new()
            .fault(Fault::NetMismatch)
            .fault(Fault::LowercaseCurrency),
    )
    .unwrap();
    let (code, report) = json_run(&worse, &["--baseline", &path]);
    assert_eq!(code, EXIT_FAILED);
    assert_eq!(rule(&report, "amounts.net")["known"], true);
    assert_eq!(rule(&report, "amounts.currency")["known"], false);

    // Fixed: the baseline's failures did not happen again.
    let fixed = MockServer::start(MockConfig::new()).unwrap();
    let mut args = against(&fixed);
    set(&mut args, "--format", "human");
    args.extend(["--baseline".to_owned(), path.clone()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, _) = harness(&refs);
    assert_eq!(code, EXIT_OK);
    assert!(out.contains("Fixed since the baseline"), "{out}");
    assert!(out.contains("amounts.net"), "{out}");
}

#[test]
fn an_unreadable_baseline_exits_2() {
    let dir = TempDir::new("aggpay-baseline-bad");
    let file = dir.join("baseline.json");
    std::fs::write(&file, "not a baseline").unwrap();
    let server = MockServer::start(MockConfig::new()).unwrap();
    let mut args = against(&server);
    args.extend(["--baseline".to_owned(), file.display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = harness(&refs);
    assert_eq!(code, EXIT_UNUSABLE);
    assert!(err.contains("baseline"), "{err}");
    let missing = dir.join("missing.json").display().to_string();
    let (code, _, _) = harness(&["--mock", "--baseline", &missing]);
    assert_eq!(code, EXIT_UNUSABLE);
}
