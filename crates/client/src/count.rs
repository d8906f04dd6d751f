//! The `count` values of list responses (API.md typing rule 5, conventions 5).
//!
//! Reading is tolerant (a string or an integer is accepted either way);
//! writing follows API.md exactly, so the mock server that shares these types
//! serializes each list's count the way the contract says.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::id::excerpt;

/// Accepts a count written as a JSON string of digits or a JSON integer.
fn deserialize_count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
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
            if crate::rules::is_numeric_id(v) {
                v.parse()
                    .map_err(|_| E::custom(format!("count `{}` out of range", excerpt(v))))
            } else {
                Err(E::custom(format!("count `{}` is not a number", excerpt(v))))
            }
        }
    }

    deserializer.deserialize_any(CountVisitor)
}

/// A record count written as a numeric string on the wire (most lists).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StringCount(pub u64);

/// A record count written as a JSON integer (access-key and refund lists).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IntCount(pub u64);

impl Serialize for StringCount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for StringCount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_count(deserializer).map(Self)
    }
}

impl Serialize for IntCount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for IntCount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_count(deserializer).map(Self)
    }
}

/// The `count` object of cursor lists: both numbers are numeric strings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CursorCount {
    /// Rows that match the filters.
    pub filtered_count: StringCount,
    /// Rows in the same scope before filters.
    pub total_count: StringCount,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_reading_exact_writing() {
        for text in ["\"12\"", "12"] {
            assert_eq!(
                serde_json::from_str::<StringCount>(text).unwrap(),
                StringCount(12)
            );
            assert_eq!(
                serde_json::from_str::<IntCount>(text).unwrap(),
                IntCount(12)
            );
        }
        assert_eq!(serde_json::to_string(&StringCount(12)).unwrap(), "\"12\"");
        assert_eq!(serde_json::to_string(&IntCount(12)).unwrap(), "12");
        for bad in ["-1", "\"-1\"", "\"x\"", "1.5", "null", "\"\""] {
            assert!(serde_json::from_str::<StringCount>(bad).is_err(), "{bad}");
        }
    }
}
