//! The PostgreSQL schema of one aggregator, as forward migrations: the
//! same tables and types as the SQLite file (BIGINT for its INTEGER,
//! BOOLEAN for its 0 or 1), plus `meta`, which says whose schema it is
//! and at what version. Never edit a migration that shipped: add one.

/// `meta.application` of a schema aggpay-sync made: any other is refused.
pub const APPLICATION: &str = "aggpay-sync";

/// The migrations, oldest first.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// Version 1: the SQLite file's version 2, at once.
const V1: &str = "
CREATE TABLE meta (
    singleton BIGINT PRIMARY KEY CHECK (singleton = 1),
    application TEXT NOT NULL,
    version BIGINT NOT NULL
);

CREATE TABLE source (
    singleton BIGINT PRIMARY KEY CHECK (singleton = 1),
    aggregator_id TEXT NOT NULL,
    base_url TEXT NOT NULL
);

CREATE TABLE batches (
    token TEXT PRIMARY KEY,
    id BIGINT NOT NULL UNIQUE,
    file_name TEXT NOT NULL,
    date TEXT NOT NULL,
    status TEXT NOT NULL,
    version BIGINT NOT NULL,
    created_by_job_id TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    refreshed_at TEXT NOT NULL
);

CREATE TABLE transactions (
    token TEXT PRIMARY KEY,
    id BIGINT NOT NULL,
    batch_id BIGINT NOT NULL REFERENCES batches (id),
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
    gross_amount BIGINT NOT NULL,
    fee_amount BIGINT NOT NULL,
    net_amount BIGINT NOT NULL,
    sales_tax_on_fee_amount BIGINT NOT NULL,
    sales_tax_withholding_amount BIGINT NOT NULL,
    income_tax_withholding_amount BIGINT NOT NULL,
    digital_tax_amount BIGINT NOT NULL,
    currency TEXT NOT NULL,
    latest_batch_id TEXT NOT NULL,
    partner_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX transactions_by_batch ON transactions (batch_id, id);

CREATE TABLE payouts (
    token TEXT PRIMARY KEY,
    id BIGINT NOT NULL,
    batch_id BIGINT NOT NULL REFERENCES batches (id),
    settlement_batch_id TEXT NOT NULL,
    aggregator_id TEXT NOT NULL,
    aggregator_merchant_id TEXT NOT NULL,
    rail_merchant_id TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    gross_amount BIGINT NOT NULL,
    fee_amount BIGINT NOT NULL,
    net_amount BIGINT NOT NULL,
    sales_tax_on_fee_amount BIGINT NOT NULL,
    sales_tax_withholding_amount BIGINT NOT NULL,
    income_tax_withholding_amount BIGINT NOT NULL,
    digital_tax_amount BIGINT NOT NULL,
    debitor_account_id TEXT NOT NULL,
    creditor_account_id TEXT NOT NULL,
    failure_reason TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX payouts_by_batch ON payouts (batch_id, id);

CREATE TABLE walks (
    batch_token TEXT NOT NULL REFERENCES batches (token),
    kind TEXT NOT NULL CHECK (kind IN ('transactions', 'payouts')),
    position TEXT,
    head_id BIGINT,
    tail_position TEXT,
    tail_id BIGINT,
    server_count BIGINT,
    verified_at TEXT,
    PRIMARY KEY (batch_token, kind)
);

CREATE TABLE runs (
    id BIGSERIAL PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    exit_code BIGINT,
    summary TEXT
);

CREATE TABLE integrity_errors (
    run_id BIGINT NOT NULL REFERENCES runs (id),
    batch_token TEXT NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    found_at TEXT NOT NULL
);

CREATE TABLE refunds (
    token TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL,
    amount BIGINT NOT NULL,
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
);
CREATE INDEX refunds_by_payment ON refunds (payment_id);

CREATE TABLE merchants (
    token TEXT PRIMARY KEY,
    id BIGINT NOT NULL,
    name TEXT NOT NULL,
    aggregator_id TEXT NOT NULL,
    merchant_id TEXT NOT NULL,
    merchant_external_id TEXT NOT NULL,
    bank_account_id TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    refreshed_at TEXT NOT NULL
);

CREATE TABLE rail_merchants (
    token TEXT PRIMARY KEY,
    id BIGINT NOT NULL,
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
);

CREATE TABLE cursors (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
";

/// Version 2: a payout's shape is not shown by API.md, so every column of
/// a reference member may be NULL and `element` keeps the element as the
/// server sent it (the SQLite schema's version 3; rows mirrored before
/// get their element rebuilt from their values).
const V2: &str = "
ALTER TABLE payouts
    ALTER COLUMN id DROP NOT NULL,
    ALTER COLUMN settlement_batch_id DROP NOT NULL,
    ALTER COLUMN aggregator_id DROP NOT NULL,
    ALTER COLUMN aggregator_merchant_id DROP NOT NULL,
    ALTER COLUMN rail_merchant_id DROP NOT NULL,
    ALTER COLUMN status DROP NOT NULL,
    ALTER COLUMN attempt DROP NOT NULL,
    ALTER COLUMN gross_amount DROP NOT NULL,
    ALTER COLUMN fee_amount DROP NOT NULL,
    ALTER COLUMN net_amount DROP NOT NULL,
    ALTER COLUMN sales_tax_on_fee_amount DROP NOT NULL,
    ALTER COLUMN sales_tax_withholding_amount DROP NOT NULL,
    ALTER COLUMN income_tax_withholding_amount DROP NOT NULL,
    ALTER COLUMN digital_tax_amount DROP NOT NULL,
    ALTER COLUMN debitor_account_id DROP NOT NULL,
    ALTER COLUMN creditor_account_id DROP NOT NULL,
    ALTER COLUMN failure_reason DROP NOT NULL,
    ALTER COLUMN created_at DROP NOT NULL,
    ALTER COLUMN updated_at DROP NOT NULL,
    ADD COLUMN element TEXT;
UPDATE payouts SET element = json_build_object(
        'token', token,
        'settlement_batch_id', settlement_batch_id,
        'aggregator_id', aggregator_id,
        'aggregator_merchant_id', aggregator_merchant_id,
        'rail_merchant_id', rail_merchant_id,
        'status', status,
        'id', id::text,
        'attempt', attempt,
        'gross_amount', gross_amount::text,
        'fee_amount', fee_amount::text,
        'net_amount', net_amount::text,
        'sales_tax_on_fee_amount', sales_tax_on_fee_amount::text,
        'sales_tax_withholding_amount', sales_tax_withholding_amount::text,
        'income_tax_withholding_amount', income_tax_withholding_amount::text,
        'digital_tax_amount', digital_tax_amount::text,
        'debitor_account_id', debitor_account_id,
        'creditor_account_id', creditor_account_id,
        'failure_reason', failure_reason,
        'created_at', created_at,
        'updated_at', updated_at
    )::text;
ALTER TABLE payouts ALTER COLUMN element SET NOT NULL;
";

/// Version 3: a rail merchant's `id` is text (the SQLite schema's version
/// 4): API.md calls it only a string, and a server may send a UUID.
const V3: &str = "
ALTER TABLE rail_merchants ALTER COLUMN id TYPE TEXT USING id::text;
";
