//! How each kind of mirrored row is written: upserts keyed by its token,
//! every field in its typed column, a page of rows per statement.

use aggpay::{SettlementPayout, Transaction};
use rusqlite::Statement;
use rusqlite::types::ToSql;

/// The two kinds of rows a batch has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Payment and refund transactions.
    Transactions,
    /// Settlement payouts (`only_settlement_txns=true`).
    Payouts,
}

impl Kind {
    /// The table, and the `kind` of the walks table.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Transactions => "transactions",
            Kind::Payouts => "payouts",
        }
    }
}

/// A row type the mirror keeps.
pub trait Mirrored: Send + 'static {
    /// Its kind (and table).
    const KIND: Kind;
    /// Its columns, in the order [`Mirrored::values`] gives them; the
    /// first two are `batch_id` (the `id` of the batch it was walked
    /// from) and `token` (the key).
    const COLUMNS: &'static [&'static str];
    /// Calls `bind` with each column's value, in [`Mirrored::COLUMNS`]
    /// order, the batch's id first.
    fn values(
        &self,
        batch: i64,
        bind: &mut dyn FnMut(&dyn ToSql) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<()>;
}

/// The upsert of one row of `T`. (One statement per row measured faster
/// than multi-row `VALUES` statements in SQLite, inside one transaction.)
pub fn upsert_sql<T: Mirrored>() -> String {
    let columns = T::COLUMNS;
    let values = format!("({})", vec!["?"; columns.len()].join(", "));
    let updates: Vec<String> = columns
        .iter()
        .filter(|c| **c != "token")
        .map(|c| format!("{c} = excluded.{c}"))
        .collect();
    format!(
        "INSERT INTO {} ({}) VALUES {values} ON CONFLICT (token) DO UPDATE SET {}",
        T::KIND.as_str(),
        columns.join(", "),
        updates.join(", ")
    )
}

/// Binds `row` to the statement of [`upsert_sql`] and runs it.
pub fn upsert<T: Mirrored>(stmt: &mut Statement<'_>, batch: i64, row: &T) -> rusqlite::Result<()> {
    let mut at = 0;
    row.values(batch, &mut |value| {
        at += 1;
        stmt.raw_bind_parameter(at, value)
    })?;
    stmt.raw_execute().map(|_| ())
}

/// The seven amounts both row kinds carry (API.md PaymentCharges), in
/// their column order, as integer paisa.
fn amounts(
    bind: &mut dyn FnMut(&dyn ToSql) -> rusqlite::Result<()>,
    values: [aggpay::Paisa; 7],
) -> rusqlite::Result<()> {
    values.iter().try_for_each(|a| bind(&a.get()))
}

/// A numeric id as SQLite's integer (ids beyond i64 are refused, not
/// wrapped).
fn int(id: u64) -> rusqlite::Result<i64> {
    i64::try_from(id).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

impl Mirrored for Transaction {
    const KIND: Kind = Kind::Transactions;
    const COLUMNS: &'static [&'static str] = &[
        "batch_id",
        "token",
        "id",
        "payment_id",
        "refund_id",
        "transaction_type",
        "payment_type",
        "status",
        "aggregator_id",
        "aggregator_name",
        "aggregator_merchant_id",
        "aggregator_merchant_name",
        "rail_merchant_id",
        "rail_merchant_name",
        "rail_merchant_ntn",
        "rail_merchant_province",
        "gross_amount",
        "fee_amount",
        "net_amount",
        "sales_tax_on_fee_amount",
        "sales_tax_withholding_amount",
        "income_tax_withholding_amount",
        "digital_tax_amount",
        "currency",
        "latest_batch_id",
        "partner_id",
        "created_at",
        "updated_at",
    ];

    fn values(
        &self,
        batch: i64,
        bind: &mut dyn FnMut(&dyn ToSql) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<()> {
        bind(&batch)?;
        bind(&self.token.as_str())?;
        bind(&int(self.id.get())?)?;
        bind(&self.payment_id.as_str())?;
        bind(&self.refund_id.as_deref())?;
        bind(&self.transaction_type.as_str())?;
        bind(&self.payment_type.as_str())?;
        bind(&self.status.as_str())?;
        bind(&self.aggregator_id.as_str())?;
        bind(&self.aggregator_name)?;
        bind(&self.aggregator_merchant_id.as_str())?;
        bind(&self.aggregator_merchant_name)?;
        bind(&self.rail_merchant_id.as_str())?;
        bind(&self.rail_merchant_name)?;
        bind(&self.rail_merchant_ntn)?;
        bind(&self.rail_merchant_province)?;
        amounts(
            bind,
            [
                self.gross_amount,
                self.fee_amount,
                self.net_amount,
                self.sales_tax_on_fee_amount,
                self.sales_tax_withholding_amount,
                self.income_tax_withholding_amount,
                self.digital_tax_amount,
            ],
        )?;
        bind(&self.currency.as_str())?;
        bind(&self.latest_batch_id.as_str())?;
        bind(&self.partner_id.as_str())?;
        bind(&self.created_at.to_string())?;
        bind(&self.updated_at.to_string())
    }
}

impl Mirrored for SettlementPayout {
    const KIND: Kind = Kind::Payouts;
    const COLUMNS: &'static [&'static str] = &[
        "batch_id",
        "token",
        "id",
        "settlement_batch_id",
        "aggregator_id",
        "aggregator_merchant_id",
        "rail_merchant_id",
        "status",
        "attempt",
        "gross_amount",
        "fee_amount",
        "net_amount",
        "sales_tax_on_fee_amount",
        "sales_tax_withholding_amount",
        "income_tax_withholding_amount",
        "digital_tax_amount",
        "debitor_account_id",
        "creditor_account_id",
        "failure_reason",
        "created_at",
        "updated_at",
    ];

    fn values(
        &self,
        batch: i64,
        bind: &mut dyn FnMut(&dyn ToSql) -> rusqlite::Result<()>,
    ) -> rusqlite::Result<()> {
        bind(&batch)?;
        bind(&self.token)?;
        bind(&int(self.id.get())?)?;
        bind(&self.settlement_batch_id.as_str())?;
        bind(&self.aggregator_id.as_str())?;
        bind(&self.aggregator_merchant_id.as_str())?;
        bind(&self.rail_merchant_id.as_str())?;
        bind(&self.status.as_str())?;
        bind(&self.attempt)?;
        amounts(
            bind,
            [
                self.gross_amount,
                self.fee_amount,
                self.net_amount,
                self.sales_tax_on_fee_amount,
                self.sales_tax_withholding_amount,
                self.income_tax_withholding_amount,
                self.digital_tax_amount,
            ],
        )?;
        bind(&self.debitor_account_id.as_str())?;
        bind(&self.creditor_account_id.as_str())?;
        bind(&self.failure_reason)?;
        bind(&self.created_at.to_string())?;
        bind(&self.updated_at.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_is_bound_and_updated_but_the_key() {
        let sql = upsert_sql::<Transaction>();
        assert_eq!(sql.matches('?').count(), Transaction::COLUMNS.len());
        assert!(sql.contains("ON CONFLICT (token) DO UPDATE SET batch_id = excluded.batch_id"));
        assert!(!sql.contains("token = excluded.token,"));
        assert_eq!(Transaction::COLUMNS[..2], ["batch_id", "token"]);
        assert_eq!(SettlementPayout::COLUMNS[..2], ["batch_id", "token"]);
    }
}
