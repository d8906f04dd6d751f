use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::open_enum::open_enum;
use crate::{
    AggregatorId, AggregatorMerchantId, BatchToken, LedgerAccountId, NumericId, Paisa, PayoutToken,
    RailMerchantId, Text,
};

open_enum! {
    /// The state of a settlement payout.
    PayoutStatus {
        /// Posted.
        Posted = "SETTLEMENT_TXN_POSTED",
        /// Pending.
        Pending = "SETTLEMENT_TXN_PENDING",
        /// Failed.
        Failed = "SETTLEMENT_TXN_FAILED",
    }
}

/// A settlement payout (element of `data.settlement_transactions`).
///
/// API.md does not show this element's shape ("Element shape of
/// `settlement_transactions` (settlement payouts): not shown"), so a
/// server may send any. The client keeps the element as the server sent
/// it ([`SettlementPayout::element`]) and reads the members of the
/// reference element (WIRE.md) where they are present and well-formed:
/// each field is `None` when the member is missing or has another form
/// (a token without the `stxn_` prefix, an amount that is not paisa).
/// Nothing here refuses a payout: a correct server with another payout
/// shape is walked like any other.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SettlementPayout {
    /// Numeric id; the list is ordered on it.
    pub id: Option<NumericId>,
    /// Its token (`stxn_…`).
    pub token: Option<PayoutToken>,
    /// The batch.
    pub settlement_batch_id: Option<BatchToken>,
    /// The aggregator.
    pub aggregator_id: Option<AggregatorId>,
    /// The aggregator merchant paid out.
    pub aggregator_merchant_id: Option<AggregatorMerchantId>,
    /// The rail merchant paid out.
    pub rail_merchant_id: Option<RailMerchantId>,
    /// Payout state.
    pub status: Option<PayoutStatus>,
    /// Attempts made.
    pub attempt: Option<i64>,
    /// Total before deductions.
    pub gross_amount: Option<Paisa>,
    /// Fee charged.
    pub fee_amount: Option<Paisa>,
    /// Amount paid out.
    pub net_amount: Option<Paisa>,
    /// Sales tax on the fee.
    pub sales_tax_on_fee_amount: Option<Paisa>,
    /// Sales tax withheld.
    pub sales_tax_withholding_amount: Option<Paisa>,
    /// Income tax withheld.
    pub income_tax_withholding_amount: Option<Paisa>,
    /// Digital presence tax.
    pub digital_tax_amount: Option<Paisa>,
    /// Ledger account debited.
    pub debitor_account_id: Option<LedgerAccountId>,
    /// Ledger account credited.
    pub creditor_account_id: Option<LedgerAccountId>,
    /// Why the payout failed; empty or `None` otherwise.
    pub failure_reason: Option<Text>,
    /// Creation time.
    pub created_at: Option<Timestamp>,
    /// Last change.
    pub updated_at: Option<Timestamp>,
    /// The element as the server sent it.
    element: Value,
}

impl SettlementPayout {
    /// The element as the server sent it, every member included (the
    /// fields above are the reference's members read from it).
    pub fn element(&self) -> &Value {
        &self.element
    }

    /// The payout's identity: its `token` member whatever its form, else
    /// its numeric id, else the element's JSON text (a server whose
    /// payouts carry neither).
    pub fn key(&self) -> String {
        match (self.element.get("token"), self.id) {
            (Some(Value::String(token)), _) if !token.is_empty() => token.clone(),
            (_, Some(id)) => id.to_string(),
            _ => self.element.to_string(),
        }
    }

    /// Reads the reference's members from `element`, each where it has
    /// the reference's form.
    fn read(element: Value) -> Self {
        fn member<T: DeserializeOwned>(element: &Value, name: &str) -> Option<T> {
            element.get(name).and_then(|v| T::deserialize(v).ok())
        }
        let e = &element;
        Self {
            id: member(e, "id"),
            token: member(e, "token"),
            settlement_batch_id: member(e, "settlement_batch_id"),
            aggregator_id: member(e, "aggregator_id"),
            aggregator_merchant_id: member(e, "aggregator_merchant_id"),
            rail_merchant_id: member(e, "rail_merchant_id"),
            status: member(e, "status"),
            attempt: member(e, "attempt"),
            gross_amount: member(e, "gross_amount"),
            fee_amount: member(e, "fee_amount"),
            net_amount: member(e, "net_amount"),
            sales_tax_on_fee_amount: member(e, "sales_tax_on_fee_amount"),
            sales_tax_withholding_amount: member(e, "sales_tax_withholding_amount"),
            income_tax_withholding_amount: member(e, "income_tax_withholding_amount"),
            digital_tax_amount: member(e, "digital_tax_amount"),
            debitor_account_id: member(e, "debitor_account_id"),
            creditor_account_id: member(e, "creditor_account_id"),
            failure_reason: member(e, "failure_reason"),
            created_at: member(e, "created_at"),
            updated_at: member(e, "updated_at"),
            element,
        }
    }
}

impl<'de> Deserialize<'de> for SettlementPayout {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Self::read)
    }
}

/// Written as the element the server sent.
impl Serialize for SettlementPayout {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.element.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_element_is_read_whole() {
        let p = SettlementPayout::example();
        assert!(p.id.is_some() && p.token.is_some() && p.net_amount.is_some());
        assert_eq!(Some(p.key()), p.token.as_ref().map(ToString::to_string));
        let again: SettlementPayout =
            serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(again, p);
    }

    #[test]
    fn another_shape_is_kept_as_sent() {
        let p: SettlementPayout = serde_json::from_str(
            r#"{"token":"po_1","amount":"12","state":"PAID","aggregator_id":"agg_x"}"#,
        )
        .unwrap();
        assert_eq!(p.token, None, "po_ is not the reference's prefix");
        assert_eq!(p.key(), "po_1");
        assert_eq!(p.element()["amount"], "12");
        assert_eq!(p.net_amount, None);
        let bare: SettlementPayout = serde_json::from_str("[1,2]").unwrap();
        assert_eq!(bare.key(), "[1,2]");
    }
}
