//! The harness is right the other way too: a server that makes another
//! legal choice than the mock's, where API.md leaves room, passes. Each
//! legal choice of the mock alone, and all of them at once, pass every
//! required rule (exit 0, nothing required failed or inconclusive).

use aggpay_conformance::EXIT_OK;
use aggpay_mock::{Legal, MockConfig, MockServer};
use serde_json::Value;

use crate::support::{BESIDE_OTHERS, json_run, on_every_core};

/// The required rules that did not pass, with their first message.
fn required_not_passed(report: &Value) -> Vec<String> {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] == "required")
        .filter(|r| r["status"] == "failed" || r["status"] == "inconclusive")
        .map(|r| {
            let first = r["failures"][0]["message"]
                .as_str()
                .or_else(|| r["inconclusive"][0]["message"].as_str())
                .unwrap_or("");
            format!("{} {}: {first}", r["id"].as_str().unwrap(), r["status"])
        })
        .collect()
}

fn judge(choices: &[Legal]) -> Vec<String> {
    let mut config = MockConfig::new().seed(9);
    for c in choices {
        config = config.legal(*c);
    }
    let server = MockServer::start(config).unwrap();
    let (code, report) = json_run(&server, &BESIDE_OTHERS);
    let mut problems = required_not_passed(&report);
    if code != EXIT_OK {
        problems.push(format!("exit {code}"));
    }
    problems
}

#[test]
fn every_legal_choice_alone_passes() {
    let problems: Vec<String> = on_every_core(1, Legal::ALL, |c| {
        judge(&[*c])
            .into_iter()
            .map(|p| format!("{c}: {p}"))
            .collect::<Vec<_>>()
    })
    .concat();
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_compatible_legal_choice_at_once_passes() {
    let problems = judge(&Legal::compatible());
    assert!(problems.is_empty(), "{problems:#?}");
}
