//! Serve mode's own steps: the GPU gate, the free port, the start in a new session, the
//! readiness wait that also proves ownership, and the always-run stop (recorder.md §3.3
//! steps 4–7, §3.5, §3.7).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use analyzer::json::{obj, Json};
use analyzer::Engine;
use nix::sys::signal::Signal;

use crate::gpu::Rule;
use crate::procs::{self, Ownership, ProcFs, SocketOwner};
use crate::signals;
use crate::teardown::{self, Live, SignalRecord, To, World};

pub const READY_MARKER: &[u8] = b"Application startup complete";

/// The GPU gate (T2 before a start): the clear-card rule over 10 s, and `gate.json`.
pub fn gate(fs: &ProcFs, gpus: Option<Json>) -> (Json, Option<bool>) {
    let rule = Rule::new(800, 2, 10.0);
    let mut live = Live::new(fs.clone(), 0);
    let v = teardown::card_rule(&mut live, &rule);
    let servers: Vec<Json> = procs::live_servers(fs)
        .iter()
        .map(|s| s.to_json())
        .collect();
    (v.gate_document(&rule, servers, true, gpus), v.clear)
}

/// Something already answers at the address.
pub fn port_taken(host: &str, port: u16) -> bool {
    let Ok(addrs) = (host, port).to_socket_addrs() else {
        return false;
    };
    addrs
        .into_iter()
        .any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(1)).is_ok())
}

/// The server the run started.
pub struct Server {
    pub child: Child,
    pub pid: i32,
    pub sid: i32,
    pub start_ticks: u64,
    pub log: PathBuf,
    pub own: Ownership,
    pub exit: Option<std::process::ExitStatus>,
}

/// Starts `argv` without a shell, in a new session, stdin from /dev/null, output raw into
/// `log`, with SIGTERM as its parent-death signal. Called from the main thread, which
/// lives for the whole run (the signal fires when the spawning *thread* ends).
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
    })
}

/// How the launched process ended, in words and as the manifest's `exit`.
pub fn describe_exit(st: std::process::ExitStatus) -> (String, Json) {
    match (st.code(), st.signal()) {
        (Some(c), _) => (format!("exited with code {c}"), Json::from(i64::from(c))),
        (None, Some(s)) => {
            let name =
                Signal::try_from(s).map_or(format!("signal {s}"), |x| x.as_str().to_string());
            (format!("was killed by {name}"), Json::from(name))
        }
        _ => ("ended".into(), Json::Null),
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
) -> Result<&'static str, NotReady> {
    let start = Instant::now();
    let mut watch = LogWatch::new();
    loop {
        if signals::interrupted() {
            return Err(NotReady::Interrupted);
        }
        if let Ok(Some(st)) = server.child.try_wait() {
            server.exit = Some(st);
            let (how, _) = describe_exit(st);
            return Err(NotReady::Problem(format!(
                "the server {how} before it was ready"
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
                        Some(SocketOwner::Owned) => Ok("verified"),
                        Some(SocketOwner::Foreign) => Err(NotReady::Problem(format!(
                            "the server at {url} is not the one this run started"
                        ))),
                        Some(SocketOwner::Unverified(why)) => {
                            crate::say(&format!("== warning: cannot verify that the server at {url} is this run's: {why}"));
                            Ok("unverified")
                        }
                        None => Ok("unverified"),
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

/// `processes.json` entry: the owned tree now.
pub fn tree_snapshot(server: &mut Server, fs: &ProcFs, when: &str) -> Json {
    let me = std::process::id() as i32;
    let table = fs.table();
    let owned = server.own.owned(&table, me);
    server.own.learn(&owned);
    let engines: std::collections::HashMap<i32, Engine> = procs::servers(&table, me, true)
        .into_iter()
        .map(|s| (s.proc.pid, s.engine))
        .collect();
    obj([
        ("when", Json::from(when)),
        ("t_wall", Json::Float(crate::clock::wall())),
        (
            "processes",
            Json::Arr(
                owned
                    .iter()
                    .map(|p| procs::proc_json(p, engines.get(&p.pid).copied()))
                    .collect(),
            ),
        ),
    ])
}

/// What the stop did, for `teardown.json`.
pub struct Stopped {
    pub doc: Json,
    pub abandoned: bool,
}

/// Stops the server (recorder.md §3.5 steps 2–5). `allowed` is the number of stop
/// signals already received: one more skips every wait. `card_timeout` is the clear-card
/// rule's limit (120 s).
pub fn stop(server: &mut Server, fs: &ProcFs, allowed: usize, card_timeout: f64) -> Stopped {
    let me = std::process::id() as i32;
    let mut live = Live::new(fs.clone(), allowed);
    let mut signals_sent: Vec<SignalRecord> = Vec::new();
    let mut abandoned = false;
    let group = To::Group(server.sid);
    let send = |live: &mut Live, to: To, sig: Signal, out: &mut Vec<SignalRecord>| {
        let r = live.signal(to, sig);
        out.push(SignalRecord {
            elapsed: live.elapsed(),
            to,
            signal: sig,
            result: r,
        });
    };
    // 2. The launched process: its group gets SIGTERM, 30 s, SIGKILL, 10 s.
    if server.exit.is_none() && matches!(server.child.try_wait(), Ok(None)) {
        send(&mut live, group, Signal::SIGTERM, &mut signals_sent);
        if !wait_exit(server, Duration::from_secs(30), allowed) {
            abandoned = signals::count() > allowed;
            send(&mut live, group, Signal::SIGKILL, &mut signals_sent);
            wait_exit(server, Duration::from_secs(10), usize::MAX);
        }
    }
    if server.exit.is_none() {
        if let Ok(st) = server.child.wait() {
            server.exit = Some(st);
        }
    }
    let server_exit = server.exit.map_or(Json::Null, |s| describe_exit(s).1);
    // 3. The sweep: owned processes still alive.
    let owned: Vec<_> = server
        .own
        .owned(&fs.table(), me)
        .into_iter()
        .filter(|p| p.live())
        .collect();
    let left_after: Vec<Json> = owned.iter().map(|p| Json::from(i64::from(p.pid))).collect();
    if abandoned || signals::count() > allowed {
        abandoned = true;
        send(&mut live, group, Signal::SIGKILL, &mut signals_sent);
        for p in &owned {
            send(
                &mut live,
                To::Pid(p.pid),
                Signal::SIGKILL,
                &mut signals_sent,
            );
        }
    } else if !owned.is_empty() {
        let (recs, _) = teardown::stop_each(&mut live, &owned, 15.0);
        signals_sent.extend(recs);
        abandoned = signals::count() > allowed;
    }
    let owned_now: std::collections::HashSet<i32> = server
        .own
        .owned(&fs.table(), me)
        .iter()
        .map(|p| p.pid)
        .collect();
    let left_alone: Vec<Json> = procs::live_servers(fs)
        .iter()
        .filter(|s| !owned_now.contains(&s.proc.pid))
        .map(|s| s.to_json())
        .collect();
    // 4. The card.
    let rule = Rule::new(800, 2, card_timeout);
    let (readings, clear, reason) = if abandoned {
        (Json::Arr(vec![]), Json::Null, Json::Null)
    } else {
        let v = teardown::card_rule(&mut live, &rule);
        if v.clear.is_none() {
            abandoned = true;
        }
        (v.readings_json(), Json::from(v.clear), Json::from(v.reason))
    };
    let doc = obj([
        ("schema", Json::from("inferlint.teardown/1")),
        (
            "launched",
            obj([
                ("pid", Json::from(i64::from(server.pid))),
                ("sid", Json::from(i64::from(server.sid))),
            ]),
        ),
        (
            "signals",
            Json::Arr(signals_sent.iter().map(SignalRecord::to_json).collect()),
        ),
        ("server_exit", server_exit),
        ("left_after_the_server_stopped", Json::Arr(left_after)),
        ("left_alone", Json::Arr(left_alone)),
        ("max_used_mib", Json::Int(rule.max_used_mib)),
        ("consecutive", Json::from(i64::from(rule.consecutive))),
        ("interval_s", Json::Float(rule.interval_s)),
        ("timeout_s", Json::Float(rule.timeout_s)),
        ("readings", readings),
        ("clear", clear),
        ("reason", reason),
        ("abandoned", Json::Bool(abandoned)),
    ]);
    Stopped { doc, abandoned }
}

/// Waits for the launched process to exit; false on timeout or a further signal.
fn wait_exit(server: &mut Server, d: Duration, allowed: usize) -> bool {
    let end = Instant::now() + d;
    loop {
        if let Ok(Some(st)) = server.child.try_wait() {
            server.exit = Some(st);
            return true;
        }
        if Instant::now() >= end || signals::count() > allowed {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_split_across_reads_is_found() {
        let d = std::env::temp_dir().join(format!("rec-watch-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("boot.log");
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
