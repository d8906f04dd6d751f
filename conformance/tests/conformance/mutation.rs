//! The harness is right both ways: the faithful mock passes every rule,
//! and each fault of the mock, alone, breaks exactly the rules that name
//! it (every rule names at least one).

use std::collections::{BTreeMap, BTreeSet};

use aggpay_conformance::{EXIT_FAILED, EXIT_OK, catalogue};
use aggpay_mock::{Fault, MockConfig, MockServer};

use crate::support::{json_run, with_status};

#[test]
fn the_faithful_mock_passes_every_rule_even_strictly() {
    let server = MockServer::start(MockConfig::new().seed(9)).unwrap();
    let (code, report) = json_run(&server, &["--strict"]);
    let not_passed: Vec<&serde_json::Value> = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] != "passed")
        .collect();
    assert!(not_passed.is_empty(), "{not_passed:#?}");
    assert_eq!(code, EXIT_OK);
    assert_eq!(report["rules"].as_array().unwrap().len(), catalogue().len());
}

/// Runs the whole suite, strictly, once per fault (two threads: the
/// machine has two cores), and compares what failed with what the
/// catalogue says each fault breaks.
#[test]
fn every_fault_breaks_exactly_the_rules_that_name_it() {
    let mut claimed: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for rule in catalogue() {
        for fault in rule.faults {
            claimed.entry(fault).or_default().insert(rule.id);
        }
    }
    let faults: Vec<Fault> = Fault::ALL.to_vec();
    let found: Vec<(Fault, u8, BTreeSet<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = faults
            .chunks(faults.len().div_ceil(2))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|fault| {
                            let server =
                                MockServer::start(MockConfig::new().seed(9).fault(*fault)).unwrap();
                            let (code, report) = json_run(&server, &["--strict"]);
                            let failed = with_status(&report, "failed")
                                .into_iter()
                                .map(str::to_owned)
                                .collect();
                            (*fault, code, failed)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut problems = Vec::new();
    for (fault, code, failed) in &found {
        let want: BTreeSet<String> = claimed
            .get(fault.name())
            .map(|s| s.iter().map(|r| (*r).to_owned()).collect())
            .unwrap_or_default();
        if want.is_empty() {
            problems.push(format!("fault {fault} is named by no rule"));
        }
        if *failed != want {
            problems.push(format!(
                "fault {fault}: failed {failed:?}, the catalogue says {want:?}"
            ));
        }
        if *code != EXIT_FAILED {
            problems.push(format!("fault {fault}: exit {code}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
