//! The three reporters pinned on one fixed run (insta snapshots): a pass,
//! a new required failure with evidence, a failed observation, a known
//! failure, an inconclusive rule (only transient failures), a skip, a
//! rule the run budget stopped, and a place a passing rule could not
//! judge.

use std::time::Duration;

use super::{Event, Mark, RuleReport, Summary, for_format};
use crate::baseline::Known;
use crate::cli::Format;
use crate::contract::{At, OpId, Place};
use crate::rules::{Evidence, Finding, Level, NotJudged, Outcome, Rule, Run, Status};

fn report(id: &'static str, level: Level, outcome: Outcome, known: bool) -> RuleReport {
    let marks = outcome
        .failures
        .iter()
        .enumerate()
        .map(|(i, _)| Mark {
            fingerprint: format!("{:016x}", 0x1234_5678_9abc_def0_u64 + i as u64),
            known,
        })
        .collect();
    RuleReport {
        rule: Rule {
            id,
            level,
            kind: crate::rules::Kind::Check,
            source: "API.md §Example",
            claims: &[EXAMPLE],
            summary: "an example rule",
            faults: &[aggpay_mock::Fault::NoAuth],
            judges: &[],
            run: Run::Check(|_| unreachable!("a report's rule is not run")),
        },
        outcome,
        duration: Duration::from_millis(1_250),
        marks,
        counts: level == Level::Required,
    }
}

/// The claim every failure of the fixture breaks.
const EXAMPLE: crate::rules::Claim = crate::rules::Claim {
    holds: "every operation requires the key",
    says: &["Every operation requires the header."],
};

fn evidence() -> Option<Box<Evidence>> {
    Some(Box::new(Evidence {
        method: "GET".into(),
        url: "http://127.0.0.1:9/v1/aggregators/4242/settlements/batches?limit=0".into(),
        status: Some(200),
        body: r#"{"success":true,"data":{"batches":[]},"secret":"<redacted>","note":"\u{1b}[31m"}"#
            .into(),
        curl: "curl -sS -H 'X-API-Key: <redacted>' 'http://127.0.0.1:9/v1/aggregators/4242/settlements/batches?limit=0'".into(),
        refused: false,
    }))
}

fn fixture() -> (Summary, Vec<RuleReport>) {
    let failed = Outcome::judged(
        64,
        vec![Finding {
            claim: Some(&EXAMPLE),
            message: "limit=0 was answered 200, not 400".into(),
            inconclusive: false,
            input: Some("(0, \"DESC\")".into()),
            evidence: evidence(),
        }],
    );
    let warned = Outcome::judged(
        12,
        vec![Finding {
            claim: Some(&EXAMPLE),
            message: "no Date header".into(),
            inconclusive: false,
            input: None,
            evidence: None,
        }],
    );
    let known = Outcome::judged(
        3,
        vec![Finding {
            claim: Some(&EXAMPLE),
            message: "merchant 9 is not in the aggregator's list".into(),
            inconclusive: false,
            input: None,
            evidence: evidence(),
        }],
    );
    let unsure = Outcome::judged(
        17,
        vec![Finding {
            claim: Some(&EXAMPLE),
            message:
                "refunds: a valid request did not succeed (transient: 503 on each of 8 attempts)"
                    .into(),
            inconclusive: true,
            input: None,
            evidence: evidence(),
        }],
    );
    let rules = vec![
        report(
            "lists.envelope",
            Level::Required,
            Outcome {
                not_judged: vec![NotJudged {
                    place: Place::new(OpId::Refunds, At::Param("limit")),
                    reason:
                        "no answer shows that the refund list reads limit: every page is the first"
                            .into(),
                }],
                ..Outcome::judged(40, vec![])
            },
            false,
        ),
        report("cursor.limit", Level::Required, failed, false),
        report("wire.date", Level::Observation, warned, false),
        report("scope.merchants", Level::Required, known, true),
        report("offset.pages", Level::Required, unsure, false),
        report(
            "keys.rotation",
            Level::Required,
            Outcome::skipped("the server has no second key"),
            false,
        ),
        report(
            "input.arbitrary",
            Level::Required,
            Outcome::not_run(),
            false,
        ),
    ];
    let summary = Summary {
        target: "http://127.0.0.1:9/v1 (aggregator 4242)".into(),
        seed: 7,
        cases: 64,
        strict: false,
        jobs: 16,
        passed: 1,
        failed: 2,
        known: 1,
        skipped: 1,
        not_run: 1,
        not_judged: 1,
        inconclusive: 1,
        required_inconclusive: 1,
        required_failed: 1,
        observations_failed: 1,
        fixed: vec![Known {
            rule: "errors.not-found".into(),
            fingerprint: "00000000deadbeef".into(),
            message: "unknown batch answered 200".into(),
        }],
        baseline: true,
        budget_spent: true,
        requests: 321,
        retries: 12,
        duration: Duration::from_millis(4_500),
        exit_code: 2,
    };
    (summary, rules)
}

fn render(format: Format) -> String {
    let (summary, rules) = fixture();
    let mut out = Vec::new();
    {
        let mut reporter = for_format(format, Box::new(&mut out));
        reporter
            .on(&Event::Started {
                target: &summary.target,
                seed: summary.seed,
                cases: summary.cases,
                rules: rules.len(),
                strict: summary.strict,
            })
            .unwrap();
        for r in &rules {
            reporter.on(&Event::Rule(r)).unwrap();
        }
        reporter
            .on(&Event::Done {
                summary: &summary,
                rules: &rules,
            })
            .unwrap();
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn fixture_covers_every_verdict() {
    let (_, rules) = fixture();
    let words: Vec<&str> = rules.iter().map(RuleReport::verdict).collect();
    assert_eq!(
        words,
        ["PASS", "FAIL", "WARN", "KNOWN", "UNSURE", "SKIP", "NORUN"]
    );
    assert_eq!(rules[4].outcome.status, Status::Inconclusive);
    assert_eq!(rules[6].outcome.status, Status::NotRun);
}

#[test]
fn human() {
    insta::assert_snapshot!(render(Format::Human));
}

#[test]
fn json() {
    let text = render(Format::Json);
    // It parses, and it is one document.
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["rules"].as_array().unwrap().len(), 7);
    insta::assert_snapshot!(text);
}

#[test]
fn junit() {
    insta::assert_snapshot!(render(Format::Junit));
}

#[test]
fn markdown() {
    insta::assert_snapshot!(render(Format::Markdown));
}

/// A run that could not be made, in each format that automation reads.
fn render_unusable(format: Format) -> String {
    let mut out = Vec::new();
    {
        let mut reporter = super::for_format(format, Box::new(&mut out));
        reporter
            .on(&Event::Unusable {
                target: "https://staging.example/pay",
                why: "the key was refused for aggregator agg_1 (401 on GET https://staging.example/pay/v1/aggregators/agg_1)",
            })
            .unwrap();
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn unusable_json() {
    let text = render_unusable(Format::Json);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["exit_code"], 2);
    insta::assert_snapshot!(text);
}

#[test]
fn unusable_junit() {
    insta::assert_snapshot!(render_unusable(Format::Junit));
}

#[test]
fn unusable_markdown() {
    insta::assert_snapshot!(render_unusable(Format::Markdown));
}

#[test]
fn unusable_human_prints_nothing_on_stdout() {
    assert_eq!(render_unusable(Format::Human), "");
}
