//! Webhook endpoints.

use crate::query::{Invalid, Query};
use crate::reply::{self, Reply};
use crate::router::App;
use crate::wire::{StringCount, WebhookList};

impl App {
    pub(crate) fn webhooks(&self, q: &Query) -> Result<Reply, Invalid> {
        let (offset, limit) = self.purpose_paging(q)?;
        let d = &self.data;
        let endpoints = self.page(
            self.in_order(0..d.sizes.webhooks).map(|i| d.webhook(i)),
            offset,
            limit,
        );
        Ok(reply::ok(&WebhookList {
            endpoints,
            count: StringCount(d.sizes.webhooks),
        }))
    }
}
