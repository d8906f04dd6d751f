//! API.md's resource tables as data: every field, its JSON type and its
//! textual rule. The field rules walk wire JSON with these tables, so they
//! judge the server independently of the client's model types; the
//! operation table (`ops.rs`) says which `data` each operation answers.

use serde_json::Value;

/// What a field must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A string (may be empty).
    Str,
    /// A boolean.
    Bool,
    /// A JSON integer.
    Int,
    /// An object with these fields.
    Obj(&'static [Field]),
    /// Any object.
    AnyObj,
    /// An array of objects with these fields.
    Arr(&'static [Field]),
    /// A numeric id string (typing rule 2).
    Numeric,
    /// A numeric string such as `record_count`.
    NumStr,
    /// An identifier with this prefix (typing rule 1).
    Prefix(&'static str),
    /// Empty, or an identifier with this prefix.
    PrefixOrEmpty(&'static str),
    /// A 39-character `sb_` batch token.
    Batch,
    /// An amount in paisa (typing rule 3).
    Amount,
    /// An ISO 4217 code.
    Currency,
    /// An RFC 3339 UTC timestamp (typing rule 4).
    Ts,
    /// A timestamp or null, never "".
    NullTs,
    /// A calendar date YYYY-MM-DD.
    Date,
    /// A string or null.
    StrOrNull,
    /// A string holding a JSON array of strings.
    EventJson,
    /// The `id` or `token` of an access key (typing rule 2, its own rule).
    KeyPart,
    /// A list's `count`, in the form API.md gives it for that list.
    Count(CountForm),
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A name with this prefix (`REPORT_KIND_`…).
    Named(&'static str),
}

/// How a list gives its `count` (API.md: a string for most lists, an
/// integer for the access-key and refund lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountForm {
    /// A numeric string.
    Text,
    /// A JSON integer.
    Integer,
}

impl FieldKind {
    /// The JSON type the kind needs, as a word.
    pub fn json_type(self) -> &'static str {
        match self {
            FieldKind::Bool => "boolean",
            FieldKind::Int => "integer",
            FieldKind::Obj(_) | FieldKind::AnyObj => "object",
            FieldKind::Arr(_) => "array",
            FieldKind::NullTs | FieldKind::StrOrNull => "string or null",
            FieldKind::Count(CountForm::Text) => "string",
            FieldKind::Count(CountForm::Integer) => "integer",
            _ => "string",
        }
    }

    /// True when `v` has the kind's JSON type.
    pub fn type_matches(self, v: &Value) -> bool {
        match self {
            FieldKind::Bool => v.is_boolean(),
            FieldKind::Int => v.is_i64() || v.is_u64(),
            FieldKind::Obj(_) | FieldKind::AnyObj => v.is_object(),
            FieldKind::Arr(_) => v.is_array(),
            FieldKind::NullTs | FieldKind::StrOrNull => v.is_null() || v.is_string(),
            FieldKind::Count(CountForm::Text) => v.is_string(),
            FieldKind::Count(CountForm::Integer) => v.is_u64(),
            _ => v.is_string(),
        }
    }
}

/// One field of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Wire name.
    pub name: &'static str,
    /// What it holds.
    pub kind: FieldKind,
}

const fn f(name: &'static str, kind: FieldKind) -> Field {
    Field { name, kind }
}

/// The seven amounts of charges and transactions.
macro_rules! amounts {
    () => {
        [
            f("gross_amount", FieldKind::Amount),
            f("fee_amount", FieldKind::Amount),
            f("net_amount", FieldKind::Amount),
            f("sales_tax_on_fee_amount", FieldKind::Amount),
            f("sales_tax_withholding_amount", FieldKind::Amount),
            f("income_tax_withholding_amount", FieldKind::Amount),
            f("digital_tax_amount", FieldKind::Amount),
        ]
    };
}

const fn cat<const A: usize, const B: usize, const N: usize>(
    a: [Field; A],
    b: [Field; B],
) -> [Field; N] {
    let mut out = [f("", FieldKind::Str); N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// PaymentCharges.
pub const CHARGES: &[Field] = &cat::<2, 7, 9>(
    [
        f("payment_id", FieldKind::Prefix("pm_")),
        f("currency", FieldKind::Currency),
    ],
    amounts!(),
);

/// ReportExport.
pub const REPORT_EXPORT: &[Field] = &[
    f("id", FieldKind::Numeric),
    f("token", FieldKind::Prefix("rpt_")),
    f("settlement_batch_id", FieldKind::Batch),
    f("merchant_id", FieldKind::PrefixOrEmpty("mer_")),
    f("kind", FieldKind::Named("REPORT_KIND_")),
    f("status", FieldKind::Named("REPORT_STATUS_")),
    f("attempts", FieldKind::Int),
    f("error_message", FieldKind::Str),
    f("storage_key", FieldKind::Str),
    f("record_count", FieldKind::NumStr),
    f("file_size", FieldKind::NumStr),
    f("started_at", FieldKind::Ts),
    f("finished_at", FieldKind::NullTs),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
    f("partner_id", FieldKind::Prefix("partner_")),
    f("version", FieldKind::Int),
];

/// SettlementBatch.
pub const BATCH: &[Field] = &[
    f("id", FieldKind::Numeric),
    f("token", FieldKind::Batch),
    f("file_name", FieldKind::Str),
    f("date", FieldKind::Ts),
    f(
        "status",
        FieldKind::OneOf(&[
            "BATCH_CREATED",
            "BATCH_PROCESSING",
            "BATCH_COMPLETED",
            "BATCH_FAILED",
        ]),
    ),
    f("version", FieldKind::Int),
    f("created_by_job_id", FieldKind::Prefix("job_")),
    f("partner_id", FieldKind::Prefix("partner_")),
    f("created_at", FieldKind::Ts),
];

/// Transaction.
pub const TRANSACTION: &[Field] = &cat::<20, 7, 27>(
    [
        f("id", FieldKind::Numeric),
        f("token", FieldKind::Prefix("txn_")),
        f("payment_id", FieldKind::Prefix("pm_")),
        f("refund_id", FieldKind::StrOrNull),
        f("transaction_type", FieldKind::Str),
        f("payment_type", FieldKind::Str),
        f("status", FieldKind::Str),
        f("aggregator_id", FieldKind::Prefix("agg_")),
        f("aggregator_name", FieldKind::Str),
        f("aggregator_merchant_id", FieldKind::Prefix("am_")),
        f("aggregator_merchant_name", FieldKind::Str),
        f("rail_merchant_id", FieldKind::Prefix("mer_")),
        f("rail_merchant_name", FieldKind::Str),
        f("rail_merchant_ntn", FieldKind::Str),
        f("rail_merchant_province", FieldKind::Str),
        f("currency", FieldKind::Currency),
        f("latest_batch_id", FieldKind::Batch),
        f("partner_id", FieldKind::Prefix("partner_")),
        f("created_at", FieldKind::Ts),
        f("updated_at", FieldKind::Ts),
    ],
    amounts!(),
);

/// AggregatorMerchant.
pub const MERCHANT: &[Field] = &[
    f("id", FieldKind::Numeric),
    f("token", FieldKind::Prefix("am_")),
    f("name", FieldKind::Str),
    f("aggregator_id", FieldKind::Prefix("agg_")),
    f("merchant_id", FieldKind::Prefix("mer_")),
    f("merchant_external_id", FieldKind::Prefix("sec_")),
    f("bank_account_id", FieldKind::Prefix("acc_")),
    f("enabled", FieldKind::Bool),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
];

const ADDRESS: &[Field] = &[
    f("country", FieldKind::Str),
    f("city", FieldKind::Str),
    f("state_province_region", FieldKind::Str),
    f("address_line", FieldKind::Str),
];
const CONTACT: &[Field] = &[
    f("mobile_number", FieldKind::Str),
    f("email", FieldKind::Str),
];
const ADDITIONAL: &[Field] = &[
    f("dba", FieldKind::Str),
    f("mcc", FieldKind::Str),
    f("lat", FieldKind::Str),
    f("long", FieldKind::Str),
];

/// RailMerchant.
pub const RAIL_MERCHANT: &[Field] = &[
    f("id", FieldKind::Str),
    f("token", FieldKind::Prefix("mer_")),
    f("partner_id", FieldKind::Prefix("partner_")),
    f("rail_record_id", FieldKind::Str),
    f(
        "status",
        FieldKind::OneOf(&["Active", "Inactive", "Suspended", ""]),
    ),
    f("uid_type", FieldKind::Str),
    f("uid_value", FieldKind::Str),
    f("name", FieldKind::Str),
    f("document_type", FieldKind::Str),
    f("document_number", FieldKind::Str),
    f("address_details", FieldKind::Obj(ADDRESS)),
    f("contact_details", FieldKind::Obj(CONTACT)),
    f("additional_details", FieldKind::Obj(ADDITIONAL)),
    f("additional_details_private", FieldKind::AnyObj),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
];

/// QRCode.
pub const QR_CODE: &[Field] = &[
    f("id", FieldKind::Str),
    f("token", FieldKind::Prefix("qr_")),
    f("aggregator_merchant_id", FieldKind::Prefix("am_")),
    f("type", FieldKind::OneOf(&["STATIC", "DYNAMIC"])),
    f("code", FieldKind::Str),
    f("terminal_label", FieldKind::Str),
    f("reference_label", FieldKind::Str),
    f("is_deleted", FieldKind::Bool),
    f("created_at", FieldKind::Ts),
];

/// Refund.
pub const REFUND: &[Field] = &[
    f("token", FieldKind::Str),
    f("payment_id", FieldKind::Prefix("pm_")),
    f("amount", FieldKind::Amount),
    f("type", FieldKind::Str),
    f("reason", FieldKind::Str),
    f("addtl_info", FieldKind::Str),
    f("status", FieldKind::Str),
    f("trace_reference", FieldKind::Str),
    f("msg_id", FieldKind::Str),
    f("return_id", FieldKind::Str),
    f("request_id", FieldKind::Str),
    f("msg_created_at", FieldKind::Ts),
    f("settle_at", FieldKind::NullTs),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
];

/// AccountInfo.
pub const ACCOUNT_INFO: &[Field] = &[
    f("iban", FieldKind::Str),
    f("type", FieldKind::Str),
    f("currency", FieldKind::Currency),
    f("servicer_member_id", FieldKind::Str),
    f("name", FieldKind::Str),
    f("is_default", FieldKind::Bool),
    f("dba", FieldKind::Str),
    f("mcc", FieldKind::Str),
    f("account_title", FieldKind::Str),
    f("account_type", FieldKind::Str),
];

/// Alias.
pub const ALIAS: &[Field] = &[
    f("id", FieldKind::Str),
    f("token", FieldKind::Prefix("als_")),
    f("merchant_id", FieldKind::Prefix("mer_")),
    f("aggregator_merchant_id", FieldKind::Prefix("am_")),
    f("alias_type", FieldKind::Str),
    f("alias_value", FieldKind::Str),
    f("status", FieldKind::Str),
    f("start_date", FieldKind::Date),
    f("expiration_date", FieldKind::Date),
    f("opening_date", FieldKind::Date),
    f("closing_date", FieldKind::Date),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
    f("alias_record_id", FieldKind::NumStr),
];

/// AccessKey.
pub const ACCESS_KEY: &[Field] = &[
    f("id", FieldKind::KeyPart),
    f("token", FieldKind::KeyPart),
    f("key_id", FieldKind::Prefix("key_")),
    f("aggregator_id", FieldKind::Prefix("agg_")),
    f("is_active", FieldKind::Bool),
    f("name", FieldKind::Str),
    f("secret", FieldKind::Str),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
];

/// Fields of a record that a write to that record may change, by the
/// list that shows the record (the room `written-fields` quotes the
/// sentences that leave them open).
///
/// With writes allowed, the random sequences rotate keys and create
/// exports while other rules read: those rules compare a record with the
/// model without these fields, and `explore.sequences` holds a key's
/// secret to its machine.
pub const WRITTEN: &[Written] = &[
    Written {
        list: super::OpId::Keys,
        fields: &["secret", "updated_at", "key_id", "is_active"],
    },
    Written {
        list: super::OpId::Batches,
        fields: &["version"],
    },
];

/// The fields of the records one list shows that a write to a record
/// may change ([`WRITTEN`]).
#[derive(Debug, Clone, Copy)]
pub struct Written {
    /// The list.
    pub list: super::OpId,
    /// The fields.
    pub fields: &'static [&'static str],
}

impl Written {
    /// The fields a write may change of a record `list` shows.
    pub fn fields_of(list: super::OpId) -> &'static [&'static str] {
        WRITTEN
            .iter()
            .find(|w| w.list == list)
            .map_or(&[], |w| w.fields)
    }
}

/// BankAccount.
pub const BANK_ACCOUNT: &[Field] = &[
    f("id", FieldKind::Str),
    f("token", FieldKind::Prefix("acc_")),
    f("vault_token", FieldKind::Prefix("lock_")),
    f("title", FieldKind::Str),
    f("iban", FieldKind::Str),
    f("redacted_iban", FieldKind::Str),
    f("hashed_iban", FieldKind::Str),
    f("servicer", FieldKind::Str),
    f("bank", FieldKind::Str),
    f("depositor_id", FieldKind::Prefix("dep_")),
    f("owner", FieldKind::Str),
    f("kind", FieldKind::Int),
    f("version", FieldKind::Str),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
];

/// Aggregator.
pub const AGGREGATOR: &[Field] = &[
    f("id", FieldKind::Str),
    f("token", FieldKind::Prefix("agg_")),
    f("partner_id", FieldKind::Prefix("partner_")),
    f("bank_account_id", FieldKind::Prefix("acc_")),
    f("name", FieldKind::Str),
    f("is_active", FieldKind::Bool),
    f("is_super", FieldKind::Bool),
    f("vault_enabled", FieldKind::Bool),
    f("bank_account", FieldKind::Obj(BANK_ACCOUNT)),
    f("keys", FieldKind::Arr(ACCESS_KEY)),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
];

/// LedgerAccount.
pub const LEDGER: &[Field] = &[
    f("id", FieldKind::Str),
    f("token", FieldKind::Prefix("acct_")),
    f("account_type", FieldKind::Str),
    f("account_name", FieldKind::Str),
    f("normal_balance", FieldKind::Str),
    f("balance", FieldKind::Amount),
    f("running_balance", FieldKind::Amount),
    f("currency", FieldKind::Currency),
    f("vault_token", FieldKind::Prefix("lock_")),
    f("bank_acct_id", FieldKind::Prefix("acc_")),
    f("external_partner_id", FieldKind::Str),
    f("external_aggregator_id", FieldKind::Str),
    f("external_merchant_id", FieldKind::Str),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
];

/// WebhookEndpoint.
pub const WEBHOOK: &[Field] = &[
    f("token", FieldKind::Prefix("wh_")),
    f("aggregator_id", FieldKind::Prefix("agg_")),
    f("url", FieldKind::Str),
    f("description", FieldKind::Str),
    f("enabled", FieldKind::Bool),
    f("event_filter_json", FieldKind::EventJson),
    f("created_at", FieldKind::Ts),
    f("updated_at", FieldKind::Ts),
    f("secret_version", FieldKind::Int),
    f("secret_rotated_at", FieldKind::Ts),
];

const CURSOR_COUNT: &[Field] = &[
    f("filtered_count", FieldKind::NumStr),
    f("total_count", FieldKind::NumStr),
];

/// `data` of the access-key list.
pub const KEY_LIST: &[Field] = &[
    f("count", FieldKind::Count(CountForm::Integer)),
    f("keys", FieldKind::Arr(ACCESS_KEY)),
];
/// `data` of the merchant list.
pub const MERCHANT_LIST: &[Field] = &[
    f("merchants", FieldKind::Arr(MERCHANT)),
    f("count", FieldKind::Count(CountForm::Text)),
];
/// `data` of the rail-merchant list.
pub const RAIL_MERCHANT_LIST: &[Field] = &[
    f("merchants", FieldKind::Arr(RAIL_MERCHANT)),
    f("count", FieldKind::Count(CountForm::Text)),
];
/// `data` of the QR list.
pub const QR_LIST: &[Field] = &[
    f("qr_codes", FieldKind::Arr(QR_CODE)),
    f("count", FieldKind::Count(CountForm::Text)),
];
/// `data` of the refund list.
pub const REFUND_LIST: &[Field] = &[
    f("count", FieldKind::Count(CountForm::Integer)),
    f("keys", FieldKind::Arr(REFUND)),
];
/// `data` of the batch list.
pub const BATCH_LIST: &[Field] = &[
    f("batches", FieldKind::Arr(BATCH)),
    f("next_cursor", FieldKind::Str),
    f("count", FieldKind::Obj(CURSOR_COUNT)),
];
/// `data` of a batch's transactions. Payout elements are not shown by
/// API.md: only the array is required.
pub const TRANSACTION_LIST: &[Field] = &[
    f("settlement_transactions", FieldKind::Arr(&[])),
    f("transactions", FieldKind::Arr(TRANSACTION)),
    f("next_cursor", FieldKind::Str),
    f("count", FieldKind::Obj(CURSOR_COUNT)),
];
/// `data` of a created export.
pub const EXPORT_CREATED: &[Field] = &[f("report_export", FieldKind::Obj(REPORT_EXPORT))];
/// `data` of the webhook list.
pub const WEBHOOK_LIST: &[Field] = &[
    f("endpoints", FieldKind::Arr(WEBHOOK)),
    f("count", FieldKind::Count(CountForm::Text)),
];

/// Every resource table of API.md, by its name there (the schemas of
/// the OpenAPI document, the resource sections of COVERAGE.md).
pub const TABLES: &[(&str, &[Field])] = &[
    ("PaymentCharges", CHARGES),
    ("ReportExport", REPORT_EXPORT),
    ("SettlementBatch", BATCH),
    ("Transaction", TRANSACTION),
    ("AggregatorMerchant", MERCHANT),
    ("RailMerchant", RAIL_MERCHANT),
    ("QRCode", QR_CODE),
    ("Refund", REFUND),
    ("AccountInfo", ACCOUNT_INFO),
    ("Alias", ALIAS),
    ("Aggregator", AGGREGATOR),
    ("BankAccount", BANK_ACCOUNT),
    ("AccessKey", ACCESS_KEY),
    ("LedgerAccount", LEDGER),
    ("WebhookEndpoint", WEBHOOK),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_complete() {
        assert_eq!(CHARGES.len(), 9);
        assert_eq!(TRANSACTION.len(), 27);
        assert!(TRANSACTION.iter().all(|f| !f.name.is_empty()));
    }
}
