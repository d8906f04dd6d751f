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

/// Deserializes a JSON string through `parse`, reading the text where the
/// deserializer holds it: no `String` is made for a value that becomes a
/// number, a code or a known enum variant. (serde's own `Cow<str>` would
/// always allocate, and `String` does by definition.)
pub(crate) fn parsed_str<'de, D, T, E>(
    deserializer: D,
    expecting: &'static str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    E: std::fmt::Display,
{
    struct Text<F> {
        expecting: &'static str,
        parse: F,
    }

    impl<T, E: std::fmt::Display, F: FnOnce(&str) -> Result<T, E>> serde::de::Visitor<'_> for Text<F> {
        type Value = T;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.expecting)
        }

        fn visit_str<Er: serde::de::Error>(self, value: &str) -> Result<T, Er> {
            (self.parse)(value).map_err(Er::custom)
        }
    }

    deserializer.deserialize_str(Text { expecting, parse })
}
