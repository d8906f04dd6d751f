//! The legal room: every place where API.md (or WIRE.md, where it says
//! both readings honour API.md) leaves a server a choice, with the text
//! that leaves it open, the readings a server may take, and how the
//! harness judges without assuming one of them.
//!
//! A value the mock sends is one legal reading, never the contract: each
//! room is exercised by a legal choice of the mock (`aggpay-mock --legal`,
//! whose `room()` names the room here) that the legal mutation test shows
//! passing, or says why no choice can exercise it.

/// A place where API.md leaves the server a choice.
#[derive(Debug, Clone, Copy)]
pub struct Room {
    /// Its name (the mock's legal choices name it).
    pub name: &'static str,
    /// The text that leaves it open, quoted.
    pub text: &'static str,
    /// The legal readings; the first is the mock's own.
    pub readings: &'static [&'static str],
    /// How the harness judges without assuming a reading.
    pub judged: &'static str,
    /// Why no legal choice of the mock exercises it, where none does.
    pub unexercised: Option<&'static str>,
}

const fn room(
    name: &'static str,
    text: &'static str,
    readings: &'static [&'static str],
    judged: &'static str,
) -> Room {
    Room {
        name,
        text,
        readings,
        judged,
        unexercised: None,
    }
}

const fn unexercised(
    name: &'static str,
    text: &'static str,
    readings: &'static [&'static str],
    judged: &'static str,
    why: &'static str,
) -> Room {
    Room {
        unexercised: Some(why),
        ..room(name, text, readings, judged)
    }
}

/// Every room, in API.md's order.
pub const ROOMS: &[Room] = &[
    room(
        "timestamp-fraction",
        "Typing rule 4: \"they carry seconds precision, and some carry fractional seconds\"",
        &[
            "fractions where the server has them",
            "a fraction of any 1 to 9 digits on any timestamp",
        ],
        "timestamps are read as instants: a fraction of 1 to 9 digits is accepted anywhere, and equal instants compare equal however written",
    ),
    room(
        "timestamp-utc",
        "Typing rule 4: \"Timestamps are RFC 3339 UTC strings\"",
        &["`Z`", "`+00:00` (RFC 3339 5.6 names UTC both ways)"],
        "either spelling of UTC is a timestamp; any other offset is not UTC and fails",
    ),
    unexercised(
        "key-shape",
        "Typing rule 2: \"Access-key records appear in two shapes\"",
        &["both shapes in one list", "every key in one shape"],
        "each key is judged against either shape, never against its neighbour's",
        "the mock's own key list already mixes both shapes, so every run meets both readings",
    ),
    room(
        "undefined-fields",
        "Resources and their fields: the tables list the fields a record carries, and say nothing of others",
        &[
            "only the listed fields",
            "more fields, holding anything, changing at any time",
        ],
        "records are compared only on the fields API.md defines; an extra field is never a failure",
    ),
    room(
        "open-values",
        "Transaction: \"Allowed values of transaction_type, payment_type and status beyond those listed: not shown.\" (and the same for refunds, account info and aliases)",
        &["the listed values", "any other value"],
        "enumerations are open: a value beyond those listed is kept, never a failure; the values API.md fixes (batch status names, QR type, rail merchant status) stay closed",
    ),
    room(
        "export-status",
        "Report export status: \"Observed value: REPORT_STATUS_SEEDED (a newly created export, with attempts at 1, started_at set and finished_at null). Other values and transitions: not shown.\"",
        &[
            "REPORT_STATUS_SEEDED, attempts 1, finished_at null",
            "any REPORT_STATUS_* name and attempts",
        ],
        "`exports.seeded` requires only the field table (a REPORT_STATUS_* name, started_at a timestamp, finished_at null or not before it); the observed state is the observation `wire.export-seeded`",
    ),
    room(
        "title-details",
        "AccountInfo: account_title is \"filled when title details are requested and available; may be empty\"",
        &["the title when asked", "empty, when not available"],
        "no rule requires a title to be filled: an empty one passes",
    ),
    room(
        "written-fields",
        "Versioning 4: \"Meaning of the `version` field on resources (report exports, batches, bank accounts): not shown.\"; Flags: \"Refund status values and transitions, alias status values and transitions, and the operations that flip the flags: not shown.\"; Access keys: \"Rotates the key and returns `data`: AccessKey with the new secret.\"",
        &[
            "a write changes only what API.md says it does (a rotation: the key's secret)",
            "a write also changes fields of its own record API.md ties to nothing (a batch's version on an export; a rotated key's key_id, updated_at and is_active)",
        ],
        "records are compared with the model without the fields `contract::resources::WRITTEN` lists for their list when writes run; keys.consistent holds the keys a rotation was not asked to rotate to every field, and the random sequences take a rotated key's is_active from the rotation's own answer",
    ),
    room(
        "lookup-normalising",
        "Lookups: account-info takes an \"IBAN\" and an \"alias value\", title-fetch an \"alias value\" (whether case or surrounding whitespace counts is not shown)",
        &[
            "the value as sent",
            "the value with its case and surrounding whitespace normalised (ISO 13616 writes an IBAN in capitals without spaces)",
        ],
        "`near.lookups` never sends a lookup value case-swapped or padded with spaces: only slips that make another value under either reading",
    ),
    room(
        "whitespace",
        "Conventions 2: \"Requests and responses are JSON.\"",
        &["compact JSON", "whitespace between any tokens"],
        "bodies are parsed, never compared as bytes",
    ),
    room(
        "field-order",
        "Conventions 2: \"Requests and responses are JSON.\" (RFC 8259: an object is an unordered collection)",
        &["any order of fields"],
        "fields are read by name, never by position",
    ),
    room(
        "media-type",
        "Conventions 2: \"Requests and responses are JSON.\"",
        &[
            "`application/json`",
            "`application/json` with parameters such as `charset=utf-8`",
        ],
        "the media type is the room, not its meaning: a JSON body must be labelled with a JSON media type (`application/json` or a `+json` type, any parameters), or `body.media-type` fails it (RFC 9110 section 8.3: Content-Type is the representation's media type, so a JSON body labelled `text/plain` is text to a client that honours the label); a missing label and any type but `application/json` are the observation `wire.content-type-json`'s",
    ),
    room(
        "other-headers",
        "Conventions 4: \"Responses carry the headers Content-Length and Date.\"",
        &[
            "those two and the framing headers",
            "any other headers beside them",
        ],
        "Content-Length and Date are required; other headers are not read",
    ),
    room(
        "compression",
        "Conventions 4: \"Responses carry the headers Content-Length and Date.\" (content coding is not shown)",
        &[
            "identity",
            "a content coding the request's Accept-Encoding admits; with no Accept-Encoding any coding (RFC 9110 section 12.5.3: \"If no Accept-Encoding header field is in the request, any content coding is considered acceptable by the user agent.\")",
        ],
        "every request the harness sends, byte-level ones included, states `Accept-Encoding: gzip, deflate`; the body is judged once its codings are undone, and Content-Length against the bytes received; a coding the request did not admit fails `body.json`, naming it",
    ),
    room(
        "connection-reuse",
        "Conventions: connection reuse is not shown (RFC 9112 section 9.5: \"A client, server, or proxy MAY close the transport connection at any time.\")",
        &[
            "keep-alive",
            "Connection: close on any answer",
            "a cap on requests per connection",
            "an idle connection closed without a word",
        ],
        "a closed connection is reopened for the next request, and a request that met a kept connection the server had closed, before any byte came back, is sent again on a new one (RFC 9112 section 9.3.1); only a connection closed before the answer is complete is a transport fault; pipelined requests left unanswered by a close are not failed",
    ),
    room(
        "error-status",
        "Errors: \"HTTP status numbers for error.bad_request and error.internal_server_error responses: not shown.\" (the table lists 400 and 500)",
        &[
            "400 for error.bad_request",
            "another client error (422, say) saying error.bad_request",
        ],
        "a refusal is a client error whose code is error.bad_request (Exchange::refused), on every operation; 400 itself is observed by wire.bad-request-400",
    ),
    room(
        "id-forms",
        "typing rule 2: \"Most records carry a numeric `id` serialized as a string\"; the tables of rail merchants, QR codes, aliases, the aggregator, its bank account and the ledger account list `id` as a string, without \"numeric\"",
        &["a numeric string", "any other string (a UUID, say)"],
        "`ids.numeric` holds only the ids a table calls numeric (report exports, batches, transactions, aggregator merchants, alias_record_id) to digit strings; the others are read as strings, by the harness and by the typed client (`RecordId`)",
    ),
    room(
        "filter-default",
        "Merchants: \"enabled filter | boolean\" (what the list holds when the filter is absent is not shown)",
        &[
            "every merchant",
            "the enabled merchants only",
            "the disabled merchants only",
        ],
        "a flag filter's list is read with each value beside the list unfiltered: where one value's list is the list unfiltered and the other's holds rows it does not, the list applies that value when the filter is absent, and every expected answer applies it where the filter is not given (`filters.*`, `own.back-to-back`); the rows it leaves out are the other value's",
    ),
    room(
        "check-order",
        "Errors: 400 error.bad_request \"invalid request parameters\"; 404 error.not_found \"requested resource does not exist\" (which one a request meeting both conditions gets is not shown)",
        &[
            "the ids in the path looked up first: 404 (or the aggregator's refusal)",
            "the query checked first: 400",
        ],
        "a request the harness sends with a bad parameter names only ids the server showed or was given, and one it sends with an unknown id carries only values the server showed; `scope.unknown-aggregator` asks another aggregator with the server's own values, and where the key's own aggregator refuses that query too, the request is listed not judged (either order is legal); `ids.unknown` and `input.*` judge only never a 5xx and never a record",
    ),
    room(
        "field-name-case",
        "RFC 9110 section 5.1: \"Field names are case-insensitive\"",
        &["lower case", "Title-Case", "any other"],
        "the strict reader compares field names ignoring case",
    ),
    room(
        "interim-responses",
        "RFC 9110 section 15.2: \"A client MUST be able to parse one or more 1xx responses received prior to a final response, even if the client does not expect one.\"",
        &[
            "no 1xx",
            "100 Continue or 103 Early Hints before the answer to an HTTP/1.1 request",
        ],
        "interim answers are read and kept; only one before the answer to an HTTP/1.0 request fails (message.interim)",
    ),
    room(
        "validators",
        "RFC 9110 sections 8.8 and 13.1.2: validators and conditional requests are a server's option",
        &[
            "no ETag",
            "a strong ETag with 304 for If-None-Match while unchanged",
            "a weak ETag",
        ],
        "requests.conditional judges only a strong tag the server gave, and only a 304 (a 200 is always right)",
    ),
    room(
        "http-version",
        "RFC 9110 section 2.5: \"A server can send a 505 (HTTP Version Not Supported) response if it wishes, for any reason, to refuse service of the client's major protocol version.\"",
        &["HTTP/1.0 served", "HTTP/1.0 refused with 505"],
        "requests.http10 judges what an HTTP/1.0 answer must not carry (a 1xx, Transfer-Encoding), not its status",
    ),
    room(
        "date-skew",
        "RFC 9110 section 6.6.1: the Date is the origin server's best approximation of when the message was originated",
        &["the exact time", "a clock a few seconds off"],
        "message.date allows 60 s either side of the harness's clock while the exchange lasted",
    ),
    room(
        "count-meaning",
        "Conventions 5: \"List operations return their records under a named key of `data` together with a `count`.\"",
        &[
            "the rows matching the filters in the whole list",
            "the rows of the page",
        ],
        "`offset.count` accepts any meaning that holds on every page of the list (it must be one meaning across pages)",
    ),
    room(
        "success-status",
        "Conventions 7: \"Success status code is stated only for the payment-charges operation (200); for the others the success body is given and the status code is not shown.\"",
        &[
            "200",
            "201 (a created export)",
            "202 (an asynchronous export)",
            "any 2xx",
        ],
        "any 2xx is a success, except the charges, which must be 200 (`status.charges-200`); 200 elsewhere is the observation `wire.success-200`",
    ),
    room(
        "page-default",
        "Access keys, Merchants, QR codes, Refunds, Webhooks: the default page size is not shown (WIRE.md: \"reference default 10\" is the reference's)",
        &["10", "any other default"],
        "page sizes are learned from the server's answers: a list is read to its end by its own pagination before it is judged whole",
    ),
    room(
        "paging-names",
        "Conventions 6: \"a parameter given only by its purpose has a wire name that is not shown\"; Refunds: \"the pagination parameters are not shown\"",
        &[
            "WIRE.md's `limit` and `offset`",
            "other names (`page` and `page_size`, `skip`, ...), `limit` and `offset` not read at all",
        ],
        "a list whose page at offset n repeats its first page is asked at offset 1, at page size 1 and with `offset=x` and `limit=x`: a name the server refuses a bad value of, or answers differently for, is read and held to what API.md says (`offset.pages`, `offset.limit`); a name no answer shows read is reported by the observation `wire.paging-names` and listed not judged, and the rules that need it judge only that list's first page (the QR list's `offset`, which API.md names, is always read); `--param-name` gives the server's own name, `--require-wire-names` holds it to WIRE.md's",
    ),
    room(
        "cursor-paging-names",
        "Settlements: \"cursor-paginated list of batches. Query (purpose only)\"; batch transactions: \"cursor (purpose only)\", \"page size (purpose only)\", \"sort direction (purpose only)\"; Conventions 6: \"a parameter given only by its purpose has a wire name that is not shown\"",
        &[
            "WIRE.md's `cursor`, `limit` and `direction`",
            "other names (`after`, `page_size`, `sort`, ...), WIRE.md's not read at all",
        ],
        "the model's own read of each cursor list shows what it reads: a first page asked `direction=ASC` that comes in descending ids does not read the direction; one asked `limit=100` that holds the default 30 rows of a list counting more does not read the page size; the page asked with the first page's `next_cursor` that repeats the first does not read the cursor, unless a descending walk's second page moves on. A direction or page size whose value `x` is refused is read all the same. A name no answer shows read is reported by the observation `wire.paging-names` and listed not judged, and the rules that send it skip that list (`cursor.max-limit`, `cursor.order`, `cursor.walk`, `cursor.end`) or judge its first page in its default order and size (`filters.*`, `near.filters`, `cursor.only-settlement-txns`, `own.back-to-back`)",
    ),
    room(
        "lookup-names",
        "Lookups: \"Query (purpose only, except alias_type)\"; Conventions 6: \"a parameter given only by its purpose has a wire name that is not shown\"",
        &[
            "WIRE.md's `iban`, `alias_value` and `with_title_fetch`",
            "other names (`account_iban`, `value`, `include_title`, ...), WIRE.md's not read at all",
        ],
        "a lookup asked under WIRE.md's names with a value the server showed or was given, and refused with a 400, may be read under names of the server's own (a server that does not read a name refuses every such request, as one that refuses the value would): `wire.lookup-names` reports it, `envelope.success` and `explore.sequences` do not count the refusal, and the rules that need a lookup's answer (`lookups.match`, `near.lookups`, `own.back-to-back`) have none to judge",
    ),
    room(
        "several-values",
        "Refunds: \"Query filters (purpose only; each accepts one or more values)\" (how several values are written is not shown)",
        &[
            "the key repeated (`?status=A&status=B`), as WIRE.md writes it",
            "one key, the values comma-separated (`?status=A,B`), a repeated key refused",
        ],
        "two values of the server's own data, each keeping rows the other does not, are asked both ways beside the next wave's reads: the first form whose answer keeps rows of both is the one the rules write several values in (`filters.multi-value`, `filters.*`, `near.filters`); a list that keeps one at most either way is reported by the observation `wire.filter-names`, listed not judged and not asked for several (with `--require-wire-names`, asked with the key repeated and judged)",
    ),
    room(
        "id-shapes",
        "typing rule 1: \"Identifiers are strings with a type prefix.\" (what follows the prefix is not shown); Errors: \"Which parameter values cause error.bad_request: not shown.\"",
        &[
            "any id after its prefix looked up, one that names nothing answered 404",
            "an id not of the server's own shape after its prefix refused with 400, before the aggregator is looked at",
        ],
        "every id the harness sends where it judges more than the key is one the server showed, or one of its shape (a known id with its end changed within its alphabet: `errors.not-found`, `ids.unknown`, `near.path-ids`, `wire.unknown-id-404`); `scope.unknown-aggregator` asks only requests whose every value the server showed or the run was given; an id of another shape is judged only as never a 5xx and never a record (`ids.unknown`, `input.*`)",
    ),
    room(
        "filter-names",
        "Conventions 6: \"a parameter given only by its purpose has a wire name that is not shown\"",
        &[
            "WIRE.md's names (`is_active`, `names`, `status`, `batch_id`, ...)",
            "other names, WIRE.md's not read at all",
        ],
        "each filter API.md gives by purpose only is asked once with a value of the server's own data that keeps none of the list's first row under any reading: a server that leaves the row out or refuses the value, or keeps the row but refuses a value no reading takes (`x` for a status, a flag, a date, a token), reads the name and is held to what API.md says the filter does (`filters.*`, `near.filters`, `own.back-to-back`, `cursor.bad-batch-token`); a filter no answer shows read is reported by the observation `wire.filter-names`, listed not judged, and judged by no required rule unless `--param-name` or `--require-wire-names` holds the server to a name",
    ),
    room(
        "page-max",
        "Limits: \"Maximum page size of the merchant, rail-merchant, QR, refund and webhook lists: not shown.\"",
        &["100", "any smaller maximum, the page clamped to it"],
        "a page shorter than the limit asked is not taken for the end of the list; pages are read until an empty one",
    ),
    room(
        "limit-above-max",
        "WIRE.md Cursor pagination: \"above 100 the mock clamps to 100 (a server may instead answer 400: both honour API.md)\"",
        &["clamped to the maximum", "400 error.bad_request"],
        "a limit above the maximum passes either way; a page longer than the maximum fails",
    ),
    room(
        "limit-zero",
        "Access keys: page size \"0 to 100\" (\"0 means the default\" is shown only for the cursor lists)",
        &["the default page", "an empty page"],
        "`offset.limit` takes for limit 0 any number of the list's first rows, or a 400; the cursor lists' 0 is their default, as API.md says",
    ),
    room(
        "bad-values",
        "Errors: \"Which parameter values cause error.bad_request: not shown.\"",
        &[
            "400 error.bad_request",
            "the value ignored (the default used)",
        ],
        "a bad value passes with a 400 in the documented shape or a success; a 5xx, a hang or a success that is wrong fails; a negative limit's 400 is the observation `wire.limit-validation`",
    ),
    room(
        "name-matching",
        "Access keys: \"comma-separated list of name fragments\"; Merchants: \"comma-separated list of names\" (whether case counts, and whether a name is whole or a fragment, is not shown)",
        &[
            "fragments without case",
            "fragments with case",
            "whole names only (merchant names)",
        ],
        "a filter's answer is judged against every reading the text allows: it passes when it is the answer of one of them",
    ),
    room(
        "offset-order",
        "Access keys, Merchants, QR codes, Webhooks: the order of these lists is not shown",
        &["the server's own order, the same on every request"],
        "pages are judged against the server's own order, learned from the list read whole",
    ),
    unexercised(
        "sort-key",
        "Refunds: \"sort direction | ASC or DESC\" (the key it sorts on is not shown)",
        &["any key, ASC the reverse of DESC"],
        "`offset.direction` requires ASC to be the reverse of DESC, rows equal on created_at in any order",
        "the mock's refunds never share a created_at, so no tie can be reordered",
    ),
    room(
        "cursor-end",
        "Settlements: cursor lists \"return next_cursor\" (the end of a list is not shown); WIRE.md: a client stops at a short page, an empty page, \"\" or \"0\"",
        &["the last row's id", "\"\"", "\"0\""],
        "every end WIRE.md lists ends the list; a next_cursor already seen is a failure",
    ),
    room(
        "export-required",
        "Settlements: \"Which of settlement_batch_id and kind are required: not shown.\"",
        &["both required (400 without)", "a default for either"],
        "a request without them is judged only by the observation `wire.export-validation`",
    ),
    room(
        "payout-shape",
        "Transaction: \"Element shape of `settlement_transactions` (settlement payouts): not shown.\"",
        &["WIRE.md's reference element", "any other element"],
        "no required rule reads a payout's fields (the cursor rules need only the numeric id the list is ordered on); `wire.payout-shape` observes the reference element; the client keeps an element of another shape as sent, and the sync mirrors it",
    ),
    room(
        "error-words",
        "Authentication 2: \"a message saying that a partner access key is required in the request header\"; Errors: 400 \"invalid request parameters (message says so)\"",
        &["the reference's words", "other words saying the same"],
        "messages are judged on the phrases API.md gives them (\"access key\" and \"required\"; \"invalid\"), anywhere in any words and any case",
    ),
    room(
        "error-fields",
        "Errors: \"Envelope form: { api_version (string), error: { code (string), message (string) } }\"; \"Bare form: { code (string), message (string) }\"",
        &["those fields only", "more fields beside them"],
        "the listed fields are required; others are not read",
    ),
    room(
        "foreign-aggregator",
        "Authentication 4: \"Whether the key must belong to the aggregator named in the path: not shown.\"",
        &["401", "404 error.not_found"],
        "an aggregator that is not the key's may be refused with 401 or 404, never answered with another aggregator's data",
    ),
    room(
        "old-secret",
        "Authentication 5: \"Key scopes, expiry, and the treatment of an inactive key (is_active false): not shown.\" (rotation returns the new secret and says nothing of the old)",
        &["refused at once", "accepted for a while"],
        "the new secret must work at once; the old one's refusal is the observation `wire.rotation-revokes-old`",
    ),
    room(
        "inactive-key",
        "Authentication 5: \"Key scopes, expiry, and the treatment of an inactive key (is_active false): not shown.\"",
        &["refused", "accepted"],
        "an inactive key is never used to judge refusal",
    ),
    unexercised(
        "rate-limits",
        "Limits: \"Rate limits: not shown.\"",
        &["none", "429 with Retry-After, at any time"],
        "a 429 or 503 is waited out and retried with a bound; it is evidence only when it never ends",
        "exercised by the mock's chaos (`--chaos`), not by a legal choice: the transient tests show a server answering 429 and 5xx at random passes",
    ),
    unexercised(
        "caching",
        "Lookups and lists: how an answer is made (computed anew, or kept from an earlier request) is not shown",
        &[
            "every answer computed anew",
            "answers kept for a while, keyed on the whole request",
        ],
        "every answer is judged as the answer to its own request (`own.back-to-back` asks two requests that differ in one place, one right after the other): a kept answer passes wherever it is the right one",
        "a cache keyed on the whole request answers exactly as a server without one, so no answer can show the choice; a cache keyed on less is the fault `lookup-cache-ignores-query`",
    ),
    unexercised(
        "equal-forms",
        "RFC 9110 section 5.1 (field names are case-insensitive); RFC 9110 section 5.5 (whitespace around a field value is not part of it); RFC 3986 section 6.2.2.2 (a percent-encoded unreserved character is the character)",
        &["the value itself"],
        "the near misses of the `near.*` rules never take these forms: a header name's case is `auth.header-case`'s, a header value is never padded, a percent-encoded unreserved character is never sent as a near miss (a double-encoded one is: it is another value)",
        "an RFC makes these forms the value itself: no server can read them otherwise, so no legal choice can differ",
    ),
];

/// The room named `name`.
#[cfg(test)]
fn room_named(name: &str) -> Option<&'static Room> {
    ROOMS.iter().find(|r| r.name == name)
}

#[cfg(test)]
mod tests {
    use aggpay_mock::Legal;

    use super::*;

    #[test]
    fn every_room_is_exercised_or_says_why_not() {
        let mut names = std::collections::HashSet::new();
        for r in ROOMS {
            assert!(names.insert(r.name), "{} twice", r.name);
            assert!(!r.readings.is_empty() && !r.text.is_empty(), "{}", r.name);
            let choices = Legal::ALL.iter().filter(|l| l.room() == r.name).count();
            match r.unexercised {
                None => assert!(
                    choices > 0,
                    "room {} has no legal choice of the mock",
                    r.name
                ),
                Some(_) => assert_eq!(choices, 0, "room {} is exercised after all", r.name),
            }
        }
        for l in Legal::ALL {
            assert!(
                room_named(l.room()).is_some(),
                "legal choice {l} names no room: {}",
                l.room()
            );
        }
        assert!(Legal::ALL.len() >= 25, "{} legal choices", Legal::ALL.len());
    }
}
