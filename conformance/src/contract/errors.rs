//! API.md's error conditions, and the facts that tie one operation's
//! answer to another's (a record seen twice must agree).

use super::OpId;

/// The body form of an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `{api_version, error: {code, message}}`.
    Envelope,
    /// `{code, message}`.
    Bare,
}

impl Form {
    /// How the report names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Form::Envelope => "envelope",
            Form::Bare => "bare",
        }
    }
}

/// What the message of an error must say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    /// These words exactly (case and surrounding blanks and a final period
    /// aside).
    Exactly(&'static str),
    /// Each of these phrases, anywhere, in any case.
    Says(&'static [&'static str]),
    /// Any non-empty text.
    Described,
}

impl Message {
    /// Why `message` does not say what it must, if it does not.
    pub fn judge(self, message: &str) -> Option<String> {
        let lower = message.trim().trim_end_matches('.').to_lowercase();
        match self {
            Message::Exactly(text) if lower == text => None,
            Message::Exactly(text) => Some(format!("message {message:?}, not {text:?}")),
            Message::Says(phrases) => {
                let missing: Vec<&str> = phrases
                    .iter()
                    .copied()
                    .filter(|p| !lower.contains(p))
                    .collect();
                (!missing.is_empty()).then(|| {
                    format!(
                        "message {message:?} does not say {}",
                        missing
                            .iter()
                            .map(|p| format!("{p:?}"))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    )
                })
            }
            Message::Described if lower.is_empty() => Some("an empty message".to_owned()),
            Message::Described => None,
        }
    }
}

/// One row of API.md's error table, with the body form the Errors
/// section gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCase {
    /// HTTP status.
    pub status: u16,
    /// `code`.
    pub code: &'static str,
    /// Body form.
    pub form: Form,
    /// What the message says.
    pub message: Message,
    /// When it happens.
    pub condition: &'static str,
}

/// API.md's error table.
pub const ERRORS: &[ErrorCase] = &[
    ErrorCase {
        status: 400,
        code: "error.bad_request",
        form: Form::Bare,
        message: Message::Says(&["invalid"]),
        condition: "invalid request parameters (message says so)",
    },
    ErrorCase {
        status: 401,
        code: "error.unauthorized_access",
        form: Form::Envelope,
        message: Message::Says(&["access key", "required"]),
        condition: "authentication header missing or not accepted; the message says a partner access key is required in the request header",
    },
    ErrorCase {
        status: 404,
        code: "error.not_found",
        form: Form::Bare,
        message: Message::Exactly("requested resource not found"),
        condition: "requested resource does not exist (message: requested resource not found)",
    },
    ErrorCase {
        status: 500,
        code: "error.internal_server_error",
        form: Form::Envelope,
        message: Message::Described,
        condition: "internal failure; message carries an internal error description",
    },
];

/// The error case of `status`, if API.md has one.
pub fn error_case(status: u16) -> Option<&'static ErrorCase> {
    ERRORS.iter().find(|e| e.status == status)
}

/// A record that names another by its id and repeats its name: where
/// both are visible, the name is the other record's (API.md: "am_
/// identifier and its name", "mer_ identifier and its name").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reference {
    /// The list whose rows refer.
    pub from: OpId,
    /// The field holding the other record's id.
    pub id: &'static str,
    /// The field repeating its name.
    pub name: &'static str,
    /// Where the other record is read.
    pub to: OpId,
    /// The field of the other record that its id matches.
    pub key: &'static str,
    /// Its name field.
    pub to_name: &'static str,
    /// API.md's words.
    pub source: &'static str,
}

/// Every reference API.md states.
pub const REFERENCES: &[Reference] = &[
    Reference {
        from: OpId::Transactions,
        id: "aggregator_merchant_id",
        name: "aggregator_merchant_name",
        to: OpId::Merchants,
        key: "token",
        to_name: "name",
        source: "Transaction (aggregator_merchant_id, aggregator_merchant_name: am_ identifier and its name)",
    },
    Reference {
        from: OpId::Transactions,
        id: "rail_merchant_id",
        name: "rail_merchant_name",
        to: OpId::RailMerchants,
        key: "token",
        to_name: "name",
        source: "Transaction (rail_merchant_id, rail_merchant_name: mer_ identifier and its name)",
    },
    Reference {
        from: OpId::Transactions,
        id: "aggregator_id",
        name: "aggregator_name",
        to: OpId::Aggregator,
        key: "token",
        to_name: "name",
        source: "Transaction (aggregator_id, aggregator_name)",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_judged_by_their_words() {
        let not_found = error_case(404).unwrap().message;
        assert!(not_found.judge("Requested resource not found.").is_none());
        assert!(not_found.judge("no such thing").is_some());
        let unauthorized = error_case(401).unwrap().message;
        assert!(
            unauthorized
                .judge("partner access key is required in request header")
                .is_none()
        );
        assert!(unauthorized.judge("access denied").is_some());
        assert!(unauthorized.judge("invalid access key").is_some());
        let bad = error_case(400).unwrap().message;
        assert!(bad.judge("invalid request parameters: limit").is_none());
        assert!(bad.judge("bad request").is_some());
        assert!(error_case(500).unwrap().message.judge("  ").is_some());
    }
}
