//! The two writes: report-export creation and key rotation.

use serde_json::Value;

use super::support::{Judge, sample};
use super::{Failure, Level, Outcome, Rule};
use crate::ctx::Ctx;
use crate::http::{Auth, Request, show};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "exports.seeded",
            level: Level::Required,
            source: "API.md States (Report export status: REPORT_STATUS_SEEDED, attempts 1, started_at set, finished_at null); ReportExport",
            summary: "a new batch export is REPORT_STATUS_SEEDED with attempts 1, started_at set, finished_at null, merchant_id empty",
            faults: &["export-finished"],
            check: seeded,
        },
        Rule {
            id: "keys.rotation",
            level: Level::Required,
            source: "API.md Access keys (rotate returns the AccessKey with the new secret)",
            summary: "rotation returns the key with a secret different from the one before",
            faults: &["rotate-same-secret"],
            check: rotation,
        },
        Rule {
            id: "wire.rotation-revokes-old",
            level: Level::Observation,
            source: "WIRE.md Authentication in the mock (the old secret stops working at once)",
            summary: "after rotation the old secret gets 401",
            faults: &["rotate-keeps-old-secret"],
            check: revokes_old,
        },
        Rule {
            id: "wire.export-validation",
            level: Level::Observation,
            source: "WIRE.md (settlement_batch_id and kind are required; 400 bare)",
            summary: "an export request without its required fields gets 400",
            faults: &["export-accepts-empty-body"],
            check: export_validation,
        },
    ]
}

fn seeded(ctx: &Ctx) -> Outcome {
    let e = match sample(ctx, "report-export") {
        Ok(e) => e,
        Err(why) => return Outcome::skipped(why),
    };
    let mut judge = Judge::default();
    let Some(export) = e.data().map(|d| &d["report_export"]) else {
        judge.check(false, || {
            Failure::at(ctx, e, "creating a batch export did not succeed")
        });
        return judge.outcome();
    };
    let expect = |field: &str, ok: bool, want: &str, judge: &mut Judge| {
        judge.check(ok, || {
            Failure::at(
                ctx,
                e,
                format!(
                    "report_export.{field} is {}, expected {want}",
                    show(export.get(field))
                ),
            )
        });
    };
    expect(
        "status",
        export["status"] == "REPORT_STATUS_SEEDED",
        "REPORT_STATUS_SEEDED",
        &mut judge,
    );
    expect("attempts", export["attempts"] == 1, "1", &mut judge);
    expect(
        "started_at",
        export["started_at"]
            .as_str()
            .is_some_and(aggpay::rules::is_utc_timestamp),
        "a timestamp",
        &mut judge,
    );
    expect(
        "finished_at",
        export["finished_at"].is_null(),
        "null",
        &mut judge,
    );
    expect(
        "merchant_id",
        export["merchant_id"] == "",
        "\"\" for REPORT_KIND_BATCH",
        &mut judge,
    );
    expect(
        "kind",
        export["kind"] == "REPORT_KIND_BATCH",
        "REPORT_KIND_BATCH",
        &mut judge,
    );
    let batch = ctx.found.batches.first().map(String::as_str).unwrap_or("");
    expect(
        "settlement_batch_id",
        export["settlement_batch_id"] == batch,
        "the exported batch",
        &mut judge,
    );
    judge.outcome()
}

fn rotation(ctx: &Ctx) -> Outcome {
    let e = match sample(ctx, "rotate") {
        Ok(e) => e,
        Err(why) => return Outcome::skipped(why),
    };
    let mut judge = Judge::default();
    let new = e.data().and_then(|d| d["secret"].as_str());
    judge.check(new.is_some_and(|s| !s.is_empty()), || {
        Failure::at(ctx, e, "rotation did not return a key with a secret")
    });
    if let (Some(new), Some(old)) = (new, &ctx.found.secret_before_rotation) {
        judge.check(new != old, || {
            Failure::at(ctx, e, "rotation returned the secret the key already had")
        });
    }
    judge.outcome()
}

fn revokes_old(ctx: &Ctx) -> Outcome {
    let Some(old) = &ctx.found.secret_before_rotation else {
        return Outcome::skipped(
            ctx.unsampled
                .get("rotate")
                .cloned()
                .unwrap_or_else(|| "the key was not rotated".into()),
        );
    };
    if !ctx.corpus.get("rotate").is_some_and(|e| e.success()) {
        return Outcome::skipped("the rotation did not succeed");
    }
    let mut judge = Judge::default();
    let e = ctx
        .http
        .send(Request::get("/ledger/accounts").auth(Auth::Other(old.clone())));
    judge.check(e.status() == Some(401), || {
        Failure::at(ctx, &e, "the old secret still works after rotation")
    });
    judge.outcome()
}

fn export_validation(ctx: &Ctx) -> Outcome {
    if !ctx.options.allow_writes {
        return Outcome::skipped("a write: pass --allow-writes");
    }
    let mut judge = Judge::default();
    let batch = ctx.found.batches.first().cloned().unwrap_or_default();
    for body in [
        serde_json::json!({}),
        serde_json::json!({"settlement_batch_id": batch}),
        serde_json::json!({"kind": "REPORT_KIND_BATCH"}),
    ] {
        let r = Request {
            method: "POST",
            body: Some(body.to_string()),
            ..Request::get("/settlements/report-exports")
        };
        let e = ctx.http.send(r);
        let code = e
            .json
            .as_ref()
            .and_then(|v| v.get("code"))
            .and_then(Value::as_str);
        judge.check(
            e.status() == Some(400) && code == Some("error.bad_request"),
            || {
                Failure::at(
                    ctx,
                    &e,
                    format!("body {body}: not refused with a bare 400 error.bad_request"),
                )
            },
        );
    }
    judge.outcome()
}
