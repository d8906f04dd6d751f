use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{BankAccountId, Currency, LedgerAccountId, Paisa, RecordId, VaultToken};

open_enum! {
    /// The type of a ledger account.
    LedgerAccountType {
        /// The aggregator's own account.
        Aggregator = "ACCT_AGGREGATOR",
        /// A merchant's account.
        Merchant = "ACCT_MERCHANT",
    }
}

open_enum! {
    /// The side on which a ledger account's balance grows.
    NormalBalance {
        /// Credit-normal.
        Credit = "SIDE_CREDIT",
        /// Debit-normal.
        Debit = "SIDE_DEBIT",
    }
}

/// The aggregator ledger account (`data` of the ledger operation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LedgerAccount {
    /// Its id: numeric on most servers, though API.md calls it only a
    /// string ([`RecordId`]).
    pub id: RecordId,
    /// `acct_` token.
    pub token: LedgerAccountId,
    /// Account type.
    pub account_type: LedgerAccountType,
    /// Account name.
    pub account_name: String,
    /// Normal balance side.
    pub normal_balance: NormalBalance,
    /// Balance in paisa.
    pub balance: Paisa,
    /// Running balance in paisa.
    pub running_balance: Paisa,
    /// ISO 4217 code.
    pub currency: Currency,
    /// `lock_` vault token.
    pub vault_token: VaultToken,
    /// `acc_` bank account.
    pub bank_acct_id: BankAccountId,
    /// External partner reference.
    pub external_partner_id: String,
    /// External aggregator reference.
    pub external_aggregator_id: String,
    /// External merchant reference; may be empty.
    pub external_merchant_id: String,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}
