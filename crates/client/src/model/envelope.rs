use serde::{Deserialize, Serialize};

/// The success body of every operation: `{"api_version": "v1", "data": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T> {
    /// Always `v1` for this version of the API.
    pub api_version: String,
    /// The operation's result.
    pub data: T,
}

impl<T> Envelope<T> {
    /// Wraps `data` with `api_version` `v1`.
    pub fn v1(data: T) -> Self {
        Self {
            api_version: "v1".to_owned(),
            data,
        }
    }
}

/// An error's code and message: the bare error form of API.md (400, 404),
/// and the inner object of the envelope form (401, 500).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorBody {
    /// Machine-readable code such as `error.not_found`.
    pub code: String,
    /// Human-readable description.
    pub message: String,
}

/// The envelope error form: `{"api_version": "v1", "error": {code, message}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorEnvelope {
    /// Always `v1` for this version of the API.
    pub api_version: String,
    /// The error.
    pub error: ApiErrorBody,
}
