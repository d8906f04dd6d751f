//! A checkpointed walk of a batch's transactions: each page's rows are
//! committed with the walk's position in one atomic write, a crash is
//! simulated midway, and a new client resumes from the saved position.
//! At the end, the rows kept are checked against the server's count:
//! none lost, none twice.
//!
//! ```sh
//! cargo run -p aggpay --example checkpoint -- STATE_FILE
//! ```
//!
//! Against `AGGPAY_BASE_URL` (with `AGGPAY_AGGREGATOR_ID` and
//! `AGGPAY_SECRET_KEY`), or an in-process mock when it is not set.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use aggpay::{BatchQuery, BatchToken, Client, Direction, TransactionQuery, WalkPosition};

/// What a run keeps: the rows so far and where the walk stands. A real
/// tool keeps them in a database, in one transaction.
#[derive(Debug, Default)]
struct State {
    position: Option<String>,
    rows: Vec<String>,
}

impl State {
    fn load(path: &Path) -> Result<Self, Box<dyn std::error::Error>> {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(Self::default());
        };
        let mut lines = text.lines();
        let position = lines.next().filter(|p| !p.is_empty()).map(str::to_owned);
        Ok(Self {
            position,
            rows: lines.map(str::to_owned).collect(),
        })
    }

    /// Rows and position together: written to a new file, then renamed
    /// over the old one, so that a crash leaves one or the other, whole.
    fn commit(&self, path: &Path) -> std::io::Result<()> {
        let mut text = self.position.clone().unwrap_or_default();
        for row in &self.rows {
            text.push('\n');
            text.push_str(row);
        }
        let new = path.with_extension("new");
        std::fs::write(&new, text)?;
        std::fs::rename(new, path)
    }
}

/// Walks `batch` from the saved state, committing page by page; stops
/// after `crash_after` pages when given (a simulated crash: nothing after
/// the last commit survives).
fn walk(
    client: &Client,
    batch: &BatchToken,
    path: &Path,
    crash_after: Option<usize>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut state = State::load(path)?;
    // Small pages, so that the walk has several to checkpoint.
    let query = TransactionQuery::new().direction(Direction::Asc).limit(20);
    let mut walk = client.batch_transactions(batch, &query);
    if let Some(saved) = &state.position {
        walk = walk.resume_from(&saved.parse::<WalkPosition>()?)?;
    }
    let mut pages = 0;
    while let Some(page) = walk.next_page() {
        let page = page?;
        state
            .rows
            .extend(page.items.iter().map(|t| t.token.to_string()));
        state.position = Some(walk.position().to_string());
        state.commit(path)?;
        pages += 1;
        if crash_after == Some(pages) {
            println!(
                "crashed after {pages} pages, {} rows kept",
                state.rows.len()
            );
            return Ok(());
        }
    }
    println!("walk finished: {} rows kept", state.rows.len());
    Ok(())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: checkpoint STATE_FILE")?;
    let path = Path::new(&path);
    let _ = std::fs::remove_file(path);
    let (client, _mock) = common::client()?;
    // The batch with the most rows on the first page of the list.
    let mut batch = None;
    let mut most = 0;
    for candidate in client.list_settlement_batches(&BatchQuery::new())? {
        let rows = client.count_batch_transactions(&candidate.token, &TransactionQuery::new())?;
        if rows > most {
            (batch, most) = (Some(candidate.token), rows);
        }
    }
    let batch = batch.ok_or("no batch with transactions")?;
    println!("batch {batch}: {most} transactions");

    walk(&client, &batch, path, Some(2))?;
    // As the next process would: a new walk from the state in the file.
    walk(&client, &batch, path, None)?;

    let kept = State::load(path)?.rows;
    let unique: BTreeSet<&String> = kept.iter().collect();
    let expected = client.count_batch_transactions(&batch, &TransactionQuery::new())?;
    if unique.len() != kept.len() || kept.len() as u64 != expected {
        return Err(format!(
            "{} rows kept ({} distinct), the server counts {expected}",
            kept.len(),
            unique.len()
        )
        .into());
    }
    println!("verified: {expected} rows, none lost, none twice");
    Ok(())
}

fn main() -> std::process::ExitCode {
    common::exit(run())
}
