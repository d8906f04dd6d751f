//! API.md's resource tables as data: every field, its JSON type and its
//! textual rule. The field rules walk wire JSON with these tables, so they
//! judge the server independently of the client's model types; the
//! operation table (`ops.rs`) says which `data` each operation answers.

use serde_json::Value;

/// What a field must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
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

impl Kind {
    /// The JSON type the kind needs, as a word.
    pub fn json_type(self) -> &'static str {
        match self {
            Kind::Bool => "boolean",
            Kind::Int => "integer",
            Kind::Obj(_) | Kind::AnyObj => "object",
            Kind::Arr(_) => "array",
            Kind::NullTs | Kind::StrOrNull => "string or null",
            Kind::Count(CountForm::Text) => "string",
            Kind::Count(CountForm::Integer) => "integer",
            _ => "string",
        }
    }

    /// True when `v` has the kind's JSON type.
    pub fn type_matches(self, v: &Value) -> bool {
        match self {
            Kind::Bool => v.is_boolean(),
            Kind::Int => v.is_i64() || v.is_u64(),
            Kind::Obj(_) | Kind::AnyObj => v.is_object(),
            Kind::Arr(_) => v.is_array(),
            Kind::NullTs | Kind::StrOrNull => v.is_null() || v.is_string(),
            Kind::Count(CountForm::Text) => v.is_string(),
            Kind::Count(CountForm::Integer) => v.is_u64(),
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
    pub kind: Kind,
}

const fn f(name: &'static str, kind: Kind) -> Field {
    Field { name, kind }
}

/// The seven amounts of charges and transactions.
macro_rules! amounts {
    () => {
        [
            f("gross_amount", Kind::Amount),
            f("fee_amount", Kind::Amount),
            f("net_amount", Kind::Amount),
            f("sales_tax_on_fee_amount", Kind::Amount),
            f("sales_tax_withholding_amount", Kind::Amount),
            f("income_tax_withholding_amount", Kind::Amount),
            f("digital_tax_amount", Kind::Amount),
        ]
    };
}

const fn cat<const A: usize, const B: usize, const N: usize>(
    a: [Field; A],
    b: [Field; B],
) -> [Field; N] {
    let mut out = [f("", Kind::Str); N];
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
        f("payment_id", Kind::Prefix("pm_")),
        f("currency", Kind::Currency),
    ],
    amounts!(),
);

/// ReportExport.
pub const REPORT_EXPORT: &[Field] = &[
    f("id", Kind::Numeric),
    f("token", Kind::Prefix("rpt_")),
    f("settlement_batch_id", Kind::Batch),
    f("merchant_id", Kind::PrefixOrEmpty("mer_")),
    f("kind", Kind::Named("REPORT_KIND_")),
    f("status", Kind::Named("REPORT_STATUS_")),
    f("attempts", Kind::Int),
    f("error_message", Kind::Str),
    f("storage_key", Kind::Str),
    f("record_count", Kind::NumStr),
    f("file_size", Kind::NumStr),
    f("started_at", Kind::Ts),
    f("finished_at", Kind::NullTs),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
    f("partner_id", Kind::Prefix("partner_")),
    f("version", Kind::Int),
];

/// SettlementBatch.
pub const BATCH: &[Field] = &[
    f("id", Kind::Numeric),
    f("token", Kind::Batch),
    f("file_name", Kind::Str),
    f("date", Kind::Ts),
    f(
        "status",
        Kind::OneOf(&[
            "BATCH_CREATED",
            "BATCH_PROCESSING",
            "BATCH_COMPLETED",
            "BATCH_FAILED",
        ]),
    ),
    f("version", Kind::Int),
    f("created_by_job_id", Kind::Prefix("job_")),
    f("partner_id", Kind::Prefix("partner_")),
    f("created_at", Kind::Ts),
];

/// Transaction.
pub const TRANSACTION: &[Field] = &cat::<20, 7, 27>(
    [
        f("id", Kind::Numeric),
        f("token", Kind::Prefix("txn_")),
        f("payment_id", Kind::Prefix("pm_")),
        f("refund_id", Kind::StrOrNull),
        f("transaction_type", Kind::Str),
        f("payment_type", Kind::Str),
        f("status", Kind::Str),
        f("aggregator_id", Kind::Prefix("agg_")),
        f("aggregator_name", Kind::Str),
        f("aggregator_merchant_id", Kind::Prefix("am_")),
        f("aggregator_merchant_name", Kind::Str),
        f("rail_merchant_id", Kind::Prefix("mer_")),
        f("rail_merchant_name", Kind::Str),
        f("rail_merchant_ntn", Kind::Str),
        f("rail_merchant_province", Kind::Str),
        f("currency", Kind::Currency),
        f("latest_batch_id", Kind::Batch),
        f("partner_id", Kind::Prefix("partner_")),
        f("created_at", Kind::Ts),
        f("updated_at", Kind::Ts),
    ],
    amounts!(),
);

/// AggregatorMerchant.
pub const MERCHANT: &[Field] = &[
    f("id", Kind::Numeric),
    f("token", Kind::Prefix("am_")),
    f("name", Kind::Str),
    f("aggregator_id", Kind::Prefix("agg_")),
    f("merchant_id", Kind::Prefix("mer_")),
    f("merchant_external_id", Kind::Prefix("sec_")),
    f("bank_account_id", Kind::Prefix("acc_")),
    f("enabled", Kind::Bool),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
];

const ADDRESS: &[Field] = &[
    f("country", Kind::Str),
    f("city", Kind::Str),
    f("state_province_region", Kind::Str),
    f("address_line", Kind::Str),
];
const CONTACT: &[Field] = &[f("mobile_number", Kind::Str), f("email", Kind::Str)];
const ADDITIONAL: &[Field] = &[
    f("dba", Kind::Str),
    f("mcc", Kind::Str),
    f("lat", Kind::Str),
    f("long", Kind::Str),
];

/// RailMerchant.
pub const RAIL_MERCHANT: &[Field] = &[
    f("id", Kind::Numeric),
    f("token", Kind::Prefix("mer_")),
    f("partner_id", Kind::Prefix("partner_")),
    f("rail_record_id", Kind::Str),
    f(
        "status",
        Kind::OneOf(&["Active", "Inactive", "Suspended", ""]),
    ),
    f("uid_type", Kind::Str),
    f("uid_value", Kind::Str),
    f("name", Kind::Str),
    f("document_type", Kind::Str),
    f("document_number", Kind::Str),
    f("address_details", Kind::Obj(ADDRESS)),
    f("contact_details", Kind::Obj(CONTACT)),
    f("additional_details", Kind::Obj(ADDITIONAL)),
    f("additional_details_private", Kind::AnyObj),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
];

/// QRCode.
pub const QR_CODE: &[Field] = &[
    f("id", Kind::Numeric),
    f("token", Kind::Prefix("qr_")),
    f("aggregator_merchant_id", Kind::Prefix("am_")),
    f("type", Kind::OneOf(&["STATIC", "DYNAMIC"])),
    f("code", Kind::Str),
    f("terminal_label", Kind::Str),
    f("reference_label", Kind::Str),
    f("is_deleted", Kind::Bool),
    f("created_at", Kind::Ts),
];

/// Refund.
pub const REFUND: &[Field] = &[
    f("token", Kind::Str),
    f("payment_id", Kind::Prefix("pm_")),
    f("amount", Kind::Amount),
    f("type", Kind::Str),
    f("reason", Kind::Str),
    f("addtl_info", Kind::Str),
    f("status", Kind::Str),
    f("trace_reference", Kind::Str),
    f("msg_id", Kind::Str),
    f("return_id", Kind::Str),
    f("request_id", Kind::Str),
    f("msg_created_at", Kind::Ts),
    f("settle_at", Kind::NullTs),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
];

/// AccountInfo.
pub const ACCOUNT_INFO: &[Field] = &[
    f("iban", Kind::Str),
    f("type", Kind::Str),
    f("currency", Kind::Currency),
    f("servicer_member_id", Kind::Str),
    f("name", Kind::Str),
    f("is_default", Kind::Bool),
    f("dba", Kind::Str),
    f("mcc", Kind::Str),
    f("account_title", Kind::Str),
    f("account_type", Kind::Str),
];

/// Alias.
pub const ALIAS: &[Field] = &[
    f("id", Kind::Numeric),
    f("token", Kind::Prefix("als_")),
    f("merchant_id", Kind::Prefix("mer_")),
    f("aggregator_merchant_id", Kind::Prefix("am_")),
    f("alias_type", Kind::Str),
    f("alias_value", Kind::Str),
    f("status", Kind::Str),
    f("start_date", Kind::Date),
    f("expiration_date", Kind::Date),
    f("opening_date", Kind::Date),
    f("closing_date", Kind::Date),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
    f("alias_record_id", Kind::NumStr),
];

/// AccessKey.
pub const ACCESS_KEY: &[Field] = &[
    f("id", Kind::KeyPart),
    f("token", Kind::KeyPart),
    f("key_id", Kind::Prefix("key_")),
    f("aggregator_id", Kind::Prefix("agg_")),
    f("is_active", Kind::Bool),
    f("name", Kind::Str),
    f("secret", Kind::Str),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
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
    f("id", Kind::Numeric),
    f("token", Kind::Prefix("acc_")),
    f("vault_token", Kind::Prefix("lock_")),
    f("title", Kind::Str),
    f("iban", Kind::Str),
    f("redacted_iban", Kind::Str),
    f("hashed_iban", Kind::Str),
    f("servicer", Kind::Str),
    f("bank", Kind::Str),
    f("depositor_id", Kind::Prefix("dep_")),
    f("owner", Kind::Str),
    f("kind", Kind::Int),
    f("version", Kind::Str),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
];

/// Aggregator.
pub const AGGREGATOR: &[Field] = &[
    f("id", Kind::Numeric),
    f("token", Kind::Prefix("agg_")),
    f("partner_id", Kind::Prefix("partner_")),
    f("bank_account_id", Kind::Prefix("acc_")),
    f("name", Kind::Str),
    f("is_active", Kind::Bool),
    f("is_super", Kind::Bool),
    f("vault_enabled", Kind::Bool),
    f("bank_account", Kind::Obj(BANK_ACCOUNT)),
    f("keys", Kind::Arr(ACCESS_KEY)),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
];

/// LedgerAccount.
pub const LEDGER: &[Field] = &[
    f("id", Kind::Numeric),
    f("token", Kind::Prefix("acct_")),
    f("account_type", Kind::Str),
    f("account_name", Kind::Str),
    f("normal_balance", Kind::Str),
    f("balance", Kind::Amount),
    f("running_balance", Kind::Amount),
    f("currency", Kind::Currency),
    f("vault_token", Kind::Prefix("lock_")),
    f("bank_acct_id", Kind::Prefix("acc_")),
    f("external_partner_id", Kind::Str),
    f("external_aggregator_id", Kind::Str),
    f("external_merchant_id", Kind::Str),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
];

/// WebhookEndpoint.
pub const WEBHOOK: &[Field] = &[
    f("token", Kind::Prefix("wh_")),
    f("aggregator_id", Kind::Prefix("agg_")),
    f("url", Kind::Str),
    f("description", Kind::Str),
    f("enabled", Kind::Bool),
    f("event_filter_json", Kind::EventJson),
    f("created_at", Kind::Ts),
    f("updated_at", Kind::Ts),
    f("secret_version", Kind::Int),
    f("secret_rotated_at", Kind::Ts),
];

const CURSOR_COUNT: &[Field] = &[
    f("filtered_count", Kind::NumStr),
    f("total_count", Kind::NumStr),
];

/// `data` of the access-key list.
pub const KEY_LIST: &[Field] = &[
    f("count", Kind::Count(CountForm::Integer)),
    f("keys", Kind::Arr(ACCESS_KEY)),
];
/// `data` of the merchant list.
pub const MERCHANT_LIST: &[Field] = &[
    f("merchants", Kind::Arr(MERCHANT)),
    f("count", Kind::Count(CountForm::Text)),
];
/// `data` of the rail-merchant list.
pub const RAIL_MERCHANT_LIST: &[Field] = &[
    f("merchants", Kind::Arr(RAIL_MERCHANT)),
    f("count", Kind::Count(CountForm::Text)),
];
/// `data` of the QR list.
pub const QR_LIST: &[Field] = &[
    f("qr_codes", Kind::Arr(QR_CODE)),
    f("count", Kind::Count(CountForm::Text)),
];
/// `data` of the refund list.
pub const REFUND_LIST: &[Field] = &[
    f("count", Kind::Count(CountForm::Integer)),
    f("keys", Kind::Arr(REFUND)),
];
/// `data` of the batch list.
pub const BATCH_LIST: &[Field] = &[
    f("batches", Kind::Arr(BATCH)),
    f("next_cursor", Kind::Str),
    f("count", Kind::Obj(CURSOR_COUNT)),
];
/// `data` of a batch's transactions. Payout elements are not shown by
/// API.md: only the array is required.
pub const TRANSACTION_LIST: &[Field] = &[
    f("settlement_transactions", Kind::Arr(&[])),
    f("transactions", Kind::Arr(TRANSACTION)),
    f("next_cursor", Kind::Str),
    f("count", Kind::Obj(CURSOR_COUNT)),
];
/// `data` of a created export.
pub const EXPORT_CREATED: &[Field] = &[f("report_export", Kind::Obj(REPORT_EXPORT))];
/// `data` of the webhook list.
pub const WEBHOOK_LIST: &[Field] = &[
    f("endpoints", Kind::Arr(WEBHOOK)),
    f("count", Kind::Count(CountForm::Text)),
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
