//! The client and its 17 operations.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ureq::http::Method;

use crate::error::Error;
use crate::page::Page;
use crate::paginate::{At, Fetch, ListRecord, Pages, WALK_PAGE};
use crate::query::{
    AccountQuery, BatchQuery, CursorPaging, KeyQuery, MerchantQuery, OffsetPaging, QrCodeQuery,
    RailMerchantQuery, RefundQuery, TillCodeQuery, TransactionQuery, WebhookQuery,
};
use crate::transport::{Call, Inner};
use crate::url::encode_component;
use crate::wire::{self, ListBody};
use crate::{
    AccessKey, AccessKeyId, AccountInfo, Aggregator, AggregatorId, AggregatorMerchant, Alias,
    AliasId, BatchToken, LedgerAccount, NewReportExport, PaymentCharges, PaymentId, QrCode,
    RailMerchant, RailMerchantId, Refund, ReportExport, ReportKind, SettlementBatch,
    SettlementPayout, Transaction, WebhookEndpoint, query,
};

/// A blocking client of one aggregator. Cheap to clone (one `Arc`), `Send`
/// and `Sync`: share one across threads; its connections are pooled.
///
/// ```no_run
/// use aggpay::{BatchQuery, BatchStatus, Client};
///
/// let client = Client::from_env()?;
/// for batch in client.settlement_batches(&BatchQuery::new().status(BatchStatus::Completed)) {
///     let batch = batch?;
///     println!("{} {}", batch.token, batch.date);
/// }
/// # Ok::<(), aggpay::Error>(())
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

/// What a client and its clones have done since it was built: for a sync
/// tool's summary or a metrics endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientStats {
    /// HTTP requests sent, retries included.
    pub requests: u64,
    /// Retries made after a retryable failure.
    pub retries: u64,
    /// Response body bytes received.
    pub bytes_received: u64,
    /// Time the retries spent waiting, all requests together.
    pub waited: std::time::Duration,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.inner.settings;
        f.debug_struct("Client")
            .field("base_url", &s.base_url)
            .field("aggregator_id", &s.aggregator_id)
            .field("secret", &s.secret)
            .field("timeout_connect", &s.timeout_connect)
            .field("timeout", &s.timeout)
            .field("retry", &s.retry)
            .finish_non_exhaustive()
    }
}

impl Client {
    pub(crate) fn from_inner(inner: Inner) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The base URL requests go to, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.inner.settings.base_url
    }

    /// The aggregator every request is scoped to.
    pub fn aggregator_id(&self) -> &AggregatorId {
        &self.inner.settings.aggregator_id
    }

    /// Requests, retries and bytes so far, this client and its clones
    /// together.
    pub fn stats(&self) -> ClientStats {
        let c = &self.inner.stats;
        ClientStats {
            requests: c.requests.load(Ordering::Relaxed),
            retries: c.retries.load(Ordering::Relaxed),
            bytes_received: c.bytes.load(Ordering::Relaxed),
            waited: std::time::Duration::from_nanos(c.waited.load(Ordering::Relaxed)),
        }
    }

    /// GETs `path` for `operation` (about `id`); a query refused before
    /// any request says the operation too.
    fn get<T: serde::de::DeserializeOwned>(
        &self,
        operation: &'static str,
        id: Option<&str>,
        path: &str,
        query: Result<query::Pairs, Error>,
    ) -> Result<T, Error> {
        let query = query.map_err(|e| e.during(operation, id))?;
        self.inner.execute(Call {
            id,
            ..Call::get(operation, path, query)
        })
    }

    fn list<T, L: ListBody<T>>(
        &self,
        operation: &'static str,
        id: Option<&str>,
        path: &str,
        query: Result<query::Pairs, Error>,
    ) -> Result<Page<T>, Error> {
        self.get::<L>(operation, id, path, query).map(L::into_page)
    }

    /// A lazy walk over an offset list: `list` fetches one page.
    fn offset_walk<Q, T>(
        &self,
        operation: &'static str,
        query: &Q,
        list: fn(&Client, &Q) -> Result<Page<T>, Error>,
    ) -> Pages<T>
    where
        Q: OffsetPaging + Send + 'static,
        T: ListRecord + Send + 'static,
    {
        let client = self.clone();
        // 0 would leave the page size to the server; a walk asks for its own.
        let limit = query.page_limit().filter(|l| *l > 0).unwrap_or(WALK_PAGE);
        let start = query.page_offset();
        let query = query.clone();
        let fetch: Fetch<T> = Box::new(move |at| {
            let At::Offset(offset) = at else {
                return Err(Error::pagination("internal: an offset walk got a cursor"));
            };
            list(&client, &query.with_page(offset, limit))
        });
        Pages::offset(
            operation,
            limit,
            start,
            self.inner.settings.max_pages,
            fetch,
        )
    }

    /// A lazy walk over a cursor list: `list` fetches one page. Walks ask
    /// for 100 rows a page unless the query says otherwise.
    fn cursor_walk<Q, T>(
        &self,
        operation: &'static str,
        query: &Q,
        list: impl Fn(&Client, &Q) -> Result<Page<T>, Error> + Send + 'static,
    ) -> Pages<T>
    where
        Q: CursorPaging + Send + 'static,
        T: ListRecord + Send + 'static,
    {
        let client = self.clone();
        let query = match query.cursor_parts().0 {
            Some(_) => query.clone(),
            None => query.with_limit(WALK_PAGE),
        };
        let (limit, direction) = query.cursor_parts();
        let start = query.start_cursor();
        let fetch: Fetch<T> = Box::new(move |at| {
            let At::Cursor(cursor) = at else {
                return Err(Error::pagination("internal: a cursor walk got an offset"));
            };
            list(&client, &query.with_cursor(cursor.map(str::to_owned)))
        });
        Pages::cursor(
            operation,
            limit,
            direction,
            start,
            self.inner.settings.max_pages,
            fetch,
        )
    }

    // --- Aggregator -----------------------------------------------------

    /// Whether the base URL, the key and the aggregator id work together:
    /// reads the aggregator record once (no retries) and says, when it
    /// fails, which of the three to look at. A deploy script or a job's
    /// first step calls it before anything else.
    ///
    /// ```no_run
    /// let client = aggpay::Client::from_env()?;
    /// if let Err(e) = client.check() {
    ///     eprintln!("the setup does not work: {e}");
    ///     std::process::exit(2);
    /// }
    /// # Ok::<(), aggpay::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) saying what to fix
    /// when the server answers that the setup is wrong (the key refused,
    /// the aggregator unknown, an address that does not serve the API);
    /// the error itself when the server could not be reached or failed.
    pub fn check(&self) -> Result<(), Error> {
        let checked = self.inner.execute::<serde::de::IgnoredAny>(Call {
            once: true,
            ..Call::get("check", "", Vec::new())
        });
        let Err(e) = checked else {
            return Ok(());
        };
        let (base, aggregator) = (self.base_url(), self.aggregator_id());
        let fix = match (e.status(), e.kind()) {
            (Some(401 | 403), _) => format!(
                "the key was refused for aggregator {aggregator} at {base} ({e}): the key is wrong, inactive or rotated, or it is not aggregator {aggregator}'s"
            ),
            (Some(404), crate::ErrorKind::Api(_)) => format!(
                "aggregator {aggregator} was not found at {base}: check the aggregator id, and that the base URL ends where the API's /v1 paths begin"
            ),
            (Some(400), crate::ErrorKind::Api(_)) => {
                format!("the server refused aggregator id {aggregator} as malformed ({e})")
            }
            (Some(status), crate::ErrorKind::Status { .. } | crate::ErrorKind::Decode { .. })
                if status < 500 =>
            {
                format!("{base} does not answer as the API does ({e}): check the base URL")
            }
            _ => return Err(e),
        };
        Err(Error::config(fix).during("check", None))
    }

    /// Reads the aggregator record, bank account and keys included.
    ///
    /// `GET /v1/aggregators/{aggregator-id}`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; a 404 ([`Error::is_not_found`]) when the aggregator is unknown.
    pub fn get_aggregator(&self) -> Result<Aggregator, Error> {
        self.get("get_aggregator", None, "", Ok(Vec::new()))
    }

    // --- Access keys ----------------------------------------------------

    /// One page of access keys.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/keys`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a name holding a comma.
    pub fn list_access_keys(&self, query: &KeyQuery) -> Result<Page<AccessKey>, Error> {
        self.list::<_, wire::KeyList>("list_access_keys", None, "/keys", query.pairs())
    }

    /// Every access key, page by page.
    pub fn access_keys(&self, query: &KeyQuery) -> Pages<AccessKey> {
        self.offset_walk("access_keys", query, Client::list_access_keys)
    }

    /// Rotates an access key: the server replaces its secret at once and
    /// returns the key with the new secret. Store it before anything else.
    ///
    /// `PUT /v1/aggregators/{aggregator-id}/keys/{access-key-id}/rotate`
    ///
    /// Never retried automatically: if the answer is lost, a retry would
    /// rotate again and the secret of the first rotation, never seen, would
    /// already be dead. After a transport error, list the keys to learn
    /// whether the rotation happened.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; nothing is retried. When the answer holds the new
    /// secret but another field does not decode, the error is
    /// [`ErrorKind::Decode`](crate::ErrorKind::Decode) and [`Error::rotated_secret`] gives the secret:
    /// the rotation happened, so store it.
    pub fn rotate_access_key(&self, id: &AccessKeyId) -> Result<AccessKey, Error> {
        let path = format!("/keys/{}/rotate", encode_component(id.as_str()));
        self.inner.execute(Call {
            id: Some(id.as_str()),
            method: Method::PUT,
            rotation: true,
            ..Call::get("rotate_access_key", &path, Vec::new())
        })
    }

    // --- Merchants ------------------------------------------------------

    /// One page of aggregator merchants.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/merchants`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a name holding a comma.
    pub fn list_merchants(&self, query: &MerchantQuery) -> Result<Page<AggregatorMerchant>, Error> {
        self.list::<_, wire::MerchantList>("list_merchants", None, "/merchants", query.pairs())
    }

    /// Every aggregator merchant, page by page.
    pub fn merchants(&self, query: &MerchantQuery) -> Pages<AggregatorMerchant> {
        self.offset_walk("merchants", query, Client::list_merchants)
    }

    /// One page of rail merchants.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/rail-merchants`
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn list_rail_merchants(
        &self,
        query: &RailMerchantQuery,
    ) -> Result<Page<RailMerchant>, Error> {
        self.list::<_, wire::RailMerchantList>(
            "list_rail_merchants",
            None,
            "/rail-merchants",
            query.pairs(),
        )
    }

    /// Every rail merchant, page by page.
    pub fn rail_merchants(&self, query: &RailMerchantQuery) -> Pages<RailMerchant> {
        self.offset_walk("rail_merchants", query, Client::list_rail_merchants)
    }

    /// Reads one rail merchant.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/rail-merchants/{rail-merchant-id}`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; a 404 ([`Error::is_not_found`]) for an unknown merchant.
    pub fn get_rail_merchant(&self, id: &RailMerchantId) -> Result<RailMerchant, Error> {
        let path = format!("/rail-merchants/{}", encode_component(id.as_str()));
        self.get(
            "get_rail_merchant",
            Some(id.as_str()),
            &path,
            Ok(Vec::new()),
        )
    }

    // --- QR codes -------------------------------------------------------

    /// One page of QR codes (`STATIC` unless the query says otherwise).
    ///
    /// `GET /v1/aggregators/{aggregator-id}/qrs`
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn list_qr_codes(&self, query: &QrCodeQuery) -> Result<Page<QrCode>, Error> {
        self.list::<_, wire::QrCodeList>("list_qr_codes", None, "/qrs", query.pairs())
    }

    /// Every QR code of the query, page by page.
    pub fn qr_codes(&self, query: &QrCodeQuery) -> Pages<QrCode> {
        self.offset_walk("qr_codes", query, Client::list_qr_codes)
    }

    // --- Payments and refunds -------------------------------------------

    /// Reads the fee and tax breakdown of a payment.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/payments/{payment-id}/charges`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; a 404 ([`Error::is_not_found`]) for an unknown payment.
    pub fn get_payment_charges(&self, id: &PaymentId) -> Result<PaymentCharges, Error> {
        let path = format!("/payments/{}/charges", encode_component(id.as_str()));
        self.get(
            "get_payment_charges",
            Some(id.as_str()),
            &path,
            Ok(Vec::new()),
        )
    }

    /// One page of refunds.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/refunds`
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn list_refunds(&self, query: &RefundQuery) -> Result<Page<Refund>, Error> {
        self.list::<_, wire::RefundList>("list_refunds", None, "/refunds", query.pairs())
    }

    /// Every refund of the query, page by page.
    pub fn refunds(&self, query: &RefundQuery) -> Pages<Refund> {
        self.offset_walk("refunds", query, Client::list_refunds)
    }

    // --- Settlements ----------------------------------------------------

    /// One page of settlement batches.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/settlements/batches`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a status without a filter
    /// integer.
    pub fn list_settlement_batches(
        &self,
        query: &BatchQuery,
    ) -> Result<Page<SettlementBatch>, Error> {
        self.list::<_, wire::BatchList>(
            "list_settlement_batches",
            None,
            "/settlements/batches",
            query.pairs(),
        )
    }

    /// Every settlement batch of the query, page by page (100 a page
    /// unless the query sets a limit).
    pub fn settlement_batches(&self, query: &BatchQuery) -> Pages<SettlementBatch> {
        self.cursor_walk("settlement_batches", query, Client::list_settlement_batches)
    }

    fn batch_rows_path(batch: &BatchToken) -> String {
        format!(
            "/settlements/batches/{}/transactions",
            encode_component(batch.as_str())
        )
    }

    /// One page of a batch's payment and refund transactions.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/settlements/batches/{settlement-batch-id}/transactions`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; a 404 ([`Error::is_not_found`]) for an unknown batch.
    pub fn list_batch_transactions(
        &self,
        batch: &BatchToken,
        query: &TransactionQuery,
    ) -> Result<Page<Transaction>, Error> {
        self.list::<_, wire::TransactionList>(
            "list_batch_transactions",
            Some(batch.as_str()),
            &Self::batch_rows_path(batch),
            query.pairs(false),
        )
    }

    /// Every payment and refund transaction of a batch, page by page (100 a
    /// page unless the query sets a limit). One page is held at a time, so
    /// a million transactions walk in constant memory.
    pub fn batch_transactions(
        &self,
        batch: &BatchToken,
        query: &TransactionQuery,
    ) -> Pages<Transaction> {
        let batch = batch.clone();
        self.cursor_walk("batch_transactions", query, move |c, q| {
            c.list_batch_transactions(&batch, q)
        })
    }

    /// How many payment and refund transactions of a batch match the
    /// query: one request for one row, its count read (the server's
    /// `filtered_count`), nothing walked. Compare it with the rows a walk
    /// kept to verify a final batch.
    ///
    /// ```no_run
    /// use aggpay::{BatchToken, Client, TransactionQuery};
    ///
    /// let client = Client::from_env()?;
    /// let batch = BatchToken::parse("sb_0f8fad5b-d9cb-469f-a165-70867728950e")?;
    /// let rows = client.count_batch_transactions(&batch, &TransactionQuery::new())?;
    /// println!("{batch} holds {rows} transactions");
    /// # Ok::<(), aggpay::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::list_batch_transactions`].
    pub fn count_batch_transactions(
        &self,
        batch: &BatchToken,
        query: &TransactionQuery,
    ) -> Result<u64, Error> {
        self.list_batch_transactions(batch, &query.clone().limit(1))
            .map(|page| page.count)
    }

    /// How many settlement payouts of a batch match the query, as
    /// [`Client::count_batch_transactions`] counts transactions.
    ///
    /// # Errors
    ///
    /// As [`Client::list_batch_payouts`].
    pub fn count_batch_payouts(
        &self,
        batch: &BatchToken,
        query: &TransactionQuery,
    ) -> Result<u64, Error> {
        self.list_batch_payouts(batch, &query.clone().limit(1))
            .map(|page| page.count)
    }

    /// One page of a batch's settlement payouts (`only_settlement_txns=true`).
    ///
    /// Same operation as [`Client::list_batch_transactions`], asking for
    /// the settlement payouts instead of the payments and refunds.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; a 404 ([`Error::is_not_found`]) for an unknown batch.
    pub fn list_batch_payouts(
        &self,
        batch: &BatchToken,
        query: &TransactionQuery,
    ) -> Result<Page<SettlementPayout>, Error> {
        self.list::<_, wire::PayoutList>(
            "list_batch_payouts",
            Some(batch.as_str()),
            &Self::batch_rows_path(batch),
            query.pairs(true),
        )
    }

    /// Every settlement payout of a batch, page by page.
    pub fn batch_payouts(
        &self,
        batch: &BatchToken,
        query: &TransactionQuery,
    ) -> Pages<SettlementPayout> {
        let batch = batch.clone();
        self.cursor_walk("batch_payouts", query, move |c, q| {
            c.list_batch_payouts(&batch, q)
        })
    }

    /// Creates an asynchronous settlement report export.
    ///
    /// `POST /v1/aggregators/{aggregator-id}/settlements/report-exports`
    ///
    /// Never retried automatically: a second POST makes a second export.
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a merchant export without
    /// a merchant or a batch export with one.
    pub fn create_report_export(&self, export: &NewReportExport) -> Result<ReportExport, Error> {
        self.check_export(export)
            .map_err(|e| e.during("create_report_export", None))?;
        let body = serde_json::to_vec(export)
            .map_err(|e| Error::invalid_input("report export", format!("cannot encode: {e}")))?;
        let created: wire::ReportExportCreated = self.inner.execute(Call {
            method: Method::POST,
            body: Some(body),
            ..Call::get(
                "create_report_export",
                "/settlements/report-exports",
                Vec::new(),
            )
        })?;
        Ok(created.report_export)
    }

    /// A merchant export names its merchant; a batch export does not.
    fn check_export(&self, export: &NewReportExport) -> Result<(), Error> {
        match (&export.kind, &export.merchant_id) {
            (ReportKind::Batch, Some(_)) => {
                return Err(Error::invalid_input(
                    "merchant_id",
                    "must be empty for REPORT_KIND_BATCH",
                ));
            }
            (ReportKind::Merchant, None) => {
                return Err(Error::invalid_input(
                    "merchant_id",
                    "is required for REPORT_KIND_MERCHANT",
                ));
            }
            _ => {}
        }
        Ok(())
    }

    // --- Lookups --------------------------------------------------------

    /// Looks account metadata up by IBAN or by a mobile-number alias. It can
    /// reveal an account holder's name: use it only in authenticated,
    /// transaction-bound backend flows.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/account-info`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for an empty IBAN or number.
    pub fn get_account_info(&self, query: &AccountQuery) -> Result<AccountInfo, Error> {
        self.get("get_account_info", None, "/account-info", query.pairs())
    }

    /// Fetches account title metadata for a till-code alias. Same usage
    /// caution as [`Client::get_account_info`].
    ///
    /// `GET /v1/aggregators/{aggregator-id}/title-fetch/alias`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for an empty till code.
    pub fn fetch_till_code_title(&self, query: &TillCodeQuery) -> Result<AccountInfo, Error> {
        self.get(
            "fetch_till_code_title",
            None,
            "/title-fetch/alias",
            query.pairs(),
        )
    }

    /// Reads one alias.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/alias/{alias-id}`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; a 404 ([`Error::is_not_found`]) for an unknown alias.
    pub fn get_alias(&self, id: &AliasId) -> Result<Alias, Error> {
        let path = format!("/alias/{}", encode_component(id.as_str()));
        self.get("get_alias", Some(id.as_str()), &path, Ok(Vec::new()))
    }

    // --- Ledger and webhooks --------------------------------------------

    /// Reads the aggregator ledger account.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/ledger/accounts`
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn get_ledger_account(&self) -> Result<LedgerAccount, Error> {
        self.get(
            "get_ledger_account",
            None,
            "/ledger/accounts",
            Ok(Vec::new()),
        )
    }

    /// One page of webhook endpoints.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/webhooks`
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn list_webhooks(&self, query: &WebhookQuery) -> Result<Page<WebhookEndpoint>, Error> {
        self.list::<_, wire::WebhookList>("list_webhooks", None, "/webhooks", query.pairs())
    }

    /// Every webhook endpoint, page by page.
    pub fn webhooks(&self, query: &WebhookQuery) -> Pages<WebhookEndpoint> {
        self.offset_walk("webhooks", query, Client::list_webhooks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_is_send_sync_and_cheap_to_clone() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<Client>();
        fn assert_send<T: Send>() {}
        assert_send::<Pages<Transaction>>();
    }

    #[test]
    fn debug_hides_the_secret() {
        let client = Client::builder(
            "http://127.0.0.1:1",
            "agg_1".parse().unwrap(),
            "super-secret-value",
        )
        .build()
        .unwrap();
        let text = format!("{client:?} {client:#?}");
        assert!(!text.contains("super-secret-value"), "{text}");
        assert!(text.contains("<redacted>"));
    }
}
