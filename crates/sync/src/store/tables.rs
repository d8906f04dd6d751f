//! Every mirrored table, defined once: each column's name, type,
//! nullability and how its value is read from the client's model. The
//! upserts and the binding of both databases follow from it; the DDL of
//! each backend is its migrations, and a test compares them with these
//! definitions on a real database of each kind.

use std::borrow::Cow;

use aggpay::{
    AggregatorId, AggregatorMerchant, RailMerchant, Refund, SettlementBatch, SettlementPayout,
    Transaction,
};

/// A column's type, the same meaning on both backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// A 64-bit integer (ids, amounts in paisa).
    Int,
    /// Text (tokens, names, RFC 3339 timestamps, JSON objects).
    Text,
    /// A boolean (SQLite keeps it as 0 or 1).
    Bool,
}

/// A value to bind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value<'a> {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// Text, borrowed from the row where it can be.
    Text(Cow<'a, str>),
    /// A boolean.
    Bool(bool),
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::Text(Cow::Borrowed(s))
    }
}

impl From<String> for Value<'_> {
    fn from(s: String) -> Self {
        Value::Text(Cow::Owned(s))
    }
}

impl From<i64> for Value<'_> {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl<'a, T: Into<Value<'a>>> From<Option<T>> for Value<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// A column of table rows of `T`.
pub struct Column<T: 'static> {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub ty: Type,
    /// Whether it may be NULL.
    pub nullable: bool,
    /// Its value in a row.
    pub get: for<'a> fn(&'a T) -> Value<'a>,
}

/// A table of rows of `T`, keyed by `token`.
pub struct Table<T: 'static> {
    /// Its name.
    pub name: &'static str,
    /// Rows of one batch: a leading `batch_id` column (the `id` of the
    /// batch the row was walked from), not a field of the row.
    pub batch_scoped: bool,
    /// The columns read from the row, in their order.
    pub columns: &'static [Column<T>],
    /// Columns of the tool's own after them (written by the store).
    pub extra: &'static [(&'static str, Type)],
}

/// What a store needs of a table, whatever its row type.
pub trait Shape: Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// Its columns, in order: `batch_id` first for rows of a batch, the
    /// tool's own last; name, type, nullable.
    fn columns(&self) -> Vec<(&'static str, Type, bool)>;
    /// The columns a row binds (all but the tool's own).
    fn bound(&self) -> usize;
}

impl<T> Shape for Table<T> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn columns(&self) -> Vec<(&'static str, Type, bool)> {
        let mut out = Vec::new();
        if self.batch_scoped {
            out.push(("batch_id", Type::Int, false));
        }
        out.extend(self.columns.iter().map(|c| (c.name, c.ty, c.nullable)));
        out.extend(self.extra.iter().map(|(n, t)| (*n, *t, false)));
        out
    }

    fn bound(&self) -> usize {
        self.columns.len() + usize::from(self.batch_scoped)
    }
}

impl<T> Table<T> {
    /// One row's values, in column order (`batch_id` first when scoped).
    pub fn row<'a>(&self, batch_id: Option<i64>, item: &'a T) -> Vec<Value<'a>> {
        let mut out = Vec::with_capacity(self.bound());
        if self.batch_scoped {
            out.push(Value::from(batch_id));
        }
        out.extend(self.columns.iter().map(|c| (c.get)(item)));
        out
    }
}

/// A numeric id as SQL's integer: ids beyond `i64` saturate (API.md's
/// ids are far below; a wrong one is the server's, and stays visible).
fn int(n: u64) -> Value<'static> {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn ts(t: &jiff::Timestamp) -> Value<'static> {
    Value::from(t.to_string())
}

fn json(v: &impl serde::Serialize) -> Value<'static> {
    Value::from(serde_json::to_string(v).unwrap_or_else(|_| "null".to_owned()))
}

const fn col<T>(name: &'static str, ty: Type, get: for<'a> fn(&'a T) -> Value<'a>) -> Column<T> {
    Column {
        name,
        ty,
        nullable: false,
        get,
    }
}

const fn nullable<T>(
    name: &'static str,
    ty: Type,
    get: for<'a> fn(&'a T) -> Value<'a>,
) -> Column<T> {
    Column {
        name,
        ty,
        nullable: true,
        get,
    }
}

/// The seven amounts (API.md PaymentCharges) of a row type.
macro_rules! amounts {
    ($t:ty) => {
        [
            col::<$t>("gross_amount", Type::Int, |r| {
                Value::Int(r.gross_amount.get())
            }),
            col::<$t>("fee_amount", Type::Int, |r| Value::Int(r.fee_amount.get())),
            col::<$t>("net_amount", Type::Int, |r| Value::Int(r.net_amount.get())),
            col::<$t>("sales_tax_on_fee_amount", Type::Int, |r| {
                Value::Int(r.sales_tax_on_fee_amount.get())
            }),
            col::<$t>("sales_tax_withholding_amount", Type::Int, |r| {
                Value::Int(r.sales_tax_withholding_amount.get())
            }),
            col::<$t>("income_tax_withholding_amount", Type::Int, |r| {
                Value::Int(r.income_tax_withholding_amount.get())
            }),
            col::<$t>("digital_tax_amount", Type::Int, |r| {
                Value::Int(r.digital_tax_amount.get())
            }),
        ]
    };
}

/// Settlement batches (the store adds when it first saw each and when it
/// last refreshed it).
pub static BATCHES: Table<SettlementBatch> = Table {
    name: "batches",
    batch_scoped: false,
    columns: &[
        col("token", Type::Text, |b| b.token.as_str().into()),
        col("id", Type::Int, |b| int(b.id.get())),
        col("file_name", Type::Text, |b| b.file_name.as_str().into()),
        col("date", Type::Text, |b| ts(&b.date)),
        col("status", Type::Text, |b| b.status.as_str().into()),
        col("version", Type::Int, |b| Value::Int(b.version)),
        col("created_by_job_id", Type::Text, |b| {
            b.created_by_job_id.as_str().into()
        }),
        col("partner_id", Type::Text, |b| b.partner_id.as_str().into()),
        col("created_at", Type::Text, |b| ts(&b.created_at)),
    ],
    extra: &[("first_seen_at", Type::Text), ("refreshed_at", Type::Text)],
};

const TRANSACTION_COLUMNS: [Column<Transaction>; 27] = {
    let head = [
        col::<Transaction>("token", Type::Text, |t| t.token.as_str().into()),
        col("id", Type::Int, |t| int(t.id.get())),
        col("payment_id", Type::Text, |t| t.payment_id.as_str().into()),
        nullable("refund_id", Type::Text, |t| {
            t.refund_id.as_ref().map(aggpay::RefundToken::as_str).into()
        }),
        col("transaction_type", Type::Text, |t| {
            t.transaction_type.as_str().into()
        }),
        col("payment_type", Type::Text, |t| {
            t.payment_type.as_str().into()
        }),
        col("status", Type::Text, |t| t.status.as_str().into()),
        col("aggregator_id", Type::Text, |t| {
            t.aggregator_id.as_str().into()
        }),
        col("aggregator_name", Type::Text, |t| {
            t.aggregator_name.as_str().into()
        }),
        col("aggregator_merchant_id", Type::Text, |t| {
            t.aggregator_merchant_id.as_str().into()
        }),
        col("aggregator_merchant_name", Type::Text, |t| {
            t.aggregator_merchant_name.as_str().into()
        }),
        col("rail_merchant_id", Type::Text, |t| {
            t.rail_merchant_id.as_str().into()
        }),
        col("rail_merchant_name", Type::Text, |t| {
            t.rail_merchant_name.as_str().into()
        }),
        col("rail_merchant_ntn", Type::Text, |t| {
            t.rail_merchant_ntn.as_str().into()
        }),
        col("rail_merchant_province", Type::Text, |t| {
            t.rail_merchant_province.as_str().into()
        }),
    ];
    let amounts = amounts!(Transaction);
    let tail = [
        col::<Transaction>("currency", Type::Text, |t| t.currency.as_str().into()),
        col("latest_batch_id", Type::Text, |t| {
            t.latest_batch_id.as_str().into()
        }),
        col("partner_id", Type::Text, |t| t.partner_id.as_str().into()),
        col("created_at", Type::Text, |t| ts(&t.created_at)),
        col("updated_at", Type::Text, |t| ts(&t.updated_at)),
    ];
    concat3(head, amounts, tail)
};

/// A batch's payment and refund transactions.
pub static TRANSACTIONS: Table<Transaction> = Table {
    name: "transactions",
    batch_scoped: true,
    columns: &TRANSACTION_COLUMNS,
    extra: &[],
};

/// A payout's column of a reference member: NULL where the server sent
/// the member in another form or not at all (API.md does not show the
/// payout's shape); the `element` column keeps what it sent.
macro_rules! payout_text {
    ($name:literal, $field:ident) => {
        nullable::<SettlementPayout>($name, Type::Text, |p| {
            p.$field.as_ref().map(|v| v.as_str()).into()
        })
    };
}

macro_rules! payout_amount {
    ($name:literal, $field:ident) => {
        nullable::<SettlementPayout>($name, Type::Int, |p| p.$field.map(|a| a.get()).into())
    };
}

const PAYOUT_COLUMNS: [Column<SettlementPayout>; 21] = [
    // The key: the `token` member whatever its form, else the id, else
    // the element itself (`SettlementPayout::key`).
    col::<SettlementPayout>("token", Type::Text, |p| p.key().into()),
    nullable("id", Type::Int, |p| {
        p.id.map(|i| int(i.get())).unwrap_or(Value::Null)
    }),
    payout_text!("settlement_batch_id", settlement_batch_id),
    payout_text!("aggregator_id", aggregator_id),
    payout_text!("aggregator_merchant_id", aggregator_merchant_id),
    payout_text!("rail_merchant_id", rail_merchant_id),
    payout_text!("status", status),
    nullable("attempt", Type::Int, |p| p.attempt.into()),
    payout_amount!("gross_amount", gross_amount),
    payout_amount!("fee_amount", fee_amount),
    payout_amount!("net_amount", net_amount),
    payout_amount!("sales_tax_on_fee_amount", sales_tax_on_fee_amount),
    payout_amount!("sales_tax_withholding_amount", sales_tax_withholding_amount),
    payout_amount!(
        "income_tax_withholding_amount",
        income_tax_withholding_amount
    ),
    payout_amount!("digital_tax_amount", digital_tax_amount),
    payout_text!("debitor_account_id", debitor_account_id),
    payout_text!("creditor_account_id", creditor_account_id),
    nullable("failure_reason", Type::Text, |p| {
        p.failure_reason.as_deref().into()
    }),
    nullable("created_at", Type::Text, |p| {
        p.created_at.as_ref().map_or(Value::Null, ts)
    }),
    nullable("updated_at", Type::Text, |p| {
        p.updated_at.as_ref().map_or(Value::Null, ts)
    }),
    col("element", Type::Text, |p| json(p.element())),
];

/// A batch's settlement payouts.
pub static PAYOUTS: Table<SettlementPayout> = Table {
    name: "payouts",
    batch_scoped: true,
    columns: &PAYOUT_COLUMNS,
    extra: &[],
};

/// Refunds (the store adds when it last refreshed each).
pub static REFUNDS: Table<Refund> = Table {
    name: "refunds",
    batch_scoped: false,
    columns: &[
        col("token", Type::Text, |r| r.token.as_str().into()),
        col("payment_id", Type::Text, |r| r.payment_id.as_str().into()),
        col("amount", Type::Int, |r| Value::Int(r.amount.get())),
        col("type", Type::Text, |r| r.refund_type.as_str().into()),
        col("reason", Type::Text, |r| r.reason.as_str().into()),
        col("addtl_info", Type::Text, |r| r.addtl_info.as_str().into()),
        col("status", Type::Text, |r| r.status.as_str().into()),
        col("trace_reference", Type::Text, |r| {
            r.trace_reference.as_str().into()
        }),
        col("msg_id", Type::Text, |r| r.msg_id.as_str().into()),
        col("return_id", Type::Text, |r| r.return_id.as_str().into()),
        col("request_id", Type::Text, |r| r.request_id.as_str().into()),
        col("msg_created_at", Type::Text, |r| ts(&r.msg_created_at)),
        nullable("settle_at", Type::Text, |r| {
            r.settle_at.as_ref().map(ts).unwrap_or(Value::Null)
        }),
        col("created_at", Type::Text, |r| ts(&r.created_at)),
        col("updated_at", Type::Text, |r| ts(&r.updated_at)),
    ],
    extra: &[("refreshed_at", Type::Text)],
};

/// Aggregator merchants (the store adds when it last saw each listed).
pub static MERCHANTS: Table<AggregatorMerchant> = Table {
    name: "merchants",
    batch_scoped: false,
    columns: &[
        col("token", Type::Text, |m| m.token.as_str().into()),
        col("id", Type::Int, |m| int(m.id.get())),
        col("name", Type::Text, |m| m.name.as_str().into()),
        col("aggregator_id", Type::Text, |m| {
            m.aggregator_id.as_str().into()
        }),
        col("merchant_id", Type::Text, |m| m.merchant_id.as_str().into()),
        col("merchant_external_id", Type::Text, |m| {
            m.merchant_external_id.as_str().into()
        }),
        col("bank_account_id", Type::Text, |m| {
            m.bank_account_id.as_str().into()
        }),
        col("enabled", Type::Bool, |m| Value::Bool(m.enabled)),
        col("created_at", Type::Text, |m| ts(&m.created_at)),
        col("updated_at", Type::Text, |m| ts(&m.updated_at)),
    ],
    extra: &[("refreshed_at", Type::Text)],
};

/// Rail merchants; their nested objects as JSON text (the store adds when
/// it last saw each listed).
pub static RAIL_MERCHANTS: Table<RailMerchant> = Table {
    name: "rail_merchants",
    batch_scoped: false,
    columns: &[
        col("token", Type::Text, |m| m.token.as_str().into()),
        col("id", Type::Text, |m| m.id.as_str().into()),
        col("partner_id", Type::Text, |m| m.partner_id.as_str().into()),
        col("rail_record_id", Type::Text, |m| {
            m.rail_record_id.as_str().into()
        }),
        col("status", Type::Text, |m| m.status.as_str().into()),
        col("uid_type", Type::Text, |m| m.uid_type.as_str().into()),
        col("uid_value", Type::Text, |m| m.uid_value.as_str().into()),
        col("name", Type::Text, |m| m.name.as_str().into()),
        col("document_type", Type::Text, |m| {
            m.document_type.as_str().into()
        }),
        col("document_number", Type::Text, |m| {
            m.document_number.as_str().into()
        }),
        col("address_details", Type::Text, |m| json(&m.address_details)),
        col("contact_details", Type::Text, |m| json(&m.contact_details)),
        col("additional_details", Type::Text, |m| {
            json(&m.additional_details)
        }),
        col("additional_details_private", Type::Text, |m| {
            json(&m.additional_details_private)
        }),
        col("created_at", Type::Text, |m| ts(&m.created_at)),
        col("updated_at", Type::Text, |m| ts(&m.updated_at)),
    ],
    extra: &[("refreshed_at", Type::Text)],
};

/// Every table with rows from the server, for the schema tests.
#[cfg(test)]
pub fn all() -> [&'static dyn Shape; 6] {
    [
        &BATCHES,
        &TRANSACTIONS,
        &PAYOUTS,
        &REFUNDS,
        &MERCHANTS,
        &RAIL_MERCHANTS,
    ]
}

/// Three arrays as one (const: the column lists are built at compile
/// time).
const fn concat3<T: Copy, const A: usize, const B: usize, const C: usize, const N: usize>(
    a: [T; A],
    b: [T; B],
    c: [T; C],
) -> [T; N] {
    assert!(A + B + C == N, "the lengths add up");
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < A + B {
        out[i] = b[i - A];
        i += 1;
    }
    while i < N {
        out[i] = c[i - A - B];
        i += 1;
    }
    out
}

impl<T> Clone for Column<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Column<T> {}

/// The rows a walk keeps: one batch's transactions or payouts.
pub trait Mirrored: Sized + Send + Sync + aggpay::ListRecord + 'static {
    /// Its kind.
    const KIND: RowKind;
    /// Its table.
    fn table() -> &'static Table<Self>;
    /// The aggregator the row names, where it names one the client
    /// recognises: API.md scopes every operation to one aggregator, so a
    /// row naming another is not ours. (A payout's shape is not shown:
    /// it may name none.)
    fn aggregator(&self) -> Option<&AggregatorId>;
}

impl Mirrored for Transaction {
    const KIND: RowKind = RowKind::Transactions;
    fn table() -> &'static Table<Self> {
        &TRANSACTIONS
    }
    fn aggregator(&self) -> Option<&AggregatorId> {
        Some(&self.aggregator_id)
    }
}

impl Mirrored for SettlementPayout {
    const KIND: RowKind = RowKind::Payouts;
    fn table() -> &'static Table<Self> {
        &PAYOUTS
    }
    fn aggregator(&self) -> Option<&AggregatorId> {
        self.aggregator_id.as_ref()
    }
}

/// The two kinds of rows a batch has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowKind {
    /// Payment and refund transactions.
    Transactions,
    /// Settlement payouts (`only_settlement_txns=true`).
    Payouts,
}

impl RowKind {
    /// The table, and the `kind` of the walks table.
    pub fn as_str(self) -> &'static str {
        match self {
            RowKind::Transactions => "transactions",
            RowKind::Payouts => "payouts",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_their_columns() {
        assert_eq!(TRANSACTIONS.columns().len(), 28);
        assert_eq!(TRANSACTIONS.columns()[0].0, "batch_id");
        assert_eq!(PAYOUTS.columns().len(), 22);
        assert_eq!(BATCHES.bound(), 9);
        for table in all() {
            let names: Vec<&str> = table.columns().iter().map(|c| c.0).collect();
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(
                unique.len(),
                names.len(),
                "{}: a column twice",
                table.name()
            );
            assert!(names.contains(&"token"), "{}: no token", table.name());
        }
    }
}
