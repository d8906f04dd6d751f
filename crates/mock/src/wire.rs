//! What the mock writes: API.md's resources, envelopes and lists, as
//! serialize-only structs. They are the server's own, independent of the
//! client's models (which are `#[non_exhaustive]` and read tolerantly);
//! the value types (identifiers, amounts, open enumerations) are shared,
//! because they write exactly what API.md's typing rules say.

use aggpay::{
    AccessKeyId, AccessKeyRecordId, AccessKeyRecordToken, AccountInfoType, AggregatorId,
    AggregatorMerchantId, AliasId, AliasStatus, AliasType, BankAccountId, BatchStatus, BatchToken,
    Currency, DepositorId, ExternalMerchantRef, JobId, KeyId, LedgerAccountId, LedgerAccountType,
    NormalBalance, NumericId, Paisa, PartnerId, PaymentId, PaymentType, PayoutStatus, PayoutToken,
    QrCodeToken, QrType, RailMerchantId, RailMerchantStatus, RefundStatus, RefundType,
    ReportExportToken, ReportKind, ReportStatus, Secret, TransactionStatus, TransactionToken,
    TransactionType, VaultToken, WebhookToken,
};
use jiff::Timestamp;
use jiff::civil::Date;
use serde::{Serialize, Serializer};

/// `{"api_version": "v1", "data": …}`.
#[derive(Debug, Serialize)]
pub(crate) struct Envelope<T> {
    pub(crate) api_version: &'static str,
    pub(crate) data: T,
}

impl<T> Envelope<T> {
    pub(crate) fn v1(data: T) -> Self {
        Self {
            api_version: "v1",
            data,
        }
    }
}

/// The bare error form (400, 404), and the inner object of the envelope.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorBody<'a> {
    pub(crate) code: &'a str,
    pub(crate) message: &'a str,
}

/// The envelope error form (401, 500).
#[derive(Debug, Serialize)]
pub(crate) struct ErrorEnvelope<'a> {
    pub(crate) api_version: &'static str,
    pub(crate) error: ErrorBody<'a>,
}

/// A count written as a numeric string (most lists).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StringCount(pub(crate) u64);

impl Serialize for StringCount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

/// A count written as a JSON integer (access-key and refund lists).
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct IntCount(pub(crate) u64);

/// The `count` object of cursor lists.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct CursorCount {
    pub(crate) filtered_count: StringCount,
    pub(crate) total_count: StringCount,
}

#[derive(Debug, Serialize)]
pub(crate) struct KeyList {
    pub(crate) count: IntCount,
    pub(crate) keys: Vec<AccessKey>,
}

#[derive(Debug, Serialize)]
pub(crate) struct MerchantList {
    pub(crate) merchants: Vec<AggregatorMerchant>,
    pub(crate) count: StringCount,
}

#[derive(Debug, Serialize)]
pub(crate) struct RailMerchantList {
    pub(crate) merchants: Vec<RailMerchant>,
    pub(crate) count: StringCount,
}

#[derive(Debug, Serialize)]
pub(crate) struct QrCodeList {
    pub(crate) qr_codes: Vec<QrCode>,
    pub(crate) count: StringCount,
}

#[derive(Debug, Serialize)]
pub(crate) struct RefundList {
    pub(crate) count: IntCount,
    pub(crate) keys: Vec<Refund>,
}

#[derive(Debug, Serialize)]
pub(crate) struct WebhookList {
    pub(crate) endpoints: Vec<WebhookEndpoint>,
    pub(crate) count: StringCount,
}

/// Rows are [`SettlementBatch`]es, or the same already serialized.
#[derive(Debug, Serialize)]
pub(crate) struct BatchList<R> {
    pub(crate) batches: Vec<R>,
    pub(crate) next_cursor: String,
    pub(crate) count: CursorCount,
}

#[derive(Debug, Serialize)]
pub(crate) struct BatchTransactions<'a> {
    pub(crate) settlement_transactions: Vec<SettlementPayout>,
    pub(crate) transactions: Vec<Transaction<'a>>,
    pub(crate) next_cursor: String,
    pub(crate) count: CursorCount,
}

#[derive(Debug, Serialize)]
pub(crate) struct ReportExportCreated {
    pub(crate) report_export: ReportExport,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct PaymentCharges {
    pub(crate) payment_id: PaymentId,
    pub(crate) gross_amount: Paisa,
    pub(crate) currency: Currency,
    pub(crate) fee_amount: Paisa,
    pub(crate) net_amount: Paisa,
    pub(crate) sales_tax_on_fee_amount: Paisa,
    pub(crate) sales_tax_withholding_amount: Paisa,
    pub(crate) income_tax_withholding_amount: Paisa,
    pub(crate) digital_tax_amount: Paisa,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReportExport {
    pub(crate) id: NumericId,
    pub(crate) token: ReportExportToken,
    pub(crate) settlement_batch_id: BatchToken,
    /// Empty for a batch export.
    pub(crate) merchant_id: String,
    pub(crate) kind: ReportKind,
    pub(crate) status: ReportStatus,
    pub(crate) attempts: i64,
    pub(crate) error_message: String,
    pub(crate) storage_key: String,
    pub(crate) record_count: StringCount,
    pub(crate) file_size: StringCount,
    pub(crate) started_at: Timestamp,
    pub(crate) finished_at: Option<Timestamp>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
    pub(crate) partner_id: PartnerId,
    pub(crate) version: i64,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct SettlementBatch {
    pub(crate) id: NumericId,
    pub(crate) token: BatchToken,
    pub(crate) file_name: String,
    pub(crate) date: Timestamp,
    pub(crate) status: BatchStatus,
    pub(crate) version: i64,
    pub(crate) created_by_job_id: JobId,
    pub(crate) partner_id: PartnerId,
    pub(crate) created_at: Timestamp,
}

/// A transaction row. What every row of a merchant or of the dataset
/// repeats is borrowed, not copied: a page is made of a hundred of these
/// and thrown away once written.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Transaction<'a> {
    pub(crate) id: NumericId,
    pub(crate) token: TransactionToken,
    pub(crate) payment_id: PaymentId,
    pub(crate) refund_id: Option<String>,
    pub(crate) transaction_type: TransactionType,
    pub(crate) payment_type: PaymentType,
    pub(crate) status: TransactionStatus,
    pub(crate) aggregator_id: &'a AggregatorId,
    pub(crate) aggregator_name: &'a str,
    pub(crate) aggregator_merchant_id: &'a AggregatorMerchantId,
    pub(crate) aggregator_merchant_name: &'a str,
    pub(crate) rail_merchant_id: &'a RailMerchantId,
    pub(crate) rail_merchant_name: &'a str,
    pub(crate) rail_merchant_ntn: &'a str,
    pub(crate) rail_merchant_province: &'static str,
    pub(crate) gross_amount: Paisa,
    pub(crate) fee_amount: Paisa,
    pub(crate) net_amount: Paisa,
    pub(crate) sales_tax_on_fee_amount: Paisa,
    pub(crate) sales_tax_withholding_amount: Paisa,
    pub(crate) income_tax_withholding_amount: Paisa,
    pub(crate) digital_tax_amount: Paisa,
    pub(crate) currency: Currency,
    pub(crate) latest_batch_id: &'a BatchToken,
    pub(crate) partner_id: &'a PartnerId,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

/// A settlement payout in the reference's shape (WIRE.md).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SettlementPayout {
    pub(crate) id: NumericId,
    pub(crate) token: PayoutToken,
    pub(crate) settlement_batch_id: BatchToken,
    pub(crate) aggregator_id: AggregatorId,
    pub(crate) aggregator_merchant_id: AggregatorMerchantId,
    pub(crate) rail_merchant_id: RailMerchantId,
    pub(crate) status: PayoutStatus,
    pub(crate) attempt: i64,
    pub(crate) gross_amount: Paisa,
    pub(crate) fee_amount: Paisa,
    pub(crate) net_amount: Paisa,
    pub(crate) sales_tax_on_fee_amount: Paisa,
    pub(crate) sales_tax_withholding_amount: Paisa,
    pub(crate) income_tax_withholding_amount: Paisa,
    pub(crate) digital_tax_amount: Paisa,
    pub(crate) debitor_account_id: LedgerAccountId,
    pub(crate) creditor_account_id: LedgerAccountId,
    pub(crate) failure_reason: String,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AggregatorMerchant {
    pub(crate) id: NumericId,
    pub(crate) token: AggregatorMerchantId,
    pub(crate) name: String,
    pub(crate) aggregator_id: AggregatorId,
    pub(crate) merchant_id: RailMerchantId,
    pub(crate) merchant_external_id: ExternalMerchantRef,
    pub(crate) bank_account_id: BankAccountId,
    pub(crate) enabled: bool,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AddressDetails {
    pub(crate) country: String,
    pub(crate) city: String,
    pub(crate) state_province_region: String,
    pub(crate) address_line: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ContactDetails {
    pub(crate) mobile_number: String,
    pub(crate) email: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AdditionalDetails {
    pub(crate) dba: String,
    pub(crate) mcc: String,
    pub(crate) lat: String,
    pub(crate) long: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct RailMerchant {
    pub(crate) id: NumericId,
    pub(crate) token: RailMerchantId,
    pub(crate) partner_id: PartnerId,
    pub(crate) rail_record_id: String,
    pub(crate) status: RailMerchantStatus,
    pub(crate) uid_type: String,
    pub(crate) uid_value: String,
    pub(crate) name: String,
    pub(crate) document_type: String,
    pub(crate) document_number: String,
    pub(crate) address_details: AddressDetails,
    pub(crate) contact_details: ContactDetails,
    pub(crate) additional_details: AdditionalDetails,
    pub(crate) additional_details_private: serde_json::Map<String, serde_json::Value>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct QrCode {
    pub(crate) id: NumericId,
    pub(crate) token: QrCodeToken,
    pub(crate) aggregator_merchant_id: AggregatorMerchantId,
    #[serde(rename = "type")]
    pub(crate) qr_type: QrType,
    pub(crate) code: String,
    pub(crate) terminal_label: String,
    pub(crate) reference_label: String,
    pub(crate) is_deleted: bool,
    pub(crate) created_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Refund {
    pub(crate) token: String,
    pub(crate) payment_id: PaymentId,
    pub(crate) amount: Paisa,
    #[serde(rename = "type")]
    pub(crate) refund_type: RefundType,
    pub(crate) reason: String,
    pub(crate) addtl_info: String,
    pub(crate) status: RefundStatus,
    pub(crate) trace_reference: String,
    pub(crate) msg_id: String,
    pub(crate) return_id: String,
    pub(crate) request_id: String,
    pub(crate) msg_created_at: Timestamp,
    pub(crate) settle_at: Option<Timestamp>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct AccountInfo {
    pub(crate) iban: String,
    #[serde(rename = "type")]
    pub(crate) info_type: AccountInfoType,
    pub(crate) currency: String,
    pub(crate) servicer_member_id: String,
    pub(crate) name: String,
    pub(crate) is_default: bool,
    pub(crate) dba: String,
    pub(crate) mcc: String,
    pub(crate) account_title: String,
    pub(crate) account_type: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Alias {
    pub(crate) id: NumericId,
    pub(crate) token: AliasId,
    pub(crate) merchant_id: RailMerchantId,
    pub(crate) aggregator_merchant_id: AggregatorMerchantId,
    pub(crate) alias_type: AliasType,
    pub(crate) alias_value: String,
    pub(crate) status: AliasStatus,
    pub(crate) start_date: Date,
    pub(crate) expiration_date: Date,
    pub(crate) opening_date: Date,
    pub(crate) closing_date: Date,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
    pub(crate) alias_record_id: NumericId,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct BankAccount {
    pub(crate) id: NumericId,
    pub(crate) token: BankAccountId,
    pub(crate) vault_token: VaultToken,
    pub(crate) title: String,
    pub(crate) iban: String,
    pub(crate) redacted_iban: String,
    pub(crate) hashed_iban: String,
    pub(crate) servicer: String,
    pub(crate) bank: String,
    pub(crate) depositor_id: DepositorId,
    pub(crate) owner: String,
    pub(crate) kind: i64,
    pub(crate) version: String,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Aggregator {
    pub(crate) id: NumericId,
    pub(crate) token: AggregatorId,
    pub(crate) partner_id: PartnerId,
    pub(crate) bank_account_id: BankAccountId,
    pub(crate) name: String,
    pub(crate) is_active: bool,
    pub(crate) is_super: bool,
    pub(crate) vault_enabled: bool,
    pub(crate) bank_account: BankAccount,
    pub(crate) keys: Vec<AccessKey>,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

/// An access key; the secret is written in clear, as API.md says the
/// service does (the mock's keys are throwaway test credentials).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AccessKey {
    pub(crate) id: AccessKeyRecordId,
    pub(crate) token: AccessKeyRecordToken,
    pub(crate) key_id: KeyId,
    pub(crate) aggregator_id: AggregatorId,
    pub(crate) is_active: bool,
    pub(crate) name: String,
    #[serde(serialize_with = "Secret::serialize_exposed")]
    pub(crate) secret: Secret,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

impl AccessKey {
    /// The `ak_` identifier the rotate operation takes.
    pub(crate) fn access_key_id(&self) -> Option<&AccessKeyId> {
        match (&self.id, &self.token) {
            (AccessKeyRecordId::Key(id), _) | (_, AccessKeyRecordToken::Key(id)) => Some(id),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct LedgerAccount {
    pub(crate) id: NumericId,
    pub(crate) token: LedgerAccountId,
    pub(crate) account_type: LedgerAccountType,
    pub(crate) account_name: String,
    pub(crate) normal_balance: NormalBalance,
    pub(crate) balance: Paisa,
    pub(crate) running_balance: Paisa,
    pub(crate) currency: Currency,
    pub(crate) vault_token: VaultToken,
    pub(crate) bank_acct_id: BankAccountId,
    pub(crate) external_partner_id: String,
    pub(crate) external_aggregator_id: String,
    pub(crate) external_merchant_id: String,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct WebhookEndpoint {
    pub(crate) token: WebhookToken,
    pub(crate) aggregator_id: AggregatorId,
    pub(crate) url: String,
    pub(crate) description: String,
    pub(crate) enabled: bool,
    pub(crate) event_filter_json: String,
    pub(crate) created_at: Timestamp,
    pub(crate) updated_at: Timestamp,
    pub(crate) secret_version: i64,
    pub(crate) secret_rotated_at: Timestamp,
}
