//! Legal choices: the mirror of the faults. Where API.md leaves a server a
//! choice, the mock's own answer is one legal reading of it, not the
//! contract; each choice here makes the mock take another legal reading,
//! so that the conformance harness can be shown to pass every server that
//! honours API.md, not only one that answers as the mock does.
//!
//! Each choice names the text that leaves the room open (API.md, or
//! WIRE.md where it says both readings honour API.md).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

macro_rules! legal {
    ($( $variant:ident = $name:literal in $room:literal: $desc:literal; allowed by $text:literal, )+) => {
        /// A legal reading of API.md other than the mock's own.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Legal {
            $( #[doc = $desc] $variant, )+
        }

        impl Legal {
            /// Every legal choice.
            pub const ALL: &'static [Legal] = &[$(Legal::$variant),+];

            /// The name used by `--legal`.
            pub fn name(self) -> &'static str {
                match self {
                    $( Legal::$variant => $name, )+
                }
            }

            /// What the server does with this choice.
            pub fn description(self) -> &'static str {
                match self {
                    $( Legal::$variant => $desc, )+
                }
            }

            /// The text of API.md (or WIRE.md) that leaves the choice open.
            pub fn allowed_by(self) -> &'static str {
                match self {
                    $( Legal::$variant => $text, )+
                }
            }

            /// The room of the conformance harness's contract table this
            /// choice takes another reading of (`aggpay-conformance
            /// coverage` lists the rooms with the choices that exercise
            /// each).
            pub fn room(self) -> &'static str {
                match self {
                    $( Legal::$variant => $room, )+
                }
            }
        }
    };
}

legal! {
    WildcardsRefused = "wildcards-refused" in "bad-values":
        "a query value with %, _, * or ? in a name filter or a lookup gets 400 error.bad_request";
        allowed by "API.md Errors: \"Which parameter values cause error.bad_request: not shown.\"",
    HugeNumbers400 = "huge-numbers-400" in "bad-values":
        "a limit or offset of 2^31 or more gets 400 error.bad_request";
        allowed by "API.md Errors: \"Which parameter values cause error.bad_request: not shown.\"",
    OffsetMax7 = "offset-max-7" in "page-max":
        "the merchant, rail-merchant, QR, refund and webhook lists return at most 7 rows a page, whatever the limit asked";
        allowed by "API.md Limits: \"Maximum page size of the merchant, rail-merchant, QR, refund and webhook lists: not shown.\"",
    OffsetDefault20 = "offset-default-20" in "page-default":
        "the offset lists return 20 rows a page when no limit is given";
        allowed by "API.md Access keys and Merchants: page size is a query parameter whose default is not shown; WIRE.md: \"reference default 10\" is the reference's, not API.md's",
    LimitAboveMax400 = "limit-above-max-400" in "limit-above-max":
        "a limit above 100 gets 400 error.bad_request instead of being clamped to 100";
        allowed by "WIRE.md Cursor pagination: \"above 100 the mock clamps to 100 (a server may instead answer 400: both honour API.md)\"; API.md Access keys: page size 0 to 100",
    ExtraFields = "extra-fields" in "undefined-fields":
        "every record of every success body carries a field API.md does not define, whose value changes on every request";
        allowed by "API.md Resources and their fields: the tables list the fields a record carries; nothing forbids others, nor says what they hold",
    PrettyJson = "pretty-json" in "whitespace":
        "bodies are indented JSON, with whitespace between tokens";
        allowed by "API.md Conventions 2: \"Requests and responses are JSON.\" (JSON allows whitespace between tokens)",
    ConnectionClose = "connection-close" in "connection-reuse":
        "every answer closes its connection (Connection: close)";
        allowed by "API.md Conventions: connection reuse is not shown",
    TimestampMicros = "timestamp-micros" in "timestamp-fraction":
        "every timestamp carries six fraction digits";
        allowed by "API.md typing rule 4: \"they carry seconds precision, and some carry fractional seconds\"",
    UnknownAggregator404 = "unknown-aggregator-404" in "foreign-aggregator":
        "a well-formed aggregator id that is not the key's gets 404 error.not_found (bare) instead of 401";
        allowed by "API.md Authentication 4: \"Whether the key must belong to the aggregator named in the path: not shown.\"; Aggregator: \"Errors: 404 error.not_found\"",
    BadRequest422Unlisted = "bad-request-422-unlisted" in "error-status":
        "error.bad_request is answered 422 Unprocessable Content (the bare body unchanged) by every operation whose Errors line does not list 400";
        allowed by "API.md Errors: \"HTTP status numbers for error.bad_request and error.internal_server_error responses: not shown.\"",
    Created201 = "created-201" in "success-status":
        "a created report export is answered 201 Created";
        allowed by "API.md Conventions 7: \"Success status code is stated only for the payment-charges operation (200)\"",
    CursorEndEmpty = "cursor-end-empty" in "cursor-end":
        "the last page of a cursor list (fewer rows than the limit) answers next_cursor \"\"";
        allowed by "API.md Settlements: cursor lists \"return next_cursor\" and the end of a list is not shown; WIRE.md Cursor pagination: a client stops at a next_cursor of \"\"",
    MerchantNamesExact = "merchant-names-exact" in "name-matching":
        "the merchant list's names filter keeps merchants whose name is one of the values exactly, not a fragment";
        allowed by "API.md Merchants: \"merchant names: comma-separated list of names\" (names, where the access-key filter says name fragments)",
    CountPage = "count-page" in "count-meaning":
        "an offset list's count is the number of rows of the page";
        allowed by "API.md Conventions 5: \"List operations return their records under a named key of data together with a count\" (what it counts is not shown)",
    OtherErrorWords = "other-error-words" in "error-words":
        "401 and 400 messages in other words that still say what API.md says they say";
        allowed by "API.md Authentication 2: \"a message saying that a partner access key is required in the request header\"; Errors: 400 \"invalid request parameters (message says so)\"",
    OldSecretGrace = "old-secret-grace" in "old-secret":
        "after a rotation the old secret keeps working until the key is rotated again";
        allowed by "API.md Authentication 5: \"Key scopes, expiry, and the treatment of an inactive key: not shown.\"; Access keys: rotation returns the new secret, and says nothing of the old",
    ReversedFieldOrder = "field-order-reversed" in "field-order":
        "every JSON object's fields come in the reverse of the mock's order";
        allowed by "API.md Conventions 2: \"Requests and responses are JSON.\" (RFC 8259: an object is an unordered collection of members)",
    TimestampOffsetZero = "timestamp-offset-zero" in "timestamp-utc":
        "every timestamp names UTC as +00:00 instead of Z";
        allowed by "API.md typing rule 4: \"Timestamps are RFC 3339 UTC strings\" (RFC 3339 5.6: the offset Z and +00:00 both name UTC)",
    JsonCharset = "json-charset" in "media-type":
        "every JSON body is sent as application/json; charset=utf-8";
        allowed by "API.md Conventions 2: \"Requests and responses are JSON.\" (the media type's parameters are not shown)",
    ExtraHeaders = "extra-headers" in "other-headers":
        "every answer carries headers API.md does not name (X-Request-Id, Cache-Control, Vary)";
        allowed by "API.md Conventions 4: \"Responses carry the headers Content-Length and Date.\" (others are not forbidden)",
    ErrorExtraFields = "error-extra-fields" in "error-fields":
        "every error body carries a request_id beside code and message";
        allowed by "API.md Errors: the two body shapes list the fields an error carries; nothing forbids others",
    Export202 = "export-202" in "success-status":
        "a created report export is answered 202 Accepted (the job is asynchronous)";
        allowed by "API.md Conventions 7: \"Success status code is stated only for the payment-charges operation (200)\"",
    CursorEndZero = "cursor-end-zero" in "cursor-end":
        "the last page of a cursor list (fewer rows than the limit) answers next_cursor \"0\"";
        allowed by "API.md Settlements: the end of a cursor list is not shown; WIRE.md Cursor pagination: a client stops at a next_cursor of \"0\"",
    LenientNumbers = "lenient-numbers" in "bad-values":
        "a negative or non-numeric limit, offset or cursor is ignored (the default is used) instead of getting 400";
        allowed by "API.md Errors: \"Which parameter values cause error.bad_request: not shown.\"",
    InactiveKeyAccepted = "inactive-key-accepted" in "inactive-key":
        "the secret of an inactive key (is_active false) is accepted like an active one";
        allowed by "API.md Authentication 5: \"Key scopes, expiry, and the treatment of an inactive key (is_active false): not shown.\"",
    UnlistedValues = "unlisted-values" in "open-values":
        "transactions and account lookups carry status and type values beyond those API.md lists";
        allowed by "API.md Transaction: \"Allowed values of transaction_type, payment_type and status beyond those listed: not shown.\"; Refund and AccountInfo: the same for their values",
    ExportPending = "export-pending" in "export-status":
        "a new report export is REPORT_STATUS_PENDING with 0 attempts";
        allowed by "API.md Report export status: \"Observed value: REPORT_STATUS_SEEDED ... Other values and transitions: not shown.\"",
    TitleEmpty = "title-empty" in "title-details":
        "a lookup asked for title details answers an empty account_title";
        allowed by "API.md AccountInfo: account_title is \"filled when title details are requested and available; may be empty\"",
    ReversedOffsetOrder = "offset-order-reversed" in "offset-order":
        "the key, merchant, rail-merchant, QR and webhook lists come in the reverse of the mock's order";
        allowed by "API.md Access keys, Merchants, QR codes, Webhooks: the order of these lists is not shown",
    ExportKindOptional = "export-kind-optional" in "export-required":
        "a report export request without kind exports the batch (REPORT_KIND_BATCH)";
        allowed by "API.md Settlements: \"Which of settlement_batch_id and kind are required: not shown.\"",
    FragmentsCaseExact = "fragments-case-exact" in "name-matching":
        "name fragments and names match with case (\"Sales\" does not find \"sales\")";
        allowed by "API.md Access keys: \"comma-separated list of name fragments\" (whether case counts is not shown)",
    LimitZeroEmpty = "limit-zero-empty" in "limit-zero":
        "an offset list asked for limit 0 answers an empty page";
        allowed by "API.md Access keys: page size \"0 to 100\" (what 0 means is shown only for the cursor lists: \"0 means the default\")",
    ExportProduced = "export-produced" in "export-status":
        "a new report export is produced at once: REPORT_STATUS_SUCCEEDED, finished_at set, storage_key the file's";
        allowed by "API.md Report export status: \"Other values and transitions: not shown.\"; ReportExport: storage_key \"empty until produced\"",
    CodedBodies = "coded-bodies" in "compression":
        "every body is gzip-coded unless the request's Accept-Encoding rules gzip out (a request that names no coding gets gzip too)";
        allowed by "API.md Conventions 4: \"Responses carry the headers Content-Length and Date.\" (content coding is not shown); RFC 9110 section 12.5.3: \"If no Accept-Encoding header field is in the request, any content coding is considered acceptable by the user agent.\"",
    PayoutShape = "payout-shape" in "payout-shape":
        "payouts carry another shape than WIRE.md's reference element: id, a po_ token, batch, merchant, one amount, a lowercase state and created_at";
        allowed by "API.md Transaction: \"Element shape of `settlement_transactions` (settlement payouts): not shown.\"",
    PageNames = "page-names" in "paging-names":
        "the refund and webhook lists page by `page` (from 1) and `page_size` and do not read `limit` or `offset` at all";
        allowed by "API.md Refunds: \"returns a paginated list of refunds; the pagination parameters are not shown\"; Webhooks: \"query (purpose only): page size (integer), offset (integer)\"; Conventions 6: \"a parameter given only by its purpose has a wire name that is not shown\"",
    CursorNames = "cursor-names" in "cursor-paging-names":
        "the cursor lists (batches, batch transactions) page by `after`, `page_size` and `sort` and do not read `cursor`, `limit` or `direction` at all";
        allowed by "API.md Settlements: the batches' \"Query (purpose only)\" and the batch transactions' \"cursor (purpose only)\", \"page size (purpose only)\", \"sort direction (purpose only)\"; Conventions 6: \"a parameter given only by its purpose has a wire name that is not shown\"",
    LookupNames = "lookup-names" in "lookup-names":
        "account-info and title-fetch read the IBAN as `account_iban`, the alias value as `value` and the title option as `include_title`, and do not read `iban`, `alias_value` or `with_title_fetch` at all";
        allowed by "API.md Lookups: \"Query (purpose only, except alias_type)\"; Conventions 6: \"a parameter given only by its purpose has a wire name that is not shown\"",
    CommaValues = "comma-values" in "several-values":
        "the refund list reads several values of a filter comma-separated (`payment_id=a,b`) and refuses a repeated key with 400";
        allowed by "API.md Refunds: \"Query filters (purpose only; each accepts one or more values)\" (how several values are written is not shown)",
    StrictIds = "strict-ids" in "id-shapes":
        "an id in the path not of the mock's own shape after its prefix (16 lowercase hex digits; a batch token's 36 of hex digits and dashes) is refused with 400, before the aggregator is looked at";
        allowed by "API.md typing rule 1: \"Identifiers are strings with a type prefix.\" (what follows the prefix is not shown); Errors: \"Which parameter values cause error.bad_request: not shown.\"",
    FilterNames = "filter-names" in "filter-names":
        "the filters API.md gives by purpose only are read under other names than WIRE.md's (keys `active` and `name_contains`, merchants `is_enabled`, `ids` and `name_in`, rail merchants `onboarding_status` and `q`, refunds `payment`, `refund_status`, `trace`, `message_id`, `return`, `client_request_id`, `token`, `created_from` and `created_to`, batches `token` and `state`), and WIRE.md's names are not read at all";
        allowed by "API.md Conventions 6: \"a parameter given only by its purpose has a wire name that is not shown\"",
    WrittenFieldsChange = "written-fields-change" in "written-fields":
        "a write changes fields of its own record that API.md ties to nothing: a report export raises its batch's version by one, and a rotation gives the key a new key_id and makes it active";
        allowed by "API.md Versioning 4: \"Meaning of the `version` field on resources (report exports, batches, bank accounts): not shown.\"; Flags: \"the operations that flip the flags: not shown\"; Access keys: rotation returns the key \"with the new secret\", and says nothing of its other fields",
    LookupsNormalised = "lookups-normalised" in "lookup-normalising":
        "account-info and title-fetch look up an IBAN or alias value trimmed of surrounding whitespace and in capitals";
        allowed by "API.md Lookups: the looked-up values are given by purpose only (\"IBAN\", \"alias value\"); whether their case or surrounding whitespace counts is not shown",
    RequestCap = "request-cap" in "connection-reuse":
        "every connection is closed after its third answer, which carries Connection: close";
        allowed by "API.md Conventions: connection reuse is not shown; RFC 9112 section 9.6: \"A server MAY send a \"close\" connection option in its response\" and section 9.3: a server may close a persistent connection",
    IdleClose = "idle-close" in "connection-reuse":
        "a connection idle for 50 ms after an answer is closed without a word (never one with a request under way)";
        allowed by "API.md Conventions: connection reuse is not shown; RFC 9112 section 9.5: \"A client, server, or proxy MAY close the transport connection at any time.\"",
    TitleCaseFields = "title-case-fields" in "field-name-case":
        "header field names are written Title-Case (Content-Type, Date) instead of lower case";
        allowed by "API.md Conventions 4: \"Responses carry the headers Content-Length and Date.\" (their case is not shown); RFC 9110 section 5.1: \"Field names are case-insensitive\"",
    EarlyHints = "early-hints" in "interim-responses":
        "every final answer to an HTTP/1.1 request comes after an interim 103 Early Hints with a Link field (never to HTTP/1.0)";
        allowed by "API.md Conventions: interim responses are not shown; RFC 9110 section 15.2: \"A client MUST be able to parse one or more 1xx responses received prior to a final response, even if the client does not expect one.\"",
    Etags = "etags" in "validators":
        "every GET success answer carries a strong ETag over its whole body; If-None-Match with the current ETag gets 304 Not Modified without a body; HEAD gets the GET's ETag";
        allowed by "API.md Conventions 4: \"Responses carry the headers Content-Length and Date.\" (others are not forbidden); RFC 9110 sections 8.8.3 and 13.1.2: a strong validator changes with the representation, and a matching If-None-Match gets 304",
    Http10Refused = "http10-refused" in "http-version":
        "HTTP/1.0 requests get 505 HTTP Version Not Supported with a bare JSON error, and the connection closes; HTTP/1.1 is served as ever";
        allowed by "API.md Conventions: the HTTP version is not shown; RFC 9110 section 15.6.6: 505 \"indicates that the server does not support, or refuses to support, the major version of HTTP that was used in the request message\"",
    DateBehind = "date-behind" in "date-skew":
        "every Date is 20 seconds behind real time";
        allowed by "API.md Conventions 4: \"Responses carry the headers Content-Length and Date.\" (how exact the clock is is not shown); RFC 9110 section 6.6.1: an origin server's Date is \"the best available approximation of the date and time\"",
    UuidIds = "uuid-ids" in "id-forms":
        "the records whose id API.md does not call numeric (rail merchants, QR codes, aliases, the aggregator, its bank account, the ledger account) carry a UUID as their id, the same for one record in every answer";
        allowed by "API.md typing rule 2: \"Most records carry a numeric `id` serialized as a string\" (most, not all); the tables of these records list `id` as a string, without \"numeric\"",
    EnabledByDefault = "enabled-by-default" in "filter-default":
        "the merchant list without an enabled filter lists the enabled merchants only (enabled=false lists the others)";
        allowed by "API.md Merchants: \"enabled filter | boolean\" (what the list holds when the filter is absent is not shown)",
    ParamsFirst = "params-first" in "check-order":
        "with a valid key, a read checks its query parameters before it looks up anything its path names, the aggregator included: a bad parameter gets 400 error.bad_request even where the id in the path names nothing (404) or another aggregator";
        allowed by "API.md Errors: 400 error.bad_request \"invalid request parameters\" and 404 error.not_found \"requested resource does not exist\" (which one a request meeting both conditions gets is not shown)",
}

/// Pairs of choices that are two readings of one point: no server makes
/// both.
const EXCLUSIVE: &[(Legal, Legal)] = &[
    (Legal::Created201, Legal::Export202),
    (Legal::CursorEndEmpty, Legal::CursorEndZero),
    (Legal::ExportPending, Legal::ExportProduced),
];

impl Legal {
    /// True when a server cannot make both choices (two readings of one
    /// point, such as two success statuses of one operation).
    pub fn excludes(self, other: Legal) -> bool {
        EXCLUSIVE
            .iter()
            .any(|&(a, b)| (a, b) == (self, other) || (b, a) == (self, other))
    }

    /// The most choices one server can make at once: every choice, but of
    /// two exclusive ones only the first.
    pub fn compatible() -> Vec<Legal> {
        let mut chosen: Vec<Legal> = Vec::new();
        for &l in Legal::ALL {
            if !chosen.iter().any(|c| c.excludes(l)) {
                chosen.push(l);
            }
        }
        chosen
    }
}

impl fmt::Display for Legal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown legal choice's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLegal(pub String);

impl fmt::Display for UnknownLegal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Legal::ALL.iter().map(|l| l.name()).collect();
        write!(
            f,
            "unknown legal choice `{}` (known: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownLegal {}

impl FromStr for Legal {
    type Err = UnknownLegal;

    fn from_str(s: &str) -> Result<Self, UnknownLegal> {
        Legal::ALL
            .iter()
            .copied()
            .find(|l| l.name() == s)
            .ok_or_else(|| UnknownLegal(s.to_owned()))
    }
}

/// The legal choices a server makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Choices(BTreeSet<Legal>);

impl Choices {
    pub(crate) fn insert(&mut self, legal: Legal) {
        self.0.insert(legal);
    }

    pub(crate) fn has(&self, legal: Legal) -> bool {
        self.0.contains(&legal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip_are_unique_and_say_what_allows_them() {
        let mut names = std::collections::HashSet::new();
        for l in Legal::ALL {
            assert_eq!(l.name().parse::<Legal>().unwrap(), *l);
            assert!(names.insert(l.name()));
            assert!(!l.description().is_empty());
            assert!(
                l.allowed_by().starts_with("API.md") || l.allowed_by().starts_with("WIRE.md"),
                "{l}"
            );
        }
        let err = "nope".parse::<Legal>().unwrap_err().to_string();
        assert!(err.contains("offset-max-7"));
    }
}
