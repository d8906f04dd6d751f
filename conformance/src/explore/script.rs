//! A sequence as a replayable script: a comment and a `curl` line a step
//! (every secret `<redacted>`, control characters escaped), headed by the
//! command line that draws the same sequences again.

use super::command::Command;
use crate::http::Exchange;
use crate::rules::Check;

/// The steps of one sequence so far.
#[derive(Debug)]
pub struct Script<'a> {
    check: Check<'a>,
    lines: Vec<String>,
    steps: usize,
    of: usize,
}

impl<'a> Script<'a> {
    /// An empty script of a sequence of `of` commands.
    pub fn new(check: Check<'a>, of: usize) -> Self {
        Self {
            check,
            lines: Vec::new(),
            steps: 0,
            of,
        }
    }

    /// A step that was sent, and what came back.
    pub fn step(&mut self, command: &Command, e: &Exchange) {
        self.steps += 1;
        let answer = match (&e.outcome, &e.transient) {
            (Ok(status), None) => format!("answered {status}"),
            (Ok(status), Some(t)) => format!("{t}: {status} on each of {} attempts", e.attempts),
            (Err(why), _) => self.check.shown_input(&why.message),
        };
        self.lines
            .push(format!("# {}. {command}: {answer}", self.steps));
        self.lines.push(self.check.ctx.http.curl(&e.request));
    }

    /// A step not sent, and why.
    pub fn skipped(&mut self, command: &Command, why: &str) {
        self.steps += 1;
        self.lines
            .push(format!("# {}. {command}: not sent ({why})", self.steps));
    }

    /// The whole script, headed by how to draw the same sequences.
    pub fn finish(&self, seed: u64) -> String {
        let options = &self.check.ctx.options;
        let mut out = vec![
            format!(
                "# the shortest failing sequence found ({} of {} steps): replay it line by line,",
                self.steps, self.of
            ),
            format!(
                "# or draw the same sequences again with: aggpay-conformance --rules {} --seed {seed} --sequences {} --steps {}",
                self.check.rule, options.sequences, options.steps
            ),
        ];
        out.extend(self.lines.iter().cloned());
        out.join("\n")
    }
}
