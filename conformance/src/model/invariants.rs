//! API.md's state-bound statements as invariants of a record: what a
//! field must hold in a state ("empty until produced", "null for payment
//! transactions", "a newly created export, with attempts at 1, started_at
//! set and finished_at null"). Held on every record the harness sees, in
//! whatever state the server shows it, not only in the state the harness
//! made.
//!
//! Where API.md leaves the choice of a value open but says what a value
//! means (REPORT_STATUS_SEEDED), the room is the choice, not the meaning:
//! a server that uses the value must honour what it says.

use serde_json::Value;

use crate::contract::OpId;
use crate::http::{Exchange, show};

/// The status API.md describes, and what it says of it.
pub const SEEDED: &str = "REPORT_STATUS_SEEDED";

/// Why a report export breaks a state-bound statement of API.md, if it
/// does.
pub fn export(record: &Value) -> Option<String> {
    let field = |name: &str| record.get(name);
    if record["status"] == SEEDED {
        // "REPORT_STATUS_SEEDED (a newly created export, with attempts at
        // 1, started_at set and finished_at null)".
        let meaning = [
            ("attempts", record["attempts"] == 1, "1"),
            (
                "started_at",
                record["started_at"].as_str().is_some_and(|s| !s.is_empty()),
                "set",
            ),
            ("finished_at", record["finished_at"].is_null(), "null"),
        ];
        for (name, ok, want) in meaning {
            if !ok {
                return Some(format!(
                    "report_export.{name} is {} in status {SEEDED}, which API.md says is a newly created export with {name} {want}",
                    show(field(name))
                ));
            }
        }
    }
    // "merchant_id: empty string when the export is of kind
    // REPORT_KIND_BATCH".
    if record["kind"] == "REPORT_KIND_BATCH" && record["merchant_id"] != "" {
        return Some(format!(
            "report_export.merchant_id is {} for kind REPORT_KIND_BATCH: API.md says an empty string",
            show(field("merchant_id"))
        ));
    }
    // "storage_key: location of the produced file; empty until produced":
    // a file is produced by a job that has finished.
    let storage = record["storage_key"].as_str().unwrap_or("");
    if !storage.is_empty() && record["finished_at"].is_null() {
        return Some(format!(
            "report_export.storage_key is {} while finished_at is null (status {}): API.md says it is empty until the file is produced",
            show(field("storage_key")),
            show(field("status"))
        ));
    }
    None
}

/// Transactions: "refund_id: null for payment transactions".
fn transaction(row: &Value) -> Option<String> {
    let payment = row["transaction_type"] == "TT_PAYMENT";
    (payment && !row["refund_id"].is_null()).then(|| {
        format!(
            "payment transaction {} carries refund_id {}: API.md says null for payment transactions",
            show(row.get("token")),
            show(row.get("refund_id"))
        )
    })
}

/// Why a successful answer of `op` breaks a state-bound statement, if it
/// does: its record, or any row of its list.
pub fn of_answer(op: OpId, e: &Exchange) -> Option<String> {
    let data = e.data()?;
    match op {
        OpId::ReportExport => export(&data["report_export"]),
        OpId::Transactions => data["transactions"]
            .as_array()?
            .iter()
            .find_map(transaction),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_seeded_export_means_what_api_md_says() {
        let seeded = json!({"status": SEEDED, "attempts": 1, "started_at": "2024-01-01T00:00:00Z",
            "finished_at": null, "storage_key": ""});
        assert_eq!(export(&seeded), None);
        let mut finished = seeded.clone();
        finished["attempts"] = json!(0);
        assert!(export(&finished).unwrap().contains("attempts"));
        let mut done = seeded.clone();
        done["finished_at"] = json!("2024-01-01T00:00:01Z");
        assert!(export(&done).unwrap().contains("finished_at"));
        // Another status is the server's choice, with its own meaning.
        let pending = json!({"status": "REPORT_STATUS_PENDING", "attempts": 0,
            "started_at": "2024-01-01T00:00:00Z", "finished_at": null, "storage_key": ""});
        assert_eq!(export(&pending), None);
        let mut early = pending.clone();
        early["storage_key"] = json!("reports/rpt_1.csv");
        assert!(export(&early).unwrap().contains("empty until"));
        let produced = json!({"status": "REPORT_STATUS_SUCCEEDED", "attempts": 1,
            "started_at": "2024-01-01T00:00:00Z", "finished_at": "2024-01-01T00:00:02Z",
            "storage_key": "reports/rpt_1.csv"});
        assert_eq!(export(&produced), None);
    }
}
