//! exports.*: a new report export is seeded, and is the export asked for.

use aggpay_mock::Fault;
use serde_json::Value;

use super::support::{Judge, text};
use super::{Check, Claim, Kind, Level, Outcome, Rule, Run};
use crate::contract::OpId;
use crate::contract::subject::{Said, Subject, on};
use crate::ctx::Sampled;
use crate::http::show;

const EXPORT_FIELDS: Claim = Claim {
    holds: "a new batch export's status is a REPORT_STATUS_* name, started_at a timestamp, finished_at null or a timestamp not before started_at, merchant_id empty",
    says: &[
        "| status | string | REPORT_STATUS_* name |",
        "| started_at | timestamp | |",
        "| finished_at | timestamp or null | |",
        "| merchant_id | string | empty string when the export is of kind REPORT_KIND_BATCH |",
    ],
};
const EXPORT_STATUS_MEANT: Claim = Claim {
    holds: "a status a server chooses means what API.md says it means (REPORT_STATUS_SEEDED: attempts 1, started_at set, finished_at null), and storage_key is empty until the file is produced",
    says: &[
        "a newly created export, with attempts at 1, started_at set and finished_at null",
        "location of the produced file; empty until produced",
    ],
};
pub(crate) const EXPORT_IS_ASKED: Claim = Claim {
    holds: "a created export is for the batch, the kind and the merchant asked",
    says: &[
        "creates an asynchronous report export job for a batch or merchant scope.",
        "| settlement_batch_id | string | batch token to export |",
        "| kind | string | REPORT_KIND_BATCH or REPORT_KIND_MERCHANT |",
        "| merchant_id | string | optional; rail merchant (mer_) for kind REPORT_KIND_MERCHANT; empty for REPORT_KIND_BATCH |",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "exports.seeded",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md ReportExport (status a REPORT_STATUS_* name; started_at a timestamp; finished_at a timestamp or null; merchant_id empty for REPORT_KIND_BATCH)",
            claims: &[
                EXPORT_FIELDS,
                EXPORT_STATUS_MEANT,
                super::envelope::VALID_REQUEST_SUCCEEDS,
            ],
            summary: "a new batch export has a REPORT_STATUS_* status, started_at a timestamp, finished_at null or not before started_at, merchant_id empty; whichever status a server chooses means what API.md says it means (REPORT_STATUS_SEEDED: attempts 1, started_at set, finished_at null), and storage_key is empty until the file is produced",
            faults: &[
                Fault::ExportSeededFinished,
                Fault::ExportStorageKeyEarly,
                Fault::ExportFinishedEarly,
                Fault::ShortBatchToken,
                Fault::EmptyStringNull,
            ],
            judges: &[
                Subject::Body(on::report_export),
                Subject::Said(Said::ExportStatus),
            ],
            run: Run::Check(seeded),
        },
        Rule {
            id: "exports.match",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Settlements (creates a report export job for a batch or merchant scope; body settlement_batch_id, kind, merchant_id)",
            claims: &[EXPORT_IS_ASKED, super::envelope::VALID_REQUEST_SUCCEEDS],
            summary: "a created export, of either kind, is for the batch (one from inside the list, not the newest), the kind and the merchant asked",
            faults: &[
                Fault::ExportOtherBatch,
                Fault::ShortBatchToken,
                Fault::ExportNewestBatch,
            ],
            judges: &[
                Subject::Body(on::report_export),
                Subject::BodyField(|op, _| on::report_export(op)),
            ],
            run: Run::Check(matches),
        },
    ]
}

fn seeded(c: &Check<'_>) -> Outcome {
    let e = match c.ctx.sample_or_why(OpId::ReportExport) {
        Ok(e) => e,
        Err(why) => return Outcome::skipped(why),
    };
    let mut judge = Judge::default();
    let Some(export) = e.data().map(|d| &d["report_export"]) else {
        judge.check(false, || {
            c.fail(
                &super::envelope::VALID_REQUEST_SUCCEEDS,
                e,
                "creating a batch export did not succeed",
            )
        });
        return judge.outcome();
    };
    let mut expect = |field: &str, ok: bool, want: &str| {
        judge.check(ok, || {
            c.fail(
                &EXPORT_FIELDS,
                e,
                format!(
                    "report_export.{field} is {}, expected {want}",
                    show(export.get(field))
                ),
            )
        });
    };
    // API.md shows REPORT_STATUS_SEEDED, attempts 1 and finished_at null
    // only as what was observed of a new export ("Other values and
    // transitions: not shown"): `wire.export-seeded` reports them. What
    // holds is the field table's.
    expect(
        "status",
        export["status"]
            .as_str()
            .is_some_and(|s| s.starts_with("REPORT_STATUS_")),
        "a REPORT_STATUS_* name",
    );
    let started = export["started_at"].as_str().and_then(timestamp);
    expect("started_at", started.is_some(), "a timestamp");
    let finished_ok = match &export["finished_at"] {
        Value::Null => true,
        Value::String(s) => timestamp(s).is_some_and(|f| started.is_none_or(|s| f >= s)),
        _ => false,
    };
    expect(
        "finished_at",
        finished_ok,
        "null, or a timestamp not before started_at",
    );
    expect(
        "merchant_id",
        export["merchant_id"] == "",
        "\"\" for REPORT_KIND_BATCH",
    );
    // The room is the choice of status, not the meaning of one: a server
    // that says REPORT_STATUS_SEEDED must mean it, and no status makes a
    // file produced before it is.
    let broken = crate::model::invariants::export(export);
    judge.check(broken.is_none(), || {
        c.fail(&EXPORT_STATUS_MEANT, e, broken.unwrap_or_default())
    });
    judge.outcome()
}

/// An RFC 3339 UTC timestamp, read.
fn timestamp(s: &str) -> Option<jiff::Timestamp> {
    aggpay_internal::syntax::is_utc_timestamp(s)
        .then(|| s.parse().ok())
        .flatten()
}

fn matches(c: &Check<'_>) -> Outcome {
    let mut judge = Judge::default();
    for op in [Sampled::Op(OpId::ReportExport), Sampled::MerchantExport] {
        for e in c.ctx.samples(op) {
            let asked: Value = e
                .request
                .body
                .as_deref()
                .and_then(|b| serde_json::from_str(b).ok())
                .unwrap_or_default();
            let Some(export) = e.data().map(|d| &d["report_export"]) else {
                judge.check(false, || {
                    c.fail(
                        &super::envelope::VALID_REQUEST_SUCCEEDS,
                        e,
                        format!("{op}: creating the export did not succeed"),
                    )
                });
                continue;
            };
            for field in ["settlement_batch_id", "kind", "merchant_id"] {
                let want = text(&asked, field);
                let got = text(export, field);
                judge.check(want == got, || {
                    c.fail(
                        &EXPORT_IS_ASKED,
                        e,
                        format!("{op}: asked for {field} {want:?}, the export has {got:?}"),
                    )
                });
            }
        }
    }
    if judge.cases == 0 {
        return Outcome::skipped(
            c.ctx
                .sample_or_why(OpId::ReportExport)
                .err()
                .unwrap_or_else(|| "no export was created".into()),
        );
    }
    judge.outcome()
}
