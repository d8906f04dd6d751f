//! Secrets that never print.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An access key secret. `Debug` and `Display` print `<redacted>`; the clear
/// value is reached only through [`Secret::expose`].
///
/// Serializing writes the clear value, because the models describe the wire
/// (the service sends a rotated key's secret in clear, once).
///
/// ```
/// use aggpay::Secret;
///
/// let secret = Secret::new("s3cr3t");
/// assert_eq!(format!("{secret:?} {secret}"), "<redacted> <redacted>");
/// assert_eq!(secret.expose(), "s3cr3t");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The clear value. Every call site is a place where the secret leaves
    /// this type: keep them few.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints() {
        let s = Secret::new("hunter2");
        assert!(!format!("{s:?}{s}{s:#?}").contains("hunter2"));
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"hunter2\"");
    }
}
