//! Named faults: each breaks one thing API.md (or WIRE.md) states, so the
//! conformance harness can be shown to catch it.
//!
//! What a fault does is found by its layer: a `Body` fault is one entry of
//! the registry in `corrupt.rs`; a `Wire` fault is applied where the
//! response is written (`server/service.rs`), and where hyper will not
//! write its bytes, by the byte layer that `service.rs` instructs
//! (`server/byte_layer.rs`); a `Behaviour` fault in the
//! handler of its resource (`handlers/`), or in the router for
//! authentication and paths (`router.rs`) and the state for key rotation
//! (`state.rs`; the pause of `rotations-lost-update` in
//! `server/service.rs`, as handlers do not wait).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// Where a fault lives: which layer of the server breaks the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum FaultLayer {
    /// HTTP itself: status codes, headers, body framing and format
    /// (applied when the response is written).
    Wire,
    /// The JSON of a finished body (an edit after the handler built it).
    Body,
    /// What a handler does: authentication, filters, paging, writes.
    Behaviour,
}

impl FaultLayer {
    /// `wire`, `body` or `behaviour`.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultLayer::Wire => "wire",
            FaultLayer::Body => "body",
            FaultLayer::Behaviour => "behaviour",
        }
    }
}

macro_rules! faults {
    ($( $variant:ident = $name:literal [$layer:ident]: $desc:literal, )+) => {
        /// A deliberate departure from the contract, for proving the
        /// conformance harness.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Fault {
            $( #[doc = $desc] $variant, )+
        }

        impl Fault {
            /// Every fault.
            pub const ALL: &'static [Fault] = &[$(Fault::$variant),+];

            /// The name used by `--fault` and in reports.
            pub fn name(self) -> &'static str {
                match self {
                    $( Fault::$variant => $name, )+
                }
            }

            /// What the fault breaks.
            pub fn description(self) -> &'static str {
                match self {
                    $( Fault::$variant => $desc, )+
                }
            }

            /// The layer of the server the fault lives in.
            pub fn layer(self) -> FaultLayer {
                match self {
                    $( Fault::$variant => FaultLayer::$layer, )+
                }
            }
        }
    };
}

faults! {
    WrongApiVersion = "wrong-api-version" [Body]: "success bodies carry api_version v2",
    Chunked = "chunked" [Wire]: "responses are chunked, without Content-Length",
    BadDateHeader = "bad-date-header" [Wire]: "the Date header is not an HTTP date",
    TextErrors = "text-errors" [Wire]: "error bodies are plain text, not JSON",
    NoAuth = "no-auth" [Behaviour]: "requests without the key header are served",
    KeyNamesNotSplit = "key-names-not-split" [Behaviour]: "the access-key list's names filter is one fragment, commas and all, not a list of fragments",
    KeyHeaderCaseSensitive = "key-header-case-sensitive" [Behaviour]: "the key header is taken only when its name is spelled X-PAY-AGGREGATOR-SECRET-KEY exactly (field names are case-insensitive)",
    KeyInQuery = "key-in-query" [Behaviour]: "a valid key in the api_key query parameter, without the key header, is accepted",
    AcceptAnyKey = "accept-any-key" [Behaviour]: "any non-empty key is accepted",
    AcceptEmptyKey = "accept-empty-key" [Behaviour]: "an empty key header is accepted",
    BadRequestEnvelope = "bad-request-envelope" [Body]: "400 errors come in the envelope form",
    NotFoundEnvelope = "not-found-envelope" [Body]: "404 errors come in the envelope form",
    WrongTxnPrefix = "wrong-txn-prefix" [Body]: "transaction tokens start with tx_ instead of txn_",
    NumericIdAsNumber = "numeric-id-as-number" [Body]: "batch ids are JSON numbers",
    ShortBatchToken = "short-batch-token" [Body]: "batch tokens are 38 characters long",
    MixedKeyShape = "mixed-key-shape" [Body]: "an access key has a numeric id and an ak_tok_ token",
    DecimalAmounts = "decimal-amounts" [Body]: "amounts carry decimals",
    NetMismatch = "net-mismatch" [Body]: "net_amount is off by one paisa",
    LowercaseCurrency = "lowercase-currency" [Body]: "currency codes are lowercase",
    OffsetTimestamps = "offset-timestamps" [Body]: "timestamps carry a +05:00 offset",
    EmptyStringNull = "empty-string-null" [Body]: "unset nullable timestamps are \"\" instead of null",
    DatetimeAliasDates = "datetime-alias-dates" [Body]: "alias dates are full timestamps",
    CountTypesSwapped = "count-types-swapped" [Body]: "counts have the other JSON type (integer for strings and back)",
    MissingField = "missing-field" [Body]: "batches lack file_name",
    RefundIdOnPayments = "refund-id-on-payments" [Body]: "payment transactions carry refund_id \"\" instead of null",
    EventFilterObject = "event-filter-object" [Body]: "event_filter_json is a JSON object",
    DefaultLimit10 = "default-limit-10" [Behaviour]: "cursor lists default to 10 rows",
    NoLimitCap = "no-limit-cap" [Behaviour]: "cursor lists return more than 100 rows when asked",
    LowercaseAsc = "lowercase-asc" [Behaviour]: "direction=asc (lowercase) sorts ascending",
    CursorRepeat = "cursor-repeat" [Behaviour]: "next_cursor repeats the cursor it was given: an endless walk",
    CursorInclusive = "cursor-inclusive" [Behaviour]: "a page starts with the cursor's own row",
    FilteredExceedsTotal = "filtered-exceeds-total" [Body]: "filtered_count exceeds total_count",
    StatusFilterIgnored = "status-filter-ignored" [Behaviour]: "the batch status filter is validated but not applied: a bad value gets 400, any other keeps every batch (the 400 shows the server reads the name)",
    BatchFilterIgnored = "batch-filter-ignored" [Behaviour]: "the batch_id filter is ignored (an observation: API.md gives the filter by purpose only)",
    LenientBatchToken = "lenient-batch-token" [Behaviour]: "malformed batch tokens are not rejected with 400",
    PayoutsInTransactions = "payouts-in-transactions" [Behaviour]: "only_settlement_txns is ignored",
    OffsetIgnored = "offset-ignored" [Behaviour]: "offset is ignored by offset lists",
    PagingUnread = "paging-unread" [Behaviour]: "the refund and webhook lists read neither limit nor offset (WIRE.md's names; API.md gives them by purpose only): every page is the first",
    OffsetLimitIgnored = "offset-limit-ignored" [Behaviour]: "limit is ignored by offset lists",
    RefundFiltersOneValue = "refund-filters-one-value" [Behaviour]: "the refund list's filters keep the first of several values, whichever way they are written (an observation: API.md does not show how several values are written)",
    LookupNamesUnread = "lookup-names-unread" [Behaviour]: "account-info and title-fetch read neither `iban` nor `alias_value` (WIRE.md's names; API.md gives them by purpose only): every lookup by a value is refused",
    KeysActiveFilterIgnored = "keys-active-filter-ignored" [Behaviour]: "the key list's is_active filter is validated but not applied: a value other than true or false gets 400, either keeps every key (the 400 shows the server reads the name)",
    MerchantsEnabledFilterIgnored = "merchants-enabled-filter-ignored" [Behaviour]: "the merchant list's enabled filter is validated but not applied: a value other than true or false gets 400, either keeps every merchant (the 400 shows the server reads the name)",
    RailStatusFilterIgnored = "rail-status-filter-ignored" [Behaviour]: "the rail merchant list's status filter is validated but not applied: a bad value gets 400, any other keeps every rail merchant (the 400 shows the server reads the name)",
    DirectionIgnored = "direction-ignored" [Behaviour]: "the batch list and a batch's transactions do not read the direction at all (no value is refused): every page is descending (no answer shows the name read: not judged, and a failure with --require-wire-names)",
    CursorAscAsDesc = "cursor-asc-as-desc" [Behaviour]: "the batch list and a batch's transactions compare an ascending page's cursor as a descending one: the page holds the ids below the cursor, from the first, so the ascending walk repeats its first page while the descending walk is right",
    QrDefaultDynamic = "qr-default-dynamic" [Behaviour]: "the QR list defaults to DYNAMIC codes",
    ExportFinished = "export-finished" [Body]: "a new report export is already finished (an observation: API.md shows the seeded state as observed)",
    ExportFinishedEarly = "export-finished-early" [Body]: "a new report export finished before it started",
    RotateSameSecret = "rotate-same-secret" [Behaviour]: "rotation returns the old secret",
    Success201 = "success-201" [Wire]: "success answers 201 instead of 200 (an observation)",
    BadRequest422 = "bad-request-422" [Wire]: "error.bad_request is answered 422 instead of 400, on every operation (an observation: API.md's table lists 400, and says the numbers are not shown)",
    ContentTypeText = "content-type-text" [Wire]: "success bodies are labelled text/plain",
    NegativeLimitAccepted = "negative-limit-accepted" [Behaviour]: "a negative limit is served instead of refused (an observation)",
    RotateKeepsOldSecret = "rotate-keeps-old-secret" [Behaviour]: "a rotated key's old secret keeps working (an observation)",
    ExportAcceptsEmptyBody = "export-accepts-empty-body" [Behaviour]: "a report export without its required fields is created (an observation)",
    PayoutPrefix = "payout-prefix" [Body]: "payout tokens start with po_ instead of stxn_ (an observation)",
    UnauthorizedMessage = "unauthorized-message" [Body]: "401 errors say \"access denied\", not that a key is required",
    ForeignAggregatorId = "foreign-aggregator-id" [Body]: "merchants carry another aggregator's aggregator_id",
    AnyAggregator = "any-aggregator" [Behaviour]: "the key is accepted under any aggregator id of the path",
    RailMerchantStatusUnknown = "rail-merchant-status-unknown" [Body]: "a rail merchant read alone has status Pending, none of API.md's",
    IbanUnmasked = "iban-unmasked" [Body]: "the aggregator's redacted_iban is the IBAN in clear",
    WebhookUrlRelative = "webhook-url-relative" [Body]: "webhook endpoint urls are relative paths",
    RailMerchantWrongRecord = "rail-merchant-wrong-record" [Behaviour]: "reading a rail merchant answers with the next one",
    UnknownBatchFound = "unknown-batch-found" [Behaviour]: "an unknown batch's transactions are an empty page, not 404",
    NotFoundOtherMessage = "not-found-other-message" [Body]: "404 errors say \"no such thing\", not API.md's message",
    RefundNetMismatch = "refund-net-mismatch" [Body]: "refund transactions' net_amount is off by one paisa",
    UnlinkedMerchantBadTimestamp = "unlinked-merchant-bad-timestamp" [Body]: "rail merchants without a status have updated_at \"2024-01-02 03:04:05\"",
    DynamicQrPrefix = "dynamic-qr-prefix" [Body]: "dynamic QR code tokens start with qrd_ instead of qr_",
    AliasRecordIdBad = "alias-record-id-bad" [Body]: "an alias's alias_record_id (numeric, API.md says) is \"ar-\" and digits",
    PastEndWraps = "past-end-wraps" [Behaviour]: "a cursor page past the last row starts over at the first page",
    CursorZeroLiteral = "cursor-zero-literal" [Behaviour]: "cursor=0 descending is read as \"ids below 0\": an empty page",
    BatchFilterDropsStatus = "batch-filter-drops-status" [Behaviour]: "with batch_id, the status filter is ignored",
    MerchantIdsFirstOnly = "merchant-ids-first-only" [Behaviour]: "merchant_identifiers keeps only its first value",
    RefundDirectionLowercase = "refund-direction-lowercase" [Behaviour]: "the refund list sorts ascending for direction=asc (lowercase)",
    RefundStatusFirstOnly = "refund-status-first-only" [Behaviour]: "a repeated refund status filter keeps only its first value",
    AccountInfoWrongIban = "account-info-wrong-iban" [Behaviour]: "an IBAN lookup answers for another account",
    TillAnyAccount = "till-any-account" [Behaviour]: "a till-code title fetch answers with one alias's account whatever value it is given",
    TillOtherAlias = "till-other-alias" [Behaviour]: "a known till code is answered with the account of the next alias's merchant; an unknown one still gets 404",
    AliasValueOptional = "alias-value-optional" [Behaviour]: "an alias_type without alias_value looks up the first account",
    ExportOtherBatch = "export-other-batch" [Behaviour]: "a report export is created for the batch after the one asked",
    RotateOtherKey = "rotate-other-key" [Behaviour]: "rotation answers with another key's id and token",
    AggregatorKeysMasked = "aggregator-keys-masked" [Body]: "the aggregator record's keys show their secret masked",
    Charges201 = "charges-201" [Behaviour]: "payment charges succeed with 201",
    UnicodeQuery500 = "unicode-query-500" [Behaviour]: "a query value with non-ASCII characters gets 500",
    UnknownAliasFound = "unknown-alias-found" [Behaviour]: "an unknown alias id answers with the first alias",
    RefundDateDropsStatus = "refund-date-drops-status" [Behaviour]: "with a date bound, the refund status filter is ignored",
    ExportNewestBatch = "export-newest-batch" [Behaviour]: "a report export is created for the newest batch, whatever batch was asked",
    ChargesFirstPayment = "charges-first-payment" [Behaviour]: "the charges of any known payment are those of the newest batch's first payment",
    UnknownRailMerchantFound = "unknown-rail-merchant-found" [Behaviour]: "an unknown rail merchant id answers 200 with the first rail merchant",
    OffsetPastEndWraps = "offset-past-end-wraps" [Behaviour]: "an offset at or past the end of an offset list gives its first page",
    HugeNumber500 = "huge-number-500" [Behaviour]: "a numeric query value beyond 64 bits gets 500",
    LongId500 = "long-id-500" [Behaviour]: "a path id longer than 64 characters gets 500",
    LaterPagesDropField = "later-pages-drop-field" [Body]: "rows of pages after the first (a cursor or an offset given) lack created_at",
    LaterPagesCountDrift = "later-pages-count-drift" [Body]: "counts on pages after the first are one more",
    AggregatorKeysStale = "aggregator-keys-stale" [Behaviour]: "the aggregator record shows the keys' secrets as they were at start, ignoring rotations",
    BadRequestMessage = "bad-request-message" [Body]: "400 errors say \"bad request\", not that the parameters are invalid",
    UnauthorizedKeyMessage = "unauthorized-key-message" [Body]: "401 errors say \"invalid access key\", not that a key is required",
    RailMerchant404Message = "rail-merchant-404-message" [Behaviour]: "an unknown rail merchant's 404 says \"merchant not found\"",
    TransactionMerchantName = "transaction-merchant-name" [Body]: "transactions carry their aggregator merchant's name in capitals, unlike the merchant list",
    ChargesFeeShift = "charges-fee-shift" [Body]: "charges move one paisa from net to fee, unlike the payment's transaction",
    RailMerchantReadDiffers = "rail-merchant-read-differs" [Body]: "a rail merchant read alone has another updated_at than in the list",
    NameFragmentPrefixOnly = "name-fragment-prefix-only" [Behaviour]: "the key list's name fragments match only at the start of a name",
    RefundEndDateExclusive = "refund-end-date-exclusive" [Behaviour]: "the refund end_date bound excludes its own second",
    CursorSkipsRow = "cursor-skips-row" [Behaviour]: "cursor pages after the first skip their first row",
    OffsetOffByOne = "offset-off-by-one" [Behaviour]: "an offset n above 0 skips n + 1 rows",
    NonAsciiNameFilter = "non-ascii-name-filter" [Behaviour]: "merchant name filters drop the non-ASCII characters of their values",
    RotateUnknownActs = "rotate-unknown-acts" [Behaviour]: "rotating a well-formed ak_ id that names no key rotates the last key and answers 200 with it",
    MerchantNamesSplitOnce = "merchant-names-split-once" [Behaviour]: "the merchant list's names filter splits its value once, at the first comma: with three names or more, the rest is read as one name",
    ExportSeededFinished = "export-seeded-finished" [Body]: "a new report export says REPORT_STATUS_SEEDED with attempts 0 and finished_at set, which API.md says a seeded export has not",
    ExportStorageKeyEarly = "export-storage-key-early" [Body]: "a new report export already carries the storage_key its file will get",
    DuplicateCount = "duplicate-count" [Wire]: "the refund list's data names count twice: first as the string, then as the integer",
    RefundsTextPlain = "refunds-text-plain" [Wire]: "the refund list's JSON is labelled text/plain; charset=utf-8",
    WebhooksStaleSecrets = "webhooks-stale-secrets" [Behaviour]: "the webhook list checks keys against their secrets at start, ignoring rotations",
    SecretPrefix32 = "secret-prefix-32" [Behaviour]: "a key is accepted when its first 32 characters are a key's (an indexed prefix column): characters appended, or the last ones changed, still pass",
    FilterLikeWildcards = "filter-like-wildcards" [Behaviour]: "the name filters of the key, merchant and rail-merchant lists are SQL LIKE patterns: % and _ in a value are wildcards",
    TokensCaseInsensitive = "tokens-case-insensitive" [Behaviour]: "batch tokens (the batch_id filter, the transactions path) and rail merchant ids are matched ignoring case",
    OffsetTruncated32 = "offset-truncated-32" [Behaviour]: "offset lists keep only the low 32 bits of an offset: 2^32 + n answers the page at n",
    UnknownTargetActs = "unknown-target-acts" [Behaviour]: "a report export naming an unknown well-formed batch is created for the newest batch, and one naming an unknown rail merchant for the first merchant",
    LookupCacheIgnoresQuery = "lookup-cache-ignores-query" [Behaviour]: "account-info and title-fetch keep their last answer for 5 s, keyed on the path without the query: another IBAN or alias gets the previous answer",
    DateTwice = "date-twice" [Wire]: "answers of the batch list and of the key list carry two Date fields (two gateways each add one), both valid HTTP dates",
    ContentTypeTwice = "content-type-twice" [Wire]: "answers of the merchant list and of the aggregator read carry Content-Type twice: application/json, then text/plain",
    ChunkedWithLength = "chunked-with-length" [Wire]: "answers of the QR list and of the webhook list are sent Transfer-Encoding: chunked and also carry a Content-Length (the body's length), as a re-chunking proxy does",
    BareLfHeads = "bare-lf-heads" [Wire]: "the status line and header lines of answers of the refund list and of the rail-merchant list (not a single rail merchant's read) end with a bare LF instead of CRLF, the head's empty line too",
    DateAhead = "date-ahead" [Wire]: "answers of the ledger account and of the alias read carry a Date five hours ahead of real time (local time labelled GMT), still a valid HTTP date",
    HeadWithBody = "head-with-body" [Wire]: "a HEAD to the batch list or the merchant list is answered with the GET's head and then the GET's body: the next answer on the connection starts with those bytes",
    CloseIgnored = "close-ignored" [Wire]: "a request to the key list or the webhook list carrying Connection: close is answered without Connection: close, and the connection is kept open for another request",
    PipelineDropsSecond = "pipeline-drops-second" [Wire]: "a request to the QR list or the ledger account that arrives pipelined (before the answer to the previous request on its connection was written) gets no answer: the connection stays open and silent",
    ChunkedBodyEmpty = "chunked-body-empty" [Behaviour]: "a request body sent Transfer-Encoding: chunked is read as empty at the report export (refused as without its fields) and at the key rotation (answered 200 with the key unchanged: nothing rotated)",
    ContinueToHttp10 = "continue-to-http10" [Wire]: "HTTP/1.0 requests to the key rotation, the report export and the key list get an interim 100 Continue before their answer (no 1xx may go to an HTTP/1.0 client)",
    EtagWithoutSecrets = "etag-without-secrets" [Behaviour]: "GET answers of the key list and of the aggregator read carry a strong ETag computed without the keys' secrets (nor their updated_at, which a rotation changes too), and If-None-Match with it gets 304: after a rotation a client keeps the old secrets",
    ParamsBeforeKey = "params-before-key" [Behaviour]: "the batch list, the batch transactions and the key list check query parameters (and the batch token) before the key: a request without a valid key but with a bad parameter gets 400 instead of 401",
    ReadsWrite = "reads-write" [Behaviour]: "reads that write: an alias read (GET /alias/{alias-id}) saves the alias, stamping its updated_at with the time of the read (one second after the last stamp at least, so every read moves it), and the ledger read (GET /ledger/accounts) saves the aggregator, moving the aggregator record's updated_at the same way; nothing else of either record, nor any other answer, changes",
    ExportUpsert = "export-upsert" [Behaviour]: "a report export (POST /settlements/report-exports) of the scope of an earlier one (same kind, settlement_batch_id and merchant_id), at either kind, answers the earlier export again (same id and token) with its attempts raised by one instead of creating a new one: an upsert on the scope",
    ExportBodyPooled = "export-body-pooled" [Behaviour]: "report export bodies are decoded into a struct pooled per connection, never reset: a member absent from a body (merchant_id, settlement_batch_id, kind) keeps the value the previous export request on the connection gave it, so a REPORT_KIND_BATCH export without merchant_id after a merchant export answers that merchant_id, and one without settlement_batch_id gets the earlier batch",
    RailMerchantListCache = "rail-merchant-list-cache" [Behaviour]: "the rail-merchant list (GET /rail-merchants) keeps its last answer for 5 s, keyed on the path without the query: another status or name filter, limit or offset gets the previous answer",
    RotationErrorCommits = "rotation-error-commits" [Behaviour]: "a key's second rotation and every later one (the first per key is answered as it should be) is answered 500 error.internal_server_error, but its new secret is committed: the key list and the aggregator record then show a secret no answer gave",
    RotationsLostUpdate = "rotations-lost-update" [Behaviour]: "the keys are kept as one document, read whole, then written back whole after a pause: two rotations of different keys at the same time both answer their new secret, but the later write puts back the other key's old secret (a lost update); rotations one after another are unaffected",
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown fault name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFault(pub String);

impl fmt::Display for UnknownFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
        write!(
            f,
            "unknown fault `{}` (known: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownFault {}

impl FromStr for Fault {
    type Err = UnknownFault;

    fn from_str(s: &str) -> Result<Self, UnknownFault> {
        Fault::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFault(s.to_owned()))
    }
}

/// The active faults of a server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Faults(BTreeSet<Fault>);

impl Faults {
    pub(crate) fn insert(&mut self, fault: Fault) {
        self.0.insert(fault);
    }

    pub(crate) fn has(&self, fault: Fault) -> bool {
        self.0.contains(&fault)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip_and_are_unique() {
        let mut names = std::collections::HashSet::new();
        for f in Fault::ALL {
            assert_eq!(f.name().parse::<Fault>().unwrap(), *f);
            assert!(names.insert(f.name()));
            assert!(!f.description().is_empty());
        }
        let err = "nope".parse::<Fault>().unwrap_err().to_string();
        assert!(err.contains("cursor-repeat"));
    }
}
