//! Content codings (RFC 9110 section 8.4), for the client and the
//! harness alike: every request states the codings it accepts, and the
//! body is decoded here, from the bytes as received (so that the harness
//! can still count them against Content-Length). RFC 9110 section
//! 12.5.3: "If no Accept-Encoding header field is in the request, any
//! content coding is considered acceptable by the user agent", so a
//! client that named none would have to decode every coding there is;
//! one that names its own holds a server to them.

use std::io::Read;

/// The `Accept-Encoding` of every request the client and the harness
/// send.
pub const ACCEPTED: &str = "gzip, deflate";

/// The body `body` decoded by the codings of `content_encoding` (applied
/// in order, so undone in reverse), at most `max` bytes; why not, when a
/// coding is one the harness did not accept or the bytes are not in it.
pub fn decode(content_encoding: Option<&str>, body: Vec<u8>, max: u64) -> Result<Vec<u8>, String> {
    let Some(codings) = content_encoding else {
        return Ok(body);
    };
    let mut body = body;
    for coding in codings.rsplit(',').map(str::trim).filter(|c| !c.is_empty()) {
        let coding = coding.to_ascii_lowercase();
        body = match coding.as_str() {
            "identity" => body,
            "gzip" | "x-gzip" => read(flate2::read::MultiGzDecoder::new(&body[..]), max, &coding)?,
            // RFC 9110 8.4.1.2: "deflate" is the zlib format; some
            // servers send the raw deflate stream instead, which is read
            // too (a client cannot tell them apart otherwise).
            "deflate" => read(flate2::read::ZlibDecoder::new(&body[..]), max, &coding)
                .or_else(|_| read(flate2::read::DeflateDecoder::new(&body[..]), max, &coding))?,
            other => {
                return Err(format!(
                    "the body is coded {other:?}, which the request did not accept (Accept-Encoding: {ACCEPTED}; RFC 9110 section 12.5.3)"
                ));
            }
        };
    }
    Ok(body)
}

fn read(decoder: impl Read, max: u64, coding: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    decoder
        .take(max.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("the body is not valid {coding}: {e}"))?;
    if out.len() as u64 > max {
        return Err(format!("the body decodes to more than {max} bytes"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn every_accepted_coding_is_decoded_and_others_are_named() {
        let json = br#"{"api_version":"v1","data":{}}"#.to_vec();
        assert_eq!(decode(None, json.clone(), 1_000).unwrap(), json);
        assert_eq!(decode(Some("gzip"), gzip(&json), 1_000).unwrap(), json);
        assert_eq!(decode(Some("GZIP"), gzip(&json), 1_000).unwrap(), json);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&json).unwrap();
        assert_eq!(
            decode(Some("deflate"), z.finish().unwrap(), 1_000).unwrap(),
            json
        );
        let mut d = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        d.write_all(&json).unwrap();
        assert_eq!(
            decode(Some("deflate"), d.finish().unwrap(), 1_000).unwrap(),
            json
        );
        // Two codings, applied in order: undone in reverse.
        assert_eq!(
            decode(Some("gzip, gzip"), gzip(&gzip(&json)), 1_000).unwrap(),
            json
        );
        assert_eq!(decode(Some("identity"), json.clone(), 1_000).unwrap(), json);
        let why = decode(Some("br"), json.clone(), 1_000).unwrap_err();
        assert!(
            why.contains("\"br\"") && why.contains("did not accept"),
            "{why}"
        );
        let why = decode(Some("gzip"), json.clone(), 1_000).unwrap_err();
        assert!(why.contains("not valid gzip"), "{why}");
        // A small body that decodes to a huge one stops at the limit.
        let bomb = gzip(&vec![b' '; 100_000]);
        assert!(
            decode(Some("gzip"), bomb, 1_000)
                .unwrap_err()
                .contains("more than 1000")
        );
    }
}
