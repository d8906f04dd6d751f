//! The API's resources, one file per resource, with API.md's wire names.

mod access_key;
mod account_info;
mod aggregator;
mod alias;
mod batch;
mod charges;
#[cfg(any(test, feature = "test-util"))]
mod example;
mod ledger;
mod merchant;
mod payout;
mod qr_code;
mod rail_merchant;
mod refund;
mod report_export;
mod text;
mod transaction;
mod webhook;

pub use access_key::{AccessKey, AccessKeyRecordId, AccessKeyRecordToken};
pub use account_info::{AccountInfo, AccountInfoType};
pub use aggregator::{Aggregator, BankAccount};
pub use alias::{Alias, AliasStatus, AliasType};
pub use batch::{BatchStatus, SettlementBatch};
pub use charges::PaymentCharges;
pub use ledger::{LedgerAccount, LedgerAccountType, NormalBalance};
pub use merchant::AggregatorMerchant;
pub use payout::{PayoutStatus, SettlementPayout};
pub use qr_code::{QrCode, QrType};
pub use rail_merchant::{
    AdditionalDetails, AddressDetails, ContactDetails, RailMerchant, RailMerchantStatus,
};
pub use refund::{Refund, RefundStatus, RefundType};
pub use report_export::{NewReportExport, ReportExport, ReportKind, ReportStatus};
pub use text::Text;
pub use transaction::{PaymentType, Transaction, TransactionStatus, TransactionType};
pub use webhook::WebhookEndpoint;
