//! Free text of the records that come in lists.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use compact_str::CompactString;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Text a server sent in a record that comes in lists: a name, a tax
/// number, a description, whatever it is (never refused, kept as sent).
///
/// It reads as a `&str` ([`Deref`], [`AsRef<str>`], [`Text::as_str`]),
/// compares with `str` and `String`, and converts to and from `String`.
/// Up to 24 bytes are held inline, without a heap allocation: a page of a
/// hundred transactions carries five hundred such fields, and decoding
/// them into `String`s was a fifth of the cost of reading the page.
///
/// ```
/// use aggpay::Text;
///
/// let name = Text::from("Indus Pharmacy");
/// assert_eq!(name, "Indus Pharmacy");
/// assert!(name.starts_with("Indus"));
/// let owned: String = name.into();
/// assert_eq!(owned, "Indus Pharmacy");
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(CompactString);

impl Text {
    /// Text holding `value`.
    pub fn new(value: &str) -> Self {
        Self(CompactString::new(value))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text as a `String`.
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// As a `str` prints: quoted and escaped, so that control characters a
/// server sent never reach a terminal raw through `{:?}`.
impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Text {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

impl From<String> for Text {
    fn from(value: String) -> Self {
        Self::new(&value)
    }
}

impl From<Text> for String {
    fn from(value: Text) -> Self {
        value.into_string()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model_util::parsed_str(deserializer, "a string", |value| {
            Ok::<_, std::convert::Infallible>(Self::new(value))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_reads_and_writes_as_a_string() {
        let long = "a name longer than the twenty-four bytes held inline";
        for value in ["", "Lahore", long, "caf\u{e9} \u{1b}[31m"] {
            let text: Text = serde_json::from_str(&serde_json::to_string(value).unwrap()).unwrap();
            assert_eq!(text, value);
            assert_eq!(
                serde_json::to_string(&text).unwrap(),
                serde_json::to_string(value).unwrap()
            );
            assert_eq!(format!("{text:?}"), format!("{value:?}"));
            assert_eq!(text.to_string(), value);
            assert_eq!(String::from(text.clone()), value);
        }
        assert!(serde_json::from_str::<Text>("12").is_err());
        // Escapes in the JSON are decoded, as for a `String`.
        let text: Text = serde_json::from_str(r#""a\"b\u00e9""#).unwrap();
        assert_eq!(text, "a\"b\u{e9}");
    }
}
