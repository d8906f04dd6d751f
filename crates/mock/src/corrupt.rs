//! The JSON side of the faults: edits of a body after it is built.

use serde_json::{Value, json};

use crate::fault::{Fault, Faults};

/// Applies every active body fault to a success body; `later_page` for
/// a page after the first.
pub(crate) fn corrupt(faults: &Faults, body: &mut Value, later_page: bool) {
    if faults.has(Fault::WrongApiVersion) {
        body["api_version"] = json!("v2");
    }
    if faults.has(Fault::OffsetTimestamps) {
        walk(body, &mut |key, v| {
            if key == "created_at"
                && let Some(s) = v.as_str().and_then(|s| s.strip_suffix('Z'))
            {
                *v = json!(format!("{s}+05:00"));
            }
        });
    }
    if faults.has(Fault::EmptyStringNull) {
        walk(body, &mut |key, v| {
            if matches!(key, "settle_at" | "finished_at") && v.is_null() {
                *v = json!("");
            }
        });
    }
    let Some(data) = body.get_mut("data") else {
        return;
    };
    if later_page {
        later_pages(faults, data);
    }
    if faults.has(Fault::ChargesFeeShift)
        && data.get("payment_id").is_some()
        && data.get("fee_amount").is_some()
    {
        let shift = |v: &Value, by: i64| {
            let n: i64 = v.as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
            json!((n + by).to_string())
        };
        data["fee_amount"] = shift(&data["fee_amount"], 1);
        data["net_amount"] = shift(&data["net_amount"], -1);
    }
    if faults.has(Fault::CountTypesSwapped)
        && let Some(count) = data.get_mut("count")
    {
        *count = match count.take() {
            Value::Number(n) => json!(n.to_string()),
            Value::String(s) => s
                .parse::<u64>()
                .map(Value::from)
                .unwrap_or(Value::String(s)),
            other => other,
        };
    }
    if faults.has(Fault::FilteredExceedsTotal)
        && let Some(count) = data.get_mut("count").filter(|c| c.is_object())
    {
        let filtered: u64 = count["filtered_count"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if filtered > 0 {
            count["total_count"] = json!((filtered - 1).to_string());
        }
    }
    if faults.has(Fault::DecimalAmounts) {
        amend(data, "gross_amount", |v| {
            json!(format!("{}.50", v.as_str().unwrap_or("0")))
        });
    }
    if faults.has(Fault::NetMismatch) {
        amend(data, "net_amount", |v| {
            let n: i64 = v.as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
            json!((n + 1).to_string())
        });
    }
    if faults.has(Fault::LowercaseCurrency) {
        amend(data, "currency", |v| {
            json!(v.as_str().unwrap_or("").to_lowercase())
        });
    }
    if faults.has(Fault::ExportFinished)
        && let Some(export) = data.get_mut("report_export")
    {
        export["finished_at"] = export["started_at"].clone();
        export["status"] = json!("REPORT_STATUS_SUCCEEDED");
    }
    if faults.has(Fault::DatetimeAliasDates) && data.get("alias_type").is_some() {
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
    if data.get("bank_account").is_some() {
        // The aggregator record.
        let account = &mut data["bank_account"];
        if faults.has(Fault::IbanUnmasked) {
            account["redacted_iban"] = account["iban"].clone();
        }
        if faults.has(Fault::BankAccountBadId)
            && let Some(id) = account["id"].as_str()
        {
            account["id"] = json!(format!("ba-{id}"));
        }
        if faults.has(Fault::AggregatorKeysMasked) {
            for_rows(data, "keys", |key| {
                if key.get("secret").is_some() {
                    key["secret"] = json!("********");
                }
            });
        }
    }
    if data.get("rail_record_id").is_some() {
        // A rail merchant read alone.
        if faults.has(Fault::RailMerchantStatusUnknown) {
            data["status"] = json!("Pending");
        }
        if faults.has(Fault::RailMerchantReadDiffers) {
            data["updated_at"] = data["created_at"].clone();
        }
        unlinked_timestamp(faults, data);
    }
    for_rows(data, "merchants", |row| {
        if faults.has(Fault::ForeignAggregatorId) && row.get("aggregator_id").is_some() {
            row["aggregator_id"] = json!("agg_conformance0foreign");
        }
        unlinked_timestamp(faults, row);
    });
    for_rows(data, "qr_codes", |row| {
        if faults.has(Fault::DynamicQrPrefix)
            && row["type"] == "DYNAMIC"
            && let Some(t) = row["token"].as_str().and_then(|t| t.strip_prefix("qr_"))
        {
            row["token"] = json!(format!("qrd_{t}"));
        }
    });
    for_rows(data, "batches", |row| {
        if faults.has(Fault::NumericIdAsNumber)
            && let Some(n) = row["id"].as_str().and_then(|s| s.parse::<u64>().ok())
        {
            row["id"] = json!(n);
        }
        if faults.has(Fault::ShortBatchToken)
            && let Some(t) = row["token"].as_str()
        {
            row["token"] = json!(t[..t.len().saturating_sub(1)]);
        }
        if faults.has(Fault::MissingField)
            && let Some(obj) = row.as_object_mut()
        {
            obj.remove("file_name");
        }
    });
    for_rows(data, "transactions", |row| {
        if faults.has(Fault::WrongTxnPrefix)
            && let Some(t) = row["token"].as_str().and_then(|t| t.strip_prefix("txn_"))
        {
            row["token"] = json!(format!("tx_{t}"));
        }
        if faults.has(Fault::TransactionMerchantName)
            && let Some(name) = row["aggregator_merchant_name"].as_str()
        {
            row["aggregator_merchant_name"] = json!(name.to_uppercase());
        }
        if faults.has(Fault::RefundIdOnPayments) && row["refund_id"].is_null() {
            row["refund_id"] = json!("");
        }
        if faults.has(Fault::RefundNetMismatch)
            && row["transaction_type"] == "TT_REFUND"
            && let Some(n) = row["net_amount"]
                .as_str()
                .and_then(|s| s.parse::<i64>().ok())
        {
            row["net_amount"] = json!((n + 1).to_string());
        }
    });
    for_rows(data, "settlement_transactions", |row| {
        if faults.has(Fault::PayoutPrefix)
            && let Some(t) = row["token"].as_str().and_then(|t| t.strip_prefix("stxn_"))
        {
            row["token"] = json!(format!("po_{t}"));
        }
    });
    for_rows(data, "keys", |row| {
        if faults.has(Fault::MixedKeyShape) && row.get("key_id").is_some() {
            let numeric = row["id"]
                .as_str()
                .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()));
            if numeric && let Some(t) = row["token"].as_str().and_then(|t| t.strip_prefix("ak_")) {
                row["token"] = json!(format!("ak_tok_{t}"));
            }
        }
    });
    for_rows(data, "endpoints", |row| {
        if faults.has(Fault::EventFilterObject) {
            row["event_filter_json"] = json!(r#"{"events":["payment.created"]}"#);
        }
        if faults.has(Fault::WebhookUrlRelative)
            && let Some(path) = row["url"]
                .as_str()
                .and_then(|u| u.split_once("://"))
                .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_owned()))
        {
            row["url"] = json!(path);
        }
    });
}

/// The faults of pages after the first: a field gone from every row, a
/// count one more.
fn later_pages(faults: &Faults, data: &mut Value) {
    if faults.has(Fault::LaterPagesDropField) {
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
    }
    if faults.has(Fault::LaterPagesCountDrift)
        && let Some(count) = data.get_mut("count")
    {
        let more = |v: &Value| match v {
            Value::String(s) => s
                .parse::<u64>()
                .map_or_else(|_| v.clone(), |n| json!((n + 1).to_string())),
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
}

/// Applies the faults that edit an error body.
pub(crate) fn corrupt_error(faults: &Faults, status: u16, body: &mut Value) -> bool {
    let message = match status {
        400 if faults.has(Fault::BadRequestMessage) => "bad request",
        401 if faults.has(Fault::UnauthorizedMessage) => "access denied",
        401 if faults.has(Fault::UnauthorizedKeyMessage) => "invalid access key",
        404 if faults.has(Fault::NotFoundOtherMessage) => "no such thing",
        _ => return false,
    };
    let error = if body.get("error").is_some() {
        &mut body["error"]
    } else {
        body
    };
    if error.get("message").is_some() {
        error["message"] = json!(message);
        true
    } else {
        false
    }
}

/// A rail merchant without a status (not linked yet) gets a timestamp
/// that is not RFC 3339.
fn unlinked_timestamp(faults: &Faults, row: &mut Value) {
    if faults.has(Fault::UnlinkedMerchantBadTimestamp)
        && row.get("rail_record_id").is_some()
        && row["status"] == ""
    {
        row["updated_at"] = json!("2024-01-02 03:04:05");
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
