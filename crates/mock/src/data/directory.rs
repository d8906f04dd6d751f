//! Merchants, QR codes, aliases, refunds, webhooks, keys and accounts.

use aggpay::{
    AccessKeyId, AccessKeyRecordId, AccessKeyRecordToken, AccessKeyToken, AccountInfoType, AliasId,
    AliasStatus, AliasType, BankAccountId, Currency, DepositorId, ExternalMerchantRef, KeyId,
    LedgerAccountId, LedgerAccountType, NormalBalance, NumericId, Paisa, QrCodeToken, QrType,
    RailMerchantStatus, RefundStatus, RefundType, Secret, VaultToken, WebhookToken,
};
use jiff::civil::Date;

use super::{Dataset, parse_generated};
use crate::synth::{BANKS, CITIES, FIRST_NAMES, PROVINCES, Rng, SECOND_NAMES, at};
use crate::wire::{
    AccessKey, AccountInfo, AdditionalDetails, AddressDetails, Aggregator, AggregatorMerchant,
    Alias, BankAccount, ContactDetails, LedgerAccount, QrCode, RailMerchant, Refund,
    WebhookEndpoint,
};

/// Rail merchants without an aggregator merchant (and without a rail record).
const UNLINKED_RAIL_MERCHANTS: u64 = 3;

const EVENTS: &[&str] = &[
    "payment.created",
    "payment.pending_authorization",
    "payment.authorized",
    "payment.completed",
    "payment.settled",
    "payment.refunded",
    "payment.failed",
    "settlement.created",
    "settlement.completed",
    "settlement.failed",
    "refund.created",
    "refund.completed",
];

const KEY_NAMES: &[&str] = &[
    "primary",
    "rotation-sample",
    "ci-reader",
    "legacy",
    "reporting",
    "backup",
];

/// A merchant's category code: its rail record and its account agree.
fn merchant_mcc(index: u64) -> &'static str {
    ["5411", "5812", "5912", "5999", "7299"][(index % 5) as usize]
}

impl Dataset {
    pub(crate) fn rail_merchant_count(&self) -> u64 {
        self.sizes.merchants + UNLINKED_RAIL_MERCHANTS
    }

    pub(crate) fn merchant_name(&self, index: u64) -> String {
        let mut rng = Rng::new(self.seed, "merchant-name", index);
        format!(
            "{} {} {}",
            rng.pick(FIRST_NAMES),
            rng.pick(SECOND_NAMES),
            index + 1
        )
    }

    pub(crate) fn merchant_ntn(&self, index: u64) -> String {
        let mut rng = Rng::new(self.seed, "ntn", index);
        format!("{}-{}", rng.digits(7), rng.digits(1))
    }

    fn bank(&self, index: u64) -> (&'static str, &'static str) {
        BANKS[(index % BANKS.len() as u64) as usize]
    }

    pub(crate) fn merchant_iban(&self, index: u64) -> String {
        let (code, _) = self.bank(index);
        let digits = 3_000_000_000_000_000 + index * 1_000_003 + self.seed % 997;
        format!("PK{:02}{code}{digits:016}", 10 + index % 89)
    }

    pub(crate) fn till_code(&self, index: u64) -> String {
        format!(
            "{}",
            100_000_000 + (index * 7_919 + self.seed % 1_000) % 900_000_000
        )
    }

    pub(crate) fn rail_mobile(&self, index: u64) -> String {
        format!("03{:09}", 100_000_000 + index * 7 + self.seed % 7)
    }

    pub(crate) fn merchant_bank_account(&self, index: u64) -> BankAccountId {
        parse_generated(BankAccountId::parse(
            Rng::new(self.seed, "merchant-acc", index).token("acc_", 16),
        ))
    }

    pub(crate) fn merchant(&self, index: u64) -> AggregatorMerchant {
        let mut rng = Rng::new(self.seed, "merchant", index);
        let created = index as i64 * 3_600 * 7;
        AggregatorMerchant {
            id: NumericId::new(500 + index * 3 + rng.below(3)),
            token: self.merchant_token(index),
            name: self.merchant_name(index),
            aggregator_id: self.aggregator_id.clone(),
            merchant_id: self.rail_merchant_token(index),
            merchant_external_id: parse_generated(ExternalMerchantRef::parse(
                rng.token("sec_", 12),
            )),
            bank_account_id: self.merchant_bank_account(index),
            // The first two are fixed so that both values are always present.
            enabled: match index {
                0 => true,
                1 => false,
                _ => !rng.chance(5),
            },
            created_at: at(created, 0),
            updated_at: at(created + 86_400, rng.below(1_000) as i64),
        }
    }

    pub(crate) fn rail_merchant(&self, index: u64) -> RailMerchant {
        let mut rng = Rng::new(self.seed, "rail-merchant", index);
        let linked = index < self.sizes.merchants;
        let status = match (linked, index) {
            (false, _) => RailMerchantStatus::Unset,
            (true, 0) => RailMerchantStatus::Active,
            (true, 1) => RailMerchantStatus::Inactive,
            (true, 2) => RailMerchantStatus::Suspended,
            _ => match rng.below(6) {
                0 => RailMerchantStatus::Inactive,
                1 => RailMerchantStatus::Suspended,
                _ => RailMerchantStatus::Active,
            },
        };
        let name = if linked {
            self.merchant_name(index)
        } else {
            format!("Pending Onboarding {}", index + 1)
        };
        let mut private = serde_json::Map::new();
        if rng.chance(2) {
            private.insert("risk_tier".to_owned(), serde_json::Value::from("low"));
        }
        let has_location = !rng.chance(3);
        let created = index as i64 * 3_600 * 5;
        let ntn = self.merchant_ntn(index);
        RailMerchant {
            id: NumericId::new(9_000 + index * 2 + rng.below(2)),
            token: self.rail_merchant_token(index),
            partner_id: self.partner_id.clone(),
            rail_record_id: if linked {
                rng.digits(10)
            } else {
                String::new()
            },
            status,
            uid_type: "NTN".to_owned(),
            uid_value: ntn.clone(),
            document_type: "NTN_CERTIFICATE".to_owned(),
            document_number: ntn,
            address_details: AddressDetails {
                country: "PK".to_owned(),
                city: rng.pick(CITIES).to_string(),
                state_province_region: rng.pick(PROVINCES).to_string(),
                address_line: format!(
                    "Shop {}, {} Road",
                    1 + rng.below(200),
                    rng.pick(FIRST_NAMES)
                ),
            },
            contact_details: ContactDetails {
                mobile_number: self.rail_mobile(index),
                email: format!("merchant{}@example.com", index + 1),
            },
            additional_details: AdditionalDetails {
                dba: name.clone(),
                mcc: merchant_mcc(index).to_owned(),
                lat: if has_location {
                    format!("24.{}", rng.digits(4))
                } else {
                    String::new()
                },
                long: if has_location {
                    format!("67.{}", rng.digits(4))
                } else {
                    String::new()
                },
            },
            additional_details_private: private,
            name,
            created_at: at(created, 0),
            updated_at: at(created + 4_000, rng.below(1_000) as i64),
        }
    }

    pub(crate) fn qr_code(&self, index: u64) -> QrCode {
        let mut rng = Rng::new(self.seed, "qr", index);
        let merchant = index % self.sizes.merchants;
        let qr_type = if index % 5 < 3 {
            QrType::Static
        } else {
            QrType::Dynamic
        };
        let payload = format!(
            "000201010211{}5303586{}6304{}",
            rng.digits(20),
            self.merchant_name(merchant).len(),
            rng.hex(4).to_uppercase()
        );
        QrCode {
            id: NumericId::new(20_000 + index * 3 + rng.below(3)),
            token: parse_generated(QrCodeToken::parse(rng.token("qr_", 16))),
            aggregator_merchant_id: self.merchant_token(merchant),
            qr_type,
            code: payload,
            terminal_label: if rng.chance(3) {
                String::new()
            } else {
                format!("T{}", rng.digits(3))
            },
            reference_label: if rng.chance(2) {
                String::new()
            } else {
                format!("REF-{}", rng.digits(6))
            },
            is_deleted: rng.chance(8),
            created_at: at(
                index as i64 * 5_400,
                if rng.chance(2) {
                    rng.below(1_000) as i64
                } else {
                    0
                },
            ),
        }
    }

    pub(crate) fn alias_token(&self, index: u64) -> AliasId {
        parse_generated(AliasId::parse(self.codecs.alias.token("als_", index)))
    }

    pub(crate) fn alias_index(&self, token: &str) -> Option<u64> {
        let index = self.codecs.alias.decode(token.strip_prefix("als_")?)?;
        (index < self.sizes.merchants).then_some(index)
    }

    pub(crate) fn alias(&self, index: u64) -> Alias {
        let mut rng = Rng::new(self.seed, "alias", index);
        let start = Date::new(2023, 1 + (index % 12) as i8, 1 + (index % 28) as i8)
            .unwrap_or(Date::constant(2023, 1, 1));
        let end = start
            .checked_add(jiff::Span::new().years(3))
            .unwrap_or(start);
        Alias {
            id: NumericId::new(70_000 + index * 4 + rng.below(4)),
            token: self.alias_token(index),
            merchant_id: self.rail_merchant_token(index),
            aggregator_merchant_id: self.merchant_token(index),
            alias_type: AliasType::TillCode,
            alias_value: self.till_code(index),
            status: if index % 9 == 4 {
                AliasStatus::Suspended
            } else {
                AliasStatus::Active
            },
            start_date: start,
            expiration_date: end,
            opening_date: start,
            closing_date: end,
            created_at: at(index as i64 * 3_600, 0),
            updated_at: at(index as i64 * 3_600 + 60, rng.below(1_000) as i64),
            alias_record_id: NumericId::new(1_000_000 + rng.below(8_999_999)),
        }
    }

    /// Account lookups: by merchant IBAN, by rail merchant mobile, by till code.
    pub(crate) fn account_by_iban(&self, iban: &str) -> Option<u64> {
        self.ibans.get(iban).copied()
    }

    pub(crate) fn account_by_mobile(&self, mobile: &str) -> Option<u64> {
        self.mobiles
            .get(mobile)
            .copied()
            .filter(|i| *i < self.sizes.merchants)
    }

    pub(crate) fn account_by_till(&self, till: &str) -> Option<u64> {
        self.tills.get(till).copied()
    }

    pub(crate) fn account_info(
        &self,
        merchant: u64,
        by_alias: bool,
        with_title: bool,
    ) -> AccountInfo {
        let (code, _) = self.bank(merchant);
        let name = self.merchant_name(merchant);
        AccountInfo {
            iban: self.merchant_iban(merchant),
            info_type: if by_alias {
                AccountInfoType::AliasTypeUnspecified
            } else {
                AccountInfoType::CasConstUnspecified
            },
            currency: "PKR".to_owned(),
            servicer_member_id: code.to_owned(),
            account_title: if with_title {
                name.to_uppercase()
            } else {
                String::new()
            },
            name,
            is_default: merchant % 4 != 3,
            // Empty for every third merchant (API.md: "may be empty"), and
            // otherwise the merchant's own, as its rail record shows them.
            dba: if merchant % 3 == 2 {
                String::new()
            } else {
                self.merchant_name(merchant)
            },
            mcc: if merchant % 3 == 2 {
                String::new()
            } else {
                merchant_mcc(merchant).to_owned()
            },
            account_type: if with_title {
                "CURRENT".to_owned()
            } else {
                String::new()
            },
        }
    }

    pub(crate) fn refund(&self, index: u64) -> Refund {
        let mut rng = Rng::new(self.seed, "refund", index);
        let (batch, txn) = self
            .some_payment(rng.below(self.sizes.batches))
            .unwrap_or((0, 0));
        let charges = self.charges(batch, txn);
        let status = match index % 4 {
            0 => RefundStatus::Completed,
            1 => RefundStatus::Initiated,
            2 => RefundStatus::Failed,
            _ => RefundStatus::Canceled,
        };
        let full = rng.chance(2);
        let amount = if full {
            charges.gross_amount
        } else {
            Paisa::new((charges.gross_amount.get() / 2).max(1))
        };
        let created = index as i64 * 10_800 + rng.below(3_600) as i64;
        Refund {
            token: rng.token("rfd_", 16),
            payment_id: charges.payment_id,
            amount,
            refund_type: if full {
                RefundType::Full
            } else {
                RefundType::Partial
            },
            reason: ["customer request", "duplicate payment", "goods returned"]
                [(index % 3) as usize]
                .to_owned(),
            addtl_info: if rng.chance(2) {
                String::new()
            } else {
                format!("ticket {}", rng.digits(5))
            },
            settle_at: (status == RefundStatus::Completed).then(|| at(created + 86_400, 0)),
            status,
            trace_reference: format!("TR{}", rng.digits(12)),
            msg_id: format!("MSG{}", rng.hex(12).to_uppercase()),
            return_id: format!("RET{}", rng.digits(8)),
            request_id: rng.token("req-", 12),
            msg_created_at: at(created - 1, 250),
            created_at: at(created, 0),
            updated_at: at(created + 120, rng.below(1_000) as i64),
        }
    }

    /// Creation time of refund `index` in UNIX seconds (refunds are created
    /// in index order, so filters on it need no row generation).
    pub(crate) fn refund_created_unix(&self, index: u64) -> i64 {
        self.refund(index).created_at.as_second()
    }

    pub(crate) fn webhook(&self, index: u64) -> WebhookEndpoint {
        let mut rng = Rng::new(self.seed, "webhook", index);
        let events: Vec<&str> = EVENTS.iter().copied().filter(|_| rng.chance(3)).collect();
        let events = if events.is_empty() {
            vec!["payment.created", "payment.authorized"]
        } else {
            events
        };
        let created = index as i64 * 86_400 * 3;
        WebhookEndpoint {
            token: parse_generated(WebhookToken::parse(rng.token("wh_", 16))),
            aggregator_id: self.aggregator_id.clone(),
            url: format!("https://hooks.example.com/aggpay/{}", index + 1),
            description: if rng.chance(3) {
                String::new()
            } else {
                format!("endpoint {}", index + 1)
            },
            enabled: index % 4 != 2,
            event_filter_json: serde_json::to_string(&events).unwrap_or_else(|_| "[]".to_owned()),
            created_at: at(created, 0),
            updated_at: at(created + 3_600, 0),
            secret_version: 1 + rng.below(4) as i64,
            secret_rotated_at: at(created + 7_200, rng.below(1_000) as i64),
        }
    }

    /// The keys the mock starts with; both record shapes, some inactive.
    /// Key 0 is the one `MockServer::secret_key` hands out; keys 1 and 2
    /// are the safe-to-rotate samples (`MockInfo::access_key_id` and
    /// `second_access_key_id`).
    pub(crate) fn initial_keys(&self) -> Vec<AccessKey> {
        KEY_NAMES
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let i = i as u64;
                let mut rng = Rng::new(self.seed, "key", i);
                let ak = parse_generated(AccessKeyId::parse(rng.token("ak_", 16)));
                let (id, token) = if i.is_multiple_of(2) {
                    (
                        AccessKeyRecordId::Numeric(NumericId::new(11 + i * 13)),
                        AccessKeyRecordToken::Key(ak),
                    )
                } else {
                    let tok = parse_generated(AccessKeyToken::parse(rng.token("ak_tok_", 16)));
                    (AccessKeyRecordId::Key(ak), AccessKeyRecordToken::Token(tok))
                };
                let created = i as i64 * 86_400 * 30;
                AccessKey {
                    id,
                    token,
                    key_id: parse_generated(KeyId::parse(rng.token("key_", 12))),
                    aggregator_id: self.aggregator_id.clone(),
                    is_active: !matches!(*name, "legacy" | "reporting"),
                    name: (*name).to_owned(),
                    secret: self.key_secret(i, 0),
                    created_at: at(created, 0),
                    updated_at: at(created, 0),
                }
            })
            .collect()
    }

    /// The secret of key `index` after `generation` rotations.
    pub(crate) fn key_secret(&self, index: u64, generation: u64) -> Secret {
        Secret::new(Rng::new(self.seed, "secret", (index << 32) | generation).token("aggsk_", 40))
    }

    pub(crate) fn bank_account(&self) -> BankAccount {
        let mut rng = Rng::new(self.seed, "aggregator-bank", 0);
        let digits = format!("{:016}", 5_000_000_000_000_000 + self.seed % 1_000_000_007);
        let iban = format!("PK36MEZN{digits}");
        BankAccount {
            id: NumericId::new(301),
            token: self.aggregator_bank_account(),
            vault_token: self.vault_token(),
            title: format!("{} Settlement", self.aggregator_name),
            redacted_iban: format!("{}{}{}", &iban[..8], "*".repeat(12), &iban[20..]),
            hashed_iban: rng.hex(64),
            iban,
            servicer: "MEZN".to_owned(),
            bank: "Meezan Bank".to_owned(),
            depositor_id: parse_generated(DepositorId::parse(rng.token("dep_", 12))),
            owner: self.aggregator_name.clone(),
            kind: 1,
            version: "3".to_owned(),
            created_at: at(-86_400 * 90, 0),
            updated_at: at(-86_400 * 30, 125),
        }
    }

    fn aggregator_bank_account(&self) -> BankAccountId {
        parse_generated(BankAccountId::parse(
            Rng::new(self.seed, "aggregator-acc", 0).token("acc_", 16),
        ))
    }

    fn vault_token(&self) -> VaultToken {
        parse_generated(VaultToken::parse(
            Rng::new(self.seed, "vault", 0).token("lock_", 16),
        ))
    }

    pub(crate) fn ledger_token(&self) -> LedgerAccountId {
        parse_generated(LedgerAccountId::parse(
            Rng::new(self.seed, "ledger", 0).token("acct_", 16),
        ))
    }

    pub(crate) fn aggregator(&self, keys: Vec<AccessKey>) -> Aggregator {
        Aggregator {
            id: NumericId::new(42),
            token: self.aggregator_id.clone(),
            partner_id: self.partner_id.clone(),
            bank_account_id: self.aggregator_bank_account(),
            name: self.aggregator_name.clone(),
            is_active: true,
            is_super: false,
            vault_enabled: true,
            bank_account: self.bank_account(),
            keys,
            created_at: at(-86_400 * 90, 0),
            updated_at: at(-86_400 * 10, 500),
        }
    }

    pub(crate) fn ledger_account(&self) -> LedgerAccount {
        let mut rng = Rng::new(self.seed, "ledger-balance", 0);
        let balance = 1_000_000 + rng.below(9_000_000_000) as i64;
        LedgerAccount {
            id: NumericId::new(8_801),
            token: self.ledger_token(),
            account_type: LedgerAccountType::Aggregator,
            account_name: format!("{} Operating", self.aggregator_name),
            normal_balance: NormalBalance::Credit,
            balance: Paisa::new(balance),
            running_balance: Paisa::new(balance + rng.below(100_000) as i64),
            currency: Currency::PKR,
            vault_token: self.vault_token(),
            bank_acct_id: self.aggregator_bank_account(),
            external_partner_id: self.partner_id.to_string(),
            external_aggregator_id: self.aggregator_id.to_string(),
            external_merchant_id: String::new(),
            created_at: at(-86_400 * 90, 0),
            updated_at: at(86_400, 0),
        }
    }
}
