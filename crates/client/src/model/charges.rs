use serde::{Deserialize, Serialize};

use crate::{Currency, Paisa, PaymentId};

/// The fee and tax breakdown of a payment (`data` of the payment-charges
/// operation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PaymentCharges {
    /// The payment the charges apply to.
    pub payment_id: PaymentId,
    /// Total payment amount before deductions.
    pub gross_amount: Paisa,
    /// ISO 4217 code.
    pub currency: Currency,
    /// Fee charged.
    pub fee_amount: Paisa,
    /// Amount credited to the merchant: gross minus the fee and the four taxes.
    pub net_amount: Paisa,
    /// Sales tax charged on the fee.
    pub sales_tax_on_fee_amount: Paisa,
    /// Sales tax withheld for the merchant.
    pub sales_tax_withholding_amount: Paisa,
    /// Income tax withheld for the merchant.
    pub income_tax_withholding_amount: Paisa,
    /// Digital presence tax.
    pub digital_tax_amount: Paisa,
}

impl PaymentCharges {
    /// What `net_amount` must be: gross minus the fee and the four taxes, or
    /// `None` on overflow.
    pub fn expected_net(&self) -> Option<Paisa> {
        crate::amount::net_of(
            self.gross_amount,
            [
                self.fee_amount,
                self.sales_tax_on_fee_amount,
                self.sales_tax_withholding_amount,
                self.income_tax_withholding_amount,
                self.digital_tax_amount,
            ],
        )
    }
}
