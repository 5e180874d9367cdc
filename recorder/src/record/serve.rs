//! Steps 3, 6 and 7, serve mode: the platform, the start in a
//! new session, and the readiness wait that also proves ownership; the gate and the port
//! (steps 4, 5) are `gate.rs`, the stop (step 17) `stop.rs`. The ownership proof is
//! T13's rule (docs/tripwires.md#t13).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use analyzer::docs::manifest::{BootLog, Exit, Ownership as Owned, Stage};
use analyzer::docs::processes::{TreeSnapshot, When};
use analyzer::docs::BOOT_LOG;
use analyzer::Engine;
use nix::sys::signal::Signal;

use super::{problem, Run, Step, Stop};
use crate::procs::{self, Ownership, ProcFs, SocketOwner};
use crate::{say, signals};

pub const READY_MARKER: &[u8] = b"Application startup complete";

/// The server the run started.
pub struct Server {
    pub child: Child,
    pub pid: i32,
    pub sid: i32,
    pub start_ticks: u64,
    pub log: PathBuf,
    pub own: Ownership,
    pub exit: Option<std::process::ExitStatus>,
    /// Stops the server's group if the recorder dies first (`guard.rs`).
    pub guard: Option<crate::guard::Guard>,
}

/// Starts `argv` without a shell, in a new session, stdin from /dev/null, output raw into
/// `log`, with SIGTERM as its parent-death signal (for its first process) and a guard
/// (for the rest of its group). Called from the main thread, which lives for the whole
/// run (the signal fires when the spawning *thread* ends).
pub fn start(argv: &[String], log: &Path, fs: &ProcFs) -> Result<Server, String> {
    let (prog, args) = argv.split_first().ok_or("the --serve command is empty")?;
    let out = File::options()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(prog);
    cmd.args(args).stdin(Stdio::null()).stdout(out).stderr(err);
    // SAFETY: only async-signal-safe calls (setsid, prctl) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let child = crate::reaper::spawn(&mut cmd)
        .map_err(|e| format!("cannot start the server ({prog}): {e}"))?;
    let pid = child.id() as i32;
    let start_ticks = fs.read(pid).map_or(0, |p| p.start_ticks);
    Ok(Server {
        child,
        pid,
        sid: pid,
        start_ticks,
        log: log.to_path_buf(),
        own: Ownership {
            launched: (pid, start_ticks),
            sid: pid,
            known: Default::default(),
        },
        exit: None,
        guard: crate::guard::arm(pid),
    })
}

/// How the launched process ended, as the manifest's `exit`.
pub fn exit_of(st: std::process::ExitStatus) -> Option<Exit> {
    match (st.code(), st.signal()) {
        (Some(c), _) => Some(Exit::Code(c)),
        (None, Some(s)) => Some(Exit::Signal(
            Signal::try_from(s).map_or(format!("signal {s}"), |x| x.as_str().to_string()),
        )),
        _ => None,
    }
}

/// How the launched server ended, in words, once it has (its status is kept).
pub fn ended_now(server: &mut Server) -> Option<String> {
    if server.exit.is_none() {
        server.exit = server.child.try_wait().ok().flatten();
    }
    server.exit.map(describe_exit)
}

/// How the launched process ended, in words.
pub fn describe_exit(st: std::process::ExitStatus) -> String {
    match exit_of(st) {
        Some(Exit::Code(c)) => format!("exited with code {c}"),
        Some(Exit::Signal(name)) => format!("was killed by {name}"),
        None => "ended".into(),
    }
}

/// Finds a marker in a growing file, reading only what is new; a marker split across two
/// reads is still found because the tail of the last read is kept.
pub struct LogWatch {
    offset: u64,
    tail: Vec<u8>,
    pub found: bool,
}

impl LogWatch {
    pub fn new() -> LogWatch {
        LogWatch {
            offset: 0,
            tail: Vec::new(),
            found: false,
        }
    }

    pub fn poll(&mut self, path: &Path, marker: &[u8]) -> bool {
        if self.found {
            return true;
        }
        let Ok(mut f) = File::open(path) else {
            return false;
        };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return false;
        }
        let mut new = Vec::new();
        if f.read_to_end(&mut new).is_err() {
            return false;
        }
        self.offset += new.len() as u64;
        let mut hay = std::mem::take(&mut self.tail);
        hay.extend_from_slice(&new);
        self.found = hay.windows(marker.len()).any(|w| w == marker);
        let keep = marker.len().saturating_sub(1).min(hay.len());
        self.tail = hay[hay.len() - keep..].to_vec();
        self.found
    }
}

impl Default for LogWatch {
    fn default() -> Self {
        Self::new()
    }
}

/// Why the wait for readiness ended without a ready server.
pub enum NotReady {
    Problem(String),
    Interrupted,
}

/// Waits until the server is ready and proven ours. Ok(ownership) on success.
pub fn wait_ready(
    server: &mut Server,
    url: &str,
    port: Option<u16>,
    timeout: Duration,
    fs: &ProcFs,
) -> Result<Owned, NotReady> {
    let start = Instant::now();
    let mut watch = LogWatch::new();
    loop {
        if signals::interrupted() {
            return Err(NotReady::Interrupted);
        }
        if let Ok(Some(st)) = server.child.try_wait() {
            server.exit = Some(st);
            return Err(NotReady::Problem(format!(
                "the server {} before it was ready",
                describe_exit(st)
            )));
        }
        if watch.poll(&server.log, READY_MARKER) {
            let health = format!("{url}/health");
            let ok = signals::abandonable(0, move || {
                crate::http::healthy(&health, Duration::from_secs(5))
            });
            match ok {
                None => return Err(NotReady::Interrupted),
                Some(true) => {
                    let me = std::process::id() as i32;
                    let owned = server.own.owned(&fs.table(), me);
                    return match port.map(|p| procs::socket_owner(fs, p, &owned)) {
                        Some(SocketOwner::Owned) => Ok(Owned::Verified),
                        Some(SocketOwner::Foreign) => Err(NotReady::Problem(format!(
                            "the server at {url} is not the one this run started"
                        ))),
                        Some(SocketOwner::Unverified(why)) => {
                            say(&format!("== warning: cannot verify that the server at {url} is this run's: {why}"));
                            Ok(Owned::Unverified)
                        }
                        None => Ok(Owned::Unverified),
                    };
                }
                Some(false) => {}
            }
        }
        if start.elapsed() >= timeout {
            return Err(NotReady::Problem(format!(
                "the server was not ready after {} s",
                timeout.as_secs_f64()
            )));
        }
        if !signals::sleep(
            Duration::from_secs(2)
                .min(timeout.saturating_sub(start.elapsed()) + Duration::from_millis(10)),
            0,
        ) {
            return Err(NotReady::Interrupted);
        }
    }
}

/// `processes.json` entry: the owned tree now (and the tree learnt for the stop).
pub fn tree_snapshot(server: &mut Server, fs: &ProcFs, when: When) -> TreeSnapshot {
    let me = std::process::id() as i32;
    let table = fs.table();
    let owned = server.own.owned(&table, me);
    server.own.learn(&owned);
    let engines: std::collections::HashMap<i32, Engine> = procs::servers(&table, me, true)
        .into_iter()
        .map(|s| (s.proc.pid, s.engine))
        .collect();
    TreeSnapshot {
        when,
        t_wall: crate::clock::wall(),
        processes: owned
            .iter()
            .map(|p| procs::process_doc(p, engines.get(&p.pid).copied()))
            .collect(),
    }
}

impl Run {
    /// Steps 3–7.
    pub(super) fn serve_steps(&mut self, argv: Vec<String>) -> Step<()> {
        if !procs::linux(Path::new("/proc")) {
            return problem(
                Stage::Platform,
                "--serve needs Linux (or WSL): stopping the server reads /proc",
            );
        }
        self.gate_step()?;
        let port = self.port_step()?;
        self.check_signal(Stage::Start)?;
        self.start_step(&argv)?;
        self.ready_step(port)
    }

    /// Step 6.
    fn start_step(&mut self, argv: &[String]) -> Step<()> {
        let log = self.opts.dir.join(BOOT_LOG);
        say(&format!(
            "== start the server (output in {})",
            log.display()
        ));
        self.manifest.boot_log = Some(BootLog {
            source: BootLog::LAUNCHED.into(),
            ..BootLog::default()
        });
        let server = match start(argv, &log, &self.fs) {
            Ok(s) => s,
            Err(e) => {
                // Nothing ran: no boot log to keep.
                self.manifest.boot_log = None;
                let _ = std::fs::remove_file(&log);
                return problem(Stage::Start, e);
            }
        };
        if let Some(s) = self.manifest.serve.as_mut() {
            s.pid = Some(server.pid);
            s.sid = Some(server.sid);
            s.start_ticks = Some(server.start_ticks);
        }
        self.server = Some(server);
        self.save_manifest();
        Ok(())
    }

    /// Step 7.
    fn ready_step(&mut self, port: Option<u16>) -> Step<()> {
        let timeout = Duration::from_secs_f64(self.opts.ready_timeout);
        let url = self.manifest.url.clone();
        let fs = self.fs.clone();
        let Some(server) = self.server.as_mut() else {
            return Ok(());
        };
        let ready = wait_ready(server, &url, port, timeout, &fs);
        self.trees.push(tree_snapshot(server, &fs, When::Ready));
        match ready {
            Ok(ownership) => {
                if let Some(s) = self.manifest.serve.as_mut() {
                    s.ownership = Some(ownership);
                }
                if ownership == Owned::Unverified {
                    self.manifest.notes.push(format!(
                        "ownership of the server at {url} could not be verified"
                    ));
                }
                let len = self.boot_len();
                if let Some(b) = self.manifest.boot_log.as_mut() {
                    b.ready = len;
                }
                self.save_manifest();
                Ok(())
            }
            Err(NotReady::Interrupted) => Err(Stop::Interrupted(Stage::Ready)),
            Err(NotReady::Problem(p)) => problem(Stage::Ready, p),
        }
    }

    /// The byte length of the boot log the run's own server writes.
    pub(super) fn boot_len(&self) -> Option<u64> {
        let b = self.manifest.boot_log.as_ref()?;
        if b.source != BootLog::LAUNCHED {
            return None;
        }
        std::fs::metadata(self.opts.dir.join(BOOT_LOG))
            .ok()
            .map(|m| m.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_split_across_reads_is_found() {
        let d = std::env::temp_dir().join(format!("rec-watch-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join(BOOT_LOG);
        std::fs::write(&p, b"INFO: Application start").unwrap();
        let mut w = LogWatch::new();
        assert!(!w.poll(&p, READY_MARKER));
        use std::io::Write;
        let mut f = File::options().append(true).open(&p).unwrap();
        f.write_all(b"up complete.\n").unwrap();
        assert!(w.poll(&p, READY_MARKER));
        let _ = std::fs::remove_dir_all(d);
    }
}
