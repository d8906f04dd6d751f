use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::{AccessKey, AggregatorId, BankAccountId, DepositorId, PartnerId, RecordId, VaultToken};

/// The aggregator's settlement bank account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BankAccount {
    /// Its id: numeric on most servers, though API.md calls it only a
    /// string ([`RecordId`]).
    pub id: RecordId,
    /// `acc_` token.
    pub token: BankAccountId,
    /// `lock_` vault token.
    pub vault_token: VaultToken,
    /// Account title.
    pub title: String,
    /// IBAN.
    pub iban: String,
    /// IBAN with the middle digits masked.
    pub redacted_iban: String,
    /// Hash of the IBAN.
    pub hashed_iban: String,
    /// Servicing institution.
    pub servicer: String,
    /// Bank; may be empty.
    pub bank: String,
    /// `dep_` depositor.
    pub depositor_id: DepositorId,
    /// Owner.
    pub owner: String,
    /// Account kind.
    pub kind: i64,
    /// Record version (a string on the wire).
    pub version: String,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}

/// The aggregator record (`data` of get-aggregator).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Aggregator {
    /// Its id: numeric on most servers, though API.md calls it only a
    /// string ([`RecordId`]).
    pub id: RecordId,
    /// `agg_` token.
    pub token: AggregatorId,
    /// `partner_` identifier.
    pub partner_id: PartnerId,
    /// `acc_` settlement account.
    pub bank_account_id: BankAccountId,
    /// Name.
    pub name: String,
    /// Whether the aggregator is active.
    pub is_active: bool,
    /// Meaning not documented by the API.
    pub is_super: bool,
    /// Meaning not documented by the API.
    pub vault_enabled: bool,
    /// The settlement bank account.
    pub bank_account: BankAccount,
    /// Access keys, secrets included (each serialized as `<redacted>`: see
    /// [`AccessKey`]).
    pub keys: Vec<AccessKey>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}
