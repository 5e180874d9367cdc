//! SIGINT, SIGTERM and SIGHUP, handled alike: the handler only counts,
//! and every wait in the recorder polls the count, so a signal takes effect at once instead
//! of after a foreground child ends (as a shell `trap` would).

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

static COUNT: AtomicUsize = AtomicUsize::new(0);
static LAST: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signo: nix::libc::c_int) {
    // Only async-signal-safe work here: two atomic stores.
    LAST.store(signo, Ordering::SeqCst);
    COUNT.fetch_add(1, Ordering::SeqCst);
}

/// Installs the counting handler for the three stop signals.
pub fn install() {
    let act = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler only touches atomics.
        let _ = unsafe { sigaction(s, &act) };
    }
}

/// How many stop signals arrived so far.
pub fn count() -> usize {
    COUNT.load(Ordering::SeqCst)
}

pub fn interrupted() -> bool {
    count() > 0
}

/// The last signal received, by name.
pub fn last_name() -> Option<&'static str> {
    Signal::try_from(LAST.load(Ordering::SeqCst))
        .ok()
        .map(Signal::as_str)
}

/// Whether the last signal was SIGINT (a terminal Ctrl-C also reached the load).
pub fn last_was_sigint() -> bool {
    LAST.load(Ordering::SeqCst) == Signal::SIGINT as i32
}

/// Sleeps up to `d`, returning early (false) once more than `allowed` signals arrived.
pub fn sleep(d: Duration, allowed: usize) -> bool {
    let end = Instant::now() + d;
    loop {
        if count() > allowed {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}

/// Runs `f` on a helper thread and waits for it, giving up (None) when more than
/// `allowed` signals arrive first: an HTTP call is abandoned at once, not when it ends.
pub fn abandonable<T: Send + 'static>(
    allowed: usize,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(v) => return Some(v),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if count() > allowed {
                    return None;
                }
            }
        }
    }
}
