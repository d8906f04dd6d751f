//! The harness's page (docs/conformance.md) documents every rule and the
//! faults that break it (its table is generated: a unit test of
//! `coverage` pins it); `aggpay-conformance rules` and `aggpay-conformance
//! coverage` print them.

use aggpay_conformance::{EXIT_OK, catalogue};

use crate::support::harness;

#[test]
fn the_rule_catalogue_is_listed_and_documented() {
    let (code, out, _) = harness(&["rules"]);
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
    let (code, out, _) = harness(&["coverage"]);
    assert_eq!(code, EXIT_OK);
    let file =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../COVERAGE.md")).unwrap();
    assert_eq!(out, file);
}

/// A command that prints is not a run: an option of a run beside it is
/// refused, not quietly ignored.
#[test]
fn a_printing_command_refuses_the_options_of_a_run() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_aggpay-conformance"))
        .args(["--base-url", "http://127.0.0.1:9", "rules"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(i32::from(aggpay_conformance::EXIT_UNUSABLE)),
        "{err}"
    );
    assert!(err.contains("rules") && err.contains("--base-url"), "{err}");
    assert!(out.stdout.is_empty());
}
