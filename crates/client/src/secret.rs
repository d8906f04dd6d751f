//! Secrets that never print.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An access key secret. `Debug` and `Display` print `<redacted>`, and so
/// does `Serialize`: a model dumped into a log or a state file
/// (`serde_json::to_string(&access_key)`) never writes a live key by
/// accident. The clear value is reached only through [`Secret::expose`],
/// and written by serde only where a tool asks for it by name:
/// [`Secret::serialize_exposed`] for a field of its own types, or the
/// [`Exposed`] wrapper for one value. Deserializing reads the clear value
/// (the service sends secrets in clear).
///
/// ```
/// use aggpay::{Exposed, Secret};
///
/// let secret = Secret::new("s3cr3t");
/// assert_eq!(format!("{secret:?} {secret}"), "<redacted> <redacted>");
/// assert_eq!(serde_json::to_string(&secret).unwrap(), "\"<redacted>\"");
/// assert_eq!(serde_json::to_string(&Exposed(&secret)).unwrap(), "\"s3cr3t\"");
/// assert_eq!(secret.expose(), "s3cr3t");
/// ```
///
/// A type of a tool's own that must persist a secret says so on the field:
///
/// ```
/// #[derive(serde::Serialize)]
/// struct State {
///     #[serde(serialize_with = "aggpay::Secret::serialize_exposed")]
///     rotated: aggpay::Secret,
/// }
/// let state = State { rotated: aggpay::Secret::new("s3cr3t") };
/// assert_eq!(serde_json::to_string(&state).unwrap(), r#"{"rotated":"s3cr3t"}"#);
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

/// What a secret serializes as when nobody asked for its value.
const REDACTED: &str = "<redacted>";

impl Secret {
    /// Serializes the clear value: for `#[serde(serialize_with =
    /// "aggpay::Secret::serialize_exposed")]` on a field of a tool's own
    /// type that must persist the secret (a rotation's new secret, kept
    /// until it is stored safely).
    ///
    /// # Errors
    ///
    /// The serializer's.
    pub fn serialize_exposed<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Writes `<redacted>`: see [`Secret`] for writing the value on purpose.
impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(REDACTED)
    }
}

/// A secret that serializes in clear, asked for by name:
/// `serde_json::to_string(&Exposed(&key.secret))`.
#[derive(Clone, Copy)]
pub struct Exposed<'a>(pub &'a Secret);

impl fmt::Debug for Exposed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Exposed(<redacted>)")
    }
}

impl Serialize for Exposed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_exposed(serializer)
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
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"<redacted>\"");
        assert_eq!(serde_json::to_string(&Exposed(&s)).unwrap(), "\"hunter2\"");
        assert!(!format!("{:?}", Exposed(&s)).contains("hunter2"));
        let back: Secret = serde_json::from_str("\"hunter2\"").unwrap();
        assert_eq!(back, s);
    }
}
