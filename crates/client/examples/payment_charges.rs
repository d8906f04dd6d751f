//! Finds a payment's fee and tax breakdown.
//!
//! ```text
//! cargo run -p aggpay --example payment_charges -- pm_...
//! ```
//! Without an argument, the payment of the newest transaction is used.

mod common;

use std::process::ExitCode;

use aggpay::{BatchQuery, PaymentId, TransactionQuery};

fn main() -> ExitCode {
    common::exit(run())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let (client, _mock) = common::client()?;
    let payment = match std::env::args().nth(1) {
        // Refused here, before any request, when it is not a pm_ id.
        Some(arg) => PaymentId::parse(arg)?,
        None => {
            let mut found = None;
            for batch in client.settlement_batches(&BatchQuery::new()) {
                let batch = batch?;
                let page = client
                    .list_batch_transactions(&batch.token, &TransactionQuery::new().limit(1))?;
                if let Some(t) = page.items.into_iter().next() {
                    found = Some(t.payment_id);
                    break;
                }
            }
            found.ok_or("no transaction found to take a payment from")?
        }
    };
    let c = client.get_payment_charges(&payment)?;
    println!("payment        {}", c.payment_id);
    println!("gross          {:>12} {}", c.gross_amount, c.currency);
    println!("fee            {:>12}", c.fee_amount);
    println!("tax on fee     {:>12}", c.sales_tax_on_fee_amount);
    println!("sales tax w/h  {:>12}", c.sales_tax_withholding_amount);
    println!("income tax w/h {:>12}", c.income_tax_withholding_amount);
    println!("digital tax    {:>12}", c.digital_tax_amount);
    println!("net            {:>12} (amounts in paisa)", c.net_amount);
    if c.expected_net() != Some(c.net_amount) {
        eprintln!("warning: net is not gross minus the fee and the four taxes");
    }
    Ok(())
}
