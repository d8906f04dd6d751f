//! body.*: every body, success or error, is JSON.

use super::observe::from_log;
use super::{Level, Rule};
use crate::http::Exchange;
use aggpay_mock::Fault;

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "body.json",
        level: Level::Required,
        source: "API.md Conventions 2; Errors (both body shapes are JSON)",
        says: &["Requests and responses are JSON."],
        summary: "every response body, success or error, is JSON",
        faults: &[Fault::TextErrors],
        check: |c| from_log(c, false),
        observe: Some(json),
    }]
}

fn json(e: &Exchange) -> Option<String> {
    e.json.is_none().then(|| why_not_json(&e.body))
}

/// Why a body is not JSON, in words a staging team can act on: empty, a
/// byte order mark, bytes that are not UTF-8 (and where), or the
/// parser's own reason with its byte offset.
pub fn why_not_json(body: &[u8]) -> String {
    if body.is_empty() {
        return "the body is empty, not JSON".to_owned();
    }
    if body.starts_with(b"\xef\xbb\xbf") {
        return "the body starts with a byte order mark (\\u{feff}), which JSON text sent over a network must not (RFC 8259 section 8.1)".to_owned();
    }
    if let Err(e) = std::str::from_utf8(body) {
        let at = e.valid_up_to();
        return format!(
            "the body is not UTF-8: byte 0x{:02x} at byte offset {at} (RFC 8259 section 8.1: JSON is UTF-8)",
            body[at]
        );
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(_) => "the body is JSON".to_owned(),
        Err(e) => {
            let offset = byte_offset(body, e.line(), e.column());
            let byte = body
                .get(offset)
                .map(|b| format!(" (byte 0x{b:02x})"))
                .unwrap_or_default();
            format!("the body is not JSON: {e}, at byte offset {offset}{byte}")
        }
    }
}

/// The byte offset (from 0) of a 1-based line and column.
fn byte_offset(body: &[u8], line: usize, column: usize) -> usize {
    let start: usize = body
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    start + column.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::why_not_json;

    #[test]
    fn a_body_that_is_not_json_says_why_and_where() {
        assert!(why_not_json(b"").contains("empty"));
        assert!(why_not_json(b"\xef\xbb\xbf{}").contains("byte order mark"));
        let w = why_not_json(b"{\"a\":\xff}");
        assert!(
            w.contains("not UTF-8") && w.contains("0xff at byte offset 5"),
            "{w}"
        );
        let w = why_not_json(b"{\"a\":1,}");
        assert!(w.contains("byte offset 7 (byte 0x7d)"), "{w}");
        let w = why_not_json(b"error 500");
        assert!(w.contains("expected value"), "{w}");
    }
}
