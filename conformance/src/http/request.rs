//! A request as the rules build it: its method, path, query, body, and
//! the credential it carries.

use crate::contract::{Op, OpId};

/// Which key a request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// The configured key.
    Key,
    /// No header at all.
    Missing,
    /// A real credential other than the configured key (an old secret
    /// after a rotation): never shown.
    Secret(String),
    /// A made-up value (an empty or generated wrong key): shown, so a
    /// failure can be reproduced.
    Probe(String),
    /// The configured key, offered somewhere API.md does not put it, and
    /// no key header: never shown.
    Elsewhere(KeyPlace),
    /// The configured key in the key header, its name spelled exactly
    /// this way (sent byte for byte: the HTTP client would lower it).
    Spelled(&'static str),
}

impl Auth {
    /// How the request carries its key, without the key: what orders two
    /// requests of one URL.
    pub fn kind(&self) -> String {
        match self {
            Auth::Key => "key".to_owned(),
            Auth::Missing => "missing".to_owned(),
            Auth::Secret(_) => "secret".to_owned(),
            Auth::Probe(v) => format!("probe {v}"),
            Auth::Elsewhere(place) => format!("elsewhere {place:?}"),
            Auth::Spelled(name) => format!("spelled {name}"),
        }
    }
}

/// Where a key may be offered besides the key header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPlace {
    /// A query parameter of this name.
    Query(&'static str),
    /// A header of this name, the key after this prefix (`Bearer `…).
    Header(&'static str, &'static str),
    /// A cookie of this name.
    Cookie(&'static str),
}

impl KeyPlace {
    /// Where, in words.
    pub fn shown(self) -> String {
        match self {
            KeyPlace::Query(name) => format!("in the query parameter {name}"),
            KeyPlace::Header(name, "") => format!("in the header {name}"),
            KeyPlace::Header(name, prefix) => format!("in the header {name}: {}…", prefix.trim()),
            KeyPlace::Cookie(name) => format!("in the cookie {name}"),
        }
    }
}

/// A request as the reports show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// HTTP method.
    pub method: &'static str,
    /// Path below `/v1/aggregators/{aggregator-id}` (starting with `/` or
    /// empty), segments already encoded.
    pub path: String,
    /// Query parameters, unencoded.
    pub query: Vec<(String, String)>,
    /// JSON body, for POST.
    pub body: Option<String>,
    /// Which key is sent.
    pub auth: Auth,
    /// Another aggregator in the path than the configured one.
    pub aggregator: Option<String>,
    /// How it is written: HTTP/1.1 with `Content-Length` unless a rule
    /// asks for another form a client may send.
    pub form: super::h1::Form,
}

impl Request {
    /// A GET with the configured key.
    pub fn get(path: impl Into<String>) -> Self {
        Self {
            method: "GET",
            path: path.into(),
            query: Vec::new(),
            body: None,
            auth: Auth::Key,
            aggregator: None,
            form: super::h1::Form::default(),
        }
    }

    /// A PUT with the configured key.
    pub fn put(path: impl Into<String>) -> Self {
        Self {
            method: "PUT",
            ..Self::get(path)
        }
    }

    /// A POST of a JSON body with the configured key.
    pub fn post(path: impl Into<String>, body: impl Into<String>) -> Self {
        Self {
            method: "POST",
            body: Some(body.into()),
            ..Self::get(path)
        }
    }

    /// The request of operation `id`, which has no path id: its method and
    /// path from the contract table (a POST with the body `{}` until
    /// [`Request::json`] gives another).
    pub fn to(id: OpId) -> Self {
        Self::of(Op::get(id), None)
    }

    /// The request of operation `id` for the path id `path_id` (encoded).
    pub fn to_one(id: OpId, path_id: &str) -> Self {
        Self::of(Op::get(id), Some(path_id))
    }

    /// The request of `op`, with its path id when it has one.
    pub fn of(op: &Op, path_id: Option<&str>) -> Self {
        let path = match path_id {
            Some(id) => op.path_with(id),
            None => op.path.to_owned(),
        };
        Self {
            method: op.method,
            body: (op.method == "POST").then(|| "{}".to_owned()),
            ..Self::get(path)
        }
    }

    /// Sends `body` as the JSON body.
    pub fn json(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Adds a query parameter.
    pub fn q(mut self, name: &str, value: impl ToString) -> Self {
        self.query.push((name.to_owned(), value.to_string()));
        self
    }

    /// Adds query parameters.
    pub fn with_query<K: AsRef<str>, V: AsRef<str>>(mut self, pairs: &[(K, V)]) -> Self {
        for (k, v) in pairs {
            self.query
                .push((k.as_ref().to_owned(), v.as_ref().to_owned()));
        }
        self
    }

    /// Sends another key (or none).
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// Writes it in `form`.
    pub fn in_form(mut self, form: super::h1::Form) -> Self {
        self.form = form;
        self
    }

    /// The same request as a HEAD.
    pub fn into_head(mut self) -> Self {
        self.method = "HEAD";
        self
    }

    /// Names another aggregator in the path.
    pub fn for_aggregator(mut self, aggregator: impl Into<String>) -> Self {
        self.aggregator = Some(aggregator.into());
        self
    }

    /// True for a write the server must carry out: a PUT or POST with the
    /// configured key on the configured aggregator. Everything else
    /// (reads, and writes the server must refuse: another key, another
    /// aggregator) is safe to send again.
    pub fn is_write(&self) -> bool {
        !matches!(self.method, "GET" | "HEAD")
            && self.auth == Auth::Key
            && self.aggregator.is_none()
    }

    /// The value of a query parameter (the first, when repeated).
    pub fn query_value(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}
