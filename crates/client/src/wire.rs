//! The wire shapes the user never needs: envelopes, error bodies, list
//! bodies and their counts. They decode into [`Page`](crate::Page) and the
//! models; nothing here is public.

use std::fmt;

use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer};

use crate::page::Page;
use crate::{
    AccessKey, AggregatorMerchant, QrCode, RailMerchant, Refund, Secret, SettlementBatch,
    SettlementPayout, Transaction, WebhookEndpoint,
};

/// The success body of every operation: `{"api_version": "v1", "data": …}`.
/// `api_version` is not checked: judging it is the conformance harness's
/// job, reading tolerantly is the client's.
#[derive(Debug, Deserialize)]
pub(crate) struct Envelope<T> {
    pub(crate) data: T,
}

/// An error's code and message: the bare error form of API.md (400, 404),
/// and the inner object of the envelope form (401, 500).
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorBody {
    pub(crate) code: String,
    pub(crate) message: String,
}

/// The envelope error form: `{"api_version": "v1", "error": {code, message}}`.
#[derive(Debug, Deserialize)]
pub(crate) struct ErrorEnvelope {
    #[serde(rename = "api_version")]
    _api_version: String,
    pub(crate) error: ErrorBody,
}

/// What is left of a rotation answer that did not decode in full: the new
/// secret, if the body holds one.
#[derive(Debug, Deserialize)]
pub(crate) struct RotatedSecret {
    data: RotatedSecretData,
}

#[derive(Debug, Deserialize)]
struct RotatedSecretData {
    secret: Secret,
}

impl RotatedSecret {
    pub(crate) fn find(body: &[u8]) -> Option<Secret> {
        serde_json::from_slice::<Self>(body)
            .ok()
            .map(|r| r.data.secret)
            .filter(|s| !s.expose().is_empty())
    }
}

/// A list `count`: read as a JSON string of digits or a JSON integer
/// (API.md typing rule 5 says which a list uses; the client reads both).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Count(pub(crate) u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CountVisitor;

        impl Visitor<'_> for CountVisitor {
            type Value = u64;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-negative integer or a string of digits")
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
                Ok(v)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
                u64::try_from(v).map_err(|_| E::custom(format!("negative count {v}")))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
                if crate::syntax::is_numeric_id(v) {
                    v.parse().map_err(|_| {
                        E::custom(format!(
                            "count `{}` out of range",
                            crate::text::excerpt(v, 40)
                        ))
                    })
                } else {
                    Err(E::custom(format!(
                        "count `{}` is not a number",
                        crate::text::excerpt(v, 40)
                    )))
                }
            }
        }

        deserializer.deserialize_any(CountVisitor).map(Count)
    }
}

/// The `count` object of cursor lists.
#[derive(Debug, Deserialize)]
pub(crate) struct CursorCount {
    filtered_count: Count,
    total_count: Count,
}

/// A list's records, into a buffer sized for a walk's page (at most
/// [`WALK_PAGE`](crate::paginate::WALK_PAGE) rows) from the start: grown
/// from empty, as serde does without a length, a page of 100
/// transactions was moved again by every doubling.
fn rows<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    struct Rows<T>(std::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for Rows<T> {
        type Value = Vec<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence")
        }

        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let page = crate::paginate::WALK_PAGE as usize;
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(page).min(page));
            while let Some(row) = seq.next_element()? {
                out.push(row);
            }
            Ok(out)
        }
    }

    d.deserialize_seq(Rows(std::marker::PhantomData))
}

/// A list body that becomes a [`Page`].
pub(crate) trait ListBody<T>: DeserializeOwned {
    fn into_page(self) -> Page<T>;
}

/// The `data` of an offset list: `count` and the records under `$key`.
macro_rules! offset_list {
    ($name:ident, $row:ty, $key:literal) => {
        #[derive(Debug, Deserialize)]
        pub(crate) struct $name {
            count: Count,
            #[serde(rename = $key, deserialize_with = "rows")]
            items: Vec<$row>,
        }

        impl ListBody<$row> for $name {
            fn into_page(self) -> Page<$row> {
                Page::new(self.items, self.count.0, None, None)
            }
        }
    };
}

offset_list!(KeyList, AccessKey, "keys");
offset_list!(MerchantList, AggregatorMerchant, "merchants");
offset_list!(RailMerchantList, RailMerchant, "merchants");
offset_list!(QrCodeList, QrCode, "qr_codes");
offset_list!(RefundList, Refund, "keys");
offset_list!(WebhookList, WebhookEndpoint, "endpoints");

/// The `data` of the settlement batch list.
#[derive(Debug, Deserialize)]
pub(crate) struct BatchList {
    #[serde(deserialize_with = "rows")]
    batches: Vec<SettlementBatch>,
    next_cursor: String,
    count: CursorCount,
}

impl ListBody<SettlementBatch> for BatchList {
    fn into_page(self) -> Page<SettlementBatch> {
        cursor_page(self.batches, self.next_cursor, &self.count)
    }
}

/// The `data` of a batch's transaction list read for its transactions.
/// `settlement_transactions` is not read: its element shape is not API.md's.
#[derive(Debug, Deserialize)]
pub(crate) struct TransactionList {
    #[serde(default, deserialize_with = "rows")]
    transactions: Vec<Transaction>,
    next_cursor: String,
    count: CursorCount,
}

impl ListBody<Transaction> for TransactionList {
    fn into_page(self) -> Page<Transaction> {
        cursor_page(self.transactions, self.next_cursor, &self.count)
    }
}

/// The `data` of a batch's transaction list read for its payouts.
#[derive(Debug, Deserialize)]
pub(crate) struct PayoutList {
    #[serde(default, deserialize_with = "rows")]
    settlement_transactions: Vec<SettlementPayout>,
    next_cursor: String,
    count: CursorCount,
}

impl ListBody<SettlementPayout> for PayoutList {
    fn into_page(self) -> Page<SettlementPayout> {
        cursor_page(self.settlement_transactions, self.next_cursor, &self.count)
    }
}

fn cursor_page<T>(items: Vec<T>, next_cursor: String, count: &CursorCount) -> Page<T> {
    let next = Some(next_cursor).filter(|c| !c.is_empty());
    Page::new(
        items,
        count.filtered_count.0,
        Some(count.total_count.0),
        next,
    )
}

/// The `data` of the report-export creation: `{"report_export": …}`.
#[derive(Debug, Deserialize)]
pub(crate) struct ReportExportCreated {
    pub(crate) report_export: crate::ReportExport,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_read_either_way() {
        for text in ["\"12\"", "12"] {
            assert_eq!(serde_json::from_str::<Count>(text).unwrap().0, 12);
        }
        for bad in ["-1", "\"-1\"", "\"x\"", "1.5", "null", "\"\"", "\"012\""] {
            assert!(serde_json::from_str::<Count>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_rotation_secret_is_found_in_a_partial_answer() {
        let body = br#"{"api_version":"v1","data":{"id":7,"secret":"new-one"}}"#;
        assert_eq!(RotatedSecret::find(body).unwrap().expose(), "new-one");
        assert!(RotatedSecret::find(br#"{"data":{"secret":""}}"#).is_none());
        assert!(RotatedSecret::find(b"not json").is_none());
    }
}
