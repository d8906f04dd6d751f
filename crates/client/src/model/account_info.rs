use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;

open_enum! {
    /// The `type` of an account lookup result.
    AccountInfoType {
        /// Observed on IBAN lookups.
        CasConstUnspecified = "CAS_CONST_UNSPECIFIED",
        /// Observed on alias lookups.
        AliasTypeUnspecified = "ALIAS_TYPE_UNSPECIFIED",
    }
}

/// Account metadata (`data` of account-info and of alias title-fetch).
///
/// It can reveal an account holder's name: use it only from authenticated,
/// transaction-bound backend flows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AccountInfo {
    /// IBAN.
    pub iban: String,
    /// Lookup type.
    #[serde(rename = "type")]
    pub info_type: AccountInfoType,
    /// ISO 4217 code.
    pub currency: String,
    /// Bank identifier.
    pub servicer_member_id: String,
    /// Account holder name.
    pub name: String,
    /// Whether this is the holder's default account.
    pub is_default: bool,
    /// Doing-business-as name; may be empty.
    pub dba: String,
    /// Merchant category code; may be empty.
    pub mcc: String,
    /// Filled when title details were requested and are available.
    pub account_title: String,
    /// Account type; may be empty.
    pub account_type: String,
}
