//! What the client keeps of a body it could not use: a short snippet with
//! every secret replaced by `<redacted>` and control characters escaped.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::util;

/// How many characters of a body an error quotes.
const SNIPPET: usize = 200;
/// How many characters of a server's error code or message are kept.
const MESSAGE: usize = 1_000;
/// What a secret becomes.
pub(crate) const REDACTED: &str = "<redacted>";

/// A `"secret": "…"` member in JSON text, also when the text is cut inside
/// the value (a truncated body).
static SECRET_MEMBER: LazyLock<Regex> = LazyLock::new(|| {
    match Regex::new(r#""secret"\s*:\s*"(?:[^"\\]|\\.)*(?:"|\\?$)"#) {
        Ok(re) => re,
        // A literal pattern; the unit tests below exercise it.
        Err(err) => unreachable!("invalid built-in pattern: {err}"),
    }
});

/// Replaces the client's key, in every form a server could write it, and
/// the value of every `secret` member.
#[derive(Debug, Clone)]
pub(crate) struct Redactor {
    /// The key as sent, JSON-escaped, `\/`-escaped, percent-encoded in
    /// upper and lower case: longest first, so that no form is left half
    /// replaced by a shorter one.
    forms: Vec<String>,
}

impl Redactor {
    pub(crate) fn new(key: &str) -> Self {
        let mut forms = Vec::new();
        if !key.is_empty() {
            let json = serde_json::to_string(key).unwrap_or_default();
            let json = json
                .strip_prefix('"')
                .and_then(|j| j.strip_suffix('"'))
                .unwrap_or(key)
                .to_owned();
            let encoded = crate::rules::encode_component(key);
            forms = vec![
                key.to_owned(),
                json.replace('/', "\\/"),
                json,
                encoded.to_ascii_lowercase(),
                encoded,
            ];
            forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
            forms.dedup();
        }
        Self { forms }
    }

    /// `text` with the key and every `secret` member redacted.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = SECRET_MEMBER
            .replace_all(text, format!("\"secret\":\"{REDACTED}\"").as_str())
            .into_owned();
        for form in &self.forms {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), REDACTED);
            }
        }
        out
    }

    /// Redacts inside a parsed body, where every escape is already undone:
    /// each `secret` member, and each string that holds the key.
    fn scrub_value(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if k == "secret" && !v.is_null() {
                        *v = Value::from(REDACTED);
                    } else {
                        self.scrub_value(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_value(v)),
            Value::String(s) if self.forms.iter().any(|f| s.contains(f.as_str())) => {
                *s = self.scrub(s);
            }
            _ => {}
        }
    }

    /// The start of a body, fit to quote in an error: secrets redacted in
    /// the whole body first (so that nothing is cut in half and left
    /// readable), then control characters escaped, then cut.
    pub(crate) fn snippet(&self, body: &[u8]) -> String {
        let text = match serde_json::from_slice::<Value>(body) {
            Ok(mut value) => {
                self.scrub_value(&mut value);
                value.to_string()
            }
            Err(_) => self.scrub(&String::from_utf8_lossy(body)),
        };
        util::excerpt(&text, SNIPPET)
    }

    /// A code, message or reason from the server, fit to keep.
    pub(crate) fn text(&self, text: &str) -> String {
        util::excerpt(&self.scrub(text), MESSAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "k3y/with\"quote";

    #[test]
    fn every_form_of_the_key_is_redacted() {
        let r = Redactor::new(KEY);
        for body in [
            format!("plain {KEY} text"),
            r#"{"message":"bad key k3y\/with\"quote"}"#.to_owned(),
            r#"{"message":"bad key k3y/with\"quote"}"#.to_owned(),
            "url ?key=k3y%2Fwith%22quote".to_owned(),
            "url ?key=k3y%2fwith%22quote".to_owned(),
            r#"{"m":"k\u0033y/with\u0022quote"}"#.to_owned(),
        ] {
            let s = r.snippet(body.as_bytes());
            assert!(!s.contains("k3y"), "{body} -> {s}");
            assert!(s.contains(REDACTED), "{body} -> {s}");
        }
    }

    #[test]
    fn secret_members_are_redacted_even_when_cut() {
        let r = Redactor::new("");
        for body in [
            r#"{"keys":[{"secret":"aggsk_one"},{"secret" : "aggsk_\"two"}]}"#,
            r#"{"data":{"name":"x","secret":"aggsk_cut_in_the_mid"#,
            r#"{"data":{"secret":"aggsk_ends_in_escape\"#,
        ] {
            let s = r.snippet(body.as_bytes());
            assert!(!s.contains("aggsk_"), "{body} -> {s}");
        }
    }

    #[test]
    fn snippets_are_short_and_printable() {
        let r = Redactor::new("key");
        let body = format!("\u{1b}[2J\r\nPASS {}", "x".repeat(1_000));
        let s = r.snippet(body.as_bytes());
        assert!(s.starts_with("\\u{1b}[2J\\r\\nPASS"), "{s}");
        assert!(s.chars().count() <= SNIPPET + 20);
        assert!(!s.chars().any(util::is_control));
    }
}
