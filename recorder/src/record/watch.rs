//! What the load's wait watches in the server, ten times a second: that the launched
//! process still runs (it did not exit, it is not stopped), and, on a thread of its own,
//! that its health check answers. A server whose engine died can live on and answer
//! (vLLM's `VLLM_KEEP_ALIVE_ON_ENGINE_DEATH`): only its health check says so. Each fault
//! stops the load: nothing the server sends after it counts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use analyzer::docs::manifest::LoadStop;

use super::serve::{ended_now, Server};
use crate::http::{self, Client};
use crate::procs::ProcFs;

/// How long the server may stay stopped (SIGSTOP, a debugger) before the load is stopped:
/// a paused server answers nothing, and a load measured through the pause measures it.
const PAUSE_LIMIT: Duration = Duration::from_secs(3);
/// How often the health check is asked, how long an answer may take, and how many
/// failing answers in a row (an error status, not a slow answer: a busy server may be
/// slow) mean the server is down.
const HEALTH_EVERY: Duration = Duration::from_secs(1);
const HEALTH_TIMEOUT: Duration = Duration::from_secs(5);
const HEALTH_FAILURES: usize = 3;

/// The watch during one load command.
pub struct ServerWatch {
    paused_since: Option<Instant>,
    /// The health thread's finding, once it has one.
    unhealthy: Arc<Mutex<Option<String>>>,
    stop: Arc<AtomicBool>,
}

impl ServerWatch {
    /// Starts watching; the health check of the server at `base` too, when given (at
    /// `base/health`).
    pub fn start(base: Option<&str>) -> ServerWatch {
        let unhealthy = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let watch = ServerWatch {
            paused_since: None,
            unhealthy: unhealthy.clone(),
            stop: stop.clone(),
        };
        let Some(base) = base else {
            return watch;
        };
        let (found, done) = (unhealthy, stop);
        let url = format!("{}/health", base.trim_end_matches('/'));
        std::thread::spawn(move || {
            let client = Client::new(HEALTH_TIMEOUT);
            let mut failing: Vec<u16> = Vec::new();
            while !done.load(Ordering::SeqCst) {
                match client.get(&url) {
                    Ok(r) if r.status >= 500 => failing.push(r.status),
                    // A refused connection is the process's end, which the wait sees.
                    _ => failing.clear(),
                }
                if failing.len() >= HEALTH_FAILURES {
                    let status = failing[failing.len() - 1];
                    if let Ok(mut f) = found.lock() {
                        *f = Some(format!(
                            "the server's health check answered {status} {} {HEALTH_FAILURES} \
                             times in a row during the load",
                            http::reason(status)
                        ));
                    }
                    return;
                }
                std::thread::sleep(HEALTH_EVERY);
            }
        });
        watch
    }

    /// Why the load must stop because of the server, if it must, in words: the launched
    /// process ended or has been stopped for [`PAUSE_LIMIT`], or the health check keeps
    /// failing.
    pub fn fault(
        &mut self,
        server: Option<&mut Server>,
        fs: &ProcFs,
    ) -> Option<(LoadStop, String)> {
        if let Some(server) = server {
            if let Some(how) = ended_now(server) {
                let why = format!("the server {how} during the load");
                return Some((LoadStop::ServerExited, why));
            }
            if let Some(paused) = self.paused(server.pid, fs) {
                return Some((LoadStop::ServerPaused, paused));
            }
        }
        let unhealthy = self.unhealthy.lock().ok().and_then(|f| f.clone());
        unhealthy.map(|why| (LoadStop::ServerUnhealthy, why))
    }

    fn paused(&mut self, pid: i32, fs: &ProcFs) -> Option<String> {
        let state = fs.read(pid).map(|p| p.state);
        if !matches!(state, Some('T' | 't')) {
            self.paused_since = None;
            return None;
        }
        let since = *self.paused_since.get_or_insert_with(Instant::now);
        (since.elapsed() >= PAUSE_LIMIT).then(|| {
            format!(
                "the server was stopped (paused by a signal or a debugger) for {} s during the \
                 load",
                PAUSE_LIMIT.as_secs()
            )
        })
    }
}

impl Drop for ServerWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}
