//! The body faults, one entry each: what every fault of the `Body` layer
//! does to a finished JSON body. (Wire faults are applied where the
//! response is written, `server/service.rs`; behaviour faults in the
//! handler of their resource.)

use serde_json::{Value, json};

use crate::fault::{Fault, Faults};

/// What an edit is given.
#[derive(Clone, Copy)]
enum Part {
    /// The whole success body.
    Body,
    /// Its `data`.
    Data,
    /// The `data` of a page after the first.
    LaterPage,
    /// Each row of the list `data[name]`.
    Rows(&'static str),
    /// The error object of an error body with this status.
    Error(u16),
}

type Edit = fn(&mut Value);

/// Every body fault: the part of the body it edits, and how.
const EDITS: &[(Fault, Part, Edit)] = &[
    (Fault::WrongApiVersion, Part::Body, |body| {
        body["api_version"] = json!("v2");
    }),
    (Fault::OffsetTimestamps, Part::Body, |body| {
        walk(body, &mut |key, v| {
            if key == "created_at"
                && let Some(s) = v.as_str().and_then(|s| s.strip_suffix('Z'))
            {
                *v = json!(format!("{s}+05:00"));
            }
        });
    }),
    (Fault::EmptyStringNull, Part::Body, |body| {
        walk(body, &mut |key, v| {
            if matches!(key, "settle_at" | "finished_at") && v.is_null() {
                *v = json!("");
            }
        });
    }),
    (Fault::LaterPagesDropField, Part::LaterPage, |data| {
        for list in [
            "batches",
            "transactions",
            "keys",
            "merchants",
            "qr_codes",
            "endpoints",
        ] {
            for_rows(data, list, |row| {
                if let Some(obj) = row.as_object_mut() {
                    obj.remove("created_at");
                }
            });
        }
    }),
    (Fault::LaterPagesCountDrift, Part::LaterPage, count_drift),
    (Fault::ChargesFeeShift, Part::Data, |data| {
        if data.get("payment_id").is_some() && data.get("fee_amount").is_some() {
            data["fee_amount"] = add(&data["fee_amount"], 1);
            data["net_amount"] = add(&data["net_amount"], -1);
        }
    }),
    (Fault::CountTypesSwapped, Part::Data, |data| {
        if let Some(count) = data.get_mut("count") {
            *count = match count.take() {
                Value::Number(n) => json!(n.to_string()),
                Value::String(s) => s
                    .parse::<u64>()
                    .map(Value::from)
                    .unwrap_or(Value::String(s)),
                other => other,
            };
        }
    }),
    (Fault::FilteredExceedsTotal, Part::Data, |data| {
        if let Some(count) = data.get_mut("count").filter(|c| c.is_object()) {
            let filtered: u64 = count["filtered_count"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            if filtered > 0 {
                count["total_count"] = json!((filtered - 1).to_string());
            }
        }
    }),
    (Fault::DecimalAmounts, Part::Data, |data| {
        amend(data, "gross_amount", |v| {
            json!(format!("{}.50", v.as_str().unwrap_or("0")))
        });
    }),
    (Fault::NetMismatch, Part::Data, |data| {
        amend(data, "net_amount", |v| add(v, 1));
    }),
    (Fault::LowercaseCurrency, Part::Data, |data| {
        amend(data, "currency", |v| {
            json!(v.as_str().unwrap_or("").to_lowercase())
        });
    }),
    (Fault::ExportFinished, Part::Data, |data| {
        if let Some(export) = data.get_mut("report_export") {
            export["finished_at"] = export["started_at"].clone();
            export["status"] = json!("REPORT_STATUS_SUCCEEDED");
        }
    }),
    (Fault::ExportFinishedEarly, Part::Data, |data| {
        if let Some(export) = data.get_mut("report_export") {
            export["finished_at"] = json!("2000-01-01T00:00:00Z");
            export["status"] = json!("REPORT_STATUS_SUCCEEDED");
        }
    }),
    (Fault::ExportSeededFinished, Part::Data, |data| {
        if let Some(export) = data.get_mut("report_export") {
            export["status"] = json!("REPORT_STATUS_SEEDED");
            export["attempts"] = json!(0);
            let started = export["started_at"].clone();
            export["finished_at"] = started;
        }
    }),
    (Fault::ExportStorageKeyEarly, Part::Data, |data| {
        if let Some(export) = data.get_mut("report_export") {
            let token = export["token"].as_str().unwrap_or("rpt_").to_owned();
            export["storage_key"] = json!(format!("reports/{token}.csv"));
        }
    }),
    (Fault::DatetimeAliasDates, Part::Data, |data| {
        if data.get("alias_type").is_some() {
            for key in [
                "start_date",
                "expiration_date",
                "opening_date",
                "closing_date",
            ] {
                if let Some(d) = data[key].as_str() {
                    data[key] = json!(format!("{d}T00:00:00Z"));
                }
            }
        }
    }),
    (Fault::IbanUnmasked, Part::Data, |data| {
        if let Some(account) = data.get_mut("bank_account") {
            account["redacted_iban"] = account["iban"].clone();
        }
    }),
    (Fault::AliasRecordIdBad, Part::Data, |data| {
        if let Some(id) = data["alias_record_id"].as_str() {
            data["alias_record_id"] = json!(format!("ar-{id}"));
        }
    }),
    (Fault::AggregatorKeysMasked, Part::Data, |data| {
        // The keys of the aggregator record (the one with a bank account).
        if data.get("bank_account").is_some() {
            for_rows(data, "keys", |key| {
                if key.get("secret").is_some() {
                    key["secret"] = json!("********");
                }
            });
        }
    }),
    (Fault::RailMerchantStatusUnknown, Part::Data, |data| {
        if data.get("rail_record_id").is_some() {
            data["status"] = json!("Pending");
        }
    }),
    (Fault::RailMerchantReadDiffers, Part::Data, |data| {
        if data.get("rail_record_id").is_some() {
            data["updated_at"] = data["created_at"].clone();
        }
    }),
    (Fault::UnlinkedMerchantBadTimestamp, Part::Data, |data| {
        // A rail merchant read alone, or in a list.
        unlinked_timestamp(data);
        for_rows(data, "merchants", unlinked_timestamp);
    }),
    (Fault::ForeignAggregatorId, Part::Rows("merchants"), |row| {
        if row.get("aggregator_id").is_some() {
            row["aggregator_id"] = json!("agg_conformance0foreign");
        }
    }),
    (Fault::DynamicQrPrefix, Part::Rows("qr_codes"), |row| {
        if row["type"] == "DYNAMIC" {
            replace_prefix(row, "qr_", "qrd_");
        }
    }),
    (Fault::NumericIdAsNumber, Part::Rows("batches"), |row| {
        if let Some(n) = row["id"].as_str().and_then(|s| s.parse::<u64>().ok()) {
            row["id"] = json!(n);
        }
    }),
    (Fault::ShortBatchToken, Part::Rows("batches"), |row| {
        if let Some(t) = row["token"].as_str() {
            row["token"] = json!(t[..t.len().saturating_sub(1)]);
        }
    }),
    (Fault::MissingField, Part::Rows("batches"), |row| {
        if let Some(obj) = row.as_object_mut() {
            obj.remove("file_name");
        }
    }),
    (Fault::WrongTxnPrefix, Part::Rows("transactions"), |row| {
        replace_prefix(row, "txn_", "tx_");
    }),
    (
        Fault::TransactionMerchantName,
        Part::Rows("transactions"),
        |row| {
            if let Some(name) = row["aggregator_merchant_name"].as_str() {
                row["aggregator_merchant_name"] = json!(name.to_uppercase());
            }
        },
    ),
    (
        Fault::RefundIdOnPayments,
        Part::Rows("transactions"),
        |row| {
            if row["refund_id"].is_null() {
                row["refund_id"] = json!("");
            }
        },
    ),
    (
        Fault::RefundNetMismatch,
        Part::Rows("transactions"),
        |row| {
            if row["transaction_type"] == "TT_REFUND" && row["net_amount"].is_string() {
                row["net_amount"] = add(&row["net_amount"], 1);
            }
        },
    ),
    (
        Fault::PayoutPrefix,
        Part::Rows("settlement_transactions"),
        |row| {
            replace_prefix(row, "stxn_", "po_");
        },
    ),
    (Fault::MixedKeyShape, Part::Rows("keys"), |row| {
        let numeric = row["id"]
            .as_str()
            .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()));
        if row.get("key_id").is_some() && numeric {
            replace_prefix(row, "ak_", "ak_tok_");
        }
    }),
    (Fault::EventFilterObject, Part::Rows("endpoints"), |row| {
        row["event_filter_json"] = json!(r#"{"events":["payment.created"]}"#);
    }),
    (Fault::WebhookUrlRelative, Part::Rows("endpoints"), |row| {
        if let Some(path) = row["url"]
            .as_str()
            .and_then(|u| u.split_once("://"))
            .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_owned()))
        {
            row["url"] = json!(path);
        }
    }),
    (Fault::BadRequestMessage, Part::Error(400), |body| {
        set_message(body, "bad request");
    }),
    (Fault::UnauthorizedMessage, Part::Error(401), |body| {
        set_message(body, "access denied");
    }),
    (Fault::UnauthorizedKeyMessage, Part::Error(401), |body| {
        set_message(body, "invalid access key");
    }),
    (Fault::NotFoundOtherMessage, Part::Error(404), |body| {
        set_message(body, "no such thing");
    }),
    (
        Fault::BadRequestEnvelope,
        Part::Error(400),
        wrap_in_envelope,
    ),
    (Fault::NotFoundEnvelope, Part::Error(404), wrap_in_envelope),
];

/// Applies every active body fault to a success body; `later_page` for
/// a page after the first.
pub(crate) fn corrupt(faults: &Faults, body: &mut Value, later_page: bool) {
    for (fault, part, edit) in EDITS {
        if !faults.has(*fault) {
            continue;
        }
        match part {
            Part::Body => edit(body),
            Part::Data | Part::LaterPage => {
                if let Some(data) = body.get_mut("data")
                    && (later_page || matches!(part, Part::Data))
                {
                    edit(data);
                }
            }
            Part::Rows(list) => {
                if let Some(data) = body.get_mut("data") {
                    for_rows(data, list, edit);
                }
            }
            Part::Error(_) => {}
        }
    }
}

/// Applies the faults that edit an error body of `status`; true when one
/// did.
pub(crate) fn corrupt_error(faults: &Faults, status: u16, body: &mut Value) -> bool {
    let mut edited = false;
    for (fault, part, edit) in EDITS {
        if matches!(part, Part::Error(s) if *s == status) && faults.has(*fault) {
            edit(body);
            edited = true;
        }
    }
    edited
}

/// Sets the `message` of an error body, in either of its forms.
fn set_message(body: &mut Value, message: &str) {
    let error = if body.get("error").is_some() {
        &mut body["error"]
    } else {
        body
    };
    if let Some(m) = error.get_mut("message") {
        *m = json!(message);
    }
}

/// A bare error body sent inside the envelope form.
fn wrap_in_envelope(body: &mut Value) {
    if body.get("error").is_none() {
        *body = json!({"api_version": "v1", "error": body.take()});
    }
}

/// One more in each count of a page.
fn count_drift(data: &mut Value) {
    let Some(count) = data.get_mut("count") else {
        return;
    };
    let more = |v: &Value| match v {
        Value::String(_) => add(v, 1),
        Value::Number(n) => n.as_u64().map_or_else(|| v.clone(), |n| json!(n + 1)),
        other => other.clone(),
    };
    if count.is_object() {
        for k in ["filtered_count", "total_count"] {
            count[k] = more(&count[k]);
        }
    } else {
        *count = more(count);
    }
}

/// A rail merchant without a status (not linked yet) gets a timestamp
/// that is not RFC 3339.
fn unlinked_timestamp(row: &mut Value) {
    if row.get("rail_record_id").is_some() && row["status"] == "" {
        row["updated_at"] = json!("2024-01-02 03:04:05");
    }
}

/// A decimal string plus `by` (a value that is not one stays as it is).
fn add(v: &Value, by: i64) -> Value {
    match v.as_str().and_then(|s| s.parse::<i64>().ok()) {
        Some(n) => json!((n + by).to_string()),
        None => v.clone(),
    }
}

/// The `token` of a row with `from` as its prefix gets `to` instead.
fn replace_prefix(row: &mut Value, from: &str, to: &str) {
    if let Some(rest) = row["token"].as_str().and_then(|t| t.strip_prefix(from)) {
        row["token"] = json!(format!("{to}{rest}"));
    }
}

/// Visits every (key, value) pair below `value`.
fn walk(value: &mut Value, f: &mut impl FnMut(&str, &mut Value)) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                f(k, v);
                walk(v, f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, f)),
        _ => {}
    }
}

fn for_rows(data: &mut Value, list: &str, mut f: impl FnMut(&mut Value)) {
    if let Some(rows) = data.get_mut(list).and_then(Value::as_array_mut) {
        rows.iter_mut().for_each(&mut f);
    }
}

/// Changes `field` of the charges object and of every transaction.
fn amend(data: &mut Value, field: &str, f: impl Fn(&Value) -> Value) {
    if data.get("payment_id").is_some() && data.get(field).is_some() {
        data[field] = f(&data[field]);
    }
    for_rows(data, "transactions", |row| {
        if row.get(field).is_some() {
            row[field] = f(&row[field]);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultLayer;

    /// One file answers "what does this body fault do": every fault of
    /// the body layer has its entry here, once.
    #[test]
    fn every_body_fault_is_in_the_registry_once() {
        for fault in Fault::ALL {
            let entries = EDITS.iter().filter(|(f, _, _)| f == fault).count();
            let expected = usize::from(fault.layer() == FaultLayer::Body);
            assert_eq!(entries, expected, "{}", fault.name());
        }
    }
}
