//! The load command's CPU time for T20 (`load.cpu.jsonl`, `analyzer::docs::load_cpu`): a
//! thread that reads `/proc` at the series' interval while the load runs, sums the user
//! and system time of the command's process tree (with the time of the children each has
//! waited for), and appends one row per sample, flushed, so a kill leaves a readable file.
//! A file that exists already (an earlier command of `--then`) is appended to, its header
//! kept.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use analyzer::docs::load_cpu::{LoadCpuHeader, LoadCpuRow};
use analyzer::docs::to_line;
use analyzer::num::round_dp;

use crate::clock;
use crate::guard::Watcher;
use crate::procs::ProcFs;

/// `utime + stime + cutime + cstime` (clock ticks) and the parent, from a `stat` line:
/// fields 14–17 and 4, counted after the last `)`.
pub fn parse_times(stat: &str) -> Option<(i32, u64)> {
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ppid = f.get(1)?.parse().ok()?;
    let mut ticks = 0u64;
    for k in 11..=14 {
        // cutime and cstime are signed in the kernel's format; never negative in practice.
        let v: i64 = f.get(k)?.parse().ok()?;
        ticks += u64::try_from(v).unwrap_or(0);
    }
    Some((ppid, ticks))
}

/// Clock ticks per second of `/proc/PID/stat`'s times: the kernel's `USER_HZ`, which
/// `sysconf(_SC_CLK_TCK)` reports, 100 on every Linux architecture the recorder runs on.
fn ticks_per_s() -> f64 {
    100.0
}

/// Every process now: its parent and its CPU ticks, by PID.
fn scan(fs: &ProcFs) -> Option<HashMap<i32, (i32, u64)>> {
    let rd = std::fs::read_dir(&fs.root).ok()?;
    let mut procs: HashMap<i32, (i32, u64)> = HashMap::new();
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        if let Some(t) = parse_times(&stat) {
            procs.insert(pid, t);
        }
    }
    Some(procs)
}

/// `root` and its descendants in `procs`, `root` first; empty when `root` is gone.
fn descend(procs: &HashMap<i32, (i32, u64)>, root: i32) -> Vec<i32> {
    let mut tree = Vec::new();
    if !procs.contains_key(&root) {
        return tree;
    }
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        tree.push(p);
        stack.extend(
            procs
                .iter()
                .filter(|(_, (pp, _))| *pp == p)
                .map(|(c, _)| *c),
        );
    }
    tree
}

/// The CPU seconds of `tree` in `procs`, and how many processes it holds.
fn cpu_of(procs: &HashMap<i32, (i32, u64)>, tree: &[i32], tick: f64) -> (f64, i64) {
    let total: u64 = tree.iter().filter_map(|p| procs.get(p)).map(|t| t.1).sum();
    (total as f64 / tick, tree.len() as i64)
}

/// The CPU seconds of `root` and its descendants alive now, and how many there are; none
/// when `root` is gone.
pub fn tree_cpu(fs: &ProcFs, root: i32, tick: f64) -> Option<(f64, i64)> {
    let procs = scan(fs)?;
    let tree = descend(&procs, root);
    (!tree.is_empty()).then(|| cpu_of(&procs, &tree, tick))
}

/// The sampling thread of one load command.
pub struct CpuSampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl CpuSampler {
    /// Starts sampling `pid`'s tree into `path` every `interval`; each process of the
    /// tree seen is given to the server's guard, which stops it if the recorder dies.
    pub fn start(
        path: &Path,
        fs: ProcFs,
        pid: i32,
        program: Option<String>,
        interval: Duration,
        guard: Option<Watcher>,
    ) -> std::io::Result<CpuSampler> {
        let fresh = !path.exists();
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        if fresh {
            let h = LoadCpuHeader {
                interval_s: Some(interval.as_secs_f64()),
                pid: Some(i64::from(pid)),
                program,
            };
            writeln!(file, "{}", to_line(&h))?;
            file.flush()?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle =
            std::thread::spawn(move || sample(file, &fs, pid, interval, &flag, guard.as_ref()));
        Ok(CpuSampler {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops the thread after its next sample.
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for CpuSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn sample(
    mut file: File,
    fs: &ProcFs,
    pid: i32,
    interval: Duration,
    stop: &AtomicBool,
    guard: Option<&Watcher>,
) {
    let tick = ticks_per_s();
    let step = Duration::from_millis(20).min(interval);
    let mut told: HashSet<i32> = HashSet::new();
    loop {
        let (t_wall, t_mono_ns) = (clock::wall(), clock::mono_ns());
        let Some(procs) = scan(fs) else {
            return;
        };
        let tree = descend(&procs, pid);
        if tree.is_empty() {
            return; // the command has ended
        }
        let (cpu, n) = cpu_of(&procs, &tree, tick);
        if let Some(g) = guard {
            for &p in &tree {
                if told.contains(&p) {
                    continue;
                }
                if let Some(found) = fs.read(p) {
                    g.also(p, found.start_ticks);
                    told.insert(p);
                }
            }
        }
        let row = LoadCpuRow {
            t_wall: round_dp(t_wall, 6),
            t_mono_ns: Some(t_mono_ns),
            cpu_s: Some(round_dp(cpu, 3)),
            processes: Some(n),
        };
        if writeln!(file, "{}", row.line())
            .and_then(|()| file.flush())
            .is_err()
        {
            return;
        }
        // Wait out the interval in short steps, so a stop is seen soon.
        let mut waited = Duration::ZERO;
        while waited < interval {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(step);
            waited += step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_from_a_stat_line() {
        let stat = "4242 (python3 (x) y) R 7 4242 4242 0 -1 4194304 100 0 0 0 150 25 3 2 20 0 1 0 \
                    12345 1000 100 18446744073709551615";
        assert_eq!(parse_times(stat), Some((7, 180)));
        assert_eq!(parse_times("garbage"), None);
    }

    #[test]
    fn a_busy_process_is_counted_and_a_reaped_one_is_gone() {
        let fs = ProcFs::default();
        // A shell spinning until it is killed: its tree's time grows while it runs.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let tick = ticks_per_s();
        let first = tree_cpu(&fs, pid, tick).unwrap();
        std::thread::sleep(Duration::from_millis(600));
        let later = tree_cpu(&fs, pid, tick).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(later.1 >= 1);
        assert!(later.0 >= first.0 + 0.1, "{first:?} then {later:?}");
        assert_eq!(
            tree_cpu(&fs, pid, tick),
            None,
            "a reaped process has no tree"
        );
    }
}
