//! CPU time of processes, from Linux's `/proc`, for the benches that hold
//! a run to what its cores allow.

/// The fields of `/proc/<pid>/stat` after the command name (which is in
/// parentheses and may hold spaces): field 4 (the parent) is the second.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    stat_fields_at(&format!("/proc/{pid}/stat"))
}

/// The same of the `stat` file at `path` (a process's or a thread's).
fn stat_fields_at(path: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(path).ok()?;
    let after = stat.rsplit_once(')')?.1;
    Some(after.split_whitespace().map(str::to_owned).collect())
}

/// CPU seconds (user and system) process `pid` has used, with those of
/// its children it has waited for (fields 14 to 17: utime, stime, cutime,
/// cstime, in clock ticks of 1/100 s: Linux's `USER_HZ`); `None` where
/// there is no such file (another system, or the process gone).
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let fields = stat_fields(pid)?;
    let ticks: Option<Vec<f64>> = fields
        .get(11..15)?
        .iter()
        .map(|t| t.parse::<f64>().ok())
        .collect();
    Some(ticks?.iter().sum::<f64>() / 100.0)
}

/// CPU seconds of process `pid` and of every live child of it (a server's
/// backends; the children that ended are in its own figure once waited
/// for).
pub fn tree_cpu_seconds(pid: u32) -> Option<f64> {
    let mut total = cpu_seconds(pid)?;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let parent = stat_fields(child).and_then(|f| f.get(1)?.parse::<u32>().ok());
        if parent == Some(pid) {
            total += cpu_seconds(child).unwrap_or(0.0);
        }
    }
    Some(total)
}

/// CPU seconds so far of this process's threads named `name` (the first
/// field of each one's `/proc/self/task/<tid>/schedstat`: nanoseconds on a
/// core, finer than `stat`'s ticks); `None` where `/proc` does not tell.
/// A thread that ended is no longer counted: read it while they run.
pub fn threads_cpu_seconds(name: &str) -> Option<f64> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let nanos: f64 = tasks
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .filter_map(|t| {
            let stat = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
            stat.split_whitespace().next()?.parse::<f64>().ok()
        })
        .sum();
    Some(nanos / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_used_some_cpu() {
        let mut spin = 0u64;
        for i in 0..50_000_000u64 {
            spin = spin.wrapping_add(i ^ (spin >> 3));
        }
        assert_ne!(spin, 1);
        if std::path::Path::new("/proc/self/stat").exists() {
            let me = std::process::id();
            // Read in this order: the tree, read later, holds at least the
            // process's own time read before it.
            let own = cpu_seconds(me);
            assert!(own.is_some_and(|s| s >= 0.0));
            assert!(tree_cpu_seconds(me) >= own);
        } else {
            assert_eq!(cpu_seconds(std::process::id()), None);
        }
    }

    #[test]
    fn a_named_thread_s_cpu_is_counted_and_others_are_not() {
        if !std::path::Path::new("/proc/self/task").exists() {
            assert_eq!(threads_cpu_seconds("x"), None);
            return;
        }
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let (spun, stop) = std::sync::mpsc::channel::<()>();
        let spinner = std::thread::Builder::new()
            .name("cpu-test-spin".into())
            .spawn(move || {
                // Work until this thread has had 50 ms of a core by another
                // count than the one under test (its `stat` ticks, fields
                // 14 and 15): a time on the clock is not enough where the
                // cores are shared (it once had 5 ms of 50). Bounded: 10 s.
                let ticks = || {
                    let fields = stat_fields_at("/proc/thread-self/stat")?;
                    let user = fields.get(11)?.parse::<u64>().ok()?;
                    let system = fields.get(12)?.parse::<u64>().ok()?;
                    Some(user + system)
                };
                let started = std::time::Instant::now();
                let mut spin = 0u64;
                while ticks().is_some_and(|t| t < 5)
                    && started.elapsed() < std::time::Duration::from_secs(10)
                {
                    for _ in 0..100_000 {
                        spin = std::hint::black_box(spin.wrapping_add(spin >> 3 ^ 7));
                    }
                }
                assert_ne!(spin, 1);
                let _ = done.send(());
                let _ = stop.recv_timeout(std::time::Duration::from_secs(10));
            })
            .unwrap();
        wait.recv_timeout(std::time::Duration::from_secs(10))
            .unwrap();
        let named = threads_cpu_seconds("cpu-test-spin").unwrap();
        // Ticks are sampled: 5 of them are at least 20 ms of schedstat's.
        assert!(named >= 0.02, "the spinning thread ran {named} s");
        assert_eq!(threads_cpu_seconds("no-such-thread-name"), Some(0.0));
        drop(spun);
        spinner.join().unwrap();
    }
}
