//! Typed identifiers: one newtype per prefix of API.md typing rule 1.
//!
//! Every identifier is validated when it is parsed or deserialized, so a
//! value of these types is always well formed; a client method that takes
//! one can never send a malformed path.

use std::fmt;
use std::str::FromStr;

use compact_str::CompactString;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Error;
use crate::syntax;

/// Keeps an offending value short and printable inside error messages.
pub(crate) fn excerpt(value: &str) -> String {
    crate::text::excerpt(value, 64)
}

macro_rules! prefixed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(CompactString);

        impl $name {
            /// The prefix every value of this type starts with.
            pub const PREFIX: &'static str = $prefix;

            /// Parses and validates an identifier.
            ///
            /// # Errors
            ///
            /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) when the value lacks the prefix or
            /// carries characters that are not URL-unreserved.
            pub fn parse(value: impl AsRef<str> + Into<String>) -> Result<Self, Error> {
                match syntax::why_not_id(value.as_ref(), $prefix) {
                    None => Ok(Self(CompactString::new(value.as_ref()))),
                    Some(why) => Err(Error::invalid_input(
                        $what,
                        format!("`{}` {why}", excerpt(value.as_ref())),
                    )),
                }
            }

            /// The identifier as sent on the wire.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Gives back the inner string.
            pub fn into_string(self) -> String {
                self.0.into_string()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(s: &str) -> Result<Self, Error> {
                Self::parse(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = Error;

            fn try_from(s: String) -> Result<Self, Error> {
                Self::parse(s)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = Error;

            fn try_from(s: &str) -> Result<Self, Error> {
                Self::parse(s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::model_util::parsed_str(deserializer, $what, |raw: &str| Self::parse(raw))
            }
        }
    };
}

prefixed_id!(
    /// An aggregator identifier (`agg_…`).
    AggregatorId, "agg_", "aggregator id"
);
prefixed_id!(
    /// A payment identifier (`pm_…`).
    PaymentId, "pm_", "payment id"
);
prefixed_id!(
    /// A transaction token (`txn_…`).
    TransactionToken, "txn_", "transaction token"
);
prefixed_id!(
    /// A settlement payout token (`stxn_…`).
    PayoutToken, "stxn_", "payout token"
);
prefixed_id!(
    /// A settlement batch token: `sb_` and exactly 39 characters in total.
    ///
    /// ```
    /// use aggpay::BatchToken;
    ///
    /// assert!(BatchToken::parse("sb_0f8fad5b-d9cb-469f-a165-70867728950e").is_ok());
    /// assert!(BatchToken::parse("sb_short").is_err());
    /// ```
    BatchToken, "sb_", "settlement batch token (39 characters)"
);
prefixed_id!(
    /// A job identifier (`job_…`).
    JobId, "job_", "job id"
);
prefixed_id!(
    /// A report export token (`rpt_…`).
    ReportExportToken, "rpt_", "report export token"
);
prefixed_id!(
    /// A rail merchant identifier (`mer_…`).
    RailMerchantId, "mer_", "rail merchant id"
);
prefixed_id!(
    /// An aggregator merchant identifier (`am_…`).
    AggregatorMerchantId, "am_", "aggregator merchant id"
);
prefixed_id!(
    /// An external merchant reference (`sec_…`).
    ExternalMerchantRef, "sec_", "external merchant reference"
);
prefixed_id!(
    /// A bank account identifier (`acc_…`).
    BankAccountId, "acc_", "bank account id"
);
prefixed_id!(
    /// A ledger account token (`acct_…`).
    LedgerAccountId, "acct_", "ledger account id"
);
prefixed_id!(
    /// A vault token (`lock_…`).
    VaultToken, "lock_", "vault token"
);
prefixed_id!(
    /// A depositor identifier (`dep_…`).
    DepositorId, "dep_", "depositor id"
);
prefixed_id!(
    /// An alias identifier (`als_…`).
    AliasId, "als_", "alias id"
);
prefixed_id!(
    /// A QR code token (`qr_…`).
    QrCodeToken, "qr_", "qr code token"
);
prefixed_id!(
    /// An access key identifier (`ak_…`, never `ak_tok_…`): what the rotate
    /// operation takes.
    AccessKeyId, "ak_", "access key id"
);
prefixed_id!(
    /// An access key token of the second record shape (`ak_tok_…`).
    AccessKeyToken, "ak_tok_", "access key token"
);
prefixed_id!(
    /// A key identifier (`key_…`).
    KeyId, "key_", "key id"
);
prefixed_id!(
    /// A webhook endpoint token (`wh_…`).
    WebhookToken, "wh_", "webhook token"
);
prefixed_id!(
    /// A partner identifier (`partner_…`).
    PartnerId, "partner_", "partner id"
);

/// A numeric record `id`, serialized as a decimal string. Cursor lists are
/// ordered on this value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NumericId(u64);

impl NumericId {
    /// Wraps a number.
    pub const fn new(value: u64) -> Self {
        Self(value)
    }

    /// The number.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// Parses the wire form: digits only, no sign, no leading zero.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for anything else, or a number above `u64::MAX`.
    pub fn parse(value: &str) -> Result<Self, Error> {
        if syntax::is_numeric_id(value)
            && let Ok(n) = value.parse()
        {
            return Ok(Self(n));
        }
        Err(Error::invalid_input(
            "numeric id",
            format!(
                "`{}` is not digits without a sign or a leading zero",
                excerpt(value)
            ),
        ))
    }
}

impl fmt::Display for NumericId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for NumericId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl Serialize for NumericId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for NumericId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model_util::parsed_str(deserializer, "a numeric id string", Self::parse)
    }
}

/// The `id` of a record API.md does not call numeric: a rail merchant, a
/// QR code, an alias, the aggregator, its bank account, the ledger
/// account. API.md says "Most records carry a numeric `id` serialized as
/// a string" (typing rule 2), and lists these ids only as strings, so a
/// server may give them in another form (a UUID, say): this type takes
/// whatever string the server sends, and gives its number where it is
/// one.
///
/// ```
/// use aggpay::RecordId;
///
/// let id: RecordId = serde_json::from_str(r#""1042""#).unwrap();
/// assert_eq!(id.as_numeric(), Some(1042));
/// let id: RecordId = serde_json::from_str(r#""4f6c2a9e-1b7d-4c3e-9a2f-0d5e8b7c6a41""#).unwrap();
/// assert_eq!(id.as_numeric(), None);
/// assert_eq!(id.as_str(), "4f6c2a9e-1b7d-4c3e-9a2f-0d5e8b7c6a41");
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordId(CompactString);

impl RecordId {
    /// The id as sent on the wire.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id as a number, where it is a numeric id (digits, no sign, no
    /// leading zero), as most records' are.
    pub fn as_numeric(&self) -> Option<u64> {
        NumericId::parse(&self.0).ok().map(NumericId::get)
    }
}

impl From<NumericId> for RecordId {
    fn from(id: NumericId) -> Self {
        Self(CompactString::new(id.to_string()))
    }
}

impl Serialize for RecordId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Whatever string a server sends (see the type's documentation).
impl<'de> Deserialize<'de> for RecordId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model_util::parsed_str(deserializer, "a record id string", |raw| {
            Ok::<_, std::convert::Infallible>(Self(CompactString::new(raw)))
        })
    }
}

impl fmt::Debug for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecordId({:?})", self.0)
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for RecordId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A refund token (`Refund::token`, `Transaction::refund_id`, the
/// refund list's `refund_id` filter).
///
/// API.md lists no prefix for refunds (typing rule 1 names none), so this
/// type, unlike the prefixed ones, takes whatever string a server sends:
/// deserializing never refuses a token. What it refuses is a value typed by
/// hand that can only be a mistake: [`RefundToken::parse`] rejects an empty
/// value and one holding a control character, which as a filter would
/// match nothing and look like "no refunds".
///
/// ```
/// use aggpay::RefundToken;
///
/// assert!(RefundToken::parse("rfd_a59a153470c33e86").is_ok());
/// assert!(RefundToken::parse("").is_err());
/// assert!(RefundToken::parse("rfd_1\n").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RefundToken(CompactString);

impl RefundToken {
    /// Parses a token given by a user.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for an
    /// empty value or one holding a control character.
    pub fn parse(value: impl AsRef<str> + Into<String>) -> Result<Self, Error> {
        let text = value.as_ref();
        let why = if text.is_empty() {
            Some("is empty".to_owned())
        } else {
            text.chars().find(|c| c.is_control()).map(|c| {
                format!(
                    "holds the control character `{}`",
                    crate::text::escape_control(&c.to_string())
                )
            })
        };
        match why {
            None => Ok(Self(CompactString::new(text))),
            Some(why) => Err(Error::invalid_input(
                "refund token",
                format!("`{}` {why}", excerpt(text)),
            )),
        }
    }

    /// The token as sent on the wire.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Gives back the inner string.
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl Serialize for RefundToken {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Whatever string a server sends (see the type's documentation).
impl<'de> Deserialize<'de> for RefundToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model_util::parsed_str(deserializer, "a refund token", |raw| {
            Ok::<_, std::convert::Infallible>(Self(CompactString::new(raw)))
        })
    }
}

impl fmt::Debug for RefundToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RefundToken({:?})", self.0)
    }
}

impl fmt::Display for RefundToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for RefundToken {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromStr for RefundToken {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl TryFrom<&str> for RefundToken {
    type Error = Error;

    fn try_from(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl TryFrom<String> for RefundToken {
    type Error = Error;

    fn try_from(s: String) -> Result<Self, Error> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parse_and_display() {
        let id = PaymentId::parse("pm_abc123").unwrap();
        assert_eq!(id.as_str(), "pm_abc123");
        assert_eq!(id.to_string(), "pm_abc123");
        assert_eq!(format!("{id:?}"), "PaymentId(\"pm_abc123\")");
        assert!(PaymentId::parse("txn_abc").is_err());
        assert!(PaymentId::parse("pm_").is_err());
        assert!(PaymentId::parse("pm_a/b").is_err());
        assert!(AccessKeyId::parse("ak_tok_1").is_err());
        assert!(AccessKeyToken::parse("ak_tok_1").is_ok());
        assert!(LedgerAccountId::parse("acct_1").is_ok());
        assert!(BankAccountId::parse("acct_1").is_err());
    }

    #[test]
    fn error_names_the_value_and_kind() {
        let err = AliasId::parse("pm_1").unwrap_err().to_string();
        assert!(err.contains("alias id"), "{err}");
        assert!(err.contains("pm_1"), "{err}");
        let long = "x".repeat(1000);
        let err = AliasId::parse(long).unwrap_err().to_string();
        assert!(err.len() < 300, "{err}");
    }

    #[test]
    fn serde_validates() {
        let ok: BatchToken =
            serde_json::from_str("\"sb_0f8fad5b-d9cb-469f-a165-70867728950e\"").unwrap();
        assert_eq!(
            serde_json::to_string(&ok).unwrap(),
            "\"sb_0f8fad5b-d9cb-469f-a165-70867728950e\""
        );
        assert!(serde_json::from_str::<BatchToken>("\"sb_1\"").is_err());
        assert!(serde_json::from_str::<NumericId>("\"012\"").is_err());
        assert!(serde_json::from_str::<NumericId>("12").is_err());
        assert_eq!(
            serde_json::from_str::<NumericId>("\"12\"").unwrap().get(),
            12
        );
    }

    #[test]
    fn refund_tokens_parse_strictly_and_deserialize_leniently() {
        assert_eq!(
            RefundToken::parse("rfd_1").unwrap().as_str(),
            "rfd_1",
            "the mock's shape"
        );
        assert!(
            RefundToken::parse("R-2024/1 a").is_ok(),
            "no shape is shown"
        );
        let err = RefundToken::parse("").unwrap_err().to_string();
        assert!(
            err.contains("refund token") && err.contains("is empty"),
            "{err}"
        );
        let err = RefundToken::parse("rfd\u{1b}[2J").unwrap_err().to_string();
        assert!(err.contains("control character `\\u{1b}`"), "{err}");
        assert!(!err.contains('\u{1b}'), "{err}");
        // A server's token is kept whatever it holds: API.md shows a string.
        let t: RefundToken = serde_json::from_str("\"\"").unwrap();
        assert_eq!(t.as_str(), "");
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"\"");
    }

    proptest! {
        #[test]
        fn ids_roundtrip(tail in "[A-Za-z0-9._~-]{1,40}") {
            let id = PaymentId::parse(format!("pm_{tail}")).unwrap();
            let json = serde_json::to_string(&id).unwrap();
            prop_assert_eq!(serde_json::from_str::<PaymentId>(&json).unwrap(), id);
        }

        #[test]
        fn numeric_ids_roundtrip(n in any::<u64>()) {
            let id = NumericId::new(n);
            let json = serde_json::to_string(&id).unwrap();
            prop_assert_eq!(serde_json::from_str::<NumericId>(&json).unwrap(), id);
        }

        #[test]
        fn arbitrary_text_never_panics(s in ".{0,50}") {
            let _ = PaymentId::parse(s.clone());
            let _ = BatchToken::parse(s.clone());
            let _ = NumericId::parse(&s);
        }
    }
}
