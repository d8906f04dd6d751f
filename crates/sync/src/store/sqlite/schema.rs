//! The schema, as forward migrations. Migration `n` (1-based) takes a
//! database from version `n - 1` to `n`; `PRAGMA user_version` holds the
//! version reached. Never edit a migration that shipped: add one.

/// `PRAGMA application_id` of an aggpay-sync database ("AGPY"): a SQLite
/// file of another program is refused, never altered.
pub const APPLICATION_ID: i64 = 0x4147_5059;

/// The migrations, oldest first.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3, V4];

/// Version 1: the mirror (batches, transactions, payouts, typed as API.md
/// types them: amounts in integer paisa, timestamps RFC 3339 text; a row's
/// `batch_id` is the `id` of the batch it was walked from) and the
/// tool's own state (what it mirrors, where each walk stands, its runs
/// and the integrity errors they found).
const V1: &str = "
CREATE TABLE source (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    aggregator_id TEXT NOT NULL,
    base_url TEXT NOT NULL
) STRICT;

CREATE TABLE batches (
    token TEXT PRIMARY KEY,
    id INTEGER NOT NULL UNIQUE,
    file_name TEXT NOT NULL,
    date TEXT NOT NULL,
    status TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_by_job_id TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    refreshed_at TEXT NOT NULL
) STRICT;

CREATE TABLE transactions (
    token TEXT PRIMARY KEY,
    id INTEGER NOT NULL,
    batch_id INTEGER NOT NULL REFERENCES batches (id),
    payment_id TEXT NOT NULL,
    refund_id TEXT,
    transaction_type TEXT NOT NULL,
    payment_type TEXT NOT NULL,
    status TEXT NOT NULL,
    aggregator_id TEXT NOT NULL,
    aggregator_name TEXT NOT NULL,
    aggregator_merchant_id TEXT NOT NULL,
    aggregator_merchant_name TEXT NOT NULL,
    rail_merchant_id TEXT NOT NULL,
    rail_merchant_name TEXT NOT NULL,
    rail_merchant_ntn TEXT NOT NULL,
    rail_merchant_province TEXT NOT NULL,
    gross_amount INTEGER NOT NULL,
    fee_amount INTEGER NOT NULL,
    net_amount INTEGER NOT NULL,
    sales_tax_on_fee_amount INTEGER NOT NULL,
    sales_tax_withholding_amount INTEGER NOT NULL,
    income_tax_withholding_amount INTEGER NOT NULL,
    digital_tax_amount INTEGER NOT NULL,
    currency TEXT NOT NULL,
    latest_batch_id TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX transactions_by_batch ON transactions (batch_id, id);

CREATE TABLE payouts (
    token TEXT PRIMARY KEY,
    id INTEGER NOT NULL,
    batch_id INTEGER NOT NULL REFERENCES batches (id),
    settlement_batch_id TEXT NOT NULL,
    aggregator_id TEXT NOT NULL,
    aggregator_merchant_id TEXT NOT NULL,
    rail_merchant_id TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    gross_amount INTEGER NOT NULL,
    fee_amount INTEGER NOT NULL,
    net_amount INTEGER NOT NULL,
    sales_tax_on_fee_amount INTEGER NOT NULL,
    sales_tax_withholding_amount INTEGER NOT NULL,
    income_tax_withholding_amount INTEGER NOT NULL,
    digital_tax_amount INTEGER NOT NULL,
    debitor_account_id TEXT NOT NULL,
    creditor_account_id TEXT NOT NULL,
    failure_reason TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
CREATE INDEX payouts_by_batch ON payouts (batch_id, id);

-- Where the walk of a batch's rows stands, committed with the rows it
-- follows: the ascending walk from the first row (`position`, up to
-- `head_id`) and, for a large final batch, a descending one from the
-- last row (`tail_position`, down to `tail_id`) until they meet; then
-- the verification against the server's count.
CREATE TABLE walks (
    batch_token TEXT NOT NULL REFERENCES batches (token),
    kind TEXT NOT NULL CHECK (kind IN ('transactions', 'payouts')),
    position TEXT,
    head_id INTEGER,
    tail_position TEXT,
    tail_id INTEGER,
    server_count INTEGER,
    verified_at TEXT,
    PRIMARY KEY (batch_token, kind)
) STRICT;

CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    exit_code INTEGER,
    summary TEXT
) STRICT;

CREATE TABLE integrity_errors (
    run_id INTEGER NOT NULL REFERENCES runs (id),
    batch_token TEXT NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    found_at TEXT NOT NULL
) STRICT;
";

/// Version 2: what a reconciliation joins to the rows: refunds (upserted
/// by token, incrementally by creation time), aggregator merchants and
/// rail merchants (their nested objects as JSON text), each with when it
/// was last refreshed; and the values the tool keeps between runs.
const V2: &str = "
CREATE TABLE refunds (
    token TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL,
    amount INTEGER NOT NULL,
    type TEXT NOT NULL,
    reason TEXT NOT NULL,
    addtl_info TEXT NOT NULL,
    status TEXT NOT NULL,
    trace_reference TEXT NOT NULL,
    msg_id TEXT NOT NULL,
    return_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    msg_created_at TEXT NOT NULL,
    settle_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    refreshed_at TEXT NOT NULL
) STRICT;
CREATE INDEX refunds_by_payment ON refunds (payment_id);

CREATE TABLE merchants (
    token TEXT PRIMARY KEY,
    id INTEGER NOT NULL,
    name TEXT NOT NULL,
    aggregator_id TEXT NOT NULL,
    merchant_id TEXT NOT NULL,
    merchant_external_id TEXT NOT NULL,
    bank_account_id TEXT NOT NULL,
    enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    refreshed_at TEXT NOT NULL
) STRICT;

CREATE TABLE rail_merchants (
    token TEXT PRIMARY KEY,
    id INTEGER NOT NULL,
    partner_id TEXT NOT NULL,
    rail_record_id TEXT NOT NULL,
    status TEXT NOT NULL,
    uid_type TEXT NOT NULL,
    uid_value TEXT NOT NULL,
    name TEXT NOT NULL,
    document_type TEXT NOT NULL,
    document_number TEXT NOT NULL,
    address_details TEXT NOT NULL,
    contact_details TEXT NOT NULL,
    additional_details TEXT NOT NULL,
    additional_details_private TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    refreshed_at TEXT NOT NULL
) STRICT;

CREATE TABLE cursors (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT;
";

/// Version 3: a payout's shape is not shown by API.md, so every column of
/// a reference member may be NULL (the server sent it in another form or
/// not at all) and `element` keeps the element as the server sent it;
/// `token` is the payout's key (its token, else its id, else the
/// element). Rows mirrored before keep their values, with their element
/// rebuilt from them in the reference's form.
const V3: &str = "
CREATE TABLE payouts_v3 (
    token TEXT PRIMARY KEY,
    id INTEGER,
    batch_id INTEGER NOT NULL REFERENCES batches (id),
    settlement_batch_id TEXT,
    aggregator_id TEXT,
    aggregator_merchant_id TEXT,
    rail_merchant_id TEXT,
    status TEXT,
    attempt INTEGER,
    gross_amount INTEGER,
    fee_amount INTEGER,
    net_amount INTEGER,
    sales_tax_on_fee_amount INTEGER,
    sales_tax_withholding_amount INTEGER,
    income_tax_withholding_amount INTEGER,
    digital_tax_amount INTEGER,
    debitor_account_id TEXT,
    creditor_account_id TEXT,
    failure_reason TEXT,
    created_at TEXT,
    updated_at TEXT,
    element TEXT NOT NULL
) STRICT;
INSERT INTO payouts_v3
SELECT token, id, batch_id, settlement_batch_id, aggregator_id, aggregator_merchant_id,
    rail_merchant_id, status, attempt, gross_amount, fee_amount, net_amount,
    sales_tax_on_fee_amount, sales_tax_withholding_amount, income_tax_withholding_amount,
    digital_tax_amount, debitor_account_id, creditor_account_id, failure_reason,
    created_at, updated_at, json_object(
        'token', token,
        'settlement_batch_id', settlement_batch_id,
        'aggregator_id', aggregator_id,
        'aggregator_merchant_id', aggregator_merchant_id,
        'rail_merchant_id', rail_merchant_id,
        'status', status,
        'id', CAST(id AS TEXT),
        'attempt', attempt,
        'gross_amount', CAST(gross_amount AS TEXT),
        'fee_amount', CAST(fee_amount AS TEXT),
        'net_amount', CAST(net_amount AS TEXT),
        'sales_tax_on_fee_amount', CAST(sales_tax_on_fee_amount AS TEXT),
        'sales_tax_withholding_amount', CAST(sales_tax_withholding_amount AS TEXT),
        'income_tax_withholding_amount', CAST(income_tax_withholding_amount AS TEXT),
        'digital_tax_amount', CAST(digital_tax_amount AS TEXT),
        'debitor_account_id', debitor_account_id,
        'creditor_account_id', creditor_account_id,
        'failure_reason', failure_reason,
        'created_at', created_at,
        'updated_at', updated_at
    )
FROM payouts;
DROP TABLE payouts;
ALTER TABLE payouts_v3 RENAME TO payouts;
CREATE INDEX payouts_by_batch ON payouts (batch_id, id);
";

/// Version 4: a rail merchant's `id` is text. API.md calls it only a
/// string ("Most records carry a numeric `id`"), and a server may send a
/// UUID; the ids mirrored before keep their digits.
const V4: &str = "
CREATE TABLE rail_merchants_v4 (
    token TEXT PRIMARY KEY,
    id TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    rail_record_id TEXT NOT NULL,
    status TEXT NOT NULL,
    uid_type TEXT NOT NULL,
    uid_value TEXT NOT NULL,
    name TEXT NOT NULL,
    document_type TEXT NOT NULL,
    document_number TEXT NOT NULL,
    address_details TEXT NOT NULL,
    contact_details TEXT NOT NULL,
    additional_details TEXT NOT NULL,
    additional_details_private TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    refreshed_at TEXT NOT NULL
) STRICT;
INSERT INTO rail_merchants_v4
SELECT token, CAST(id AS TEXT), partner_id, rail_record_id, status, uid_type, uid_value, name,
    document_type, document_number, address_details, contact_details, additional_details,
    additional_details_private, created_at, updated_at, refreshed_at
FROM rail_merchants;
DROP TABLE rail_merchants;
ALTER TABLE rail_merchants_v4 RENAME TO rail_merchants;
";
