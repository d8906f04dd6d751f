//! Near misses: values one slip away from a value the server knows. Each
//! slip is a way a server comparing values goes wrong (case folded, a
//! column indexed on a prefix, a pattern language, whitespace trimmed,
//! Unicode normalised, a value decoded twice, a number that wraps), so
//! each near miss is a value the server does not know and must treat so.
//!
//! A form that API.md or an RFC makes equal to the value is never made:
//! a header value's surrounding whitespace (RFC 9110 section 5.5), a
//! percent-encoded unreserved character (RFC 3986 section 6.2.2.2); see
//! the room `equal-forms`.

use crate::model::Picker;

/// How a near miss differs from the value it was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slip {
    /// The case of every ASCII letter swapped.
    Case,
    /// Its last character cut.
    Shortened,
    /// Its last character repeated.
    Lengthened,
    /// Its last `n` letters or digits changed, each within its alphabet.
    EndChanged(usize),
    /// One character replaced by this wildcard of a pattern language.
    Wildcard(char),
    /// Its first half, then `%`.
    PrefixPattern,
    /// A space before and after.
    Whitespace,
    /// A letter replaced by a Unicode look-alike (Cyrillic).
    LookAlike,
    /// A character replaced by its fullwidth compatibility form (NFKC
    /// folds it back).
    Compatibility,
    /// A character replaced by its percent-encoding, as text: a server
    /// that decodes twice reads the value.
    DoubleEncoded,
    /// The number plus `2^bits`: a server keeping fewer bits reads the
    /// value.
    Wrapped(u32),
}

impl Slip {
    /// What the slip did, in words (never the value: a near miss of a
    /// secret stays secret).
    pub fn describe(self) -> String {
        match self {
            Slip::Case => "with the case of its letters swapped".into(),
            Slip::Shortened => "without its last character".into(),
            Slip::Lengthened => "with a character appended".into(),
            Slip::EndChanged(n) => format!("with its last {n} letters or digits changed"),
            Slip::Wildcard(c) => format!("with a character replaced by {c:?}"),
            Slip::PrefixPattern => "cut in half and ended with %".into(),
            Slip::Whitespace => "between spaces".into(),
            Slip::LookAlike => "with a letter replaced by a Cyrillic look-alike".into(),
            Slip::Compatibility => "with a character in its fullwidth form".into(),
            Slip::DoubleEncoded => "with a character percent-encoded as text".into(),
            Slip::Wrapped(bits) => format!("plus 2^{bits}"),
        }
    }
}

/// A value one slip away from a known one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearMiss {
    /// The slip.
    pub slip: Slip,
    /// The value.
    pub value: String,
}

/// Where a value travels, which decides the forms that can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// A header value: visible ASCII, and surrounding whitespace is not
    /// part of it (RFC 9110 section 5.5).
    Header,
    /// A path segment, a query value or a JSON string: any text.
    Text,
}

/// The near misses of `value`, for a value travelling in `carrier`. A
/// number also gets its wrapped forms. Seeded: `pick` chooses where a
/// character is replaced.
pub fn near_misses(value: &str, carrier: Carrier, pick: &mut Picker) -> Vec<NearMiss> {
    let chars: Vec<char> = value.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut push = |slip: Slip, text: String| {
        if text != value && !text.is_empty() && !out.iter().any(|m: &NearMiss| m.value == text) {
            out.push(NearMiss { slip, value: text });
        }
    };
    push(Slip::Case, swap_case(value));
    push(Slip::Shortened, chars[..chars.len() - 1].iter().collect());
    push(
        Slip::Lengthened,
        format!("{value}{}", chars[chars.len() - 1]),
    );
    let quarter = (chars.len() / 4).max(2);
    for n in [1, quarter] {
        if let Some(changed) = end_changed(&chars, n) {
            push(Slip::EndChanged(n), changed);
        }
    }
    // A character inside the value, not its first: wildcards stand where
    // a pattern would still match the value.
    let at = 1 + pick.below(chars.len().saturating_sub(1).max(1));
    let at = at.min(chars.len() - 1);
    for wildcard in ['%', '_', '*', '?'] {
        let mut replaced = chars.clone();
        replaced[at] = wildcard;
        push(Slip::Wildcard(wildcard), replaced.into_iter().collect());
    }
    let half: String = chars[..chars.len().div_ceil(2)].iter().collect();
    push(Slip::PrefixPattern, format!("{half}%"));
    if let Some(i) = chars.iter().position(char::is_ascii_alphanumeric) {
        let mut encoded: String = chars[..i].iter().collect();
        encoded.push_str(&format!("%{:02X}", chars[i] as u32));
        encoded.extend(&chars[i + 1..]);
        push(Slip::DoubleEncoded, encoded);
    }
    if carrier == Carrier::Text {
        push(Slip::Whitespace, format!(" {value} "));
        if let Some((i, twin)) = chars
            .iter()
            .enumerate()
            .find_map(|(i, c)| look_alike(*c).map(|t| (i, t)))
        {
            let mut replaced = chars.clone();
            replaced[i] = twin;
            push(Slip::LookAlike, replaced.into_iter().collect());
        }
        if let Some((i, wide)) = chars
            .iter()
            .enumerate()
            .find_map(|(i, c)| fullwidth(*c).map(|w| (i, w)))
        {
            let mut replaced = chars.clone();
            replaced[i] = wide;
            push(Slip::Compatibility, replaced.into_iter().collect());
        }
    }
    out.extend(wrapped(value));
    out
}

/// A value of `known`'s own shape that is not `known`: its last quarter
/// of letters and digits changed, each within its alphabet (same prefix,
/// length and alphabet). What the harness sends for "a record that does
/// not exist", so that a server checking its own id format more strictly
/// than API.md does judges it as it would any unknown id of its own.
pub fn unknown_like(known: &str) -> Option<String> {
    unknown_nth(known, 0)
}

/// The `n`-th of several values of `known`'s shape that are not `known`
/// ([`unknown_like`] is the first): its last quarter stepped `n + 1` times
/// within its alphabet.
pub fn unknown_nth(known: &str, n: u16) -> Option<String> {
    let mut chars: Vec<char> = known.chars().collect();
    let quarter = (chars.len() / 4).max(2);
    for _ in 0..=n % 5 {
        chars = end_changed(&chars, quarter)?.chars().collect();
    }
    let out: String = chars.into_iter().collect();
    (out != known).then_some(out)
}

/// The wrapped forms of a decimal number: plus 2^31, 2^32, 2^53, 2^63
/// and 2^64, the widths servers store numbers in. None for other text.
pub fn wrapped(value: &str) -> Vec<NearMiss> {
    let Some(n) = value
        .parse::<u128>()
        .ok()
        .filter(|_| value.bytes().all(|b| b.is_ascii_digit()))
    else {
        return Vec::new();
    };
    [31, 32, 53, 63, 64]
        .into_iter()
        .map(|bits| NearMiss {
            slip: Slip::Wrapped(bits),
            value: (n + (1u128 << bits)).to_string(),
        })
        .collect()
}

fn swap_case(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// The value with its last `n` letters or digits changed, each to
/// another of its alphabet (a hex digit to a hex digit), so that the
/// value keeps its shape; `None` when it has fewer.
fn end_changed(chars: &[char], n: usize) -> Option<String> {
    let mut out = chars.to_vec();
    let mut changed = 0;
    for c in out.iter_mut().rev() {
        if changed == n {
            break;
        }
        if let Some(other) = next_in_alphabet(*c) {
            *c = other;
            changed += 1;
        }
    }
    (changed == n).then(|| out.into_iter().collect())
}

/// Another character of `c`'s alphabet: digits among digits, hex letters
/// among hex letters, other letters among the other letters of their case.
fn next_in_alphabet(c: char) -> Option<char> {
    let step = |c: char, first: char, last: char| {
        if c == last {
            first
        } else {
            char::from(c as u8 + 1)
        }
    };
    Some(match c {
        '0'..='9' => step(c, '0', '9'),
        'a'..='f' => step(c, 'a', 'f'),
        'A'..='F' => step(c, 'A', 'F'),
        'g'..='z' => step(c, 'g', 'z'),
        'G'..='Z' => step(c, 'G', 'Z'),
        _ => return None,
    })
}

/// A Cyrillic letter drawn like `c`.
fn look_alike(c: char) -> Option<char> {
    Some(match c {
        'a' => 'а',
        'c' => 'с',
        'e' => 'е',
        'o' => 'о',
        'p' => 'р',
        'x' => 'х',
        'y' => 'у',
        'A' => 'А',
        'B' => 'В',
        'C' => 'С',
        'E' => 'Е',
        'H' => 'Н',
        'K' => 'К',
        'M' => 'М',
        'O' => 'О',
        'P' => 'Р',
        'T' => 'Т',
        'X' => 'Х',
        _ => return None,
    })
}

/// The fullwidth form of an ASCII letter or digit (U+FF10 onwards), which
/// compatibility normalisation (NFKC) folds back to it.
fn fullwidth(c: char) -> Option<char> {
    c.is_ascii_alphanumeric()
        .then(|| char::from_u32(c as u32 - 0x20 + 0xFF00))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slips(value: &str, carrier: Carrier) -> Vec<(Slip, String)> {
        let mut pick = Picker::new(1, "forms");
        near_misses(value, carrier, &mut pick)
            .into_iter()
            .map(|m| (m.slip, m.value))
            .collect()
    }

    #[test]
    fn every_form_differs_from_the_value_and_keeps_its_shape_where_it_should() {
        let value = "sb_0123abcd-ef45";
        let forms = slips(value, Carrier::Text);
        assert!(forms.iter().all(|(_, v)| v != value));
        let get = |s: Slip| forms.iter().find(|(x, _)| *x == s).map(|(_, v)| v.as_str());
        assert_eq!(get(Slip::Case), Some("SB_0123ABCD-EF45"));
        assert_eq!(get(Slip::Shortened), Some("sb_0123abcd-ef4"));
        assert_eq!(get(Slip::Lengthened), Some("sb_0123abcd-ef455"));
        assert_eq!(get(Slip::EndChanged(1)), Some("sb_0123abcd-ef46"));
        // Four of the value's own alphabet changed: still hex, same length.
        let four = get(Slip::EndChanged(4)).unwrap();
        assert_eq!(four, "sb_0123abcd-fa56");
        assert_eq!(four.len(), value.len());
        assert_eq!(get(Slip::Whitespace), Some(" sb_0123abcd-ef45 "));
        assert_eq!(get(Slip::LookAlike), Some("sb_0123аbcd-ef45"));
        assert_eq!(get(Slip::Compatibility), Some("ｓb_0123abcd-ef45"));
        assert_eq!(get(Slip::DoubleEncoded), Some("%73b_0123abcd-ef45"));
        assert_eq!(get(Slip::PrefixPattern), Some("sb_0123a%"));
        for w in ['%', '*', '?'] {
            let v = get(Slip::Wildcard(w)).unwrap();
            assert_eq!(v.chars().count(), value.chars().count());
            assert_eq!(v.chars().filter(|c| *c == w).count(), 1);
        }
    }

    #[test]
    fn a_header_gets_no_form_an_rfc_makes_equal_and_stays_visible_ascii() {
        let forms = slips("aggsk_0123456789abcdef", Carrier::Header);
        assert!(
            forms
                .iter()
                .all(|(_, v)| v.trim() == v && v.bytes().all(|b| (0x21..0x7f).contains(&b)))
        );
        assert!(!forms.iter().any(|(s, _)| *s == Slip::Whitespace));
    }

    #[test]
    fn numbers_wrap_at_each_width_and_text_does_not() {
        let forms = wrapped("7");
        let values: Vec<&str> = forms.iter().map(|m| m.value.as_str()).collect();
        assert_eq!(
            values,
            [
                "2147483655",
                "4294967303",
                "9007199254740999",
                "9223372036854775815",
                "18446744073709551623"
            ]
        );
        assert!(wrapped("7a").is_empty());
        assert!(wrapped("-7").is_empty());
    }
}
