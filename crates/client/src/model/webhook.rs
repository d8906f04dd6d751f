use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::{AggregatorId, Text, WebhookToken};

/// A webhook endpoint (element of `data.endpoints`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WebhookEndpoint {
    /// `wh_` token.
    pub token: WebhookToken,
    /// The aggregator.
    pub aggregator_id: AggregatorId,
    /// Absolute URL receiving deliveries.
    pub url: Text,
    /// Description.
    pub description: Text,
    /// Whether deliveries are made.
    pub enabled: bool,
    /// A JSON-encoded array of event names; see [`WebhookEndpoint::event_filter`].
    pub event_filter_json: Text,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// Version of the signing secret.
    pub secret_version: i64,
    /// When the signing secret last changed.
    pub secret_rotated_at: Timestamp,
}

impl WebhookEndpoint {
    /// The event names of `event_filter_json`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) when the field is not a JSON array of strings.
    pub fn event_filter(&self) -> Result<Vec<String>, Error> {
        serde_json::from_str(&self.event_filter_json).map_err(|err| {
            Error::invalid_input(
                "event_filter_json",
                format!("not a JSON array of strings: {err}"),
            )
        })
    }
}
