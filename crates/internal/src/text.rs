//! Text from elsewhere made safe to show: cut, control characters
//! escaped, secrets redacted.
//!
//! ```
//! use aggpay_internal::text;
//!
//! assert_eq!(text::truncate("abcdef", 3), "abc…");
//! assert_eq!(text::escape_control("ok\u{1b}[2J\r\nPASS"), "ok\\u{1b}[2J\\r\\nPASS");
//! ```

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// `text` cut to at most `max_chars` characters, with `…` appended when
/// something was cut.
pub fn truncate(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((at, _)) => Cow::Owned(format!("{}…", &text[..at])),
    }
}

/// True for a character that a terminal would act on instead of print,
/// or that shows as nothing: C0 and C1 controls, DEL, the bidirectional
/// marks and overrides that reorder what is shown, the zero-width
/// characters, the line and paragraph separators, and the byte order
/// mark.
pub fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// `text` with every [control character](is_control) escaped the way Rust
/// writes it (`\r`, `\n`, `\t`, `\u{1b}`), so that bytes a server sent
/// can never move a cursor, clear a screen or forge a line. Escaping is
/// idempotent (a backslash is left as it is): a message escaped where it
/// is made and again where it is printed reads the same, not
/// `\\\\u{1b}`. The price is that a server's own text `\u{1b}` looks like
/// an escaped ESC; it is still harmless on a terminal.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if is_control(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A value quoted inside a message: control characters escaped, at most
/// `max_chars` characters.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    escape_control(&truncate(text, max_chars)).into_owned()
}

/// An error and its causes on one line, each once (`a: b: c`: a cause
/// whose text the message already ends with is not repeated), control
/// characters escaped: how the tools print an error for an operator.
pub fn chain(error: &(dyn std::error::Error + '_)) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    escape_control(&out).into_owned()
}

/// What a secret becomes in anything shown.
pub const REDACTED: &str = "<redacted>";

/// A `"secret": "…"` member in JSON text, also when the text is cut inside
/// the value (a truncated body).
#[expect(
    clippy::expect_used,
    reason = "a literal pattern, which the unit tests below compile"
)]
static SECRET_MEMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""secret"\s*:\s*"(?:[^"\\]|\\.)*(?:"|\\?$)"#).expect("a built-in pattern compiles")
});

/// Removes secrets from text before it is shown: every form of each
/// secret it knows (as sent, JSON-escaped with and without `\/`,
/// percent-encoded in either case), and the value of every `secret`
/// member of JSON, known or not.
///
/// ```
/// use aggpay_internal::text::Redactor;
///
/// let mut r = Redactor::new();
/// r.add("k3y/1");
/// assert_eq!(r.scrub("key k3y%2F1 and {\"secret\": \"other\"}"), "key <redacted> and {\"secret\":\"<redacted>\"}");
/// assert!(!format!("{r:?}").contains("k3y"));
/// ```
#[derive(Clone, Default)]
pub struct Redactor {
    /// Longest first, so that no form is left half replaced by a shorter one.
    forms: Vec<String>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("forms", &self.forms.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor that knows no secret yet (it still redacts `secret`
    /// members).
    pub fn new() -> Self {
        Self::default()
    }

    /// Learns a secret; an empty one is ignored.
    pub fn add(&mut self, secret: &str) {
        if secret.is_empty() {
            return;
        }
        let json = serde_json::to_string(secret).unwrap_or_default();
        let json = json
            .strip_prefix('"')
            .and_then(|j| j.strip_suffix('"'))
            .unwrap_or(secret)
            .to_owned();
        let encoded = crate::url::encode_component(secret);
        for form in [
            secret.to_owned(),
            json.replace('/', "\\/"),
            json,
            encoded.to_ascii_lowercase(),
            encoded,
        ] {
            if !self.forms.contains(&form) {
                self.forms.push(form);
            }
        }
        self.forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    }

    /// True when `text` holds a secret this redactor knows.
    pub fn knows(&self, text: &str) -> bool {
        self.forms.iter().any(|f| text == f.as_str())
    }

    /// `text` with every known secret and every `secret` member redacted.
    pub fn scrub(&self, text: &str) -> String {
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

    /// Redacts inside parsed JSON, where every escape is already undone.
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

    /// The start of a body, fit to quote: secrets redacted in the whole
    /// body first (so that nothing is cut in half and left readable),
    /// then control characters escaped, then cut to `max_chars`.
    pub fn snippet(&self, body: &[u8], max_chars: usize) -> String {
        let text = match serde_json::from_slice::<Value>(body) {
            Ok(mut value) => {
                self.scrub_value(&mut value);
                value.to_string()
            }
            Err(_) => {
                // Bytes that are not UTF-8 are shown as `\xNN`, not
                // replaced: a staging team must see what was sent.
                let mut out = String::new();
                for chunk in body.utf8_chunks() {
                    out.push_str(&escape_control(&self.scrub(chunk.valid())));
                    for b in chunk.invalid() {
                        out.push_str(&format!("\\x{b:02x}"));
                    }
                }
                return truncate(&out, max_chars).into_owned();
            }
        };
        excerpt(&text, max_chars)
    }

    /// A short text (a message, a code): redacted, escaped, cut.
    pub fn text(&self, text: &str, max_chars: usize) -> String {
        excerpt(&self.scrub(text), max_chars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: &str = "k3y/with\"quote";

    #[test]
    fn invisible_and_invalid_bytes_are_shown_escaped() {
        let r = Redactor::new();
        let body = b"\xef\xbb\xbf{\"a\":1}\x00\xff tail";
        let shown = r.snippet(body, 200);
        assert_eq!(shown, "\\u{feff}{\"a\":1}\\u{0}\\xff tail");
        assert_eq!(escape_control("a\u{200b}b"), "a\\u{200b}b");
    }

    #[test]
    fn every_form_of_a_secret_is_redacted() {
        let mut r = Redactor::new();
        r.add(KEY);
        for body in [
            format!("plain {KEY} text"),
            r#"{"message":"bad key k3y\/with\"quote"}"#.to_owned(),
            r#"{"message":"bad key k3y/with\"quote"}"#.to_owned(),
            "url ?key=k3y%2Fwith%22quote".to_owned(),
            "url ?key=k3y%2fwith%22quote".to_owned(),
            r#"{"m":"k\u0033y/with\u0022quote"}"#.to_owned(),
        ] {
            let s = r.snippet(body.as_bytes(), 200);
            assert!(!s.contains("k3y"), "{body} -> {s}");
            assert!(s.contains(REDACTED), "{body} -> {s}");
        }
    }

    #[test]
    fn secret_members_are_redacted_even_when_cut() {
        let r = Redactor::new();
        for body in [
            r#"{"keys":[{"secret":"aggsk_one"},{"secret" : "aggsk_\"two"}]}"#,
            r#"{"data":{"name":"x","secret":"aggsk_cut_in_the_mid"#,
            r#"{"data":{"secret":"aggsk_ends_in_escape\"#,
        ] {
            let s = r.snippet(body.as_bytes(), 200);
            assert!(!s.contains("aggsk_"), "{body} -> {s}");
        }
    }

    #[test]
    fn snippets_are_short_and_printable() {
        let mut r = Redactor::new();
        r.add("key");
        let body = format!("\u{1b}[2J\r\nPASS {}", "x".repeat(1_000));
        let s = r.snippet(body.as_bytes(), 200);
        assert!(s.starts_with("\\u{1b}[2J\\r\\nPASS"), "{s}");
        assert!(s.chars().count() <= 220);
        assert!(!s.chars().any(is_control));
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("héllo", 10), "héllo");
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("", 0), "");
        assert_eq!(truncate("x", 0), "…");
    }

    #[test]
    fn controls_are_escaped() {
        assert_eq!(escape_control("plain text"), "plain text");
        assert_eq!(
            escape_control("a\u{7}b\0c\u{9b}d\u{202e}e\\"),
            "a\\u{7}b\\u{0}c\\u{9b}d\\u{202e}e\\"
        );
        assert_eq!(excerpt("\u{1b}]0;title\u{7}", 3), "\\u{1b}]0…");
    }

    proptest! {
        #[test]
        fn escaping_is_idempotent(s in any::<String>()) {
            let once = escape_control(&s).into_owned();
            prop_assert_eq!(escape_control(&once), once.as_str());
        }

        #[test]
        fn escaped_text_has_no_control(s in any::<String>()) {
            let escaped = escape_control(&s);
            prop_assert!(!escaped.chars().any(is_control));
        }
    }
}
