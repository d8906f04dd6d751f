//! Interruptions of the test process itself: it is stopped and continued
//! again and again, as a loaded or throttled machine may do. Linux never
//! restarts a socket read or write that has a timeout once a signal, or a
//! stop and continue, interrupts it (`EINTR`, `SA_RESTART` or not: see
//! signal(7)), so code that reads with a timeout must try again itself,
//! with the time it has left. CI failed once on such an `EINTR`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::TempDir;

/// The most stops one `Interruptions` makes: it cannot outlive its test.
const MOST_STOPS: u32 = 2_000;

/// While it lives, the current process is stopped for 5 ms every
/// `every`, by a `sh` child (`kill -STOP`, then `kill -CONT`). Dropping it
/// asks the child to end after its next continue, and waits for that: the
/// process is never left stopped.
#[derive(Debug)]
pub struct Interruptions {
    child: Child,
    folder: TempDir,
}

impl Interruptions {
    /// Starts stopping the current process every `every`.
    ///
    /// # Panics
    ///
    /// When `sh` cannot be started.
    pub fn every(every: Duration) -> Self {
        let folder = TempDir::new("aggpay-interruptions");
        // Each round stops and continues as one sequence, and looks for
        // the end only after its continue.
        let script = format!(
            r#"i=0; while [ $i -lt {MOST_STOPS} ] && [ ! -e "$1" ]; do kill -STOP $0 || exit; sleep 0.005; kill -CONT $0; sleep {}; i=$((i+1)); done"#,
            every.as_secs_f64()
        );
        let child = Command::new("sh")
            .args(["-c", &script, &std::process::id().to_string()])
            .arg(folder.join("end"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sh starts");
        Self { child, folder }
    }
}

impl Drop for Interruptions {
    fn drop(&mut self) {
        let _ = std::fs::write(self.folder.join("end"), b"");
        let began = Instant::now();
        while began.elapsed() < Duration::from_secs(10) {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // Not seen: the child did not end. It is not killed (that could
        // land between its stop and its continue and leave this process
        // stopped); it ends by itself after its last round.
    }
}
