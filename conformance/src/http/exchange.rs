//! One request and what came back: the bytes, the JSON read strictly,
//! and the operation it was routed to.

use serde_json::Value;

use super::{Duplicate, NoAnswer, Request, Transient};
use crate::contract::Op;

/// One request and what came back.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// What was sent.
    pub request: Request,
    /// The operation of API.md its method and path route to, routed
    /// once when it is made (every rule that judges every answer asks).
    pub op: Option<&'static Op>,
    /// The full URL (query encoded), without the key.
    pub url: String,
    /// HTTP status, or why there is none.
    pub outcome: Result<u16, NoAnswer>,
    /// Response headers (lowercase names).
    pub headers: Vec<(String, String)>,
    /// Response body, its content codings undone (the bytes every rule
    /// judges); as received when they could not be.
    pub body: Vec<u8>,
    /// Bytes of the body as received, before its content codings were
    /// undone (what Content-Length counts).
    pub received: usize,
    /// Why the body's content coding could not be undone, when it could
    /// not.
    pub undecodable: Option<String>,
    /// The body as JSON, when it is JSON (read strictly: `json::read`).
    pub json: Option<Value>,
    /// Members an object of the body names more than once.
    pub duplicates: Vec<Duplicate>,
    /// Attempts made (1 when the first answer was kept).
    pub attempts: u32,
    /// Set when every attempt met a transient failure: this is not the
    /// server's answer to the question, and proves nothing either way.
    pub transient: Option<Transient>,
    /// The answer's bytes beside its body, as the server sent them.
    pub wire: Option<Box<super::h1::Wire>>,
}

impl Exchange {
    /// Whether the answer may have content: not an answer to a HEAD, nor
    /// a 304 (RFC 9110 sections 9.3.2 and 15.4.5).
    pub fn has_content(&self) -> bool {
        self.request.method != "HEAD" && self.status() != Some(304)
    }

    /// Whether the server refused the request as a bad request: a 400, or
    /// another client error that says error.bad_request. API.md lists 400
    /// beside error.bad_request, and also says "HTTP status numbers for
    /// error.bad_request and error.internal_server_error responses: not
    /// shown": the code and the class decide, the number is observed
    /// (`wire.bad-request-400`). 401, 404 and 429 say something else.
    pub fn refused(&self) -> bool {
        match self.status() {
            Some(400) => true,
            Some(401 | 404 | 429) | None => false,
            Some(s) => (400..500).contains(&s) && self.error_code() == Some("error.bad_request"),
        }
    }

    /// The code of an error body, in either of API.md's forms.
    pub fn error_code(&self) -> Option<&str> {
        let json = self.json.as_ref()?;
        json.get("error")
            .and_then(|e| e.get("code"))
            .or_else(|| json.get("code"))?
            .as_str()
    }

    /// The status, if the server answered.
    pub fn status(&self) -> Option<u16> {
        self.outcome.as_ref().ok().copied()
    }

    /// True for a 2xx answer.
    pub fn success(&self) -> bool {
        self.status().is_some_and(|s| (200..300).contains(&s))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `data` of a success envelope.
    pub fn data(&self) -> Option<&Value> {
        self.json
            .as_ref()
            .filter(|_| self.success())
            .and_then(|v| v.get("data"))
    }

    /// The rows under `data[key]` of a success answer.
    pub fn rows(&self, key: &str) -> Option<&Vec<Value>> {
        self.data()
            .and_then(|d| d.get(key))
            .and_then(Value::as_array)
    }

    /// The operation the request exercised, by the contract table.
    pub fn op(&self) -> Option<&'static Op> {
        self.op
    }
}

/// A JSON value for a message, shortened.
pub fn show(v: Option<&Value>) -> String {
    match v {
        None => "missing".to_owned(),
        Some(v) => aggpay_internal::text::excerpt(&v.to_string(), 80),
    }
}
