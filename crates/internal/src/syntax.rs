//! The textual rules of API.md's typing section, as reusable checks.
//!
//! Every typed value of the client (identifiers, amounts, timestamps) is
//! validated with these functions, and the conformance harness judges raw
//! wire JSON with the same ones, so the client and the harness can never
//! disagree about what a well-formed value looks like.
//!
//! ```
//! use aggpay_internal::syntax;
//!
//! assert!(syntax::is_batch_token("sb_0f8fad5b-d9cb-469f-a165-70867728950e"));
//! assert!(!syntax::is_batch_token("sb_too_short"));
//! assert!(syntax::is_paisa("483"));
//! assert!(!syntax::is_paisa("4.83"));
//! assert!(syntax::is_utc_timestamp("2024-05-01T10:00:00Z"));
//! assert!(!syntax::is_utc_timestamp("2024-05-01T10:00:00+05:00"));
//! ```

use std::sync::LazyLock;

use regex::Regex;

use crate::url::encode_component;

/// The authentication header of API.md (Authentication 1). Its value is a
/// secret: never log it.
pub const KEY_HEADER: &str = "X-PAY-AGGREGATOR-SECRET-KEY";

/// Where every path of API.md begins: `/v1/aggregators/{aggregator-id}`
/// and the operation's own path below it.
pub const AGGREGATORS_ROOT: &str = "/v1/aggregators";

/// The URL of `aggregator`'s record under `base` (a base URL without its
/// trailing slash): the root every operation's path is below.
pub fn aggregator_url(base: &str, aggregator: &str) -> String {
    format!("{base}{AGGREGATORS_ROOT}/{}", encode_component(aggregator))
}

/// The path of an operation as API.md writes it, `{aggregator-id}` and
/// all: the root, then `path` (empty, or starting with `/`).
pub fn documented_path(path: &str) -> String {
    format!("{AGGREGATORS_ROOT}/{{aggregator-id}}{path}")
}

/// Length in characters of a settlement batch token, prefix included.
pub const BATCH_TOKEN_LEN: usize = 39;

/// The prefix of settlement batch tokens.
pub const BATCH_TOKEN_PREFIX: &str = "sb_";

/// Characters allowed after an identifier prefix: URL-unreserved, so an
/// identifier never needs escaping in a path. API.md fixes only prefixes and
/// the batch token's length; this set is the widest that keeps IDs safe as
/// path segments. (Checked by [`is_id_byte`]; the pattern is the test's
/// reference.)
#[cfg(test)]
const ID_BODY: &str = r"[A-Za-z0-9._~-]";

/// Compiles one of this module's fixed patterns.
#[expect(
    clippy::expect_used,
    reason = "the patterns are literals of this module, each compiled by a unit test"
)]
fn compile(pattern: &str) -> Regex {
    // The patterns are literals of this module; the unit test
    // `patterns_compile` exercises every one of them.
    Regex::new(pattern).expect("a built-in pattern compiles")
}

#[cfg(test)]
static UTC_TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?([Zz]|\+00:00)$",
    )
});
static DATE: LazyLock<Regex> = LazyLock::new(|| compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"));

// The character-class rules below are checked byte by byte rather than
// with a regex: they run for every identifier and amount of every row
// (tens per row, millions per walk), and a loop over bytes is several
// times cheaper than a regex search for patterns this simple.

/// A byte of [`ID_BODY`].
fn is_id_byte(b: u8) -> bool {
    ID_BYTES[usize::from(b)]
}

/// [`is_id_byte`] as a table: one load per byte of every identifier of
/// every row, where the comparisons took four times as many instructions.
static ID_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'~' | b'-');
        b += 1;
    }
    table
};

/// One or more [`ID_BODY`] characters.
fn is_id_tail(tail: &str) -> bool {
    !tail.is_empty() && tail.bytes().all(is_id_byte)
}

/// Digits without a leading zero (`0` itself allowed).
fn is_unsigned(digits: &str) -> bool {
    let b = digits.as_bytes();
    !b.is_empty() && b.iter().all(u8::is_ascii_digit) && (b.len() == 1 || b[0] != b'0')
}

/// Every identifier prefix of API.md typing rule 1, longest first so that a
/// lookup finds `ak_tok_` before `ak_` and `acct_` before `acc_`.
pub const PREFIXES: &[&str] = &[
    "partner_", "ak_tok_", "lock_", "acct_", "txn_", "job_", "rpt_", "mer_", "sec_", "acc_",
    "dep_", "als_", "key_", "agg_", "sb_", "pm_", "am_", "qr_", "ak_", "wh_",
];

/// True when `value` is `prefix` followed by at least one URL-unreserved
/// character. `ak_` excludes `ak_tok_`, which is a distinct prefix.
pub fn has_prefix(value: &str, prefix: &str) -> bool {
    if prefix == "ak_" && value.starts_with("ak_tok_") {
        return false;
    }
    if prefix == BATCH_TOKEN_PREFIX {
        return is_batch_token(value);
    }
    match value.strip_prefix(prefix) {
        Some(tail) => is_id_tail(tail),
        None => false,
    }
}

/// What is wrong with `value` as a `prefix` identifier, in words (the
/// value itself not repeated); `None` when [`has_prefix`] accepts it.
///
/// ```
/// use aggpay_internal::syntax::why_not_id;
///
/// assert_eq!(why_not_id("sb_short", "sb_").unwrap(), "is 8 characters long; a batch token is exactly 39");
/// assert_eq!(why_not_id("txn_1", "pm_").unwrap(), "does not start with `pm_` (it is a `txn_` identifier)");
/// assert_eq!(why_not_id("pm_a/b", "pm_").unwrap(), "holds `/`; after `pm_` only letters, digits, `.`, `_`, `~` and `-` may follow");
/// assert_eq!(why_not_id("pm_1", "pm_"), None);
/// ```
pub fn why_not_id(value: &str, prefix: &str) -> Option<String> {
    if has_prefix(value, prefix) {
        return None;
    }
    let tail = match value.strip_prefix(prefix) {
        Some(_) if prefix == "ak_" && value.starts_with("ak_tok_") => {
            return Some("is an `ak_tok_` token, not an `ak_` id".to_owned());
        }
        Some(tail) => tail,
        None => {
            let other = prefix_of(value)
                .map(|p| format!(" (it is a `{p}` identifier)"))
                .unwrap_or_default();
            return Some(format!("does not start with `{prefix}`{other}"));
        }
    };
    if tail.is_empty() {
        return Some(format!("has nothing after `{prefix}`"));
    }
    if let Some(c) = tail
        .chars()
        .find(|c| !c.is_ascii() || !is_id_byte(*c as u8))
    {
        let c = crate::text::escape_control(&c.to_string()).into_owned();
        return Some(format!(
            "holds `{c}`; after `{prefix}` only letters, digits, `.`, `_`, `~` and `-` may follow"
        ));
    }
    let n = value.chars().count();
    Some(format!(
        "is {n} characters long; a batch token is exactly {BATCH_TOKEN_LEN}"
    ))
}

/// The known prefix `value` carries, if any (longest match wins).
pub fn prefix_of(value: &str) -> Option<&'static str> {
    PREFIXES.iter().copied().find(|p| value.starts_with(p))
}

/// True for a numeric identifier serialized as a string: digits only, no
/// sign and no leading zero (API.md typing rule 2).
pub fn is_numeric_id(value: &str) -> bool {
    is_unsigned(value)
}

/// True for a settlement batch token: `sb_` and exactly 39 characters in
/// total (API.md typing rule 1 and Limits).
pub fn is_batch_token(value: &str) -> bool {
    value.len() == BATCH_TOKEN_LEN
        && value
            .strip_prefix(BATCH_TOKEN_PREFIX)
            .is_some_and(is_id_tail)
}

/// True for an amount in paisa: a decimal integer string, optionally
/// negative (balances can be), without leading zeros, spaces or decimals
/// (API.md typing rule 3).
pub fn is_paisa(value: &str) -> bool {
    paisa(value).is_some()
}

/// The amount in paisa `value` writes, when [`is_paisa`] accepts it: read
/// in the same pass that checks it (every row carries several).
pub fn paisa(value: &str) -> Option<i64> {
    let (negative, magnitude) = match value.strip_prefix('-') {
        Some(magnitude) => (true, magnitude),
        None => (false, value),
    };
    if !is_unsigned(magnitude) || (negative && magnitude == "0") {
        return None;
    }
    // Accumulated negatively, so that `i64::MIN` itself is read.
    let mut n: i64 = 0;
    for digit in magnitude.bytes() {
        n = n.checked_mul(10)?.checked_sub(i64::from(digit - b'0'))?;
    }
    if negative { Some(n) } else { n.checked_neg() }
}

/// True for an ISO 4217 alphabetic currency code such as `PKR`.
pub fn is_currency(value: &str) -> bool {
    value.len() == 3 && value.bytes().all(|b| b.is_ascii_uppercase())
}

/// True for an RFC 3339 timestamp in UTC (`Z` or `+00:00`), seconds
/// precision with optional fractional seconds, that names a real instant
/// (API.md typing rule 4).
pub fn is_utc_timestamp(value: &str) -> bool {
    is_utc_shape(value.as_bytes()) && value.parse::<jiff::Timestamp>().is_ok()
}

/// `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1 to 9 digits, and `Z`
/// or `+00:00` (either case of `T` and `Z`).
fn is_utc_shape(b: &[u8]) -> bool {
    const HEAD: &[u8; 19] = b"0000-00-00T00:00:00";
    if b.len() < 20 {
        return false;
    }
    let head_ok = HEAD.iter().zip(b).all(|(want, got)| match want {
        b'0' => got.is_ascii_digit(),
        b'T' => matches!(got, b'T' | b't'),
        sep => got == sep,
    });
    let mut rest = &b[19..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let digits = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=9).contains(&digits) {
            return false;
        }
        rest = &fraction[digits..];
    }
    head_ok && matches!(rest, b"Z" | b"z" | b"+00:00")
}

/// True for a calendar date written `YYYY-MM-DD` that exists.
pub fn is_date(value: &str) -> bool {
    DATE.is_match(value) && value.parse::<jiff::civil::Date>().is_ok()
}

/// Checks a base URL (API.md Conventions 1: the service address, its own
/// path prefix included) and returns it normalised: scheme in lowercase, no
/// trailing slash.
///
/// Refused: another scheme than `http` or `https`, no host, a query or a
/// fragment, credentials (`user:pass@`, which would end up in logs),
/// whitespace, control and non-ASCII characters (write an international
/// host in its punycode form and percent-encode the path).
///
/// # Errors
///
/// Why the URL is refused, naming the offending part.
///
/// ```
/// use aggpay_internal::syntax::parse_base_url;
///
/// assert_eq!(parse_base_url("HTTPS://api.example.com/pay/").unwrap(), "https://api.example.com/pay");
/// assert!(parse_base_url("ftp://api.example.com").is_err());
/// assert!(parse_base_url("https://api.example.com/?x=1").is_err());
/// assert!(parse_base_url("https://bücher.example").is_err());
/// ```
pub fn parse_base_url(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim().trim_end_matches('/');
    if let Some(c) = trimmed.chars().find(|c| !c.is_ascii()) {
        return Err(format!(
            "contains the non-ASCII character {c:?}: write the host in its punycode form and percent-encode the path"
        ));
    }
    if trimmed.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return Err("contains whitespace or a control character".to_owned());
    }
    let (scheme, rest) = trimmed
        .split_once("://")
        .ok_or_else(|| "must start with http:// or https://".to_owned())?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "has the scheme `{scheme}`: it must be http:// or https://"
        ));
    }
    if rest.contains(['?', '#']) {
        return Err("must not carry a query or a fragment".to_owned());
    }
    if rest.contains('\\') {
        return Err("contains a backslash".to_owned());
    }
    let authority = rest.split('/').next().unwrap_or("");
    if authority.contains('@') {
        return Err(
            "must not carry credentials (user:password@): they would be printed with the URL"
                .to_owned(),
        );
    }
    let normalised = format!("{scheme}://{rest}");
    let uri: ureq::http::Uri = normalised
        .parse()
        .map_err(|e| format!("is not a valid URL: {e}"))?;
    if uri.host().is_none_or(str::is_empty) {
        return Err("has no host".to_owned());
    }
    Ok(normalised)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn base_urls() {
        for (raw, want) in [
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("https://x.example/api/", "https://x.example/api"),
            ("HTTPS://x", "https://x"),
            ("  http://[::1]:80//  ", "http://[::1]:80"),
        ] {
            assert_eq!(parse_base_url(raw).as_deref(), Ok(want), "{raw}");
        }
        for bad in [
            "",
            "ftp://x",
            "127.0.0.1:80",
            "http://",
            "http://x?y=1",
            "http://x#f",
            "http://u:p@x",
            "http://x y",
            "http://é.example",
            "https://x.example/p\u{e9}",
            "http://x\\y",
            "http://x/\u{1b}[2J",
            // Non-ASCII at the start used to panic on a byte slice.
            "ñ",
            "ñttp://x",
            "https://bücher.example",
            "é://x",
        ] {
            assert!(parse_base_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn patterns_compile() {
        assert!(!DATE.as_str().is_empty());
        assert!(!UTC_TIMESTAMP.as_str().is_empty());
    }

    #[test]
    fn numeric_ids() {
        for ok in ["0", "7", "1234567890"] {
            assert!(is_numeric_id(ok), "{ok}");
        }
        for bad in ["", "01", "-1", "1.0", " 1", "1a", "١"] {
            assert!(!is_numeric_id(bad), "{bad}");
        }
    }

    #[test]
    fn batch_tokens() {
        let good = "sb_0f8fad5b-d9cb-469f-a165-70867728950e";
        assert_eq!(good.len(), BATCH_TOKEN_LEN);
        assert!(is_batch_token(good));
        assert!(!is_batch_token(&good[..38]));
        assert!(!is_batch_token(&format!("{good}0")));
        assert!(!is_batch_token(&good.replacen("sb_", "sx_", 1)));
        assert!(!is_batch_token(&good.replacen("sb_", "SB_", 1)));
        assert!(!is_batch_token(&good.replacen('-', "/", 1)));
        assert!(has_prefix(good, "sb_"));
    }

    #[test]
    fn prefixes() {
        assert!(has_prefix("pm_abc", "pm_"));
        assert!(!has_prefix("pm_", "pm_"));
        assert!(!has_prefix("pm_a b", "pm_"));
        assert!(!has_prefix("txn_abc", "pm_"));
        assert!(has_prefix("ak_tok_1", "ak_tok_"));
        assert!(!has_prefix("ak_tok_1", "ak_"));
        assert!(has_prefix("ak_1", "ak_"));
        assert_eq!(prefix_of("acct_1"), Some("acct_"));
        assert_eq!(prefix_of("acc_1"), Some("acc_"));
        assert_eq!(prefix_of("ak_tok_1"), Some("ak_tok_"));
        assert_eq!(prefix_of("zz_1"), None);
    }

    #[test]
    fn byte_checks_match_the_patterns_they_replace() {
        let pattern = |p: &str| Regex::new(p).unwrap();
        let numeric = pattern(r"^(0|[1-9][0-9]*)$");
        let paisa = pattern(r"^(0|-?[1-9][0-9]*)$");
        let currency = pattern(r"^[A-Z]{3}$");
        let tail = pattern(&format!("^{ID_BODY}+$"));
        let token = pattern(&format!("^sb_{ID_BODY}{{36}}$"));
        let samples = [
            "",
            "0",
            "00",
            "-0",
            "-",
            "7",
            "-7",
            "10",
            "-10",
            "01",
            "1a",
            " 1",
            "1 ",
            "PKR",
            "pkr",
            "PK",
            "PKRR",
            "P1R",
            "a.b_c~d-e",
            "a/b",
            "é",
            "ab cd",
            "~",
            "١٢",
            "sb_0f8fad5b-d9cb-469f-a165-70867728950e",
            "sb_0f8fad5b-d9cb-469f-a165-70867728950",
            "sb_0f8fad5b-d9cb-469f-a165-70867728950é",
            "sb_0f8fad5b/d9cb-469f-a165-70867728950e",
        ];
        for s in samples {
            assert_eq!(is_numeric_id(s), numeric.is_match(s), "{s:?}");
            assert_eq!(
                is_paisa(s),
                paisa.is_match(s) && s.parse::<i64>().is_ok(),
                "{s:?}"
            );
            assert_eq!(is_currency(s), currency.is_match(s), "{s:?}");
            assert_eq!(is_id_tail(s), tail.is_match(s), "{s:?}");
            assert_eq!(is_batch_token(s), token.is_match(s), "{s:?}");
        }
        for t in [
            "2024-05-01T10:00:00Z",
            "2024-05-01t10:00:00z",
            "2024-05-01T10:00:00.5Z",
            "2024-05-01T10:00:00.123456789Z",
            "2024-05-01T10:00:00.1234567890Z",
            "2024-05-01T10:00:00.Z",
            "2024-05-01T10:00:00+00:00",
            "2024-05-01T10:00:00+05:00",
            "2024-05-01 10:00:00Z",
            "2024-5-01T10:00:00Z",
            "2024-05-01T10:00:00",
            "",
            "2024-05-01T10:00:00ZZ",
            "x024-05-01T10:00:00Z",
            "2024-05-01T10:00:00.12a4Z",
        ] {
            assert_eq!(
                is_utc_shape(t.as_bytes()),
                UTC_TIMESTAMP.is_match(t),
                "{t:?}"
            );
        }
    }

    #[test]
    fn paisa_and_currency() {
        for ok in [
            "0",
            "483",
            "-12",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            assert!(is_paisa(ok), "{ok}");
        }
        assert_eq!(paisa("-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "-0",
            "007",
            "4.83",
            "1e3",
            "+5",
            "9223372036854775808",
            "-9223372036854775809",
            "-",
            " 1",
        ] {
            assert!(!is_paisa(bad), "{bad}");
        }
        assert!(is_currency("PKR"));
        for bad in ["pkr", "PK", "PKRR", ""] {
            assert!(!is_currency(bad), "{bad}");
        }
    }

    #[test]
    fn timestamps_and_dates() {
        for ok in [
            "2024-05-01T10:00:00Z",
            "2024-05-01T10:00:00.123456Z",
            "2024-05-01T10:00:00+00:00",
        ] {
            assert!(is_utc_timestamp(ok), "{ok}");
        }
        for bad in [
            "",
            "2024-05-01",
            "2024-05-01T10:00Z",
            "2024-05-01T10:00:00",
            "2024-05-01T10:00:00+05:00",
            "2024-13-01T10:00:00Z",
            "2024-02-30T10:00:00Z",
        ] {
            assert!(!is_utc_timestamp(bad), "{bad}");
        }
        assert!(is_date("2024-02-29"));
        for bad in ["2023-02-29", "2024-2-1", "2024-05-01T00:00:00Z", ""] {
            assert!(!is_date(bad), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn any_i64_is_paisa(n in any::<i64>()) {
            prop_assert_eq!(paisa(&n.to_string()), Some(n));
        }

        /// The one-pass reading agrees with the standard library's on
        /// every text it accepts, and accepts only what the rule allows.
        #[test]
        fn paisa_reads_as_std_does(text in "-?[0-9]{0,21}|[-+ .e0-9]{0,6}") {
            let canonical = text.parse::<i64>().ok().filter(|n| n.to_string() == text);
            prop_assert_eq!(paisa(&text), canonical);
        }

        #[test]
        fn id_bytes_are_the_rule(b in any::<u8>()) {
            let rule = b.is_ascii_alphanumeric() || b".-_~".contains(&b);
            prop_assert_eq!(is_id_byte(b), rule);
        }

        #[test]
        fn any_u64_is_numeric_id(n in any::<u64>()) {
            prop_assert!(is_numeric_id(&n.to_string()));
        }

        #[test]
        fn batch_token_length_is_exact(tail in "[a-z0-9-]{0,60}") {
            let token = format!("sb_{tail}");
            prop_assert_eq!(is_batch_token(&token), token.len() == BATCH_TOKEN_LEN);
        }

        #[test]
        fn every_timestamp_roundtrips(secs in 0i64..4_000_000_000, nanos in 0i32..1_000_000_000) {
            let ts = jiff::Timestamp::new(secs, nanos).unwrap();
            prop_assert!(is_utc_timestamp(&ts.to_string()));
        }
    }
}
