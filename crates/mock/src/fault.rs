//! Named faults: each breaks one thing API.md (or WIRE.md) states, so the
//! conformance harness can be shown to catch it.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

macro_rules! faults {
    ($( $variant:ident = $name:literal: $desc:literal, )+) => {
        /// A deliberate departure from the contract, for proving the
        /// conformance harness.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Fault {
            $( #[doc = $desc] $variant, )+
        }

        impl Fault {
            /// Every fault.
            pub const ALL: &'static [Fault] = &[$(Fault::$variant),+];

            /// The name used by `--fault` and in reports.
            pub fn name(self) -> &'static str {
                match self {
                    $( Fault::$variant => $name, )+
                }
            }

            /// What the fault breaks.
            pub fn description(self) -> &'static str {
                match self {
                    $( Fault::$variant => $desc, )+
                }
            }
        }
    };
}

faults! {
    WrongApiVersion = "wrong-api-version": "success bodies carry api_version v2",
    Chunked = "chunked": "responses are chunked, without Content-Length",
    BadDateHeader = "bad-date-header": "the Date header is not an HTTP date",
    TextErrors = "text-errors": "error bodies are plain text, not JSON",
    NoAuth = "no-auth": "requests without the key header are served",
    AcceptAnyKey = "accept-any-key": "any non-empty key is accepted",
    AcceptEmptyKey = "accept-empty-key": "an empty key header is accepted",
    BadRequestEnvelope = "bad-request-envelope": "400 errors come in the envelope form",
    NotFoundEnvelope = "not-found-envelope": "404 errors come in the envelope form",
    WrongTxnPrefix = "wrong-txn-prefix": "transaction tokens start with tx_ instead of txn_",
    NumericIdAsNumber = "numeric-id-as-number": "batch ids are JSON numbers",
    ShortBatchToken = "short-batch-token": "batch tokens are 38 characters long",
    MixedKeyShape = "mixed-key-shape": "an access key has a numeric id and an ak_tok_ token",
    DecimalAmounts = "decimal-amounts": "amounts carry decimals",
    NetMismatch = "net-mismatch": "net_amount is off by one paisa",
    LowercaseCurrency = "lowercase-currency": "currency codes are lowercase",
    OffsetTimestamps = "offset-timestamps": "timestamps carry a +05:00 offset",
    EmptyStringNull = "empty-string-null": "unset nullable timestamps are \"\" instead of null",
    DatetimeAliasDates = "datetime-alias-dates": "alias dates are full timestamps",
    CountTypesSwapped = "count-types-swapped": "counts have the other JSON type (integer for strings and back)",
    MissingField = "missing-field": "batches lack file_name",
    RefundIdOnPayments = "refund-id-on-payments": "payment transactions carry refund_id \"\" instead of null",
    EventFilterObject = "event-filter-object": "event_filter_json is a JSON object",
    DefaultLimit10 = "default-limit-10": "cursor lists default to 10 rows",
    NoLimitCap = "no-limit-cap": "cursor lists return more than 100 rows when asked",
    LowercaseAsc = "lowercase-asc": "direction=asc (lowercase) sorts ascending",
    CursorRepeat = "cursor-repeat": "next_cursor repeats the cursor it was given: an endless walk",
    CursorInclusive = "cursor-inclusive": "a page starts with the cursor's own row",
    FilteredExceedsTotal = "filtered-exceeds-total": "filtered_count exceeds total_count",
    StatusFilterIgnored = "status-filter-ignored": "the batch status filter is ignored",
    BatchFilterIgnored = "batch-filter-ignored": "the batch_id filter is ignored",
    LenientBatchToken = "lenient-batch-token": "malformed batch tokens are not rejected with 400",
    PayoutsInTransactions = "payouts-in-transactions": "only_settlement_txns is ignored",
    OffsetIgnored = "offset-ignored": "offset is ignored by offset lists",
    OffsetLimitIgnored = "offset-limit-ignored": "limit is ignored by offset lists",
    KeysActiveFilterIgnored = "keys-active-filter-ignored": "the key list's is_active filter is ignored",
    MerchantsEnabledFilterIgnored = "merchants-enabled-filter-ignored": "the merchant list's enabled filter is ignored",
    RailStatusFilterIgnored = "rail-status-filter-ignored": "the rail merchant list's status filter is ignored",
    QrDefaultDynamic = "qr-default-dynamic": "the QR list defaults to DYNAMIC codes",
    ExportFinished = "export-finished": "a new report export is already finished",
    RotateSameSecret = "rotate-same-secret": "rotation returns the old secret",
    Success201 = "success-201": "success answers 201 instead of 200 (an observation)",
    ContentTypeText = "content-type-text": "success bodies are labelled text/plain (an observation)",
    NegativeLimitAccepted = "negative-limit-accepted": "a negative limit is served instead of refused (an observation)",
    RotateKeepsOldSecret = "rotate-keeps-old-secret": "a rotated key's old secret keeps working (an observation)",
    ExportAcceptsEmptyBody = "export-accepts-empty-body": "a report export without its required fields is created (an observation)",
    PayoutPrefix = "payout-prefix": "payout tokens start with po_ instead of stxn_ (an observation)",
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown fault name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFault(pub String);

impl fmt::Display for UnknownFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
        write!(
            f,
            "unknown fault `{}` (known: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownFault {}

impl FromStr for Fault {
    type Err = UnknownFault;

    fn from_str(s: &str) -> Result<Self, UnknownFault> {
        Fault::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFault(s.to_owned()))
    }
}

/// The active faults of a server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Faults(BTreeSet<Fault>);

impl Faults {
    pub(crate) fn insert(&mut self, fault: Fault) {
        self.0.insert(fault);
    }

    pub(crate) fn has(&self, fault: Fault) -> bool {
        self.0.contains(&fault)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip_and_are_unique() {
        let mut names = std::collections::HashSet::new();
        for f in Fault::ALL {
            assert_eq!(f.name().parse::<Fault>().unwrap(), *f);
            assert!(names.insert(f.name()));
            assert!(!f.description().is_empty());
        }
        let err = "nope".parse::<Fault>().unwrap_err().to_string();
        assert!(err.contains("cursor-repeat"));
    }
}
