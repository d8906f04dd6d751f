//! The one writer is what a sync waits on. The threads that feed it (the
//! fetchers, decoding pages) and the one that checkpoints behind it run
//! at a lower scheduling priority, so that where cores are few, or shared
//! with the server, the writer gets a core whenever it has pages, and the
//! helpers take the rest: the pages queued ahead keep it fed while they
//! wait. Measured on 2 cores with the mock beside the tool, old and new
//! binaries alternated: the writer's wait for a core fell from 22 % to
//! 14 % of the sync, and the sync took 5-7 % less time (BENCHMARKS.md).
//! With PostgreSQL the server's backend is the limit: lowering the writer
//! too (the whole process at nice 10) made that sync slower, so the
//! writer keeps its priority.

/// How much lower than the thread that starts them the helpers run: nice
/// 10 above, a tenth of the writer's share of a contended core.
#[cfg(target_os = "linux")]
const LOWER_BY: i32 = 10;

/// Lowers the calling thread's scheduling priority (Linux; elsewhere
/// nothing). Best effort: raising one's own nice value needs no
/// privilege, and a thread that cannot still works, at the usual
/// priority.
pub(crate) fn helper_thread() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpriority_process, setpriority_process};
        // On Linux a thread id given to PRIO_PROCESS names that thread
        // alone (setpriority(2), "BUGS"): the writer keeps its priority.
        let me = Some(rustix::thread::gettid());
        if let Ok(nice) = getpriority_process(me) {
            let _ = setpriority_process(me, (nice + LOWER_BY).min(19));
        }
    }
}
