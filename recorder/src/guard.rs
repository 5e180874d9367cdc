//! A guard for the launched server and the load: a small process forked beside the
//! recorder that stops the server's process group, and the load's processes it was told
//! of (`Watcher::also`), when the recorder dies without having stopped them, however it
//! dies (SIGKILL, a crash, the OOM killer).
//!
//! The server's parent-death signal alone is not enough: it reaches the server's first
//! process only, and a vLLM whose API server dies while it is still starting leaves its
//! engine child (`VLLM::EngineCore`) running, holding the card. The guard holds the read
//! end of a pipe whose write end only the recorder holds; the kernel closes it when the
//! recorder ends, so the guard wakes up however the recorder went. A recorder that has
//! stopped the server itself disarms the guard first (one byte down the pipe).

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Arc;

use nix::libc;
// Renamed: the words a verdict is built from stay the analyzer's (tidy).
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus as Waited};

/// The name the guard shows in `ps` and `/proc/PID/comm`.
pub const NAME: &[u8] = b"inferlint-guard\0";

/// How long the group gets to stop after its SIGTERM before the SIGKILL, in tenths of a
/// second (the teardown's own wait is longer; no one is waiting here).
const GRACE_TENTHS: u32 = 100;

/// The recorder's end of the guard's pipe, and the guard's PID.
pub struct Guard {
    fd: Option<OwnedFd>,
    pid: i32,
}

/// A copy of the recorder's end, for the thread that sees the load's processes.
#[derive(Clone)]
pub struct Watcher {
    file: Arc<std::fs::File>,
}

/// A record down the pipe: `d` (disarm) alone, or `p`, a PID (4 bytes) and its start
/// time in clock ticks (8 bytes), little-endian. One write each: never torn (PIPE_BUF).
const RECORD: usize = 13;

/// How many of the load's processes the guard keeps (more are not watched).
const MAX_WATCHED: usize = 512;

impl Watcher {
    /// The guard stops `pid` too (when it still has this start time) if the recorder
    /// dies: a process of the load, which outlives a killed recorder unless someone
    /// stops it (only the load's first process has a parent-death signal).
    pub fn also(&self, pid: i32, start_ticks: u64) {
        let mut rec = [0u8; RECORD];
        rec[0] = b'p';
        rec[1..5].copy_from_slice(&pid.to_le_bytes());
        rec[5..].copy_from_slice(&start_ticks.to_le_bytes());
        let _ = std::io::Write::write_all(&mut &*self.file, &rec);
    }
}

impl Guard {
    /// A copy of the pipe's write end (none once disarmed or when it cannot be copied).
    pub fn watcher(&self) -> Option<Watcher> {
        let fd = self.fd.as_ref()?.try_clone().ok()?;
        Some(Watcher {
            file: Arc::new(std::fs::File::from(fd)),
        })
    }

    /// The server was stopped by the recorder: the guard ends without a signal, and is
    /// waited for (at most a second), so nothing of the run is left once the recorder is.
    pub fn disarm(&mut self) {
        let Some(fd) = self.fd.take() else {
            return;
        };
        let file = std::fs::File::from(fd);
        let _ = std::io::Write::write_all(&mut &file, b"d");
        let pid = nix::unistd::Pid::from_raw(self.pid);
        for _ in 0..100 {
            match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(Waited::StillAlive) => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                _ => return,
            }
        }
    }
}

/// Forks the guard of process group `group`. None when the pipe or the fork fails (the
/// run goes on with the parent-death signal alone).
pub fn arm(group: i32) -> Option<Guard> {
    let mut fds = [-1i32; 2];
    // SAFETY: pipe2 into a local array of two.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    // SAFETY: the child calls only async-signal-safe functions (`watch`) and never returns.
    match unsafe { libc::fork() } {
        0 => unsafe { watch(read_end, group) },
        -1 => {
            // SAFETY: both ends are ours and used nowhere else.
            unsafe {
                libc::close(read_end);
                libc::close(write_end);
            }
            None
        }
        pid => {
            // The reaper leaves it to `disarm` to collect.
            crate::reaper::own(pid);
            // SAFETY: the read end is the guard's; the write end is ours alone from here.
            unsafe { libc::close(read_end) };
            Some(Guard {
                fd: Some(unsafe { OwnedFd::from_raw_fd(write_end) }),
                pid,
            })
        }
    }
}

/// A process's state, process group and start time (clock ticks) from
/// `/proc/PID/stat`, read without allocating: fields 3, 5 and 22, counted after the
/// command name's closing parenthesis.
///
/// # Safety
/// Async-signal-safe: for the forked guard.
unsafe fn stat_of(pid: i32) -> Option<(u8, i32, u64)> {
    let mut path = [0u8; 32];
    path[..6].copy_from_slice(b"/proc/");
    let mut digits = [0u8; 11];
    let mut n = 0;
    let mut v = u32::try_from(pid).ok()?;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut at = 6;
    for i in (0..n).rev() {
        path[at] = digits[i];
        at += 1;
    }
    path[at..at + 6].copy_from_slice(b"/stat\0");
    let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return None;
    }
    let mut buf = [0u8; 1024];
    let len = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
    libc::close(fd);
    let text = &buf[..usize::try_from(len).ok()?];
    let close = text.iter().rposition(|&b| b == b')')?;
    let mut fields = text[close + 1..]
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty());
    let state = *fields.next()?.first()?;
    let pgrp = number(fields.nth(1)?)?;
    let start = number(fields.nth(16)?)?;
    Some((state, i32::try_from(pgrp).ok()?, start))
}

fn number(digits: &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(v)
}

/// The start time of a process that is alive (not a zombie).
///
/// # Safety
/// Async-signal-safe: for the forked guard.
unsafe fn started_at(pid: i32) -> Option<u64> {
    stat_of(pid).filter(|s| s.0 != b'Z').map(|s| s.2)
}

/// Whether a live process (not a zombie, which no one may reap here) is in `group`:
/// `/proc` listed with the raw `getdents64`, which allocates nothing.
///
/// # Safety
/// Async-signal-safe: for the forked guard.
unsafe fn group_alive(group: i32) -> bool {
    let dir = libc::open(
        c"/proc".as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if dir < 0 {
        return libc::kill(-group, 0) == 0;
    }
    let mut buf = [0u8; 8192];
    let mut found = false;
    'list: loop {
        let n = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len());
        if n <= 0 {
            break;
        }
        let mut at = 0usize;
        while at + 19 < n as usize {
            // linux_dirent64: inode (8), offset (8), record length (2), type (1), name.
            let reclen = usize::from(u16::from_ne_bytes([buf[at + 16], buf[at + 17]]));
            if reclen == 0 {
                break 'list;
            }
            let name = &buf[at + 19..at + reclen];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if let Some(pid) = number(name).and_then(|p| i32::try_from(p).ok()) {
                if stat_of(pid).is_some_and(|s| s.0 != b'Z' && s.1 == group) {
                    found = true;
                    break 'list;
                }
            }
            at += reclen;
        }
    }
    libc::close(dir);
    found
}

/// The guard itself, in the forked child: only async-signal-safe calls (the recorder has
/// other threads, whose locks the child must never touch).
///
/// # Safety
/// Only to be called in the child of a fork, with `read_end` the pipe's read end.
unsafe fn watch(read_end: i32, group: i32) -> ! {
    libc::prctl(libc::PR_SET_NAME, NAME.as_ptr() as libc::c_ulong, 0, 0, 0);
    // Out of the terminal's reach (a Ctrl-C is the recorder's to handle), with default
    // dispositions instead of the recorder's counting handlers.
    libc::setsid();
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        libc::signal(sig, libc::SIG_DFL);
    }
    // Hold none of the recorder's files: whoever reads its output waits for every writer.
    for fd in 0..1024 {
        if fd != read_end {
            libc::close(fd);
        }
    }
    let mut watched = [(0i32, 0u64); MAX_WATCHED];
    let mut count = 0usize;
    let mut buf = [0u8; 4096];
    let mut have = 0usize;
    let disarmed = loop {
        let n = libc::read(read_end, buf[have..].as_mut_ptr().cast(), buf.len() - have);
        if n < 0 && *libc::__errno_location() == libc::EINTR {
            continue;
        }
        if n <= 0 {
            break false;
        }
        have += n as usize;
        let mut at = 0;
        let mut disarm = false;
        while at < have {
            if buf[at] == b'd' {
                disarm = true;
                break;
            }
            if have - at < RECORD {
                break;
            }
            let mut pid = [0u8; 4];
            pid.copy_from_slice(&buf[at + 1..at + 5]);
            let mut ticks = [0u8; 8];
            ticks.copy_from_slice(&buf[at + 5..at + RECORD]);
            if count < MAX_WATCHED {
                watched[count] = (i32::from_le_bytes(pid), u64::from_le_bytes(ticks));
                count += 1;
            }
            at += RECORD;
        }
        if disarm {
            break true;
        }
        buf.copy_within(at..have, 0);
        have -= at;
    };
    if !disarmed {
        // The recorder ended without stopping the server: wake it (it may be paused) and
        // ask it to stop, and the load's processes still running, then make sure.
        libc::kill(-group, libc::SIGCONT);
        libc::kill(-group, libc::SIGTERM);
        for &(pid, ticks) in &watched[..count] {
            if started_at(pid) == Some(ticks) {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let tenth = libc::timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        let alive = |watched: &[(i32, u64)]| {
            group_alive(group) || watched.iter().any(|&(p, t)| started_at(p) == Some(t))
        };
        for _ in 0..GRACE_TENTHS {
            if !alive(&watched[..count]) {
                libc::_exit(0);
            }
            libc::nanosleep(&tenth, std::ptr::null_mut());
        }
        libc::kill(-group, libc::SIGKILL);
        for &(pid, ticks) in &watched[..count] {
            if started_at(pid) == Some(ticks) {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    libc::_exit(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guards_own_reading_of_proc_agrees_with_the_recorders() {
        let me = std::process::id() as i32;
        let mine = crate::procs::ProcFs::default().read(me).unwrap();
        // SAFETY: plain reads of /proc.
        let (state, pgrp, start) = unsafe { stat_of(me) }.unwrap();
        assert_eq!(start, mine.start_ticks);
        assert_ne!(state, b'Z');
        assert_eq!(pgrp, nix::unistd::getpgrp().as_raw());
        assert!(unsafe { group_alive(pgrp) });
        assert_eq!(unsafe { started_at(i32::MAX) }, None);
        assert!(!unsafe { group_alive(i32::MAX) });
        assert_eq!(number(b"123"), Some(123));
        assert_eq!(number(b"self"), None);
    }
}
