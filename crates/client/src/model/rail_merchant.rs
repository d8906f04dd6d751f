use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::open_enum::open_enum;
use crate::{PartnerId, RailMerchantId, RecordId, Text};

open_enum! {
    /// The onboarding status of a rail merchant.
    RailMerchantStatus {
        /// Active.
        Active = "Active",
        /// Inactive.
        Inactive = "Inactive",
        /// Suspended.
        Suspended = "Suspended",
        /// The empty string of a record without a rail record.
        Unset = "",
    }
}

/// Postal address of a rail merchant.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AddressDetails {
    /// Country.
    pub country: Text,
    /// City.
    pub city: Text,
    /// State, province or region.
    pub state_province_region: Text,
    /// Street address.
    pub address_line: Text,
}

/// Contact details of a rail merchant.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContactDetails {
    /// Mobile number.
    pub mobile_number: Text,
    /// Email address.
    pub email: Text,
}

/// Business details of a rail merchant.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AdditionalDetails {
    /// Doing-business-as name.
    pub dba: Text,
    /// Merchant category code.
    pub mcc: Text,
    /// Latitude; may be empty.
    pub lat: Text,
    /// Longitude; may be empty.
    pub long: Text,
}

/// A merchant registered on the rail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RailMerchant {
    /// Its id: numeric on most servers, though API.md calls it only a
    /// string ([`RecordId`]).
    pub id: RecordId,
    /// `mer_` token.
    pub token: RailMerchantId,
    /// `partner_` identifier.
    pub partner_id: PartnerId,
    /// Rail record id; may be empty.
    pub rail_record_id: Text,
    /// Onboarding status.
    pub status: RailMerchantStatus,
    /// Identity document kind (observed `NTN`).
    pub uid_type: Text,
    /// Identity document number.
    pub uid_value: Text,
    /// Name.
    pub name: Text,
    /// Document type.
    pub document_type: Text,
    /// Document number.
    pub document_number: Text,
    /// Address.
    pub address_details: AddressDetails,
    /// Contact.
    pub contact_details: ContactDetails,
    /// Business details.
    pub additional_details: AdditionalDetails,
    /// Private details; may be empty.
    #[serde(default)]
    pub additional_details_private: serde_json::Map<String, serde_json::Value>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}
