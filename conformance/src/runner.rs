//! A run: target, sampling, rules on the pool, events in order, baseline,
//! exit code.

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;

use aggpay_internal::setup::Server;
use aggpay_mock::{MockConfig, MockServer};
use regex::Regex;

use crate::baseline::{Baseline, Known};
use crate::cli::{Args, Format};
use crate::ctx::{Ctx, Found, Inputs, Options};
use crate::http::{Http, HttpConfig, USER_AGENT};
use crate::pool::Pool;
use crate::report::{self, Event, Reporter, RuleReport, Summary};
use crate::rules::{Check, Level, Outcome, Phase, Rule, Status, catalogue};

pub use crate::cli::{EXIT_FAILED, EXIT_OK, EXIT_UNUSABLE};

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
            "no rule matches --rules and --skip (see `aggpay-conformance rules`)".into(),
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
            r.faults
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    Ok(())
}

/// The server a run is made against; the embedded mock lives as long as this.
struct ServerUnderTest {
    base: String,
    key: String,
    aggregator: String,
    inputs: Inputs,
    allow_writes: bool,
    mock: Option<MockServer>,
}

impl ServerUnderTest {
    /// How every report names it.
    fn name(&self) -> String {
        target_name(&self.base, self.mock.is_some())
    }
}

/// How reports name a target: its URL, and "built-in mock" when it is one.
fn target_name(base: &str, mock: bool) -> String {
    if mock {
        format!("{base} (built-in mock)")
    } else {
        base.to_owned()
    }
}

/// The target of `args`: the server they name, or the built-in mock when
/// asked for with `--mock`; warnings about the setup go to `stderr`.
fn target(args: &Args, stderr: &mut dyn Write) -> Result<ServerUnderTest, Unusable> {
    let setup = args
        .server
        .resolve(&mut std::io::stdin())
        .map_err(Unusable)?;
    for w in &setup.warnings {
        let _ = writeln!(stderr, "aggpay-conformance: warning: {w}");
    }
    let inputs = Inputs {
        payment_id: args.payment_id.clone(),
        alias_id: args.alias_id.clone(),
        rail_merchant_id: args.rail_merchant_id.clone(),
        access_key_id: args.access_key_id.clone(),
        second_access_key_id: args.second_access_key_id.clone(),
        iban: args.iban.clone(),
        mobile: args.mobile.clone(),
        till_code: args.till_code.clone(),
    };
    match setup.server {
        Server::Remote {
            base,
            key,
            aggregator,
        } => Ok(ServerUnderTest {
            base,
            key: key.expose().to_owned(),
            aggregator,
            inputs,
            allow_writes: args.allow_writes,
            mock: None,
        }),
        Server::Mock => {
            let mock = MockServer::start(MockConfig::new())
                .map_err(|e| Unusable(format!("failed to start the built-in mock: {e}")))?;
            let inputs = inputs.or(Inputs::of_mock(mock.info()));
            Ok(ServerUnderTest {
                base: mock.url().to_owned(),
                key: mock.secret_key().expose().to_owned(),
                aggregator: mock.aggregator_id().to_string(),
                inputs,
                allow_writes: true,
                mock: Some(mock),
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
/// `--output`; problems that stop the run go to `stderr`, and into the
/// JSON or JUnit report too, so that automation has a record of every
/// exit.
pub fn run(args: &Args, stdout: &mut dyn Write, stderr: &mut dyn Write) -> u8 {
    let mut named = None;
    match run_inner(args, stdout, stderr, &mut named) {
        Ok(code) => code,
        Err(Unusable(why)) => {
            let why = aggpay_internal::text::escape_control(&why).into_owned();
            let _ = writeln!(
                stderr,
                "aggpay-conformance: the run could not be made: {why}"
            );
            if args.format != Format::Human {
                let target = named.unwrap_or_else(|| match &args.server.base_url {
                    Some(base) => aggpay_internal::text::excerpt(base, 200),
                    None if args.server.mock => "built-in mock".to_owned(),
                    None => "none".to_owned(),
                });
                if let Err(Unusable(e)) = report_unusable(args, stdout, &target, &why) {
                    let _ = writeln!(stderr, "aggpay-conformance: {e}");
                }
            }
            EXIT_UNUSABLE
        }
    }
}

/// The JSON or JUnit report of a command line clap refused (a value out
/// of range, an unknown flag): `--format`, `--output` and `--base-url` as
/// far as they can be read from the raw arguments `argv`, so that a CI
/// job still finds its report saying why. Nothing for the human format.
pub fn report_refused(argv: &[String], why: &str, stdout: &mut dyn Write) {
    let value = |flag: &str| -> Option<String> {
        let inline = format!("{flag}=");
        argv.iter()
            .enumerate()
            .find_map(|(i, a)| match a.strip_prefix(&inline) {
                Some(v) => Some(v.to_owned()),
                None if a == flag => argv.get(i + 1).cloned(),
                None => None,
            })
    };
    let format = match value("--format").as_deref() {
        Some("json") => Format::Json,
        Some("junit") => Format::Junit,
        Some("markdown") => Format::Markdown,
        _ => return,
    };
    let target = value("--base-url").map_or_else(
        || "none".to_owned(),
        |b| aggpay_internal::text::excerpt(&b, 200),
    );
    let event = Event::Unusable {
        target: &target,
        why: &aggpay_internal::text::escape_control(why),
    };
    let _ = match value("--output") {
        Some(path) => match std::fs::File::create(&path) {
            Ok(file) => {
                report::for_format(format, Box::new(std::io::BufWriter::new(file))).on(&event)
            }
            Err(_) => return,
        },
        None => report::for_format(format, Box::new(stdout)).on(&event),
    };
}

/// The JSON or JUnit report of a run that could not be made: the target
/// and why, exit code 2.
fn report_unusable(
    args: &Args,
    stdout: &mut dyn Write,
    target: &str,
    why: &str,
) -> Result<(), Unusable> {
    let mut reporters = reporters(args, stdout)?;
    emit(&mut reporters, &Event::Unusable { target, why })
}

/// Runs one rule, catching a panic (a harness bug) as a failure.
fn run_rule(ctx: &Ctx, rule: &Rule, deadline: Option<Instant>, baseline: &Baseline) -> RuleReport {
    let began = Instant::now();
    // The budget is spent at the deadline, or as soon as a request was
    // held back because its turn (pacing) came after it.
    let budget_spent = || deadline.is_some_and(|d| Instant::now() >= d) || ctx.http.budget_spent();
    let spent = budget_spent();
    let outcome = if spent {
        Outcome::not_run()
    } else {
        let check = Check {
            ctx,
            rule: rule.id,
            claims: rule.claims,
        };
        if let Some(why) = &ctx.options.header_case_only
            && rule.id != crate::rules::HEADER_CASE
        {
            return RuleReport::new(
                rule,
                Outcome::not_run_because(why),
                began.elapsed(),
                ctx.options.strict,
                |id, fp| baseline.knows(id, fp),
            );
        }
        // A family's burst of requests fills the waits of the other
        // rules' chains (`pool::patient`) instead of lengthening them.
        let judge = || {
            if rule.kind == crate::rules::Kind::Properties {
                crate::pool::patient(|| rule.judge(&check))
            } else {
                rule.judge(&check)
            }
        };
        let outcome = catch_unwind(AssertUnwindSafe(judge)).unwrap_or_else(|_| {
            Outcome::judged(
                0,
                vec![check.harness_bug("the rule panicked: a bug of the harness")],
            )
        });
        // A rule still at work when the budget ran out may have been cut
        // short (a request not sent is no answer of the server's): its
        // verdict is not one.
        if budget_spent() {
            Outcome::not_run()
        } else {
            outcome
        }
    };
    RuleReport::new(
        rule,
        outcome,
        began.elapsed(),
        ctx.options.strict,
        |id, fp| baseline.knows(id, fp),
    )
}

fn run_inner(
    args: &Args,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    named: &mut Option<String>,
) -> Result<u8, Unusable> {
    if let Some(command) = &args.command {
        let written = match command {
            crate::cli::Command::Rules => list_rules(stdout),
            crate::cli::Command::Coverage => {
                stdout.write_all(crate::coverage::markdown(&catalogue()).as_bytes())
            }
            crate::cli::Command::Openapi => stdout.write_all(crate::openapi::render().as_bytes()),
        };
        written.map_err(|e| Unusable(format!("failed to write: {e}")))?;
        return Ok(EXIT_OK);
    }
    let rules = select(args)?;
    let baseline = match &args.baseline {
        Some(path) => Baseline::read(path).map_err(Unusable)?,
        None => Baseline::default(),
    };
    let started = Instant::now();
    let deadline = args.max_duration().map(|d| started + d);
    let target = target(args, stderr)?;
    let target_name = target.name();
    *named = Some(target_name.clone());
    let seed = args.seed.unwrap_or_else(random_seed);
    let answers = Arc::new(crate::rules::AnswerLog::new(
        rules.iter().filter_map(Rule::observer).collect(),
    ));
    let (http, header_case_only) = connect(args, &target, answers.clone(), deadline)?;
    let jobs = http.pool().jobs();
    if let Some(why) = &header_case_only {
        let _ = writeln!(stderr, "aggpay-conformance: {why}");
    }

    let mut reporters = reporters(args, stdout)?;
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
        answers,
        inputs: target.inputs.clone(),
        found: Found::default(),
        samples: Vec::new(),
        model: Default::default(),
        options: Options {
            cases: args.cases,
            sequences: args.sequences,
            steps: args.steps,
            seed,
            allow_writes: target.allow_writes,
            strict: args.strict,
            header_case_only,
        },
        unsampled: Default::default(),
    };
    if ctx.options.header_case_only.is_none() {
        ctx.sample();
    }

    let reports = run_rules(&ctx, &rules, jobs, deadline, &baseline, &mut reporters)?;
    let run = RunFacts {
        target: target_name,
        seed,
        jobs,
        started,
    };
    let summary = summarize(args, &ctx, &reports, &baseline, run);
    if let Some(path) = &args.write_baseline {
        write_baseline(path, &reports)?;
    }
    emit(
        &mut reporters,
        &Event::Done {
            summary: &summary,
            rules: &reports,
        },
    )?;
    Ok(summary.exit_code)
}

/// How long the check of a setup waits out transient failures, at most.
const PREFLIGHT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// The harness's client of the target, once a check of the setup shows a
/// run can be made: before anything is judged, the aggregator record and
/// the key list are read with the key, and a setup that does not work
/// (unreachable, TLS mixed up, key refused, aggregator unknown, a path
/// prefix that matches nothing) stops the run with its likely cause.
///
/// A key refused as the HTTP client spells the header (lower case) but
/// taken under the spelling API.md writes is not a setup problem: the
/// server is wrong. The run then judges only `auth.header-case` (the
/// second value says why), since every other request would be refused.
fn connect(
    args: &Args,
    target: &ServerUnderTest,
    answers: Arc<crate::rules::AnswerLog>,
    deadline: Option<Instant>,
) -> Result<(Http, Option<String>), Unusable> {
    let mut header_case_only = None;
    let mut round_trip = None;
    if target.mock.is_none() {
        let left = deadline.map_or(PREFLIGHT_PATIENCE, |d| {
            d.saturating_duration_since(Instant::now())
        });
        let checked = aggpay_internal::preflight::check(&aggpay_internal::preflight::Preflight {
            base: &target.base,
            aggregator: &target.aggregator,
            key: &target.key,
            ca_cert: args.server.ca_cert.as_deref(),
            timeout: args.timeout(),
            patience: left.min(PREFLIGHT_PATIENCE),
            user_agent: USER_AGENT,
        });
        match checked {
            Ok(checked) => round_trip = checked.round_trip,
            Err(p)
                if p.cause == aggpay_internal::preflight::Cause::Key
                    && key_taken_as_spelled(args, target) =>
            {
                header_case_only = Some(format!(
                    "the server refuses the key header as HTTP clients may send it (x-pay-aggregator-secret-key) but takes it spelled {}: every request of the harness would be refused, so only {} is judged",
                    aggpay_internal::syntax::KEY_HEADER,
                    crate::rules::HEADER_CASE
                ));
            }
            Err(p) => return Err(Unusable(p.message)),
        }
    }
    let jobs = usize::from(
        args.jobs
            .unwrap_or_else(|| crate::cli::auto_jobs(round_trip)),
    );
    let pool = Arc::new(Pool::new(jobs));
    Http::new(
        HttpConfig {
            base: target.base.clone(),
            aggregator: target.aggregator.clone(),
            key: target.key.clone(),
            timeout: args.timeout(),
            interval: args.interval(),
            ca_cert: args.server.ca_cert.clone(),
            deadline,
            jobs,
            names: crate::contract::ServerNames::new(
                args.require_wire_names,
                args.param_name.clone(),
            )
            .map_err(Unusable)?,
        },
        pool,
        answers,
    )
    .map(|http| (http, header_case_only))
    .map_err(|e| Unusable(e.to_string()))
}

/// True when the aggregator record answers the key under the header's
/// name spelled as API.md writes it (sent byte for byte). A transient
/// failure (no answer, 429, 5xx) is tried again, a few times.
fn key_taken_as_spelled(args: &Args, target: &ServerUnderTest) -> bool {
    let url = format!(
        "{}/v1/aggregators/{}",
        target.base,
        crate::http::encode(&target.aggregator)
    );
    for attempt in 0..5u32 {
        let answer = crate::http::raw_get(
            &url,
            &[(aggpay_internal::syntax::KEY_HEADER, target.key.as_str())],
            args.server.ca_cert.as_deref(),
            args.timeout(),
        );
        match answer {
            Ok((status, _, _)) if (200..300).contains(&status) => return true,
            Ok((status, _, _)) if status != 429 && status < 500 => return false,
            _ => std::thread::sleep(std::time::Duration::from_millis(100 << attempt)),
        }
    }
    false
}

/// Writes the failures of `reports` as a baseline of known failures.
fn write_baseline(path: &std::path::Path, reports: &[RuleReport]) -> Result<(), Unusable> {
    let known = reports
        .iter()
        .filter(|r| r.outcome.status == Status::Failed)
        .flat_map(|r| {
            r.outcome.failures.iter().zip(&r.marks).map(|(f, m)| Known {
                rule: r.rule.id.to_owned(),
                fingerprint: m.fingerprint.clone(),
                message: f.message.clone(),
            })
        })
        .collect();
    Baseline::of(known).write(path).map_err(Unusable)
}

/// The rules of [`Phase::Alone`] one at a time, then those of
/// [`Phase::Writes`] side by side, then those of [`Phase::Rules`] on the
/// pool, then the exchange rules; reported in catalogue order as soon as
/// every earlier rule is done.
fn run_rules(
    ctx: &Ctx,
    rules: &[Rule],
    jobs: usize,
    deadline: Option<Instant>,
    baseline: &Baseline,
    reporters: &mut [Box<dyn Reporter + '_>],
) -> Result<Vec<RuleReport>, Unusable> {
    let mut parallel: Vec<usize> = (0..rules.len())
        .filter(|i| rules[*i].phase() == Phase::Rules)
        .collect();
    // The random sequences are a chain of round trips one after another:
    // started first, the other rules' requests fill the waits of the
    // chain instead of the chain waiting behind them (a far server's run
    // ends sooner). Reports keep the catalogue's order.
    parallel.sort_by_key(|i| rules[*i].kind != crate::rules::Kind::Sequences);
    let mut done: Vec<Option<RuleReport>> = vec![None; rules.len()];
    let mut emitted = 0;
    let next = std::sync::atomic::AtomicUsize::new(0);
    // What requests leave behind is judged before any other rule writes.
    for (i, rule) in rules.iter().enumerate() {
        if rule.phase() == Phase::Alone {
            done[i] = Some(run_rule(ctx, rule, deadline, baseline));
        }
    }
    // Then what writes leave behind, each rule writing records of its
    // own kind, so that they run side by side.
    let writing: Vec<usize> = (0..rules.len())
        .filter(|i| rules[*i].phase() == Phase::Writes)
        .collect();
    let written = std::thread::scope(|scope| {
        let running: Vec<_> = writing
            .iter()
            .map(|&i| scope.spawn(move || run_rule(ctx, &rules[i], deadline, baseline)))
            .collect();
        running
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Vec<_>>()
    });
    for (i, report) in writing.into_iter().zip(written) {
        done[i] = Some(report);
    }
    let (sender, receiver) = mpsc::channel::<(usize, RuleReport)>();
    let mut flush =
        |done: &mut Vec<Option<RuleReport>>, emitted: &mut usize| -> Result<(), Unusable> {
            while *emitted < rules.len() {
                let Some(report) = &done[*emitted] else { break };
                emit(reporters, &Event::Rule(report))?;
                *emitted += 1;
            }
            Ok(())
        };
    std::thread::scope(|scope| -> Result<(), Unusable> {
        for _ in 0..jobs.min(parallel.len()).max(1) {
            let sender = sender.clone();
            let (parallel, next) = (&parallel, &next);
            scope.spawn(move || {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(&i) = parallel.get(k) else { return };
                    let report = run_rule(ctx, &rules[i], deadline, baseline);
                    if sender.send((i, report)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(sender);
        for (i, report) in receiver {
            done[i] = Some(report);
            flush(&mut done, &mut emitted)?;
        }
        Ok(())
    })?;
    // The exchange rules judge every exchange made above.
    for (i, rule) in rules.iter().enumerate() {
        if done[i].is_none() && rule.phase() == Phase::Exchanges {
            done[i] = Some(run_rule(ctx, rule, deadline, baseline));
        }
    }
    flush(&mut done, &mut emitted)?;
    Ok(done.into_iter().flatten().collect())
}

/// What a run was, beside its rules' reports: the server it judged, its
/// seed, the requests it kept in flight, and when it began.
struct RunFacts {
    target: String,
    seed: u64,
    jobs: usize,
    started: Instant,
}

fn summarize(
    args: &Args,
    ctx: &Ctx,
    reports: &[RuleReport],
    baseline: &Baseline,
    run: RunFacts,
) -> Summary {
    let RunFacts {
        target,
        seed,
        jobs,
        started,
    } = run;
    let count = |f: &dyn Fn(&RuleReport) -> bool| reports.iter().filter(|r| f(r)).count();
    let required_failed = count(&|r| r.rule.level == Level::Required && r.is_new_failure());
    let observations_failed = count(&|r| r.rule.level == Level::Observation && r.is_new_failure());
    let not_run = count(&|r| r.outcome.status == Status::NotRun);
    // Rules not run because only auth.header-case could be judged are
    // not the budget's.
    let budget_spent =
        ctx.http.budget_spent() || (not_run > 0 && ctx.options.header_case_only.is_none());
    // Known failures of rules that ran and no longer fail that way.
    let fixed = baseline
        .known
        .iter()
        .filter(|k| {
            reports.iter().any(|r| {
                r.rule.id == k.rule
                    && matches!(r.outcome.status, Status::Passed | Status::Failed)
                    && !r.marks.iter().any(|m| m.fingerprint == k.fingerprint)
            })
        })
        .cloned()
        .collect();
    let unsure = |r: &RuleReport| r.outcome.status == Status::Inconclusive;
    let inconclusive = count(&unsure);
    let required_inconclusive = count(&|r| r.rule.level == Level::Required && unsure(r));
    // A failure proven is what the server most needs to hear; a run that
    // could not judge everything (its budget ran out, or only transient
    // failures came back where a rule that counts did not pass) is exit 2.
    // Whether a rule counts is its report's (`RuleReport::counts`), the
    // same the reporters read.
    let exit_code = if reports.iter().any(RuleReport::fails_run) {
        EXIT_FAILED
    } else if budget_spent || reports.iter().any(RuleReport::undecided) {
        EXIT_UNUSABLE
    } else {
        EXIT_OK
    };
    Summary {
        target,
        seed,
        cases: args.cases,
        strict: args.strict,
        jobs,
        passed: count(&|r| r.outcome.status == Status::Passed),
        failed: required_failed + observations_failed,
        known: count(&|r| r.is_known()),
        skipped: count(&|r| r.outcome.status == Status::Skipped),
        not_run,
        not_judged: reports.iter().map(|r| r.outcome.not_judged.len()).sum(),
        inconclusive,
        required_inconclusive,
        required_failed,
        observations_failed,
        fixed,
        baseline: args.baseline.is_some(),
        budget_spent,
        requests: ctx.http.sent(),
        retries: ctx.http.retries(),
        duration: started.elapsed(),
        exit_code,
    }
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
