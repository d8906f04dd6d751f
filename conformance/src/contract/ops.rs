//! API.md's 17 operations, with WIRE.md's wire names for the parameters
//! API.md gives only by purpose.

use super::resources::{
    ACCESS_KEY, ACCOUNT_INFO, AGGREGATOR, ALIAS, BATCH, BATCH_LIST, CHARGES, EXPORT_CREATED,
    KEY_LIST, LEDGER, MERCHANT, MERCHANT_LIST, QR_CODE, QR_LIST, RAIL_MERCHANT, RAIL_MERCHANT_LIST,
    REFUND, REFUND_LIST, TRANSACTION, TRANSACTION_LIST, WEBHOOK, WEBHOOK_LIST,
};
use super::{
    BodyField, Domain, Effect, Filter, ListShape, Many, Matching, Named, Op, OpId, Paging, Param,
    PathId, Role, Success, names,
};

const fn param(wire: &'static str, named: Named, domain: Domain, role: Role) -> Param {
    Param {
        wire,
        named,
        domain,
        role,
    }
}

const fn filter(
    wire: &'static str,
    named: Named,
    domain: Domain,
    field: &'static str,
    matching: Matching,
    many: Many,
) -> Param {
    param(
        wire,
        named,
        domain,
        Role::Filter(Filter {
            field,
            matching,
            many,
        }),
    )
}

/// Offset lists: API.md shows neither default nor maximum (the access-key
/// list aside, whose page size is 0 to 100).
const OFFSET_LIMIT: Param = param(
    names::LIMIT,
    Named::Wire,
    Domain::Int,
    Role::Limit {
        default: None,
        max: None,
        zero_is_default: false,
    },
);
const OFFSET: Param = param(names::OFFSET, Named::Wire, Domain::Int, Role::Offset);
/// The QR list's offset, which API.md names (`| offset | integer | ...`).
const QR_OFFSET: Param = param(names::OFFSET, Named::Api, Domain::Int, Role::Offset);
/// Cursor lists: default 30, maximum 100, 0 means the default (Limits).
const CURSOR_LIMIT: Param = param(
    names::LIMIT,
    Named::Wire,
    Domain::Int,
    Role::Limit {
        default: Some(30),
        max: Some(100),
        zero_is_default: true,
    },
);
const CURSOR: Param = param(names::CURSOR, Named::Wire, Domain::Int, Role::Cursor);
const DIRECTION: Param = param(
    names::DIRECTION,
    Named::Wire,
    Domain::Choice(&["ASC", "DESC"]),
    Role::Direction,
);
const WITH_TITLE: Param = param(
    names::WITH_TITLE_FETCH,
    Named::Wire,
    Domain::Bool,
    Role::Option,
);

/// The batch status names, in the order of their filter integers.
pub const BATCH_STATUSES: &[&str] = &[
    "BATCH_CREATED",
    "BATCH_PROCESSING",
    "BATCH_COMPLETED",
    "BATCH_FAILED",
];

const fn read(id: OpId, name: &'static str, path: &'static str) -> Op {
    Op {
        id,
        name,
        method: "GET",
        path,
        path_id: None,
        params: &[],
        body: &[],
        data: &[],
        list: None,
        errors: &[],
        success: Success::Any2xx,
        effect: Effect::Read,
        section: "",
    }
}

/// Every operation, in API.md's order.
pub const OPS: &[Op] = &[
    Op {
        data: AGGREGATOR,
        errors: &[404],
        section: "Aggregator",
        ..read(OpId::Aggregator, "aggregator", "")
    },
    Op {
        params: &[
            param(
                names::LIMIT,
                Named::Wire,
                Domain::Int,
                Role::Limit {
                    default: None,
                    max: Some(100),
                    zero_is_default: false,
                },
            ),
            OFFSET,
            filter(
                "names",
                Named::Wire,
                Domain::Text,
                "name",
                Matching::Fragment,
                Many::Comma,
            ),
            filter(
                "is_active",
                Named::Wire,
                Domain::Bool,
                "is_active",
                Matching::Bool,
                Many::One,
            ),
        ],
        data: KEY_LIST,
        list: Some(ListShape {
            rows: "keys",
            fields: ACCESS_KEY,
            paging: Paging::Offset,
            other_rows: None,
        }),
        errors: &[401],
        section: "Access keys",
        ..read(OpId::Keys, "keys", "/keys")
    },
    Op {
        method: "PUT",
        path_id: Some(PathId {
            name: "access-key-id",
            prefix: "ak_",
            exact_len: None,
            answers_for: None,
        }),
        data: ACCESS_KEY,
        effect: Effect::Rotation,
        section: "Access keys",
        ..read(OpId::Rotate, "rotate", "/keys/{access-key-id}/rotate")
    },
    Op {
        params: &[
            OFFSET_LIMIT,
            OFFSET,
            filter(
                "enabled",
                Named::Wire,
                Domain::Bool,
                "enabled",
                Matching::Bool,
                Many::One,
            ),
            filter(
                "merchant_identifiers",
                Named::Wire,
                Domain::Token("am_"),
                "token",
                Matching::Exact,
                Many::Comma,
            ),
            filter(
                "names",
                Named::Wire,
                Domain::Text,
                "name",
                Matching::Name,
                Many::Comma,
            ),
        ],
        data: MERCHANT_LIST,
        list: Some(ListShape {
            rows: "merchants",
            fields: MERCHANT,
            paging: Paging::Offset,
            other_rows: None,
        }),
        errors: &[401],
        section: "Merchants",
        ..read(OpId::Merchants, "merchants", "/merchants")
    },
    Op {
        params: &[
            OFFSET_LIMIT,
            OFFSET,
            filter(
                names::STATUS,
                Named::Wire,
                Domain::Choice(&["Active", "Inactive", "Suspended"]),
                "status",
                Matching::Exact,
                Many::One,
            ),
            filter(
                "name",
                Named::Wire,
                Domain::Text,
                "name",
                Matching::Name,
                Many::One,
            ),
        ],
        data: RAIL_MERCHANT_LIST,
        list: Some(ListShape {
            rows: "merchants",
            fields: RAIL_MERCHANT,
            paging: Paging::Offset,
            other_rows: None,
        }),
        errors: &[401],
        section: "Merchants",
        ..read(OpId::RailMerchants, "rail-merchants", "/rail-merchants")
    },
    Op {
        path_id: Some(PathId {
            name: "rail-merchant-id",
            prefix: "mer_",
            exact_len: None,
            answers_for: Some("token"),
        }),
        data: RAIL_MERCHANT,
        errors: &[401],
        section: "Merchants",
        ..read(
            OpId::RailMerchant,
            "rail-merchant",
            "/rail-merchants/{rail-merchant-id}",
        )
    },
    Op {
        params: &[
            filter(
                "aggregator_merchant_id",
                Named::Api,
                Domain::Token("am_"),
                "aggregator_merchant_id",
                Matching::Exact,
                Many::One,
            ),
            param(
                names::TYPE,
                Named::Api,
                Domain::Choice(&["STATIC", "DYNAMIC"]),
                Role::Part {
                    field: "type",
                    default: "STATIC",
                },
            ),
            OFFSET_LIMIT,
            QR_OFFSET,
        ],
        data: QR_LIST,
        list: Some(ListShape {
            rows: "qr_codes",
            fields: QR_CODE,
            paging: Paging::Offset,
            other_rows: None,
        }),
        errors: &[401],
        section: "QR codes",
        ..read(OpId::Qrs, "qrs", "/qrs")
    },
    Op {
        path_id: Some(PathId {
            name: "payment-id",
            prefix: "pm_",
            exact_len: None,
            answers_for: Some("payment_id"),
        }),
        data: CHARGES,
        errors: &[401, 404],
        success: Success::Exactly200,
        section: "Payments",
        ..read(OpId::Charges, "charges", "/payments/{payment-id}/charges")
    },
    Op {
        params: &[
            OFFSET_LIMIT,
            OFFSET,
            filter(
                "payment_id",
                Named::Wire,
                Domain::Token("pm_"),
                "payment_id",
                Matching::Exact,
                Many::Repeated,
            ),
            filter(
                names::STATUS,
                Named::Wire,
                Domain::Text,
                "status",
                Matching::Exact,
                Many::Repeated,
            ),
            filter(
                "trace_reference",
                Named::Wire,
                Domain::Text,
                "trace_reference",
                Matching::Exact,
                Many::Repeated,
            ),
            filter(
                "msg_id",
                Named::Wire,
                Domain::Text,
                "msg_id",
                Matching::Exact,
                Many::Repeated,
            ),
            filter(
                "return_id",
                Named::Wire,
                Domain::Text,
                "return_id",
                Matching::Exact,
                Many::Repeated,
            ),
            filter(
                "request_id",
                Named::Wire,
                Domain::Text,
                "request_id",
                Matching::Exact,
                Many::Repeated,
            ),
            filter(
                "refund_id",
                Named::Wire,
                Domain::Text,
                "token",
                Matching::Exact,
                Many::Repeated,
            ),
            filter(
                "start_date",
                Named::Wire,
                Domain::Unix,
                "created_at",
                Matching::OnOrAfter,
                Many::One,
            ),
            filter(
                "end_date",
                Named::Wire,
                Domain::Unix,
                "created_at",
                Matching::OnOrBefore,
                Many::One,
            ),
            DIRECTION,
        ],
        data: REFUND_LIST,
        list: Some(ListShape {
            rows: "keys",
            fields: REFUND,
            paging: Paging::Offset,
            other_rows: None,
        }),
        errors: &[500],
        section: "Refunds",
        ..read(OpId::Refunds, "refunds", "/refunds")
    },
    Op {
        params: &[
            CURSOR,
            CURSOR_LIMIT,
            DIRECTION,
            filter(
                names::BATCH_ID,
                Named::Wire,
                Domain::BatchToken,
                "token",
                Matching::Exact,
                Many::One,
            ),
            filter(
                names::STATUS,
                Named::Wire,
                Domain::Choice(&["0", "1", "2", "3"]),
                "status",
                Matching::Code(BATCH_STATUSES),
                Many::One,
            ),
        ],
        data: BATCH_LIST,
        list: Some(ListShape {
            rows: "batches",
            fields: BATCH,
            paging: Paging::Cursor,
            other_rows: None,
        }),
        errors: &[400, 401],
        section: "Settlements",
        ..read(OpId::Batches, "batches", "/settlements/batches")
    },
    Op {
        path_id: Some(PathId {
            name: "settlement-batch-id",
            prefix: "sb_",
            exact_len: Some(39),
            answers_for: None,
        }),
        params: &[
            CURSOR,
            CURSOR_LIMIT,
            DIRECTION,
            param(
                names::ONLY_SETTLEMENT_TXNS,
                Named::Api,
                Domain::Bool,
                Role::RowKind,
            ),
        ],
        data: TRANSACTION_LIST,
        list: Some(ListShape {
            rows: "transactions",
            fields: TRANSACTION,
            paging: Paging::Cursor,
            other_rows: Some("settlement_transactions"),
        }),
        errors: &[400, 401, 404],
        section: "Settlements",
        ..read(
            OpId::Transactions,
            "transactions",
            "/settlements/batches/{settlement-batch-id}/transactions",
        )
    },
    Op {
        method: "POST",
        body: &[
            BodyField {
                name: "settlement_batch_id",
                domain: Domain::BatchToken,
                names: Some(OpId::Batches),
            },
            BodyField {
                name: "kind",
                domain: Domain::Choice(&["REPORT_KIND_BATCH", "REPORT_KIND_MERCHANT"]),
                names: None,
            },
            BodyField {
                name: "merchant_id",
                domain: Domain::Token("mer_"),
                names: Some(OpId::RailMerchants),
            },
        ],
        data: EXPORT_CREATED,
        errors: &[400, 401, 500],
        effect: Effect::NewJob,
        section: "Settlements",
        ..read(
            OpId::ReportExport,
            "report-export",
            "/settlements/report-exports",
        )
    },
    Op {
        params: &[
            param(
                names::IBAN,
                Named::Wire,
                Domain::Text,
                Role::Lookup(Some("iban")),
            ),
            WITH_TITLE,
            param(
                names::ALIAS_TYPE,
                Named::Api,
                Domain::Choice(&["MOBILE"]),
                Role::Option,
            ),
            param(
                names::ALIAS_VALUE,
                Named::Wire,
                Domain::Text,
                Role::Lookup(None),
            ),
        ],
        data: ACCOUNT_INFO,
        errors: &[401],
        section: "Lookups",
        ..read(OpId::AccountInfo, "account-info", "/account-info")
    },
    Op {
        params: &[
            param(
                names::ALIAS_TYPE,
                Named::Api,
                Domain::Choice(&["TILL_CODE"]),
                Role::Option,
            ),
            param(
                names::ALIAS_VALUE,
                Named::Wire,
                Domain::Text,
                Role::Lookup(None),
            ),
            WITH_TITLE,
        ],
        data: ACCOUNT_INFO,
        errors: &[401],
        section: "Lookups",
        ..read(OpId::TitleFetch, "title-fetch", "/title-fetch/alias")
    },
    Op {
        path_id: Some(PathId {
            name: "alias-id",
            prefix: "als_",
            exact_len: None,
            answers_for: Some("token"),
        }),
        data: ALIAS,
        errors: &[401],
        section: "Lookups",
        ..read(OpId::Alias, "alias", "/alias/{alias-id}")
    },
    Op {
        data: LEDGER,
        errors: &[401],
        section: "Ledger",
        ..read(OpId::Ledger, "ledger", "/ledger/accounts")
    },
    Op {
        params: &[OFFSET_LIMIT, OFFSET],
        data: WEBHOOK_LIST,
        list: Some(ListShape {
            rows: "endpoints",
            fields: WEBHOOK,
            paging: Paging::Offset,
            other_rows: None,
        }),
        errors: &[401],
        section: "Webhooks",
        ..read(OpId::Webhooks, "webhooks", "/webhooks")
    },
];
