//! What a run shows while it works: a progress bar on a terminal, plain
//! log lines otherwise (a nightly job's log), nothing with `--quiet`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Least time between two progress lines of one long walk.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The run's progress display.
pub struct Progress {
    bar: Option<ProgressBar>,
    log: bool,
    walk: Mutex<Walk>,
}

#[derive(Default)]
struct Walk {
    batch: String,
    kind: &'static str,
    rows: u64,
    /// Batches whose rows are done, of how many pending.
    done: u64,
    pending: u64,
    /// Rows kept in this run.
    kept: u64,
    logged: Option<Instant>,
}

/// The rate as a person reads it: whole rows a second.
fn rate(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = write!(w, "{}/s", state.per_sec().round() as u64);
}

/// On Ctrl-C, the bar ends its line (the shell's prompt starts on a line
/// of its own) and the run stops as a killed run would: what it committed
/// stays, and the next run resumes from it.
fn end_line_on_interrupt(bar: &ProgressBar) {
    let bar = bar.clone();
    // One handler per process: a second bar (a test) keeps the first.
    let _ = ctrlc::set_handler(move || {
        bar.abandon();
        eprintln!("aggpay-sync: interrupted; the next run resumes where this one stopped");
        std::process::exit(i32::from(crate::EXIT_UNUSABLE));
    });
}

impl Progress {
    /// A bar on stderr (`bar`), or log lines unless `quiet`.
    pub fn new(bar: bool, quiet: bool) -> Self {
        let bar = bar.then(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} {prefix} {wide_bar} {human_pos}/{human_len} rows {rate} {msg}",
                )
                .map(|s| s.with_key("rate", rate))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            end_line_on_interrupt(&b);
            b
        });
        Self {
            bar,
            log: !quiet,
            walk: Mutex::new(Walk::default()),
        }
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if self.log => eprintln!("aggpay-sync: {text}"),
            None => {}
        }
    }

    fn walk(&self) -> std::sync::MutexGuard<'_, Walk> {
        self.walk
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A stage of the run begins.
    pub fn stage(&self, name: &str) {
        if let Some(bar) = &self.bar {
            bar.set_prefix(name.to_owned());
        }
    }

    /// A page of batches was kept.
    pub fn batches(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{n} batches"));
            bar.tick();
        }
    }

    /// The rows of `n` batches are to be walked.
    pub fn pending(&self, n: u64) {
        let mut w = self.walk();
        w.pending = n;
        w.logged = Some(Instant::now());
    }

    /// The walk of a batch's rows begins (or resumes).
    pub fn walk_started(&self, batch: &str, kind: &'static str) {
        let mut w = self.walk();
        w.batch = batch.to_owned();
        w.kind = kind;
        w.rows = 0;
        if let Some(bar) = &self.bar {
            bar.set_prefix(format!("{batch} {kind}"));
            bar.set_position(0);
            bar.set_length(0);
            bar.reset_eta();
        }
    }

    /// A page of rows was kept; `of` is the server's count.
    pub fn rows(&self, n: u64, of: Option<u64>) {
        let mut w = self.walk();
        w.rows += n;
        w.kept += n;
        if let Some(bar) = &self.bar {
            if let Some(of) = of {
                bar.set_length(of);
            }
            bar.set_position(w.rows);
            return;
        }
        if w.logged.is_some_and(|t| t.elapsed() >= LOG_EVERY) {
            w.logged = Some(Instant::now());
            let total = of.map_or_else(String::new, |of| format!(" of {of}"));
            let text = format!(
                "batch {} of {}: {} {} {}{total}; {} rows kept so far",
                w.done + 1,
                w.pending,
                w.batch,
                w.kind,
                w.rows,
                w.kept
            );
            drop(w);
            self.line(&text);
        }
    }

    /// The rows of a batch are done (walked, and verified if final).
    pub fn batch_done(&self) {
        self.walk().done += 1;
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
