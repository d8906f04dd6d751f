//! Percent-encoding of what goes into a URL: path segments and query
//! components, as the client sends them, the harness builds them and the
//! redactor looks for a secret written into one.

/// Percent-encodes a path segment or a query component: every byte but
/// the URL-unreserved ones (`A-Z a-z 0-9 - . _ ~`) becomes `%XX`.
///
/// ```
/// assert_eq!(aggpay_internal::url::encode_component("a b/c,d~"), "a%20b%2Fc%2Cd~");
/// ```
pub fn encode_component(value: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_are_encoded() {
        assert_eq!(encode_component("pm_a-b.c~d"), "pm_a-b.c~d");
        assert_eq!(encode_component("a/b c"), "a%2Fb%20c");
        assert_eq!(encode_component("é"), "%C3%A9");
    }
}
