//! The Markdown report, for people in CI: a step summary or a pull-request
//! comment. Verdict first, then a table of the totals, then each failure
//! with the sentence of API.md it rests on and its replay (`curl`, or the
//! script of a random sequence), written when the run ends.
//!
//! Every text came formatted from the rules (secrets redacted, control
//! characters escaped); here it is only fenced: quoted text cannot break
//! the table or the page (pipes and backticks are escaped, code goes in
//! fences longer than any run of backticks inside).

use std::io::{self, Write};

use super::{Event, Reporter, RuleReport};
use crate::rules::{Finding, Level};

pub struct Markdown<'w> {
    out: Box<dyn Write + 'w>,
}

impl<'w> Markdown<'w> {
    pub fn new(out: Box<dyn Write + 'w>) -> Self {
        Self { out }
    }
}

/// Text that stays on its line and out of the Markdown syntax.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '|' | '`' | '*' | '_' | '<' | '>' | '[' | ']' | '#' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A fenced code block holding `text`, its fence longer than any run of
/// backticks in it.
fn fenced(out: &mut dyn Write, lang: &str, text: &str) -> io::Result<()> {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    writeln!(out, "{fence}{lang}\n{text}\n{fence}")
}

fn failure(out: &mut dyn Write, f: &Finding) -> io::Result<()> {
    writeln!(out, "- {}", inline(&f.message))?;
    if let Some(claim) = f.claim {
        writeln!(out, "\n  It breaks: {}.", inline(claim.holds))?;
    }
    if let Some(input) = &f.input {
        writeln!(
            out,
            "\n  The input (a random sequence's replay script, or the generated value):\n"
        )?;
        fenced(out, "sh", input)?;
    }
    if let Some(e) = &f.evidence {
        writeln!(out, "\n  Replay the request that shows it:\n")?;
        fenced(out, "sh", &e.curl)?;
        if let Some(status) = e.status {
            writeln!(out, "\n  It answered {status}: {}", inline(&e.body))?;
        }
    }
    writeln!(out)
}

fn rule_section(out: &mut dyn Write, r: &RuleReport) -> io::Result<()> {
    writeln!(
        out,
        "### {} `{}` ({})\n",
        r.verdict(),
        r.rule.id,
        r.rule.level.as_str()
    )?;
    writeln!(out, "{}\n", inline(r.rule.summary))?;
    let grounds = r.grounds();
    for quote in &grounds {
        writeln!(out, "> {}", inline(quote))?;
    }
    if !grounds.is_empty() {
        writeln!(out, "> — {}\n", inline(r.rule.source))?;
    } else {
        writeln!(out, "Source: {}\n", inline(r.rule.source))?;
    }
    for f in &r.outcome.failures {
        failure(out, f)?;
    }
    for f in &r.outcome.inconclusive {
        writeln!(out, "- (inconclusive) {}", inline(&f.message))?;
    }
    writeln!(out)
}

impl Reporter for Markdown<'_> {
    fn on(&mut self, event: &Event<'_>) -> io::Result<()> {
        let out = &mut self.out;
        match event {
            Event::Unusable { target, why } => {
                writeln!(
                    out,
                    "## aggpay-conformance: the run could not be made (exit 2)\n"
                )?;
                writeln!(out, "Target: `{}`\n", inline(target))?;
                writeln!(out, "{}", inline(why))?;
                out.flush()
            }
            Event::Done { summary, rules } => {
                let verdict = match summary.exit_code {
                    crate::cli::EXIT_OK if summary.not_judged > 0 => {
                        "✅ conforms as far as judged: every required rule passed, some places not judged"
                    }
                    crate::cli::EXIT_OK => "✅ conforms: every required rule passed",
                    crate::cli::EXIT_FAILED => "❌ does not conform",
                    _ => "⚠️ could not conclude",
                };
                writeln!(
                    out,
                    "## aggpay-conformance: {verdict} (exit {})\n",
                    summary.exit_code
                )?;
                writeln!(
                    out,
                    "Target `{}`, seed {}{}: rerun with `--seed {}` to repeat these cases.\n",
                    inline(&summary.target),
                    summary.seed,
                    if summary.strict { ", strict" } else { "" },
                    summary.seed
                )?;
                writeln!(
                    out,
                    "| passed | failed (required) | failed (observations) | known | inconclusive | skipped | not run | not judged | requests | time |"
                )?;
                writeln!(out, "|---|---|---|---|---|---|---|---|---|---|")?;
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} s |\n",
                    summary.passed,
                    summary.required_failed,
                    summary.observations_failed,
                    summary.known,
                    summary.inconclusive,
                    summary.skipped,
                    summary.not_run,
                    summary.not_judged,
                    summary.requests,
                    summary.duration.as_secs_f64()
                )?;
                let failed: Vec<&RuleReport> = rules
                    .iter()
                    .filter(|r| {
                        r.is_new_failure() || r.outcome.status == crate::rules::Status::Inconclusive
                    })
                    .collect();
                let (required, observations): (Vec<&RuleReport>, Vec<&RuleReport>) = failed
                    .into_iter()
                    .partition(|r| r.rule.level == Level::Required);
                if !required.is_empty() {
                    writeln!(
                        out,
                        "### Required rules that failed or could not conclude\n"
                    )?;
                    for r in &required {
                        rule_section(out, r)?;
                    }
                }
                if !observations.is_empty() {
                    writeln!(
                        out,
                        "<details><summary>Observations ({}): WIRE.md's choices and common practice{}</summary>\n",
                        observations.len(),
                        if summary.strict {
                            ", counted with --strict"
                        } else {
                            ", not counted"
                        }
                    )?;
                    for r in &observations {
                        rule_section(out, r)?;
                    }
                    writeln!(out, "</details>\n")?;
                }
                let not_judged = super::not_judged(rules);
                if !not_judged.is_empty() {
                    writeln!(
                        out,
                        "### Not judged ({}): a pass says nothing of these\n",
                        summary.not_judged
                    )?;
                    for r in not_judged {
                        for n in &r.outcome.not_judged {
                            writeln!(
                                out,
                                "- `{}` at {}: {}",
                                r.rule.id,
                                inline(&n.place.to_string()),
                                inline(&n.reason)
                            )?;
                        }
                    }
                    writeln!(out)?;
                }
                if !summary.fixed.is_empty() {
                    writeln!(
                        out,
                        "{} failure(s) the baseline knows no longer happen.\n",
                        summary.fixed.len()
                    )?;
                }
                out.flush()
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_text_cannot_break_the_page() {
        assert_eq!(inline("a|b`c\nd<e>"), "a\\|b\\`c d\\<e\\>");
        let mut out = Vec::new();
        fenced(&mut out, "sh", "echo ```x```").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("````sh\n") && text.ends_with("\n````\n"),
            "{text}"
        );
    }
}
