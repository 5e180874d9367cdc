//! What a load command leaves running once its own process has ended: a script's
//! background child, a worker of a load tool. The recorder is a child subreaper, so such
//! orphans become its children, in its session (the server and the guard live in
//! sessions of their own). They are stopped, SIGTERM then SIGKILL, before the recorder
//! reads the rest of the load's output: one of them holding the output pipe would
//! otherwise keep the recording waiting for as long as it lived.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::procs::ProcFs;

/// How long the leftovers get after their SIGTERM before the SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// The live children of the recorder in its own session that it did not start itself.
fn leftovers(fs: &ProcFs, me: i32, sid: i32) -> Vec<i32> {
    fs.table()
        .into_iter()
        .filter(|p| p.ppid == me && p.sid == sid && p.live() && !crate::reaper::is_own(p.pid))
        .map(|p| p.pid)
        .collect()
}

/// Stops what the load left running (their children, orphaned in turn, too); how many
/// processes were stopped.
pub fn stop(fs: &ProcFs) -> usize {
    let me = std::process::id() as i32;
    let Ok(sid) = nix::unistd::getsid(None) else {
        return 0;
    };
    let start = Instant::now();
    let mut termed: HashSet<i32> = HashSet::new();
    loop {
        let left = leftovers(fs, me, sid.as_raw());
        if left.is_empty() || start.elapsed() > GRACE * 2 {
            return termed.len();
        }
        let late = start.elapsed() >= GRACE;
        for pid in left {
            if late {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            } else if termed.insert(pid) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
