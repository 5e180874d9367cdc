//! As a child subreaper, the recorder inherits whatever the server orphans. Those zombies
//! are reaped here, by PID, never with a wildcard wait that could steal the exit status of
//! a child the recorder itself is waiting for (the server, the load, nvidia-smi): those
//! are spawned through `spawn`, which records their PIDs under the same lock the reaper
//! holds while it works.

use std::collections::HashSet;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::Duration;

use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag};
use nix::unistd::Pid;

use crate::procs::ProcFs;

static OWN: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

/// Spawns a child of our own: the reaper leaves it alone.
pub fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    let mut g = OWN.lock().unwrap_or_else(|e| e.into_inner());
    let child = cmd.spawn()?;
    g.get_or_insert_with(HashSet::new).insert(child.id() as i32);
    Ok(child)
}

/// Marks a child started otherwise (a fork) as one of our own.
pub fn own(pid: i32) {
    let mut g = OWN.lock().unwrap_or_else(|e| e.into_inner());
    g.get_or_insert_with(HashSet::new).insert(pid);
}

/// Whether the recorder spawned `pid` itself.
pub fn is_own(pid: i32) -> bool {
    let g = OWN.lock().unwrap_or_else(|e| e.into_inner());
    g.as_ref().is_some_and(|o| o.contains(&pid))
}

/// Reaps adopted zombies once.
pub fn reap_adopted(fs: &ProcFs) {
    let g = OWN.lock().unwrap_or_else(|e| e.into_inner());
    let own = g.as_ref();
    let is_own = |pid: i32| own.is_some_and(|o| o.contains(&pid));
    // Ask the kernel which child has ended, without reaping it (WNOWAIT): one call when
    // none has, where reading every process of the machine once a second cost more than
    // anything else the recorder did during a load. Only when the one it names is a
    // child of our own (whose owner collects it) can others hide behind it: then the table.
    let peek = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    // Bounded, so a child the wait cannot collect never spins this thread.
    for _ in 0..64 {
        match waitid(Id::All, peek).ok().and_then(|s| s.pid()) {
            None => return,
            Some(pid) if is_own(pid.as_raw()) => break,
            Some(pid) => {
                let _ = waitpid(pid, Some(WaitPidFlag::WNOHANG));
            }
        }
    }
    let me = std::process::id() as i32;
    for p in fs.table() {
        if p.ppid == me && p.state == 'Z' && !is_own(p.pid) {
            let _ = waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Starts the reaper thread (once a second).
pub fn start() {
    std::thread::spawn(|| {
        let fs = ProcFs::default();
        loop {
            std::thread::sleep(Duration::from_secs(1));
            reap_adopted(&fs);
        }
    });
}
