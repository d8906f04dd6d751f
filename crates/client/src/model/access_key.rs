use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Error;
use crate::id::excerpt;
use crate::{AccessKeyId, AccessKeyToken, AggregatorId, KeyId, NumericId, Secret, Text};

/// The `id` of an access key record: the API sends either a numeric
/// string or an `ak_` identifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AccessKeyRecordId {
    /// First shape: a numeric id (the `token` is then `ak_…`).
    Numeric(NumericId),
    /// Second shape: an `ak_` id (the `token` is then `ak_tok_…`).
    Key(AccessKeyId),
}

/// The `token` of an access key record (see [`AccessKeyRecordId`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AccessKeyRecordToken {
    /// First shape: the `ak_` identifier.
    Key(AccessKeyId),
    /// Second shape: an `ak_tok_` token.
    Token(AccessKeyToken),
}

impl AccessKeyRecordId {
    fn parse(value: &str) -> Result<Self, Error> {
        if let Ok(n) = NumericId::parse(value) {
            return Ok(Self::Numeric(n));
        }
        AccessKeyId::parse(value).map(Self::Key).map_err(|_| {
            Error::invalid_input(
                "access key record id",
                format!("`{}` is neither a numeric id nor an ak_ id", excerpt(value)),
            )
        })
    }
}

impl AccessKeyRecordToken {
    fn parse(value: &str) -> Result<Self, Error> {
        if let Ok(t) = AccessKeyToken::parse(value) {
            return Ok(Self::Token(t));
        }
        AccessKeyId::parse(value).map(Self::Key).map_err(|_| {
            Error::invalid_input(
                "access key token",
                format!(
                    "`{}` is neither an ak_ id nor an ak_tok_ token",
                    excerpt(value)
                ),
            )
        })
    }
}

impl fmt::Display for AccessKeyRecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Numeric(n) => n.fmt(f),
            Self::Key(k) => k.fmt(f),
        }
    }
}

impl fmt::Display for AccessKeyRecordToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Key(k) => k.fmt(f),
            Self::Token(t) => t.fmt(f),
        }
    }
}

impl Serialize for AccessKeyRecordId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Serialize for AccessKeyRecordToken {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for AccessKeyRecordId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model_util::parsed_str(deserializer, "an access key record identifier", Self::parse)
    }
}

impl<'de> Deserialize<'de> for AccessKeyRecordToken {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model_util::parsed_str(deserializer, "an access key record token", Self::parse)
    }
}

/// An aggregator access key. It holds a live secret: its `secret` prints
/// as `<redacted>` (`Debug`, `Display`) and serializes as `<redacted>`, so
/// a key dumped into a log or a state file leaks nothing; a tool that must
/// keep the secret writes it on purpose ([`crate::Exposed`],
/// [`Secret::serialize_exposed`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AccessKey {
    /// Numeric or `ak_` id (typing rule 2).
    pub id: AccessKeyRecordId,
    /// `ak_` or `ak_tok_` token (typing rule 2).
    pub token: AccessKeyRecordToken,
    /// Key identifier.
    pub key_id: KeyId,
    /// The aggregator.
    pub aggregator_id: AggregatorId,
    /// Whether the key is accepted.
    pub is_active: bool,
    /// Key name.
    pub name: Text,
    /// The key secret, in clear on the wire; serialized as `<redacted>`.
    pub secret: Secret,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}

impl AccessKey {
    /// The `ak_` identifier the rotate operation takes: the `token` in the
    /// first record shape, the `id` in the second.
    pub fn access_key_id(&self) -> Option<&AccessKeyId> {
        match (&self.id, &self.token) {
            (AccessKeyRecordId::Key(id), _) => Some(id),
            (_, AccessKeyRecordToken::Key(id)) => Some(id),
            _ => None,
        }
    }
}
