//! Small helpers the aggpay tools share: one hash, and the two ways text
//! from elsewhere is made safe to show.
//!
//! They live here, beside [`rules`](crate::rules), so that the client, the
//! mock server, the conformance harness and the sync tool never grow
//! diverging copies of them.
//!
//! ```
//! use aggpay::util;
//!
//! assert_eq!(util::splitmix64_inverse(util::splitmix64(42)), 42);
//! assert_eq!(util::truncate("abcdef", 3), "abc…");
//! assert_eq!(util::escape_control("ok\u{1b}[2J\r\nPASS"), "ok\\u{1b}[2J\\r\\nPASS");
//! ```

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

const MUL1: u64 = 0xbf58_476d_1ce4_e5b9;
const MUL2: u64 = 0x94d0_49bb_1331_11eb;

/// The splitmix64 finaliser: a bijection on `u64` with good avalanche.
/// Not for anything secret.
pub const fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(MUL1);
    z = (z ^ (z >> 27)).wrapping_mul(MUL2);
    z ^ (z >> 31)
}

/// Multiplicative inverse modulo 2^64 of an odd number (Newton's method:
/// each step doubles the correct low bits, 6 steps cover 64).
const fn inverse(a: u64) -> u64 {
    let mut x = a;
    let mut i = 0;
    while i < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(x)));
        i += 1;
    }
    x
}

/// Undoes `z ^= z >> s`.
const fn unshift(z: u64, s: u32) -> u64 {
    let mut x = z;
    let mut k = s;
    while k < 64 {
        x = z ^ (x >> s);
        k += s;
    }
    x
}

/// The inverse of [`splitmix64`]: `splitmix64_inverse(splitmix64(x)) == x`.
pub const fn splitmix64_inverse(mut z: u64) -> u64 {
    z = unshift(z, 31);
    z = z.wrapping_mul(inverse(MUL2));
    z = unshift(z, 27);
    z = z.wrapping_mul(inverse(MUL1));
    unshift(z, 30)
}

/// `text` cut to at most `max_chars` characters, with `…` appended when
/// something was cut.
pub fn truncate(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((at, _)) => Cow::Owned(format!("{}…", &text[..at])),
    }
}

/// True for a character that a terminal would act on instead of print:
/// C0 and C1 controls, DEL, and the bidirectional overrides that reorder
/// what is shown.
pub fn is_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every [control character](is_control) escaped the way Rust
/// writes it (`\r`, `\n`, `\t`, `\\`, `\u{1b}`), so that bytes a server
/// sent can never move a cursor, clear a screen or forge a line. A
/// backslash is escaped too, so an escape in the output is never
/// ambiguous.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c == '\\' || is_control(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
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

/// What a secret becomes in anything shown.
pub const REDACTED: &str = "<redacted>";

/// A `"secret": "…"` member in JSON text, also when the text is cut inside
/// the value (a truncated body).
static SECRET_MEMBER: LazyLock<Regex> = LazyLock::new(|| {
    match Regex::new(r#""secret"\s*:\s*"(?:[^"\\]|\\.)*(?:"|\\?$)"#) {
        Ok(re) => re,
        // A literal pattern; the unit tests below exercise it.
        Err(err) => unreachable!("invalid built-in pattern: {err}"),
    }
});

/// Removes secrets from text before it is shown: every form of each
/// secret it knows (as sent, JSON-escaped with and without `\/`,
/// percent-encoded in either case), and the value of every `secret`
/// member of JSON, known or not.
///
/// ```
/// use aggpay::util::Redactor;
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
        let encoded = crate::rules::encode_component(secret);
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
            Err(_) => self.scrub(&String::from_utf8_lossy(body)),
        };
        excerpt(&text, max_chars)
    }

    /// A short text (a message, a code): redacted, escaped, cut.
    pub fn text(&self, text: &str, max_chars: usize) -> String {
        excerpt(&self.scrub(text), max_chars)
    }
}

/// A `Retry-After` value, delay-seconds or an HTTP date (RFC 9110
/// section 10.2.3), as a wait from now; a date in the past waits nothing.
pub fn parse_retry_after(value: &str) -> Option<std::time::Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(std::time::Duration::from_secs(seconds));
    }
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    let at = PARSER.parse_timestamp(value).ok()?;
    let wait = jiff::Timestamp::now().duration_until(at);
    Some(std::time::Duration::try_from(wait).unwrap_or(std::time::Duration::ZERO))
}

/// The slowest and the fastest request rates a client accepts
/// ([`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit)), in
/// requests a second: one an hour to a million a second.
pub const RATE_LIMIT_RANGE: std::ops::RangeInclusive<f64> = (1.0 / 3_600.0)..=1_000_000.0;

/// A command-line number of seconds, from 1 ms to a day (a timeout, a run
/// budget); the error says the range. For the tools built on this crate,
/// so that they refuse the same values the same way.
///
/// ```
/// assert_eq!(aggpay::util::parse_seconds("2.5"), Ok(2.5));
/// assert!(aggpay::util::parse_seconds("1e20").is_err());
/// assert!(aggpay::util::parse_seconds("NaN").is_err());
/// ```
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if (0.001..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{}` is not a number of seconds from 0.001 to 86400",
            excerpt(text, 40)
        )),
    }
}

/// A command-line request rate within [`RATE_LIMIT_RANGE`]; the error
/// says the range.
///
/// ```
/// assert_eq!(aggpay::util::parse_rate("50"), Ok(50.0));
/// assert!(aggpay::util::parse_rate("1e-300").is_err());
/// ```
pub fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if RATE_LIMIT_RANGE.contains(&v) => Ok(v),
        _ => Err(format!(
            "`{}` is not a number of requests per second from 0.0003 (one an hour) to 1000000",
            excerpt(text, 40)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEY: &str = "k3y/with\"quote";

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
            "a\\u{7}b\\u{0}c\\u{9b}d\\u{202e}e\\\\"
        );
        assert_eq!(excerpt("\u{1b}]0;title\u{7}", 3), "\\u{1b}]0…");
    }

    proptest! {
        #[test]
        fn mixing_is_a_bijection(x in any::<u64>()) {
            prop_assert_eq!(splitmix64_inverse(splitmix64(x)), x);
        }

        #[test]
        fn escaped_text_has_no_control(s in any::<String>()) {
            let escaped = escape_control(&s);
            prop_assert!(!escaped.chars().any(is_control));
        }
    }
}
