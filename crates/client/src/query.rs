//! The query of every list operation, with WIRE.md's wire names.
//!
//! Each query is a value built with setters; `pairs` turns it into the
//! query string, refusing what cannot be sent faithfully (a comma inside a
//! comma-separated item, an unknown batch status) before any request.

use jiff::Timestamp;

use crate::error::Error;
use crate::{
    AggregatorMerchantId, BatchStatus, BatchToken, PaymentId, QrType, RailMerchantStatus,
    RefundStatus, RefundToken,
};

/// Query parameters as sent: name and already-formatted value.
pub(crate) type Pairs = Vec<(&'static str, String)>;

/// Sort direction of the cursor lists and the refund list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Direction {
    /// Ascending numeric id.
    Asc,
    /// Descending numeric id (the server's default).
    #[default]
    Desc,
}

impl Direction {
    /// The wire value, `ASC` or `DESC`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Asc => "ASC",
            Direction::Desc => "DESC",
        }
    }
}

fn push_opt(pairs: &mut Pairs, name: &'static str, value: Option<impl ToString>) {
    if let Some(v) = value {
        pairs.push((name, v.to_string()));
    }
}

/// Joins items with commas; an item holding a comma could not be told apart.
fn comma_list<'a>(
    pairs: &mut Pairs,
    name: &'static str,
    items: impl IntoIterator<Item = &'a str>,
) -> Result<(), Error> {
    let items: Vec<&str> = items.into_iter().collect();
    if items.is_empty() {
        return Ok(());
    }
    if let Some(bad) = items.iter().find(|i| i.contains(',')) {
        return Err(Error::invalid_input(
            name,
            format!(
                "`{}` contains a comma, which this comma-separated filter cannot carry",
                crate::text::excerpt(bad, 64)
            ),
        ));
    }
    pairs.push((name, items.join(",")));
    Ok(())
}

/// What a walk over an offset list needs of its query.
pub(crate) trait OffsetPaging: Clone {
    /// The page size asked for, if any.
    fn page_limit(&self) -> Option<u32>;
    /// Where the walk starts.
    fn page_offset(&self) -> u64;
    /// The same query at another page.
    fn with_page(&self, offset: u64, limit: u32) -> Self;
}

/// What a walk over a cursor list needs of its query.
pub(crate) trait CursorPaging: Clone {
    /// Page size and direction.
    fn cursor_parts(&self) -> (Option<u32>, Direction);
    /// The cursor the walk starts after.
    fn start_cursor(&self) -> Option<String>;
    /// The same query at another cursor.
    fn with_cursor(&self, cursor: Option<String>) -> Self;
    /// The same query with this page size.
    fn with_limit(&self, limit: u32) -> Self;
}

macro_rules! offset_paging {
    ($name:ident) => {
        impl $name {
            /// Page size.
            pub fn limit(mut self, limit: u32) -> Self {
                self.limit = Some(limit);
                self
            }

            /// Records skipped before the page.
            pub fn offset(mut self, offset: u64) -> Self {
                self.offset = Some(offset);
                self
            }
        }

        impl OffsetPaging for $name {
            fn page_limit(&self) -> Option<u32> {
                self.limit
            }

            fn page_offset(&self) -> u64 {
                self.offset.unwrap_or(0)
            }

            fn with_page(&self, offset: u64, limit: u32) -> Self {
                self.clone().offset(offset).limit(limit)
            }
        }
    };
}

macro_rules! cursor_paging {
    ($name:ident) => {
        impl $name {
            /// Continues after a previous page's `next_cursor`.
            pub fn cursor(mut self, cursor: impl Into<String>) -> Self {
                self.cursor = Some(cursor.into());
                self
            }

            /// Page size: 0 means the default of 30; the server allows at most 100.
            pub fn limit(mut self, limit: u32) -> Self {
                self.limit = Some(limit);
                self
            }

            /// Sort direction on the numeric id.
            pub fn direction(mut self, direction: Direction) -> Self {
                self.direction = Some(direction);
                self
            }
        }

        impl CursorPaging for $name {
            fn cursor_parts(&self) -> (Option<u32>, Direction) {
                (self.limit, self.direction.unwrap_or_default())
            }

            fn start_cursor(&self) -> Option<String> {
                self.cursor.clone()
            }

            fn with_cursor(&self, cursor: Option<String>) -> Self {
                Self {
                    cursor,
                    ..self.clone()
                }
            }

            fn with_limit(&self, limit: u32) -> Self {
                self.clone().limit(limit)
            }
        }
    };
}

/// Query of the access key list (`limit`, `offset`, `names`, `is_active`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyQuery {
    limit: Option<u32>,
    offset: Option<u64>,
    names: Vec<String>,
    is_active: Option<bool>,
}

offset_paging!(KeyQuery);

impl KeyQuery {
    /// All keys, the server's page size.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps keys whose name contains one of these fragments.
    pub fn names<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Keeps active (`true`) or inactive (`false`) keys.
    pub fn is_active(mut self, active: bool) -> Self {
        self.is_active = Some(active);
        self
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(&mut p, "limit", self.limit);
        push_opt(&mut p, "offset", self.offset);
        comma_list(&mut p, "names", self.names.iter().map(String::as_str))?;
        push_opt(&mut p, "is_active", self.is_active);
        Ok(p)
    }
}

/// Query of the aggregator merchant list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MerchantQuery {
    limit: Option<u32>,
    offset: Option<u64>,
    enabled: Option<bool>,
    identifiers: Vec<AggregatorMerchantId>,
    names: Vec<String>,
}

offset_paging!(MerchantQuery);

impl MerchantQuery {
    /// All merchants, the server's page size.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps enabled (`true`) or disabled (`false`) merchants.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = Some(enabled);
        self
    }

    /// Keeps these merchants.
    pub fn identifiers(mut self, ids: impl IntoIterator<Item = AggregatorMerchantId>) -> Self {
        self.identifiers = ids.into_iter().collect();
        self
    }

    /// Keeps merchants with these names.
    pub fn names<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.names = names.into_iter().map(Into::into).collect();
        self
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(&mut p, "limit", self.limit);
        push_opt(&mut p, "offset", self.offset);
        push_opt(&mut p, "enabled", self.enabled);
        comma_list(
            &mut p,
            "merchant_identifiers",
            self.identifiers.iter().map(|i| i.as_str()),
        )?;
        comma_list(&mut p, "names", self.names.iter().map(String::as_str))?;
        Ok(p)
    }
}

/// Query of the rail merchant list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RailMerchantQuery {
    limit: Option<u32>,
    offset: Option<u64>,
    status: Option<RailMerchantStatus>,
    name: Option<String>,
}

offset_paging!(RailMerchantQuery);

impl RailMerchantQuery {
    /// All rail merchants, the server's page size.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps merchants of this onboarding status.
    pub fn status(mut self, status: RailMerchantStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Keeps merchants matching this name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(&mut p, "limit", self.limit);
        push_opt(&mut p, "offset", self.offset);
        if let Some(status) = &self.status {
            if status.as_str().is_empty() {
                return Err(Error::invalid_input(
                    "status",
                    "the empty status is not a filter value",
                ));
            }
            p.push(("status", status.as_str().to_owned()));
        }
        push_opt(&mut p, "name", self.name.as_ref());
        Ok(p)
    }
}

/// Query of the QR code list. The server lists `STATIC` codes unless told
/// otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QrCodeQuery {
    limit: Option<u32>,
    offset: Option<u64>,
    aggregator_merchant_id: Option<AggregatorMerchantId>,
    qr_type: Option<QrType>,
}

offset_paging!(QrCodeQuery);

impl QrCodeQuery {
    /// Static codes of every merchant, the server's page size.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps one merchant's codes.
    pub fn aggregator_merchant_id(mut self, id: AggregatorMerchantId) -> Self {
        self.aggregator_merchant_id = Some(id);
        self
    }

    /// `STATIC` (the server's default) or `DYNAMIC`.
    pub fn qr_type(mut self, qr_type: QrType) -> Self {
        self.qr_type = Some(qr_type);
        self
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(
            &mut p,
            "aggregator_merchant_id",
            self.aggregator_merchant_id.as_ref(),
        );
        push_opt(&mut p, "type", self.qr_type.as_ref());
        push_opt(&mut p, "limit", self.limit);
        push_opt(&mut p, "offset", self.offset);
        Ok(p)
    }
}

/// Query of the refund list. Every identifier filter takes several values
/// (sent as repeated keys).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefundQuery {
    limit: Option<u32>,
    offset: Option<u64>,
    payment_ids: Vec<PaymentId>,
    statuses: Vec<RefundStatus>,
    trace_references: Vec<String>,
    msg_ids: Vec<String>,
    return_ids: Vec<String>,
    request_ids: Vec<String>,
    refund_ids: Vec<RefundToken>,
    created_from: Option<Timestamp>,
    created_to: Option<Timestamp>,
    direction: Option<Direction>,
}

offset_paging!(RefundQuery);

macro_rules! many {
    ($(#[$doc:meta])* $field:ident) => {
        $(#[$doc])*
        pub fn $field<I: IntoIterator<Item = S>, S: Into<String>>(mut self, values: I) -> Self {
            self.$field = values.into_iter().map(Into::into).collect();
            self
        }
    };
}

impl RefundQuery {
    /// All refunds, the server's page size and order.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps refunds of these payments.
    pub fn payment_ids(mut self, ids: impl IntoIterator<Item = PaymentId>) -> Self {
        self.payment_ids = ids.into_iter().collect();
        self
    }

    /// Keeps refunds in these states.
    pub fn statuses(mut self, statuses: impl IntoIterator<Item = RefundStatus>) -> Self {
        self.statuses = statuses.into_iter().collect();
        self
    }

    many!(
        /// Keeps refunds with these rail trace references.
        trace_references
    );
    many!(
        /// Keeps refunds with these rail message ids.
        msg_ids
    );
    many!(
        /// Keeps refunds with these return ids.
        return_ids
    );
    many!(
        /// Keeps refunds with these client request ids.
        request_ids
    );
    /// Keeps refunds with these tokens.
    pub fn refund_ids(mut self, tokens: impl IntoIterator<Item = RefundToken>) -> Self {
        self.refund_ids = tokens.into_iter().collect();
        self
    }

    /// Keeps refunds created at or after this instant (sent in whole seconds).
    pub fn created_from(mut self, at: Timestamp) -> Self {
        self.created_from = Some(at);
        self
    }

    /// Keeps refunds created at or before this instant (sent in whole seconds).
    pub fn created_to(mut self, at: Timestamp) -> Self {
        self.created_to = Some(at);
        self
    }

    /// Sort direction on creation time.
    pub fn direction(mut self, direction: Direction) -> Self {
        self.direction = Some(direction);
        self
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(&mut p, "limit", self.limit);
        push_opt(&mut p, "offset", self.offset);
        p.extend(
            self.payment_ids
                .iter()
                .map(|v| ("payment_id", v.to_string())),
        );
        p.extend(self.statuses.iter().map(|v| ("status", v.to_string())));
        for (name, values) in [
            ("trace_reference", &self.trace_references),
            ("msg_id", &self.msg_ids),
            ("return_id", &self.return_ids),
            ("request_id", &self.request_ids),
        ] {
            p.extend(values.iter().map(|v| (name, v.clone())));
        }
        p.extend(
            self.refund_ids
                .iter()
                .map(|v| ("refund_id", v.as_str().to_owned())),
        );
        push_opt(
            &mut p,
            "start_date",
            self.created_from.map(|t| t.as_second()),
        );
        push_opt(&mut p, "end_date", self.created_to.map(|t| t.as_second()));
        push_opt(&mut p, "direction", self.direction.map(Direction::as_str));
        Ok(p)
    }
}

/// Query of the webhook endpoint list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookQuery {
    limit: Option<u32>,
    offset: Option<u64>,
}

offset_paging!(WebhookQuery);

impl WebhookQuery {
    /// All endpoints, the server's page size.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(&mut p, "limit", self.limit);
        push_opt(&mut p, "offset", self.offset);
        Ok(p)
    }
}

/// Query of the settlement batch list (a cursor list).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchQuery {
    cursor: Option<String>,
    limit: Option<u32>,
    direction: Option<Direction>,
    batch_id: Option<BatchToken>,
    status: Option<BatchStatus>,
}

cursor_paging!(BatchQuery);

impl BatchQuery {
    /// The first page, newest first, 30 rows.
    pub fn new() -> Self {
        Self::default()
    }

    /// Restricts the list to one batch.
    pub fn batch_id(mut self, token: BatchToken) -> Self {
        self.batch_id = Some(token);
        self
    }

    /// Keeps batches of this status (sent as its integer).
    pub fn status(mut self, status: BatchStatus) -> Self {
        self.status = Some(status);
        self
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(&mut p, "cursor", self.cursor.as_ref());
        push_opt(&mut p, "limit", self.limit);
        push_opt(&mut p, "direction", self.direction.map(Direction::as_str));
        push_opt(&mut p, "batch_id", self.batch_id.as_ref());
        if let Some(status) = &self.status {
            let value = status.filter_value().ok_or_else(|| {
                Error::invalid_input(
                    "status",
                    format!(
                        "`{}` has no filter integer",
                        crate::text::excerpt(status.as_str(), 64)
                    ),
                )
            })?;
            p.push(("status", value.to_string()));
        }
        Ok(p)
    }
}

/// Query of a batch's rows (a cursor list): its transactions, or its
/// payouts. Which of the two is the method's choice
/// ([`Client::list_batch_transactions`], [`Client::list_batch_payouts`]).
///
/// [`Client::list_batch_transactions`]: crate::Client::list_batch_transactions
/// [`Client::list_batch_payouts`]: crate::Client::list_batch_payouts
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransactionQuery {
    cursor: Option<String>,
    limit: Option<u32>,
    direction: Option<Direction>,
}

cursor_paging!(TransactionQuery);

impl TransactionQuery {
    /// The first page, newest first, 30 rows (a walk asks for 100).
    pub fn new() -> Self {
        Self::default()
    }

    /// The query string; `payouts` sends `only_settlement_txns=true`.
    pub(crate) fn pairs(&self, payouts: bool) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(&mut p, "cursor", self.cursor.as_ref());
        push_opt(&mut p, "limit", self.limit);
        push_opt(&mut p, "direction", self.direction.map(Direction::as_str));
        if payouts {
            p.push(("only_settlement_txns", "true".to_owned()));
        }
        Ok(p)
    }
}

/// Query of the title fetch by till-code alias (`alias_type=TILL_CODE`).
///
/// ```
/// use aggpay::TillCodeQuery;
///
/// let query = TillCodeQuery::new("100000001").with_title(true);
/// # let _ = query;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TillCodeQuery {
    till_code: String,
    with_title: Option<bool>,
}

impl TillCodeQuery {
    /// Looks up this till code.
    pub fn new(till_code: impl Into<String>) -> Self {
        Self {
            till_code: till_code.into(),
            with_title: None,
        }
    }

    /// Asks for the account title details.
    pub fn with_title(mut self, with_title: bool) -> Self {
        self.with_title = Some(with_title);
        self
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        if self.till_code.is_empty() {
            return Err(Error::invalid_input("till code", "is empty"));
        }
        let mut p = vec![
            ("alias_type", "TILL_CODE".to_owned()),
            ("alias_value", self.till_code.clone()),
        ];
        push_opt(&mut p, "with_title_fetch", self.with_title);
        Ok(p)
    }
}

/// Query of the account lookup: by IBAN, or by a mobile-number alias.
///
/// ```
/// use aggpay::AccountQuery;
///
/// let by_iban = AccountQuery::iban("PK36MEZN0000000000000001").with_title(true);
/// let by_mobile = AccountQuery::mobile("03001234567");
/// # let _ = (by_iban, by_mobile);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountQuery {
    iban: Option<String>,
    mobile: Option<String>,
    with_title: Option<bool>,
}

impl AccountQuery {
    /// Looks an account up by IBAN.
    pub fn iban(iban: impl Into<String>) -> Self {
        Self {
            iban: Some(iban.into()),
            mobile: None,
            with_title: None,
        }
    }

    /// Looks an account up by a mobile-number alias (`alias_type=MOBILE`).
    pub fn mobile(number: impl Into<String>) -> Self {
        Self {
            iban: None,
            mobile: Some(number.into()),
            with_title: None,
        }
    }

    /// Asks for the account title details.
    pub fn with_title(mut self, with_title: bool) -> Self {
        self.with_title = Some(with_title);
        self
    }

    pub(crate) fn pairs(&self) -> Result<Pairs, Error> {
        let mut p = Pairs::new();
        push_opt(&mut p, "iban", self.iban.as_ref());
        if let Some(mobile) = &self.mobile {
            p.push(("alias_type", "MOBILE".to_owned()));
            p.push(("alias_value", mobile.clone()));
        }
        push_opt(&mut p, "with_title_fetch", self.with_title);
        if p.iter().any(|(_, v)| v.is_empty()) {
            return Err(Error::invalid_input(
                "account lookup",
                "the IBAN or mobile number is empty",
            ));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(p: Pairs) -> String {
        p.into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&")
    }

    #[test]
    fn wire_names_and_values() {
        assert_eq!(
            wire(
                KeyQuery::new()
                    .limit(5)
                    .offset(10)
                    .names(["a", "b"])
                    .is_active(false)
                    .pairs()
                    .unwrap()
            ),
            "limit=5&offset=10&names=a,b&is_active=false"
        );
        let am = AggregatorMerchantId::parse("am_1").unwrap();
        assert_eq!(
            wire(
                MerchantQuery::new()
                    .enabled(true)
                    .identifiers([am.clone(), am])
                    .names(["X Y"])
                    .pairs()
                    .unwrap()
            ),
            "enabled=true&merchant_identifiers=am_1,am_1&names=X Y"
        );
        assert!(KeyQuery::new().names(["a,b"]).pairs().is_err());
        assert_eq!(
            wire(
                BatchQuery::new()
                    .status(BatchStatus::Failed)
                    .direction(Direction::Asc)
                    .cursor("12")
                    .pairs()
                    .unwrap()
            ),
            "cursor=12&direction=ASC&status=3"
        );
        assert!(
            BatchQuery::new()
                .status(BatchStatus::from("BATCH_NEW"))
                .pairs()
                .is_err()
        );
        assert_eq!(
            wire(
                RefundQuery::new()
                    .statuses([RefundStatus::Completed, RefundStatus::Failed])
                    .msg_ids(["m"])
                    .created_from(Timestamp::from_second(100).unwrap())
                    .direction(Direction::Asc)
                    .pairs()
                    .unwrap()
            ),
            "status=R_COMPLETED&status=R_FAILED&msg_id=m&start_date=100&direction=ASC"
        );
        assert_eq!(
            wire(TransactionQuery::new().limit(100).pairs(true).unwrap()),
            "limit=100&only_settlement_txns=true"
        );
        assert_eq!(
            wire(TransactionQuery::new().cursor("9").pairs(false).unwrap()),
            "cursor=9"
        );
        assert_eq!(
            wire(TillCodeQuery::new("7").with_title(false).pairs().unwrap()),
            "alias_type=TILL_CODE&alias_value=7&with_title_fetch=false"
        );
        assert!(TillCodeQuery::new("").pairs().is_err());
        assert_eq!(
            wire(QrCodeQuery::new().qr_type(QrType::Dynamic).pairs().unwrap()),
            "type=DYNAMIC"
        );
        assert_eq!(
            wire(
                AccountQuery::mobile("0300")
                    .with_title(true)
                    .pairs()
                    .unwrap()
            ),
            "alias_type=MOBILE&alias_value=0300&with_title_fetch=true"
        );
        assert!(AccountQuery::iban("").pairs().is_err());
        assert!(
            RailMerchantQuery::new()
                .status(RailMerchantStatus::Unset)
                .pairs()
                .is_err()
        );
    }
}
