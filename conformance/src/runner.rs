//! A run: target, sampling, rules, events.

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use aggpay_mock::{MockConfig, MockServer};
use regex::Regex;

use crate::cli::{Args, Format};
use crate::ctx::{Ctx, Found, Inputs, Options};
use crate::http::{Http, Request};
use crate::report::{self, Event, Reporter, RuleReport, Summary};
use crate::rules::{Failure, Level, Outcome, Rule, Status, catalogue};

/// Exit code: every required rule passed.
pub const EXIT_OK: u8 = 0;
/// Exit code: a required rule failed (or an observation, with `--strict`).
pub const EXIT_FAILED: u8 = 1;
/// Exit code: the run could not be made.
pub const EXIT_UNUSABLE: u8 = 2;

/// Why a run could not be made.
#[derive(Debug)]
pub struct Unusable(pub String);

/// Turns comma-separated globs into one regex.
fn patterns(list: &str) -> Result<Regex, Unusable> {
    let alternatives: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split('*')
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(".*")
        })
        .collect();
    Regex::new(&format!("^(?:{})$", alternatives.join("|")))
        .map_err(|e| Unusable(format!("bad pattern {list:?}: {e}")))
}

/// The rules `--rules` and `--skip` select, in catalogue order.
pub fn select(args: &Args) -> Result<Vec<Rule>, Unusable> {
    let mut rules = catalogue();
    if let Some(p) = &args.rules {
        let re = patterns(p)?;
        rules.retain(|r| re.is_match(r.id));
    }
    if let Some(p) = &args.skip {
        let re = patterns(p)?;
        rules.retain(|r| !re.is_match(r.id));
    }
    if rules.is_empty() {
        return Err(Unusable(
            "no rule matches --rules and --skip (see --list-rules)".into(),
        ));
    }
    Ok(rules)
}

/// Prints the catalogue.
pub fn list_rules(out: &mut dyn Write) -> std::io::Result<()> {
    for r in catalogue() {
        writeln!(out, "{:<30} {:<11} {}", r.id, r.level.as_str(), r.summary)?;
        writeln!(
            out,
            "{:<30} {:<11} source: {}; broken by mock faults: {}",
            "",
            "",
            r.source,
            r.faults.join(", ")
        )?;
    }
    Ok(())
}

/// The server a run is made against; the embedded mock lives as long as this.
struct Target {
    base: String,
    key: String,
    aggregator: String,
    inputs: Inputs,
    allow_writes: bool,
    _mock: Option<MockServer>,
}

fn target(args: &Args) -> Result<Target, Unusable> {
    let inputs = Inputs {
        payment_id: args.payment_id.clone(),
        alias_id: args.alias_id.clone(),
        rail_merchant_id: args.rail_merchant_id.clone(),
        access_key_id: args.access_key_id.clone(),
        iban: args.iban.clone(),
        mobile: args.mobile.clone(),
        till_code: args.till_code.clone(),
    };
    match &args.base_url {
        Some(base) => {
            let key = args.key.clone().ok_or_else(|| {
                Unusable("--key (or AGGPAY_SECRET_KEY) is required with --base-url".into())
            })?;
            let aggregator = args.aggregator.clone().ok_or_else(|| {
                Unusable(
                    "--aggregator (or AGGPAY_AGGREGATOR_ID) is required with --base-url".into(),
                )
            })?;
            if !aggpay::rules::has_prefix(&aggregator, "agg_") {
                return Err(Unusable(format!(
                    "--aggregator {aggregator:?} is not an agg_ identifier"
                )));
            }
            let base = aggpay::rules::parse_base_url(base)
                .map_err(|why| Unusable(format!("--base-url {base:?} {why}")))?;
            Ok(Target {
                base,
                key,
                aggregator,
                inputs,
                allow_writes: args.allow_writes,
                _mock: None,
            })
        }
        None => {
            let mock = MockServer::start(MockConfig::new())
                .map_err(|e| Unusable(format!("failed to start the built-in mock: {e}")))?;
            let info = mock.info();
            let given = |a: &Option<String>, b: Option<String>| a.clone().or(b);
            let inputs = Inputs {
                payment_id: given(&inputs.payment_id, info.payment_id.map(|p| p.to_string())),
                alias_id: given(&inputs.alias_id, Some(info.alias_id.to_string())),
                rail_merchant_id: given(
                    &inputs.rail_merchant_id,
                    Some(info.rail_merchant_id.to_string()),
                ),
                access_key_id: given(
                    &inputs.access_key_id,
                    info.access_key_id.map(|k| k.to_string()),
                ),
                iban: given(&inputs.iban, Some(info.iban)),
                mobile: given(&inputs.mobile, Some(info.mobile)),
                till_code: given(&inputs.till_code, Some(info.till_code)),
            };
            Ok(Target {
                base: mock.url().to_owned(),
                key: mock.secret_key().expose().to_owned(),
                aggregator: mock.aggregator_id().to_string(),
                inputs,
                allow_writes: true,
                _mock: Some(mock),
            })
        }
    }
}

fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (nanos ^ u64::from(std::process::id()).rotate_left(32)) % 1_000_000_000_000
}

/// Runs the suite; returns the exit code. Reports go to `stdout` or to
/// `--output`; problems that stop the run go to `stderr`.
pub fn run(args: &Args, stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    match run_inner(args, stdout) {
        Ok(code) => code,
        Err(Unusable(why)) => {
            let _ = writeln!(
                stderr,
                "aggpay-conformance: the run could not be made: {why}"
            );
            EXIT_UNUSABLE
        }
    }
}

fn run_inner(args: &Args, stdout: &mut dyn Write) -> Result<u8, Unusable> {
    if args.list_rules {
        list_rules(stdout).map_err(|e| Unusable(format!("failed to write: {e}")))?;
        return Ok(EXIT_OK);
    }
    let rules = select(args)?;
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(Unusable(
            "--timeout must be a positive number of seconds".into(),
        ));
    }
    let target = target(args)?;
    let seed = args.seed.unwrap_or_else(random_seed);
    let http = Http::new(
        &target.base,
        &target.aggregator,
        &target.key,
        Duration::from_secs_f64(args.timeout),
        args.rate_limit,
    );

    // The first call tells whether a run can be made at all.
    let first = http.send(Request::get(""));
    match first.status() {
        None => {
            return Err(Unusable(format!(
                "server unreachable at {}: {}",
                target.base,
                first.outcome.as_ref().err().cloned().unwrap_or_default()
            )));
        }
        Some(401) => {
            return Err(Unusable(
                "the key was rejected (401) on the first call".into(),
            ));
        }
        _ => {}
    }

    let mut reporters = reporters(args, stdout)?;
    let started = Instant::now();
    let embedded = args.base_url.is_none();
    let target_name = if embedded {
        format!("{} (built-in mock)", target.base)
    } else {
        target.base.clone()
    };
    emit(
        &mut reporters,
        &Event::Started {
            target: &target_name,
            seed,
            cases: args.cases,
            rules: rules.len(),
            strict: args.strict,
        },
    )?;

    let mut ctx = Ctx {
        http,
        inputs: target.inputs.clone(),
        found: Found::default(),
        corpus: Default::default(),
        options: Options {
            cases: args.cases,
            seed,
            allow_writes: target.allow_writes,
        },
        unsampled: Default::default(),
    };
    ctx.sample();

    let mut reports = Vec::new();
    for rule in &rules {
        let began = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| (rule.check)(&ctx))).unwrap_or_else(|_| {
            Outcome::judged(
                0,
                vec![Failure::new("the rule panicked: a bug of the harness")],
            )
        });
        let report = RuleReport::new(rule, outcome, began.elapsed());
        emit(&mut reporters, &Event::Rule(&report))?;
        reports.push(report);
    }

    let failed = |level: Level| {
        reports
            .iter()
            .filter(|r| r.level == level && r.outcome.status == Status::Failed)
            .count()
    };
    let (required_failed, observations_failed) =
        (failed(Level::Required), failed(Level::Observation));
    let exit_code = if required_failed > 0 || (args.strict && observations_failed > 0) {
        EXIT_FAILED
    } else {
        EXIT_OK
    };
    let summary = Summary {
        target: target_name,
        seed,
        cases: args.cases,
        strict: args.strict,
        passed: reports
            .iter()
            .filter(|r| r.outcome.status == Status::Passed)
            .count(),
        failed: required_failed + observations_failed,
        skipped: reports
            .iter()
            .filter(|r| r.outcome.status == Status::Skipped)
            .count(),
        required_failed,
        observations_failed,
        requests: ctx.http.sent(),
        duration: started.elapsed(),
        exit_code,
    };
    emit(
        &mut reporters,
        &Event::Done {
            summary: &summary,
            rules: &reports,
        },
    )?;
    Ok(exit_code)
}

fn emit(reporters: &mut [Box<dyn Reporter + '_>], event: &Event<'_>) -> Result<(), Unusable> {
    for r in reporters.iter_mut() {
        r.on(event)
            .map_err(|e| Unusable(format!("failed to write the report: {e}")))?;
    }
    Ok(())
}

/// The reporters of a run: the chosen format to `--output` or stdout, and
/// the human report on stdout too when a file takes the chosen one.
fn reporters<'w>(
    args: &Args,
    stdout: &'w mut dyn Write,
) -> Result<Vec<Box<dyn Reporter + 'w>>, Unusable> {
    let mut out: Vec<Box<dyn Reporter + 'w>> = Vec::new();
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| Unusable(format!("cannot create {}: {e}", path.display())))?;
            out.push(report::for_format(
                args.format,
                Box::new(std::io::BufWriter::new(file)),
            ));
            if args.format != Format::Human {
                out.push(report::for_format(Format::Human, Box::new(stdout)));
            }
        }
        None => out.push(report::for_format(args.format, Box::new(stdout))),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        let re = patterns("cursor.*, auth.missing-key").unwrap();
        assert!(re.is_match("cursor.walk"));
        assert!(re.is_match("auth.missing-key"));
        assert!(!re.is_match("auth.wrong-key"));
        assert!(!re.is_match("xcursor.walk"));
    }
}
