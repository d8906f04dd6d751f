//! Streams every transaction of every completed settlement batch to CSV,
//! one page in memory at a time.
//!
//! ```text
//! cargo run -p aggpay --example batches_to_csv > transactions.csv
//! ```

mod common;

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use aggpay::{BatchQuery, BatchStatus, Direction, TransactionQuery};

/// Quotes a CSV field when it needs it (RFC 4180).
fn field(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let (client, _mock) = common::client()?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    writeln!(
        out,
        "batch,transaction,payment_id,type,status,merchant,gross_amount,fee_amount,net_amount,currency,created_at"
    )?;
    let (mut batches, mut rows) = (0u64, 0u64);
    let completed = BatchQuery::new()
        .status(BatchStatus::Completed)
        .limit(100)
        .direction(Direction::Asc);
    for batch in client.settlement_batches(&completed) {
        let batch = batch?;
        batches += 1;
        let query = TransactionQuery::new().direction(Direction::Asc);
        for txn in client.batch_transactions(&batch.token, &query) {
            let t = txn?;
            rows += 1;
            writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{}",
                batch.token,
                t.token,
                t.payment_id,
                t.transaction_type,
                t.status,
                field(&t.aggregator_merchant_name),
                t.gross_amount,
                t.fee_amount,
                t.net_amount,
                t.currency,
                t.created_at
            )?;
        }
    }
    out.flush()?;
    eprintln!("wrote {rows} transactions of {batches} completed batches");
    Ok(())
}
