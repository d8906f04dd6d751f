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
    /// The walks in flight (several with `--jobs` above 1).
    running: Vec<Running>,
    /// Walks (one kind of one batch's rows) done, of how many pending.
    done: u64,
    pending: u64,
    /// Rows kept in this run.
    kept: u64,
    logged: Option<Instant>,
}

/// One walk in flight.
struct Running {
    batch: String,
    kind: &'static str,
    rows: u64,
    /// The server's count of its rows.
    of: Option<u64>,
}

impl Walk {
    /// What the bar and the log lines say of the walks in flight: the
    /// walk's name, or how many run at once; rows kept of how many.
    fn shown(&self) -> (String, u64, Option<u64>) {
        match self.running.as_slice() {
            [one] => (format!("{} {}", one.batch, one.kind), one.rows, one.of),
            many => (
                format!("{} batches at once", many.len()),
                many.iter().map(|r| r.rows).sum(),
                many.iter().map(|r| r.of).sum(),
            ),
        }
    }

    fn show(&self, bar: &ProgressBar) {
        let (name, rows, of) = self.shown();
        bar.set_prefix(name);
        bar.set_length(of.unwrap_or(0));
        bar.set_position(rows);
    }
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

    /// `n` walks (a kind of a batch's rows each) are to be made.
    pub fn pending(&self, n: u64) {
        let mut w = self.walk();
        w.pending = n;
        w.logged = Some(Instant::now());
    }

    /// The walk of a batch's rows begins (or resumes).
    pub fn walk_started(&self, batch: &str, kind: &'static str) {
        let mut w = self.walk();
        w.running.push(Running {
            batch: batch.to_owned(),
            kind,
            rows: 0,
            of: None,
        });
        if let Some(bar) = &self.bar {
            w.show(bar);
            bar.reset_eta();
        }
    }

    /// A page of `batch`'s rows was kept; `of` is the server's count.
    pub fn rows(&self, batch: &str, n: u64, of: Option<u64>) {
        let mut w = self.walk();
        w.kept += n;
        if let Some(r) = w.running.iter_mut().find(|r| r.batch == batch) {
            r.rows += n;
            r.of = of.or(r.of);
        }
        if let Some(bar) = &self.bar {
            w.show(bar);
            return;
        }
        if w.logged.is_some_and(|t| t.elapsed() >= LOG_EVERY) {
            w.logged = Some(Instant::now());
            let (name, rows, of) = w.shown();
            let total = of.map_or_else(String::new, |of| format!(" of {of}"));
            let text = format!(
                "{} of {} walks done; {name}: {rows}{total}; {} rows kept so far",
                w.done, w.pending, w.kept
            );
            drop(w);
            self.line(&text);
        }
    }

    /// The walk of `batch`'s rows ended (walked, and verified if final,
    /// or set aside).
    pub fn walk_ended(&self, batch: &str) {
        let mut w = self.walk();
        w.running.retain(|r| r.batch != batch);
        w.done += 1;
        if let Some(bar) = &self.bar
            && !w.running.is_empty()
        {
            w.show(bar);
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
