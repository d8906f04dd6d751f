//! Names API.md gives by purpose only: a name no answer shows read is
//! not judged, and every report says so; `--require-wire-names` fails it;
//! `--param-name` judges a server's own names in full.

use aggpay_conformance::{EXIT_FAILED, EXIT_OK};
use aggpay_mock::{Fault, Legal, MockConfig, MockServer};
use serde_json::Value;

use crate::support::{BESIDE_OTHERS, json_run, on_every_core, with_status};

/// Every place a report lists as not judged, with its rule.
fn not_judged(report: &Value) -> Vec<(String, String)> {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["not_judged"].as_array().unwrap().iter().map(|n| {
                (
                    r["id"].as_str().unwrap().to_owned(),
                    n["place"].as_str().unwrap().to_owned(),
                )
            })
        })
        .collect()
}

/// The required rules a report shows failed.
fn required_failed(report: &Value) -> Vec<String> {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] == "required" && r["status"] == "failed")
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

/// A direction no answer shows read (no value refused, none changes the
/// order), a filter that keeps one of several values written either way,
/// and a list that answers the same whatever its query: no required rule can judge them, so the run passes, and says at
/// which places it did not judge. Held to WIRE.md's names and form, the
/// same servers fail.
#[test]
fn a_name_no_answer_shows_read_is_not_judged_and_fails_with_require_wire_names() {
    let cases: [(Fault, &[&str]); 3] = [
        (
            Fault::DirectionIgnored,
            &["batches ?direction", "transactions ?direction"],
        ),
        (Fault::RefundFiltersOneValue, &["refunds ?"]),
        // An answer kept whatever the query: no value of any name
        // changes it or is refused.
        (
            Fault::RailMerchantListCache,
            &["rail-merchants ?status", "rail-merchants ?offset"],
        ),
    ];
    let problems: Vec<String> = on_every_core(1, &cases, |(fault, places)| {
        let server = MockServer::start(MockConfig::new().seed(9).fault(*fault)).unwrap();
        let mut problems = Vec::new();
        let (code, report) = json_run(&server, &BESIDE_OTHERS);
        let listed = not_judged(&report);
        for place in *places {
            if !listed.iter().any(|(_, p)| p.starts_with(place)) {
                problems.push(format!(
                    "{fault}: {place} is not listed not judged: {listed:?}"
                ));
            }
        }
        if code != EXIT_OK || report["summary"]["not_judged"].as_u64() != Some(listed.len() as u64)
        {
            problems.push(format!(
                "{fault}: exit {code}, required failed {:?}, summary {}",
                required_failed(&report),
                report["summary"]
            ));
        }
        let mut args = vec!["--require-wire-names"];
        args.extend(BESIDE_OTHERS);
        let (code, report) = json_run(&server, &args);
        if code != EXIT_FAILED || required_failed(&report).is_empty() {
            problems.push(format!(
                "{fault} with --require-wire-names: exit {code}, required failed {:?}",
                required_failed(&report)
            ));
        }
        problems
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(problems.is_empty(), "{problems:#?}");
}

/// A server that pages its cursor lists by names of its own: without
/// them its paging is not judged (and the run says so); given them, every
/// request of those lists carries them, nothing of those lists is left
/// unjudged, and a fault under those names is caught.
#[test]
fn the_servers_own_names_given_are_judged_in_full() {
    let own: Vec<String> = ["batches", "transactions"]
        .iter()
        .flat_map(|list| {
            [
                ("cursor", "after"),
                ("limit", "page_size"),
                ("direction", "sort"),
            ]
            .map(|(wire, name)| format!("{list}.{wire}={name}"))
        })
        .collect();
    let mut given: Vec<&str> = BESIDE_OTHERS.to_vec();
    for name in &own {
        given.extend(["--param-name", name]);
    }
    let of_cursor_lists = |report: &Value| -> Vec<(String, String)> {
        not_judged(report)
            .into_iter()
            .filter(|(_, p)| p.starts_with("batches ") || p.starts_with("transactions "))
            .collect()
    };
    let runs = [
        (None, &BESIDE_OTHERS[..]),
        (None, &given[..]),
        (Some(Fault::CursorAscAsDesc), &given[..]),
    ];
    let results = on_every_core(1, &runs, |(fault, args)| {
        let mut config = MockConfig::new().seed(9).legal(Legal::CursorNames);
        if let Some(f) = fault {
            config = config.fault(*f);
        }
        let server = MockServer::start(config).unwrap();
        json_run(&server, args)
    });
    let (code, report) = &results[0];
    assert_eq!(*code, EXIT_OK, "{:?}", required_failed(report));
    assert!(
        !of_cursor_lists(report).is_empty(),
        "names of its own, not given: their paging is listed not judged"
    );
    let (code, report) = &results[1];
    assert_eq!(*code, EXIT_OK, "{:?}", required_failed(report));
    assert_eq!(of_cursor_lists(report), Vec::new());
    assert!(with_status(report, "failed").is_empty(), "{report:#}");
    let (code, report) = &results[2];
    assert_eq!(*code, EXIT_FAILED);
    assert!(
        required_failed(report)
            .iter()
            .any(|r| r.starts_with("cursor.")),
        "{:?}",
        required_failed(report)
    );
}
