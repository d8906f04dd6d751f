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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
