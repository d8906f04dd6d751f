//! The families of properties take their places from the contract table:
//! each rule of a family sends its cases to every place its subjects hold
//! for (every operation, path id, parameter, key header and body field the
//! table has), so that a kind of mistake caught at one place is looked for
//! at all of them, and an operation added to the table is enrolled at once.
//! A place it could not reach, it lists as not judged, with why.

use std::collections::BTreeSet;

use aggpay_conformance::{Kind, catalogue};
use aggpay_mock::{Fault, Legal, MockConfig, MockServer};

use crate::support::{BESIDE_OTHERS, json_run, rule};

#[test]
fn every_rule_of_a_family_visits_every_place_the_table_has_for_it() {
    let server = MockServer::start(MockConfig::new().seed(9)).unwrap();
    let family_rules: Vec<_> = catalogue()
        .into_iter()
        .filter(|r| r.kind == Kind::Properties)
        .collect();
    assert!(!family_rules.is_empty());
    let patterns: Vec<&str> = family_rules.iter().map(|r| r.id).collect();
    let patterns = patterns.join(",");
    let mut args = vec!["--rules", &patterns];
    args.extend(BESIDE_OTHERS);
    let (_, report) = json_run(&server, &args);
    let mut problems = Vec::new();
    for r in &family_rules {
        let due: BTreeSet<String> = r.places_due().into_iter().collect();
        if due.is_empty() {
            problems.push(format!(
                "{}: its subjects hold for no place of the table",
                r.id
            ));
        }
        let entry = rule(&report, r.id);
        let visited: BTreeSet<String> = entry["places"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect();
        // A place the rule could not reach, it lists with why: accounted
        // for, never silently left out.
        let said: BTreeSet<String> = entry["not_judged"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["place"].as_str().unwrap().to_owned())
            .collect();
        let accounted: BTreeSet<String> = visited.union(&said).cloned().collect();
        let missed: Vec<&String> = due.difference(&accounted).collect();
        if !missed.is_empty() {
            problems.push(format!(
                "{} ({}) sent no case to {missed:?}",
                r.id, entry["status"]
            ));
        }
        let stray: Vec<&String> = visited.difference(&due).collect();
        if !stray.is_empty() {
            problems.push(format!(
                "{} visited {stray:?}, which its subjects do not name",
                r.id
            ));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Each family's own kind of mistake, made by one mock fault at several
/// places: the rule fails at two places at least, not only at one.
const CAUGHT: &[(&str, Fault)] = &[
    ("near.key", Fault::SecretPrefix32),
    ("near.path-ids", Fault::TokensCaseInsensitive),
    ("near.filters", Fault::FilterLikeWildcards),
    ("near.lookups", Fault::LookupCacheIgnoresQuery),
    ("near.positions", Fault::OffsetTruncated32),
    ("own.back-to-back", Fault::LookupCacheIgnoresQuery),
    ("writes.named-target", Fault::UnknownTargetActs),
    ("requests.head", Fault::HeadWithBody),
    ("requests.http10", Fault::ContinueToHttp10),
    ("requests.close", Fault::CloseIgnored),
    ("requests.pipelined", Fault::PipelineDropsSecond),
];

/// A legal choice at each family's edge: a server refusing what a near
/// miss looks like, or taking a liberty the family must not mistake for
/// its mistake. The rule passes.
const EDGES: &[(&str, Legal)] = &[
    ("near.key", Legal::InactiveKeyAccepted),
    ("near.path-ids", Legal::WildcardsRefused),
    ("near.filters", Legal::WildcardsRefused),
    ("near.filters", Legal::FragmentsCaseExact),
    ("near.lookups", Legal::WildcardsRefused),
    ("near.positions", Legal::HugeNumbers400),
    ("near.positions", Legal::LimitAboveMax400),
    ("own.back-to-back", Legal::OffsetMax7),
    ("writes.named-target", Legal::Export202),
    ("requests.http10", Legal::Http10Refused),
    ("requests.close", Legal::RequestCap),
    ("requests.pipelined", Legal::RequestCap),
    ("requests.pipelined", Legal::IdleClose),
    ("requests.head", Legal::Etags),
    ("requests.conditional", Legal::Etags),
];

/// The places where `id` failed in `report`.
fn failed_places(report: &serde_json::Value, id: &str) -> Vec<String> {
    rule(report, id)["failed_places"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn each_family_catches_its_kind_at_several_places_and_passes_its_edges() {
    let mut problems = Vec::new();
    for (id, fault) in CAUGHT {
        let server = MockServer::start(MockConfig::new().seed(9).fault(*fault)).unwrap();
        let (_, report) = json_run(&server, &["--rules", id, "--jobs", "2"]);
        let failed = failed_places(&report, id);
        if failed.len() < 2 {
            problems.push(format!("{id} against {fault}: failed at {failed:?} only"));
        }
    }
    for (id, legal) in EDGES {
        let server = MockServer::start(MockConfig::new().seed(9).legal(*legal)).unwrap();
        let (_, report) = json_run(&server, &["--rules", id, "--jobs", "2"]);
        let status = rule(&report, id)["status"].as_str().unwrap().to_owned();
        if status != "passed" {
            problems.push(format!("{id} with {legal}: {status}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
