//! The client and its 17 operations.

use std::fmt;
use std::sync::Arc;

use ureq::http::Method;

use crate::config::ClientBuilder;
use crate::error::Error;
use crate::paginate::{Fetch, ListRecord, Page, PageNext, Pages, WALK_PAGE};
use crate::query::{
    AccountQuery, BatchQuery, CursorPaging, KeyQuery, MerchantQuery, OffsetPaging, QrCodeQuery,
    RailMerchantQuery, RefundQuery, TransactionQuery, WebhookQuery,
};
use crate::transport::Call;
use crate::*;

/// The environment variables [`Client::from_env`] reads.
pub const ENV_BASE_URL: &str = "AGGPAY_BASE_URL";
/// See [`ENV_BASE_URL`].
pub const ENV_AGGREGATOR_ID: &str = "AGGPAY_AGGREGATOR_ID";
/// See [`ENV_BASE_URL`].
pub const ENV_SECRET_KEY: &str = "AGGPAY_SECRET_KEY";

/// A blocking client of one aggregator. Cheap to clone (one `Arc`), `Send`
/// and `Sync`: share one across threads; its connections are pooled.
///
/// ```no_run
/// use aggpay::{BatchQuery, BatchStatus, Client};
///
/// let client = Client::from_env()?;
/// for batch in client.settlement_batches(BatchQuery::new().status(BatchStatus::Completed)) {
///     let batch = batch?;
///     println!("{} {}", batch.token, batch.date);
/// }
/// # Ok::<(), aggpay::Error>(())
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) agent: ureq::Agent,
    pub(crate) base_url: String,
    pub(crate) aggregator_id: AggregatorId,
    pub(crate) secret: Secret,
    pub(crate) config: ClientBuilder,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base_url)
            .field("aggregator_id", &self.inner.aggregator_id)
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// Percent-encodes one path segment. Typed ids are URL-safe already; this
/// keeps a path intact whatever a future id type allows.
fn segment(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Client {
    /// Starts building a client. `base_url` includes the service's own path
    /// prefix; a trailing slash or none both work.
    pub fn builder(
        base_url: impl Into<String>,
        aggregator_id: impl Into<String>,
        secret_key: impl Into<Secret>,
    ) -> ClientBuilder {
        ClientBuilder::new(base_url, aggregator_id, secret_key)
    }

    /// A client configured from `AGGPAY_BASE_URL`, `AGGPAY_AGGREGATOR_ID` and
    /// `AGGPAY_SECRET_KEY`, with default settings.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the first missing variable, or the errors of
    /// [`ClientBuilder::build`].
    pub fn from_env() -> Result<Client, Error> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Client, Error> {
        let var = |name: &str| {
            lookup(name)
                .filter(|v| !v.trim().is_empty())
                .ok_or_else(|| Error::Config(format!("environment variable {name} is not set")))
        };
        let base = var(ENV_BASE_URL)?;
        let aggregator = var(ENV_AGGREGATOR_ID)?;
        let secret = Secret::new(var(ENV_SECRET_KEY)?);
        Client::builder(base, aggregator, secret).build()
    }

    pub(crate) fn from_parts(
        base_url: String,
        aggregator_id: AggregatorId,
        config: ClientBuilder,
    ) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(config.timeout_connect))
            .timeout_global(Some(config.timeout))
            .user_agent(concat!(
                "aggpay/",
                env!("CARGO_PKG_VERSION"),
                " (rust; ureq)"
            ))
            .build()
            .new_agent();
        let secret = config.secret.clone();
        Self {
            inner: Arc::new(Inner {
                agent,
                base_url,
                aggregator_id,
                secret,
                config,
            }),
        }
    }

    /// The base URL requests go to, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The aggregator every request is scoped to.
    pub fn aggregator_id(&self) -> &AggregatorId {
        &self.inner.aggregator_id
    }

    /// A lazy walk over an offset list: `list` fetches a page, `split`
    /// takes its rows and count.
    fn offset_walk<Q, L, T>(
        &self,
        query: Q,
        list: fn(&Client, &Q) -> Result<L, Error>,
        split: fn(L) -> (Vec<T>, u64),
    ) -> Pages<T>
    where
        Q: OffsetPaging + Send + 'static,
        L: 'static,
        T: ListRecord + Send + 'static,
    {
        let client = self.clone();
        let (limit, start) = (query.page_limit(), query.page_offset());
        let fetch: Fetch<T> = Box::new(move |_, offset| {
            let (rows, count) = split(list(
                &client,
                &query.with_page(offset, limit.unwrap_or(WALK_PAGE)),
            )?);
            Ok(Page {
                rows,
                next: PageNext::Count(count),
            })
        });
        Pages::offset(limit, start, self.inner.config.max_pages, fetch)
    }

    /// A lazy walk over a cursor list: `page` fetches one page of the query
    /// and returns its rows and `next_cursor`.
    fn cursor_walk<Q, T>(
        &self,
        query: Q,
        page: impl Fn(&Client, &Q) -> Result<(Vec<T>, String), Error> + Send + 'static,
    ) -> Pages<T>
    where
        Q: CursorPaging + Send + 'static,
        T: ListRecord + Send + 'static,
    {
        let client = self.clone();
        let (limit, direction) = query.cursor_parts();
        let start = query.start_cursor();
        let fetch: Fetch<T> = Box::new(move |cursor, _| {
            let (rows, next) = page(&client, &query.with_cursor(cursor.map(str::to_owned)))?;
            Ok(Page {
                rows,
                next: PageNext::Cursor(next),
            })
        });
        Pages::cursor(limit, direction, start, self.inner.config.max_pages, fetch)
    }

    fn get<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        query: query::Pairs,
    ) -> Result<T, Error> {
        self.inner.execute(Call {
            method: Method::GET,
            path,
            query,
            body: None,
        })
    }

    // --- Aggregator -----------------------------------------------------

    /// Reads the aggregator record, bank account and keys included.
    ///
    /// `GET /v1/aggregators/{aggregator-id}`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::Api`] with 404 when the aggregator is unknown.
    pub fn get_aggregator(&self) -> Result<Aggregator, Error> {
        self.get("", Vec::new())
    }

    // --- Access keys ----------------------------------------------------

    /// One page of access keys.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/keys`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::InvalidInput`] for a name holding a comma.
    pub fn list_access_keys(&self, query: &KeyQuery) -> Result<AccessKeyList, Error> {
        self.get("/keys", query.pairs()?)
    }

    /// Every access key, page by page.
    pub fn access_keys(&self, query: KeyQuery) -> Pages<AccessKey> {
        self.offset_walk(query, Client::list_access_keys, |p| (p.keys, p.count.0))
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
    /// Any [`Error`]; nothing is retried.
    pub fn rotate_access_key(&self, id: &AccessKeyId) -> Result<AccessKey, Error> {
        let path = format!("/keys/{}/rotate", segment(id.as_str()));
        self.inner.execute(Call {
            method: Method::PUT,
            path: &path,
            query: Vec::new(),
            body: None,
        })
    }

    // --- Merchants ------------------------------------------------------

    /// One page of aggregator merchants.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/merchants`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::InvalidInput`] for a name holding a comma.
    pub fn list_merchants(&self, query: &MerchantQuery) -> Result<MerchantList, Error> {
        self.get("/merchants", query.pairs()?)
    }

    /// Every aggregator merchant, page by page.
    pub fn merchants(&self, query: MerchantQuery) -> Pages<AggregatorMerchant> {
        self.offset_walk(query, Client::list_merchants, |p| (p.merchants, p.count.0))
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
    ) -> Result<RailMerchantList, Error> {
        self.get("/rail-merchants", query.pairs()?)
    }

    /// Every rail merchant, page by page.
    pub fn rail_merchants(&self, query: RailMerchantQuery) -> Pages<RailMerchant> {
        self.offset_walk(query, Client::list_rail_merchants, |p| {
            (p.merchants, p.count.0)
        })
    }

    /// Reads one rail merchant.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/rail-merchants/{rail-merchant-id}`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::Api`] with 404 for an unknown merchant.
    pub fn get_rail_merchant(&self, id: &RailMerchantId) -> Result<RailMerchant, Error> {
        self.get(
            &format!("/rail-merchants/{}", segment(id.as_str())),
            Vec::new(),
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
    pub fn list_qr_codes(&self, query: &QrCodeQuery) -> Result<QrCodeList, Error> {
        self.get("/qrs", query.pairs()?)
    }

    /// Every QR code of the query, page by page.
    pub fn qr_codes(&self, query: QrCodeQuery) -> Pages<QrCode> {
        self.offset_walk(query, Client::list_qr_codes, |p| (p.qr_codes, p.count.0))
    }

    // --- Payments and refunds -------------------------------------------

    /// Reads the fee and tax breakdown of a payment.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/payments/{payment-id}/charges`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::Api`] with 404 for an unknown payment.
    pub fn get_payment_charges(&self, id: &PaymentId) -> Result<PaymentCharges, Error> {
        self.get(
            &format!("/payments/{}/charges", segment(id.as_str())),
            Vec::new(),
        )
    }

    /// One page of refunds.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/refunds`
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn list_refunds(&self, query: &RefundQuery) -> Result<RefundList, Error> {
        self.get("/refunds", query.pairs()?)
    }

    /// Every refund of the query, page by page.
    pub fn refunds(&self, query: RefundQuery) -> Pages<Refund> {
        self.offset_walk(query, Client::list_refunds, |p| (p.keys, p.count.0))
    }

    // --- Settlements ----------------------------------------------------

    /// One page of settlement batches.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/settlements/batches`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::InvalidInput`] for a status without a filter
    /// integer.
    pub fn list_settlement_batches(&self, query: &BatchQuery) -> Result<BatchList, Error> {
        self.get("/settlements/batches", query.pairs()?)
    }

    /// Every settlement batch of the query, page by page.
    pub fn settlement_batches(&self, query: BatchQuery) -> Pages<SettlementBatch> {
        self.cursor_walk(query, |c, q| {
            let page = c.list_settlement_batches(q)?;
            Ok((page.batches, page.next_cursor))
        })
    }

    /// One page of a batch's transactions, or of its payouts with
    /// `only_settlement_txns(true)`.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/settlements/batches/{settlement-batch-id}/transactions`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::Api`] with 404 for an unknown batch.
    pub fn list_batch_transactions(
        &self,
        batch: &BatchToken,
        query: &TransactionQuery,
    ) -> Result<BatchTransactions, Error> {
        let path = format!(
            "/settlements/batches/{}/transactions",
            segment(batch.as_str())
        );
        self.get(&path, query.pairs()?)
    }

    /// Every payment and refund transaction of a batch, page by page. One
    /// page is held at a time, so a million transactions walk in constant
    /// memory. Set a `limit` of 100 for the fewest requests.
    pub fn batch_transactions(
        &self,
        batch: BatchToken,
        query: TransactionQuery,
    ) -> Pages<Transaction> {
        self.cursor_walk(query.only_settlement_txns(false), move |c, q| {
            let page = c.list_batch_transactions(&batch, q)?;
            Ok((page.transactions, page.next_cursor))
        })
    }

    /// Every settlement payout of a batch, page by page.
    pub fn batch_payouts(
        &self,
        batch: BatchToken,
        query: TransactionQuery,
    ) -> Pages<SettlementPayout> {
        self.cursor_walk(query.only_settlement_txns(true), move |c, q| {
            let page = c.list_batch_transactions(&batch, q)?;
            Ok((page.settlement_transactions, page.next_cursor))
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
    /// Any [`Error`]; [`Error::InvalidInput`] for a merchant export without
    /// a merchant or a batch export with one.
    pub fn create_report_export(&self, export: &NewReportExport) -> Result<ReportExport, Error> {
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
        let body = serde_json::to_vec(export)
            .map_err(|e| Error::invalid_input("report export", format!("cannot encode: {e}")))?;
        let created: ReportExportCreated = self.inner.execute(Call {
            method: Method::POST,
            path: "/settlements/report-exports",
            query: Vec::new(),
            body: Some(body),
        })?;
        Ok(created.report_export)
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
    /// Any [`Error`]; [`Error::InvalidInput`] for an empty IBAN or number.
    pub fn get_account_info(&self, query: &AccountQuery) -> Result<AccountInfo, Error> {
        self.get("/account-info", query.pairs()?)
    }

    /// Fetches account title metadata for a till-code alias. Same usage
    /// caution as [`Client::get_account_info`].
    ///
    /// `GET /v1/aggregators/{aggregator-id}/title-fetch/alias`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::InvalidInput`] for an empty till code.
    pub fn fetch_till_code_title(
        &self,
        till_code: &str,
        with_title: bool,
    ) -> Result<AccountInfo, Error> {
        if till_code.is_empty() {
            return Err(Error::invalid_input("till code", "is empty"));
        }
        let query = vec![
            ("alias_type", "TILL_CODE".to_owned()),
            ("alias_value", till_code.to_owned()),
            ("with_title_fetch", with_title.to_string()),
        ];
        self.get("/title-fetch/alias", query)
    }

    /// Reads one alias.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/alias/{alias-id}`
    ///
    /// # Errors
    ///
    /// Any [`Error`]; [`Error::Api`] with 404 for an unknown alias.
    pub fn get_alias(&self, id: &AliasId) -> Result<Alias, Error> {
        self.get(&format!("/alias/{}", segment(id.as_str())), Vec::new())
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
        self.get("/ledger/accounts", Vec::new())
    }

    /// One page of webhook endpoints.
    ///
    /// `GET /v1/aggregators/{aggregator-id}/webhooks`
    ///
    /// # Errors
    ///
    /// Any [`Error`].
    pub fn list_webhooks(&self, query: &WebhookQuery) -> Result<WebhookList, Error> {
        self.get("/webhooks", query.pairs()?)
    }

    /// Every webhook endpoint, page by page.
    pub fn webhooks(&self, query: WebhookQuery) -> Pages<WebhookEndpoint> {
        self.offset_walk(query, Client::list_webhooks, |p| (p.endpoints, p.count.0))
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
    fn from_env_names_the_missing_variable() {
        let vars = |present: &'static [&'static str]| {
            move |name: &str| {
                present
                    .contains(&name)
                    .then(|| format!("{}_value", name.to_lowercase()))
            }
        };
        let err = Client::from_vars(vars(&[ENV_BASE_URL, ENV_AGGREGATOR_ID])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "configure the client: environment variable AGGPAY_SECRET_KEY is not set"
        );
        let err = Client::from_vars(vars(&[])).unwrap_err();
        assert!(err.to_string().contains(ENV_BASE_URL));
        let ok = Client::from_vars(|name| {
            Some(match name {
                ENV_BASE_URL => "http://127.0.0.1:9/api/".to_owned(),
                ENV_AGGREGATOR_ID => "agg_1".to_owned(),
                _ => "k".to_owned(),
            })
        })
        .unwrap();
        assert_eq!(ok.base_url(), "http://127.0.0.1:9/api");
    }

    #[test]
    fn segments_are_escaped() {
        assert_eq!(segment("pm_a-b.c~d"), "pm_a-b.c~d");
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn debug_hides_the_secret() {
        let client = Client::builder("http://127.0.0.1:1", "agg_1", "super-secret-value")
            .build()
            .unwrap();
        let text = format!("{client:?} {client:#?}");
        assert!(!text.contains("super-secret-value"), "{text}");
        assert!(text.contains("<redacted>"));
    }
}
