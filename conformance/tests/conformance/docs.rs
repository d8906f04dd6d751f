//! The harness's page (docs/conformance.md) documents every rule and the
//! faults that break it (its table is generated: a unit test of
//! `coverage` pins it); `--list-rules` and `--coverage` print them.

use aggpay_conformance::{EXIT_OK, catalogue};

use crate::support::harness;

#[test]
fn the_rule_catalogue_is_listed_and_documented() {
    let (code, out, _) = harness(&["--list-rules"]);
    assert_eq!(code, EXIT_OK);
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/conformance.md"
    ))
    .unwrap();
    for rule in catalogue() {
        assert!(out.contains(rule.id));
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `{}`", rule.id)))
            .unwrap_or_else(|| panic!("docs/conformance.md's rule table lacks {}", rule.id));
        for fault in rule.faults {
            assert!(
                row.contains(&format!("`{fault}`")),
                "docs/conformance.md's row of {} lacks fault {fault}",
                rule.id
            );
        }
    }
}

#[test]
fn coverage_is_printed() {
    let (code, out, _) = harness(&["--coverage"]);
    assert_eq!(code, EXIT_OK);
    let file =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../COVERAGE.md")).unwrap();
    assert_eq!(out, file);
}
