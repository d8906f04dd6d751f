//! Reading a JSON body into a typed value, for every tool alike.
//!
//! `serde_json::from_slice` checks the UTF-8 of each string it meets, one
//! call per string: on a page of records that is a fifth of the decode.
//! Checking the whole body once (a run of ASCII is checked a word at a
//! time) and parsing it as text does the same check for much less; a
//! body that is not UTF-8 is refused exactly as before, with the offset
//! of the first bad byte.

use serde::de::DeserializeOwned;

/// `body` decoded as JSON into `T`; why not, in words (serde_json's, with
/// its line and column, or the offset of the first byte that is not
/// UTF-8).
pub fn from_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, String> {
    let text = std::str::from_utf8(body).map_err(|e| {
        format!(
            "the body is not UTF-8 (byte {} is not part of a character)",
            e.valid_up_to()
        )
    })?;
    serde_json::from_str(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_decodes_or_says_why() {
        let n: Vec<u32> = from_body(b"[1, 2]").unwrap();
        assert_eq!(n, [1, 2]);
        let bad = from_body::<String>(b"\"caf\xe9\"").unwrap_err();
        assert_eq!(
            bad,
            "the body is not UTF-8 (byte 4 is not part of a character)"
        );
        let bad = from_body::<Vec<u32>>(b"[1,").unwrap_err();
        assert!(bad.contains("line 1 column 3"), "{bad}");
        // What `from_slice` refuses, this refuses too.
        for body in [&b"\"\xff\""[..], b"\xef\xbb\xbf1", b"{\"a\":1}x"] {
            assert!(serde_json::from_slice::<serde_json::Value>(body).is_err());
            assert!(from_body::<serde_json::Value>(body).is_err(), "{body:?}");
        }
    }
}
