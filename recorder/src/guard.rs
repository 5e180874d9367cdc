//! A guard for the launched server: a small process forked beside the recorder that stops
//! the server's process group when the recorder dies without having stopped it, however
//! it dies (SIGKILL, a crash, the OOM killer).
//!
//! The server's parent-death signal alone is not enough: it reaches the server's first
//! process only, and a vLLM whose API server dies while it is still starting leaves its
//! engine child (`VLLM::EngineCore`) running, holding the card. The guard holds the read
//! end of a pipe whose write end only the recorder holds; the kernel closes it when the
//! recorder ends, so the guard wakes up however the recorder went. A recorder that has
//! stopped the server itself disarms the guard first (one byte down the pipe).

use std::os::fd::{FromRawFd, OwnedFd};

use nix::libc;

/// The name the guard shows in `ps` and `/proc/PID/comm`.
pub const NAME: &[u8] = b"inferlint-guard\0";

/// How long the group gets to stop after its SIGTERM before the SIGKILL, in tenths of a
/// second (the teardown's own wait is longer; no one is waiting here).
const GRACE_TENTHS: u32 = 100;

/// The recorder's end of the guard's pipe.
pub struct Guard {
    fd: Option<OwnedFd>,
}

impl Guard {
    /// The server was stopped by the recorder: the guard ends without a signal.
    pub fn disarm(&mut self) {
        if let Some(fd) = self.fd.take() {
            let file = std::fs::File::from(fd);
            let _ = std::io::Write::write_all(&mut &file, b"d");
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
        _ => {
            // SAFETY: the read end is the guard's; the write end is ours alone from here.
            unsafe { libc::close(read_end) };
            Some(Guard {
                fd: Some(unsafe { OwnedFd::from_raw_fd(write_end) }),
            })
        }
    }
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
    let mut byte = 0u8;
    let n = loop {
        let n = libc::read(read_end, (&mut byte as *mut u8).cast(), 1);
        if n >= 0 || *libc::__errno_location() != libc::EINTR {
            break n;
        }
    };
    if n != 1 {
        // The recorder ended without stopping the server: wake it (it may be paused) and
        // ask it to stop, then make sure.
        libc::kill(-group, libc::SIGCONT);
        libc::kill(-group, libc::SIGTERM);
        let tenth = libc::timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        for _ in 0..GRACE_TENTHS {
            if libc::kill(-group, 0) != 0 {
                libc::_exit(0);
            }
            libc::nanosleep(&tenth, std::ptr::null_mut());
        }
        libc::kill(-group, libc::SIGKILL);
    }
    libc::_exit(0)
}
