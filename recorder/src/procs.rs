//! Processes from `/proc` (T3's rule, docs/tripwires.md#t3): reading a table under any
//! root (a synthetic one in tests), telling inference servers from bystanders by the
//! structure of their argument vectors (never by substrings of whole command lines), and
//! ownership.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use analyzer::docs::gate::ServerProcess;
use analyzer::docs::processes::Process;
use analyzer::Engine;

/// One process.
#[derive(Debug, Clone, PartialEq)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub sid: i32,
    pub start_ticks: u64,
    pub state: char,
    pub comm: String,
    pub argv: Vec<String>,
}

impl Proc {
    /// A zombie holds no memory and is not live.
    pub fn live(&self) -> bool {
        self.state != 'Z' && self.state != 'X'
    }

    pub fn cmdline(&self) -> String {
        if self.argv.is_empty() {
            format!("[{}]", self.comm)
        } else {
            self.argv.join(" ")
        }
    }

    pub fn key(&self) -> (i32, u64) {
        (self.pid, self.start_ticks)
    }
}

/// The `/proc` in use: the real one, or a synthetic tree.
#[derive(Debug, Clone)]
pub struct ProcFs {
    pub root: PathBuf,
}

impl Default for ProcFs {
    fn default() -> Self {
        ProcFs {
            root: PathBuf::from("/proc"),
        }
    }
}

/// Parses `stat`: fields after the *last* `)`, since the name may hold `) (`.
/// Returns `(state, ppid, sid, start_ticks)`.
pub fn parse_stat(stat: &str) -> Option<(char, i32, i32, u64)> {
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let state = f.first()?.chars().next()?;
    let ppid = f.get(1)?.parse().ok()?;
    let sid = f.get(3)?.parse().ok()?;
    let start = f.get(19)?.parse().ok()?;
    Some((state, ppid, sid, start))
}

/// `cmdline` split on NUL, each argument trimmed of spaces (renamed processes pad their
/// titles), empty ones dropped.
pub fn parse_cmdline(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).trim_matches(' ').to_string())
        .filter(|a| !a.is_empty())
        .collect()
}

impl ProcFs {
    pub fn available(&self) -> bool {
        self.root.join("self").exists() || self.root.join("1").exists()
    }

    /// One process; `None` when it vanished or cannot be read.
    pub fn read(&self, pid: i32) -> Option<Proc> {
        let dir = self.root.join(pid.to_string());
        let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
        let (state, ppid, sid, start_ticks) = parse_stat(&stat)?;
        let comm = std::fs::read_to_string(dir.join("comm"))
            .map(|c| c.trim_end_matches('\n').to_string())
            .unwrap_or_default();
        let argv = std::fs::read(dir.join("cmdline"))
            .map(|b| parse_cmdline(&b))
            .unwrap_or_default();
        Some(Proc {
            pid,
            ppid,
            sid,
            start_ticks,
            state,
            comm,
            argv,
        })
    }

    /// Every readable numeric entry.
    pub fn table(&self) -> Vec<Proc> {
        let Ok(rd) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut out: Vec<Proc> = rd
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|pid| self.read(pid))
            .collect();
        out.sort_by_key(|p| p.pid);
        out
    }

    /// The environment variable `key` of a process, if readable.
    pub fn env(&self, pid: i32, key: &str) -> Option<String> {
        let bytes = std::fs::read(self.root.join(pid.to_string()).join("environ")).ok()?;
        bytes.split(|b| *b == 0).find_map(|kv| {
            let kv = String::from_utf8_lossy(kv);
            kv.strip_prefix(key)
                .and_then(|r| r.strip_prefix('='))
                .map(str::to_string)
        })
    }

    /// The socket inodes listening on `port` (IPv4 and IPv6).
    pub fn listening_inodes(&self, port: u16) -> HashSet<u64> {
        let mut out = HashSet::new();
        for f in ["net/tcp", "net/tcp6"] {
            let Ok(text) = std::fs::read_to_string(self.root.join(f)) else {
                continue;
            };
            for line in text.lines().skip(1) {
                let c: Vec<&str> = line.split_whitespace().collect();
                let (Some(local), Some(st), Some(inode)) = (c.get(1), c.get(3), c.get(9)) else {
                    continue;
                };
                let p = local
                    .rsplit(':')
                    .next()
                    .and_then(|h| u16::from_str_radix(h, 16).ok());
                if p == Some(port) && *st == "0A" {
                    if let Ok(i) = inode.parse::<u64>() {
                        out.insert(i);
                    }
                }
            }
        }
        out.remove(&0);
        out
    }

    /// The socket inodes among a process's descriptors; `None` when unreadable.
    pub fn socket_inodes(&self, pid: i32) -> Option<HashSet<u64>> {
        let rd = std::fs::read_dir(self.root.join(pid.to_string()).join("fd")).ok()?;
        Some(
            rd.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter_map(|t| {
                    let t = t.to_string_lossy().into_owned();
                    t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
                })
                .collect(),
        )
    }
}

fn base(arg: &str) -> &str {
    arg.rsplit('/').next().unwrap_or(arg)
}

const SERVER_PROGRAMS: [(&str, Engine); 3] = [
    ("vllm", Engine::Vllm),
    ("sglang", Engine::Sglang),
    ("trtllm-serve", Engine::Trtllm),
];

const SERVER_MODULES: [(&str, Engine); 4] = [
    ("vllm.entrypoints.openai.api_server", Engine::Vllm),
    ("vllm.entrypoints.cli.main", Engine::Vllm),
    ("sglang.launch_server", Engine::Sglang),
    ("tensorrt_llm.commands.serve", Engine::Trtllm),
];

/// Whether a process is a server by itself (not by descent), and whose.
pub fn server_engine(p: &Proc) -> Option<Engine> {
    let first = p.argv.first().map(String::as_str).unwrap_or("");
    // Renamed titles hold even when the arguments are wiped.
    for (prefix, e) in [("VLLM::", Engine::Vllm), ("sglang::", Engine::Sglang)] {
        if p.comm.starts_with(prefix) || first.starts_with(prefix) {
            return Some(e);
        }
    }
    let a = &p.argv;
    let program = |i: usize| -> Option<Engine> {
        let name = base(a.get(i)?);
        let e = SERVER_PROGRAMS.iter().find(|(n, _)| *n == name)?.1;
        (a.get(i + 1).map(String::as_str) == Some("serve")).then_some(e)
    };
    if let Some(e) = program(0) {
        return Some(e);
    }
    if base(first).starts_with("python") {
        // `python -m MODULE`: the module must follow -m directly.
        if let Some(i) = a.iter().position(|x| x == "-m") {
            let m = a.get(i + 1).map(String::as_str).unwrap_or("");
            let next = a.get(i + 2).map(String::as_str);
            if let Some((_, e)) = SERVER_MODULES.iter().find(|(n, _)| *n == m) {
                // The same entry point runs the load tool as `... cli.main bench`.
                if !(m == "vllm.entrypoints.cli.main" && next == Some("bench")) {
                    return Some(*e);
                }
            }
            return None;
        }
        // `python [options] SCRIPT serve`: the script is the first non-option argument.
        if let Some(i) = a.iter().skip(1).position(|x| !x.starts_with('-')) {
            return program(i + 1);
        }
    }
    None
}

/// The caller and each of its ancestors: never targets.
pub fn self_and_ancestors(table: &[Proc], me: i32) -> HashSet<i32> {
    let by_pid: HashMap<i32, &Proc> = table.iter().map(|p| (p.pid, p)).collect();
    let mut out = HashSet::new();
    let mut cur = me;
    while cur > 0 && out.insert(cur) {
        match by_pid.get(&cur) {
            Some(p) => cur = p.ppid,
            None => break,
        }
    }
    out
}

/// A server process and the engine it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub proc: Proc,
    pub engine: Engine,
}

impl Server {
    /// As `gate.json` and `teardown.json` list it.
    pub fn doc(&self) -> ServerProcess {
        ServerProcess {
            pid: self.proc.pid,
            engine: self.engine,
            argv: self.proc.argv.clone(),
        }
    }
}

/// Every server process: matched directly, or descending from one; never `me` or its
/// ancestors. Zombies are included only when `with_zombies` (they hold nothing).
pub fn servers(table: &[Proc], me: i32, with_zombies: bool) -> Vec<Server> {
    let never = self_and_ancestors(table, me);
    let mut engine_of: HashMap<i32, Engine> = HashMap::new();
    for p in table {
        if let Some(e) = server_engine(p) {
            if !never.contains(&p.pid) {
                engine_of.insert(p.pid, e);
            }
        }
    }
    // Descendants take their root's engine (TensorRT-LLM's prte and MPI workers).
    let parent: HashMap<i32, i32> = table.iter().map(|p| (p.pid, p.ppid)).collect();
    for p in table {
        if engine_of.contains_key(&p.pid) || never.contains(&p.pid) {
            continue;
        }
        let mut cur = p.ppid;
        let mut seen = HashSet::new();
        while cur > 1 && seen.insert(cur) {
            if let Some(e) = engine_of.get(&cur) {
                engine_of.insert(p.pid, *e);
                break;
            }
            cur = parent.get(&cur).copied().unwrap_or(0);
        }
    }
    table
        .iter()
        .filter(|p| with_zombies || p.live())
        .filter_map(|p| {
            Some(Server {
                proc: p.clone(),
                engine: *engine_of.get(&p.pid)?,
            })
        })
        .collect()
}

/// Test isolation: with `INFERLINT_RECORDER_SCOPE` set, only processes whose own
/// environment carries the same value are considered at all. It can only narrow the
/// targets, never widen them; unset (always, outside tests) it changes nothing.
pub const SCOPE_ENV: &str = "INFERLINT_RECORDER_SCOPE";

pub fn in_scope(fs: &ProcFs, table: Vec<Proc>) -> Vec<Proc> {
    match std::env::var(SCOPE_ENV).ok().filter(|s| !s.is_empty()) {
        None => table,
        Some(scope) => table
            .into_iter()
            .filter(|p| fs.env(p.pid, SCOPE_ENV).as_deref() == Some(scope.as_str()))
            .collect(),
    }
}

/// The live server processes visible now (scope applied), excluding the caller's line.
pub fn live_servers(fs: &ProcFs) -> Vec<Server> {
    let me = std::process::id() as i32;
    let table = fs.table();
    let never = self_and_ancestors(&table, me);
    let scoped: HashSet<i32> = in_scope(fs, table.clone()).iter().map(|p| p.pid).collect();
    servers(&table, me, false)
        .into_iter()
        .filter(|s| scoped.contains(&s.proc.pid) && !never.contains(&s.proc.pid))
        .collect()
}

/// What `record` owns: the launched process, its session, their
/// descendants, and every process seen in its tree before, matched by PID and start time.
#[derive(Debug, Clone, Default)]
pub struct Ownership {
    pub launched: (i32, u64),
    pub sid: i32,
    pub known: HashSet<(i32, u64)>,
}

impl Ownership {
    /// The owned processes in `table` (never the caller or its ancestors).
    pub fn owned(&self, table: &[Proc], me: i32) -> Vec<Proc> {
        let never = self_and_ancestors(table, me);
        let mut owned: HashSet<i32> = table
            .iter()
            .filter(|p| {
                p.key() == self.launched || p.sid == self.sid || self.known.contains(&p.key())
            })
            .map(|p| p.pid)
            .collect();
        loop {
            let before = owned.len();
            for p in table {
                if owned.contains(&p.ppid) {
                    owned.insert(p.pid);
                }
            }
            if owned.len() == before {
                break;
            }
        }
        table
            .iter()
            .filter(|p| owned.contains(&p.pid) && !never.contains(&p.pid))
            .cloned()
            .collect()
    }

    /// For an ownership read back from a run folder: when the launched process's start
    /// time is known and a live process now holds its PID as a session leader with another
    /// start time, the old session is gone (Linux reuses no PID still in use as a session
    /// id) and that session is someone else's: stop matching by session.
    pub fn forget_reused_session(&mut self, table: &[Proc]) {
        let (pid, ticks) = self.launched;
        if ticks == u64::MAX || pid != self.sid {
            return;
        }
        if table
            .iter()
            .any(|p| p.pid == pid && p.sid == pid && p.start_ticks != ticks)
        {
            self.sid = i32::MIN;
        }
    }

    /// Remembers what is owned now, so it stays owned if it leaves the session.
    pub fn learn(&mut self, procs: &[Proc]) {
        self.known.extend(procs.iter().map(Proc::key));
    }
}

/// Whether the listening socket on `port` belongs to an owned process.
#[derive(Debug, Clone, PartialEq)]
pub enum SocketOwner {
    Owned,
    Foreign,
    Unverified(String),
}

pub fn socket_owner(fs: &ProcFs, port: u16, owned: &[Proc]) -> SocketOwner {
    let listening = fs.listening_inodes(port);
    if listening.is_empty() {
        return SocketOwner::Unverified(format!(
            "no listening socket for port {port} in /proc/net"
        ));
    }
    let mut unreadable = false;
    for p in owned {
        match fs.socket_inodes(p.pid) {
            Some(s) if !s.is_disjoint(&listening) => return SocketOwner::Owned,
            Some(_) => {}
            None => unreadable = true,
        }
    }
    if unreadable {
        SocketOwner::Unverified("the server's file descriptors cannot be read".into())
    } else {
        SocketOwner::Foreign
    }
}

/// A process for `processes.json`.
pub fn process_doc(p: &Proc, engine: Option<Engine>) -> Process {
    Process {
        pid: p.pid,
        ppid: p.ppid,
        sid: p.sid,
        start_ticks: p.start_ticks,
        state: p.state,
        comm: p.comm.clone(),
        argv: p.argv.clone(),
        engine,
    }
}

/// `/proc` under `root` exists at all (Linux or WSL).
pub fn linux(root: &Path) -> bool {
    root.join("self").exists()
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// Writes a synthetic /proc entry.
    pub fn entry(root: &Path, pid: i32, ppid: i32, comm: &str, argv: &[&str]) {
        let d = root.join(pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        let mut cmd = Vec::new();
        for a in argv {
            cmd.extend_from_slice(a.as_bytes());
            cmd.push(0);
        }
        std::fs::write(d.join("cmdline"), cmd).unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        std::fs::write(
            d.join("stat"),
            format!("{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 1 0 {} 1000 100\n", 5000 + pid),
        )
        .unwrap();
    }

    fn synthetic() -> (PathBuf, ProcFs) {
        let root = std::env::temp_dir().join(format!(
            "rec-proc-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("self")).unwrap();
        std::fs::create_dir_all(root.join("999")).unwrap(); // empty numeric folder
        entry(&root, 1, 0, "init", &["/sbin/init"]);
        entry(&root, 100, 1, "bash", &["bash", "run_campaign.sh"]);
        entry(
            &root,
            200,
            100,
            "python",
            &[
                "/opt/venv/bin/python",
                "/opt/venv/bin/vllm",
                "serve",
                "/models/m",
            ],
        );
        entry(&root, 201, 200, "VLLM::EngineCor", &["VLLM::EngineCore"]);
        entry(
            &root,
            300,
            1,
            "python",
            &[
                "python",
                "-m",
                "vllm.entrypoints.openai.api_server",
                "--model",
                "m",
            ],
        );
        entry(
            &root,
            301,
            300,
            "VLLM::Worker_TP",
            &["VLLM::Worker_TP0  ", "", ""],
        );
        entry(
            &root,
            400,
            1,
            "bash",
            &[
                "bash",
                "-lc",
                "pkill -f 'vllm serve'; inferlint-recorder teardown",
            ],
        );
        entry(
            &root,
            401,
            400,
            "a) (b",
            &["inferlint-recorder", "teardown"],
        );
        entry(
            &root,
            500,
            1,
            "tail",
            &["tail", "-f", "logs/vllm serve.log"],
        );
        entry(&root, 600, 1, "vllm", &["vllm", "serve", "/models/other"]);
        let fs = ProcFs { root: root.clone() };
        (root, fs)
    }

    #[test]
    fn the_table_of_servers() {
        let (root, fs) = synthetic();
        let t = fs.table();
        assert!(t.iter().all(|p| p.pid != 999));
        let p401 = t.iter().find(|p| p.pid == 401).unwrap();
        assert_eq!((p401.ppid, p401.comm.as_str()), (400, "a) (b"));
        assert_eq!(
            t.iter().find(|p| p.pid == 301).unwrap().argv,
            vec!["VLLM::Worker_TP0"]
        );
        let s: Vec<i32> = servers(&t, 401, false).iter().map(|s| s.proc.pid).collect();
        assert_eq!(s, vec![200, 201, 300, 301, 600]);
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn server_looking_caller_and_parent_are_never_targets() {
        let (root, fs) = synthetic();
        let t = fs.table();
        // Called from inside the vLLM server's own tree: it and its parent are spared.
        let s: Vec<i32> = servers(&t, 201, false).iter().map(|s| s.proc.pid).collect();
        assert_eq!(s, vec![300, 301, 600]);
        let _ = std::fs::remove_dir_all(root);
    }

    fn argv_is_server(argv: &[&str]) -> bool {
        let p = Proc {
            pid: 9,
            ppid: 1,
            sid: 9,
            start_ticks: 1,
            state: 'S',
            comm: base(argv[0]).chars().take(15).collect(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
        };
        server_engine(&p).is_some()
    }

    #[test]
    fn servers_and_bystanders() {
        for a in [
            &["python3", "-m", "sglang.launch_server", "--model-path", "m"][..],
            &["sglang::scheduler"],
            &["sglang", "serve", "--model-path", "m"],
            &[
                "/usr/bin/python3.12",
                "/usr/local/bin/trtllm-serve",
                "serve",
                "m",
            ],
            &["trtllm-serve", "serve", "m"],
            &["python", "-m", "tensorrt_llm.commands.serve", "m"],
            &["python", "-m", "vllm.entrypoints.cli.main", "serve", "m"],
        ] {
            assert!(argv_is_server(a), "{a:?}");
        }
        for a in [
            &["bash", "-c", "pkill -f sglang.launch_server"][..],
            &["vllm", "bench", "serve", "--model", "m"],
            &[
                "python",
                "-m",
                "vllm.entrypoints.cli.main",
                "bench",
                "serve",
            ],
            &["bash", "-c", "vllm serve m"],
            &["grep", "vllm serve"],
            &["tail", "-f", "logs/vllm serve.log"],
            &["/opt/tools/vllm", "serve-docs"],
            &["python", "-m", "mpi4py.futures.server"],
            &[
                "inferlint-recorder",
                "record",
                "--serve",
                "vllm serve M",
                "--",
                "x",
            ],
        ] {
            assert!(!argv_is_server(a), "{a:?}");
        }
    }

    #[test]
    fn trtllm_workers_only_under_a_server() {
        let root = std::env::temp_dir().join(format!("rec-proc-trt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("self")).unwrap();
        entry(
            &root,
            10,
            1,
            "python",
            &["python", "/usr/local/bin/trtllm-serve", "serve", "m"],
        );
        entry(&root, 11, 10, "prte", &["prte", "--no-daemonize"]);
        entry(
            &root,
            12,
            11,
            "python",
            &["python", "-m", "mpi4py.futures.server"],
        );
        entry(
            &root,
            20,
            1,
            "python",
            &["python", "-m", "mpi4py.futures.server"],
        );
        let fs = ProcFs { root: root.clone() };
        let s: Vec<(i32, Engine)> = servers(&fs.table(), 99, false)
            .iter()
            .map(|s| (s.proc.pid, s.engine))
            .collect();
        assert_eq!(
            s,
            vec![
                (10, Engine::Trtllm),
                (11, Engine::Trtllm),
                (12, Engine::Trtllm)
            ]
        );
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn ownership_by_session_descent_and_start_time() {
        let (root, fs) = synthetic();
        let mut t = fs.table();
        let o = Ownership {
            launched: (200, 5200),
            sid: 200,
            known: [(300, 1)].into_iter().collect(), // a reused PID: other start time
        };
        let owned: Vec<i32> = o.owned(&t, 401).iter().map(|p| p.pid).collect();
        assert_eq!(owned, vec![200, 201]);
        t.iter_mut().for_each(|p| {
            if p.pid == 600 {
                p.sid = 200
            }
        });
        let owned: Vec<i32> = o.owned(&t, 401).iter().map(|p| p.pid).collect();
        assert_eq!(owned, vec![200, 201, 600]);
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn a_session_id_reused_by_a_new_leader_is_not_the_runs() {
        let p = |pid: i32, sid: i32, start_ticks: u64| Proc {
            pid,
            ppid: 1,
            sid,
            start_ticks,
            state: 'S',
            comm: "x".into(),
            argv: vec!["x".into()],
        };
        // The run's leader 200 (start 5200) is gone; its orphan 201 is still in session 200.
        let orphan = vec![p(201, 200, 5300), p(700, 700, 9000)];
        let mut o = Ownership {
            launched: (200, 5200),
            sid: 200,
            known: Default::default(),
        };
        o.forget_reused_session(&orphan);
        let owned: Vec<i32> = o.owned(&orphan, 1).iter().map(|p| p.pid).collect();
        assert_eq!(owned, vec![201]);
        // Later PID 200 leads a session of someone else's: nothing of it is the run's.
        let reused = vec![p(200, 200, 88000), p(202, 200, 88100)];
        o.forget_reused_session(&reused);
        assert!(o.owned(&reused, 1).is_empty());
        // With the start time unknown (no processes.json), the session is still used.
        let mut o = Ownership {
            launched: (200, u64::MAX),
            sid: 200,
            known: Default::default(),
        };
        o.forget_reused_session(&reused);
        assert_eq!(o.owned(&reused, 1).len(), 2);
    }

    #[test]
    fn stat_and_cmdline_edge_cases() {
        assert_eq!(
            parse_stat("5 (a) (b) Z 1 5 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0"),
            Some(('Z', 1, 5, 77))
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("5 (x) S 1"), None);
        assert_eq!(
            parse_cmdline(b"VLLM::EngineCore   \0\0\0"),
            vec!["VLLM::EngineCore"]
        );
    }

    #[test]
    fn net_tcp_listeners() {
        let root = std::env::temp_dir().join(format!("rec-proc-net-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("net")).unwrap();
        std::fs::write(root.join("net/tcp"), "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n   1: 0100007F:1F40 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4343 1\n").unwrap();
        let fs = ProcFs { root: root.clone() };
        assert_eq!(fs.listening_inodes(8000), [4242].into_iter().collect());
        assert!(fs.listening_inodes(8001).is_empty());
        let _ = std::fs::remove_dir_all(root);
    }
}
