//! Killed at random instants (SIGKILL) while the server fails, throttles
//! and resets connections, walking one batch at a time or several at
//! once: the mirror ends equal to one clean run's (one batch at a time).

use std::time::{Duration, Instant};

use aggpay_mock::{Chaos, MockConfig, MockServer};
use aggpay_testkit::TempDir;

use crate::support::{Db, command, finish, on_both, sync};

fn config() -> MockConfig {
    MockConfig::new()
        .seed(21)
        .batches(12)
        .max_batch_transactions(200)
        .large_batch_transactions(40_000)
}

/// A small deterministic generator for the kill instants.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[test]
fn killed_runs_resume_to_the_same_mirror_as_a_clean_run() {
    let dir = TempDir::new("aggpay-sync-kill");
    // The reference: one clean run of the same data.
    let clean_server = MockServer::start(config()).unwrap();
    let clean = Db::sqlite(dir.join("clean.db"));
    let out = command(&clean_server, &clean)
        .args(["--jobs", "1"])
        .output()
        .unwrap();
    let (code, summary, err) = finish(out);
    assert_eq!(code, 0, "{err}");
    assert!(summary["transactions"]["total"].as_u64().unwrap() > 40_000);
    let want = clean.dump();

    let chaos: Chaos = "503=0.05,429=0.05,reset=0.02".parse().unwrap();
    let server =
        MockServer::start(config().chaos(chaos.retry_after(Duration::from_millis(20)))).unwrap();
    on_both("aggpay-sync-killed", &server, |db| {
        killed_runs(&server, db, &want);
    });
}

fn killed_runs(server: &MockServer, db: &Db, want: &[String]) {
    let mut rng = Lcg(0x5eed);
    // Kills after the run recorded its start (the ones counted), before
    // it (while starting: connecting, making the schema), and after it
    // recorded its end (a kill as it exits).
    let (mut mid_work, mut early, mut at_exit) = (0, 0, 0);
    let started = Instant::now();
    for _ in 0..80 {
        if mid_work >= 12 || started.elapsed() > Duration::from_secs(120) {
            break;
        }
        let before = db.runs();
        // Runs one batch at a time and several at once take turns: each
        // resumes from what the others committed.
        let jobs = ["1", "2", "8"][rng.below(3) as usize];
        let mut child = command(server, db)
            .args(["--quiet", "--jobs", jobs])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // One kill in four lands a random instant after the spawn, while
        // the run may still be starting. The others land a random instant
        // after the run recorded its start, timed from there and not from
        // the spawn, so a slow or loaded machine still kills mid-work.
        if rng.below(4) == 0 {
            std::thread::sleep(Duration::from_millis(20 + rng.below(280)));
        } else {
            let deadline = Instant::now() + Duration::from_secs(30);
            while child.try_wait().unwrap().is_none()
                && db.runs() == before
                && Instant::now() < deadline
            {
                // Each look at PostgreSQL is a connection of its own.
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(rng.below(250)));
        }
        let killed = child.try_wait().unwrap().is_none();
        if killed {
            // SIGKILL: no handler, no cleanup.
            child.kill().unwrap();
        }
        let status = child.wait().unwrap();
        let after = db.runs();
        if !killed {
            assert_eq!(
                after.1,
                before.1 + 1,
                "a run that ended ({status}) recorded its end"
            );
        } else if after.0 > before.0 {
            mid_work += 1;
        } else if after.1 > before.1 {
            at_exit += 1;
        } else {
            early += 1;
        }
    }
    assert!(
        mid_work >= 10,
        "only {mid_work} runs were killed mid-work ({early} while starting, {at_exit} as they exited)"
    );
    // A killed run's record stays unfinished: one for each, no other.
    assert_eq!(db.runs().0, mid_work);

    let (code, summary, err) = sync(server, db);
    assert_eq!(code, 0, "{err}");
    assert_eq!(summary["integrity_errors"].as_array().unwrap().len(), 0);
    assert_eq!(db.unverified_final_batches(), 0);
    assert_eq!(
        db.scalar("SELECT count(*) - count(DISTINCT token) FROM transactions"),
        0
    );
    let got = db.dump();
    assert_eq!(want.len(), got.len());
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(w, g);
    }
}
