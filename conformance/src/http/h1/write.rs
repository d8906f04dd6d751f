//! A request written byte for byte: its request line, its fields in the
//! order and spelling given, and its body framed as its form says
//! (`Content-Length`, or the chunked coding).

use super::Form;

/// A request's bytes: the head, and the body as framed (sent after the
/// head, or after a 100 Continue when the form expects one).
#[derive(Debug, Clone)]
pub struct Bytes {
    /// The request line and field lines, through the empty line.
    pub head: Vec<u8>,
    /// The body as framed; empty for none.
    pub body: Vec<u8>,
}

impl Bytes {
    /// The bytes of `method target` to `authority` with `fields` (name as
    /// spelled, value) and `body`, in `form`.
    pub fn request(
        method: &str,
        target: &str,
        authority: &str,
        fields: &[(String, String)],
        body: Option<&[u8]>,
        form: &Form,
    ) -> Bytes {
        let version = if form.http10 { "HTTP/1.0" } else { "HTTP/1.1" };
        let mut head = format!("{method} {target} {version}\r\nHost: {authority}\r\n");
        for (name, value) in fields {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if form.close {
            head.push_str("Connection: close\r\n");
        }
        if let Some(tag) = &form.if_none_match {
            head.push_str(&format!("If-None-Match: {tag}\r\n"));
        }
        let mut framed = Vec::new();
        if let Some(body) = body {
            head.push_str("Content-Type: application/json\r\n");
            if form.chunked {
                head.push_str("Transfer-Encoding: chunked\r\n");
                // Two chunks where the body allows: a reader that takes the
                // first chunk for the whole body is seen.
                let (a, b) = body.split_at(body.len() / 2);
                for part in [a, b].into_iter().filter(|p| !p.is_empty()) {
                    framed.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
                    framed.extend_from_slice(part);
                    framed.extend_from_slice(b"\r\n");
                }
                framed.extend_from_slice(b"0\r\n\r\n");
            } else {
                head.push_str(&format!("Content-Length: {}\r\n", body.len()));
                framed.extend_from_slice(body);
            }
        } else if form.chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
            framed.extend_from_slice(b"0\r\n\r\n");
        } else if matches!(method, "PUT" | "POST") {
            // RFC 9110 section 8.6: a user agent SHOULD send Content-Length
            // in a request when the method defines a meaning for content.
            head.push_str("Content-Length: 0\r\n");
        }
        if form.expect_continue {
            head.push_str("Expect: 100-continue\r\n");
        }
        head.push_str("\r\n");
        Bytes {
            head: head.into_bytes(),
            body: framed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_framed_as_the_form_says() {
        let plain = Bytes::request(
            "POST",
            "/x",
            "h:1",
            &[],
            Some(b"{\"a\":1}"),
            &Form::default(),
        );
        let head = String::from_utf8(plain.head).unwrap();
        assert!(
            head.starts_with("POST /x HTTP/1.1\r\nHost: h:1\r\n"),
            "{head}"
        );
        assert!(head.contains("Content-Length: 7\r\n"), "{head}");
        assert_eq!(plain.body, b"{\"a\":1}");
        let form = Form {
            chunked: true,
            ..Form::default()
        };
        let chunked = Bytes::request("POST", "/x", "h", &[], Some(b"{\"a\":1}"), &form);
        let head = String::from_utf8(chunked.head).unwrap();
        assert!(head.starts_with("POST /x HTTP/1.1\r\n"), "{head}");
        assert!(head.contains("Transfer-Encoding: chunked\r\n"), "{head}");
        assert_eq!(chunked.body, b"3\r\n{\"a\r\n4\r\n\":1}\r\n0\r\n\r\n");
    }
}
