//! Serde helpers shared by the models.

/// An optional identifier written as an empty string when absent, as
/// API.md writes `merchant_id` of a batch report export.
pub(crate) mod empty_as_none {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<T: Serialize, S: Serializer>(
        value: &Option<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => v.serialize(serializer),
            None => serializer.serialize_str(""),
        }
    }

    pub(crate) fn deserialize<'de, T, D>(deserializer: D) -> Result<Option<T>, D::Error>
    where
        T: TryFrom<String>,
        T::Error: std::fmt::Display,
        D: Deserializer<'de>,
    {
        match Option::<String>::deserialize(deserializer)? {
            None => Ok(None),
            Some(s) if s.is_empty() => Ok(None),
            Some(s) => T::try_from(s).map(Some).map_err(serde::de::Error::custom),
        }
    }
}

/// A `u64` written as a numeric string (`record_count`, `file_size`); read
/// from a numeric string or, tolerantly, a JSON integer.
pub(crate) mod numeric_string {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        crate::wire::Count::deserialize(deserializer).map(|c| c.0)
    }
}
