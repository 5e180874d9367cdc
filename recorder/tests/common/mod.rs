//! Helpers for the recorder's live tests: the workspace's binaries, a scratch folder per
//! test with the simulator's personalities and its own simulated GPU, a scope that keeps
//! each test's processes apart (and lets the guard kill whatever is left), and the
//! analyzer library to read the verdicts of a recorded folder.
#![allow(dead_code)]

pub mod isolated;
pub mod real;
pub mod sglang;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const RECORDER: &str = env!("CARGO_BIN_EXE_inferlint-recorder");

/// A binary the workspace builds next to the recorder.
pub fn sibling(name: &str) -> PathBuf {
    Path::new(RECORDER).parent().unwrap().join(name)
}

pub fn enginesim() -> PathBuf {
    let p = sibling("inferlint-enginesim");
    assert!(
        p.is_file(),
        "{} is missing: the recorder's live tests need the engine simulator; run `cargo build --workspace` (or `cargo xtask test`) first",
        p.display()
    );
    p
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One test's world: a folder, the simulator's links, a GPU state and a process scope.
/// Dropping it kills every process of the scope still alive and removes the folder.
pub struct World {
    pub dir: PathBuf,
    pub bin: PathBuf,
    pub scope: String,
}

impl World {
    pub fn new(name: &str) -> World {
        let w = World::bare(name);
        let st = Command::new(enginesim())
            .arg("install")
            .arg(&w.bin)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        w
    }

    /// A world without the simulator's links (no fake engines, no fake `nvidia-smi`): for
    /// the real engine.
    pub fn bare(name: &str) -> World {
        let scope = format!("{name}-{}", std::process::id());
        let dir = std::env::temp_dir().join(format!("rec-test-{scope}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let bin = dir.join("bin");
        World { dir, bin, scope }
    }

    /// A command with this world's PATH, GPU and scope.
    pub fn cmd(&self, prog: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(prog);
        let path = std::env::join_paths(std::iter::once(self.bin.clone()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        c.env("PATH", path)
            .env("INFERLINT_SIM_GPU_STATE", self.dir.join("gpu"))
            .env("INFERLINT_RECORDER_SCOPE", &self.scope)
            .env_remove("INFERLINT_ENGINE")
            .env("NO_COLOR", "1")
            .current_dir(&self.dir);
        c
    }

    pub fn recorder(&self) -> Command {
        let mut c = self.cmd(RECORDER);
        // `inferlint analyze` is found next to the recorder when the workspace built it.
        c.stdin(Stdio::null());
        c
    }

    pub fn gpu_used(&self) -> u64 {
        let out = self
            .cmd(self.bin.join("nvidia-smi"))
            .args(["--query-gpu=memory.used", "--format=csv,noheader,nounits"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0)
    }

    /// PIDs of live processes carrying this scope.
    pub fn scoped_pids(&self) -> Vec<i32> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            let want = format!("INFERLINT_RECORDER_SCOPE={}", self.scope);
            if env.split(|b| *b == 0).any(|kv| kv == want.as_bytes()) && alive(pid) {
                out.push(pid);
            }
        }
        out
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for pid in self.scoped_pids() {
            // SAFETY: SIGKILL to a process this test started (it carries the scope).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        if std::env::var_os("REC_TEST_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Alive and not a zombie.
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rfind(')').map(|i| !s[i + 2..].starts_with('Z')))
        .unwrap_or(false)
}

pub fn wait_until(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

/// Runs a command with a time limit; the output.
pub fn run_bounded(mut c: Command, secs: u64) -> Output {
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("command did not finish in {secs} s");
        }
    }
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The analyzer's verdicts on a folder (as `inferlint analyze DIR`), by tripwire id; a
/// tripwire with two results (T7 from the log and from the probe) keeps both.
pub fn verdicts(dir: &Path) -> (BTreeMap<String, Vec<String>>, analyzer::Analysis) {
    let input = inferlint::disk::load_run_folder(dir).expect("list the run folder");
    let a = analyzer::analyze(&input, &analyzer::Options::default()).expect("analyze");
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in &a.report.checks {
        m.entry(c.id())
            .or_default()
            .push(c.status.as_str().to_string());
    }
    (m, a)
}

/// A recorded folder's verdicts against pinned ones (`("T7", "fail,fail")` for a tripwire
/// with two results), every file readable; the analysis for further checks.
pub fn assert_verdicts(dir: &Path, expect: &[(&str, &str)]) -> analyzer::Analysis {
    let (v, a) = verdicts(dir);
    let shown = dir.display();
    assert!(a.errors.is_empty(), "{shown}: {:?}", a.errors);
    let got: Vec<(String, String)> = v.iter().map(|(k, s)| (k.clone(), s.join(","))).collect();
    let mut want: Vec<(String, String)> = expect
        .iter()
        .map(|(k, s)| (k.to_string(), s.to_string()))
        .collect();
    want.sort();
    assert_eq!(got, want, "{shown}");
    a
}

pub fn status(m: &BTreeMap<String, Vec<String>>, id: &str) -> String {
    m.get(id).map(|v| v.join(",")).unwrap_or_else(|| "-".into())
}

pub fn json(path: &Path) -> analyzer::json::Json {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    analyzer::json::parse(&t).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    v.sort();
    v
}

/// The vLLM bench load against a base URL.
pub fn bench(base: &str, model: &str, n: u32, out_len: u32) -> Vec<String> {
    [
        "vllm",
        "bench",
        "serve",
        "--model",
        model,
        "--base-url",
        base,
        "--dataset-name",
        "random",
        "--random-input-len",
        "88",
        "--random-output-len",
        &out_len.to_string(),
        "--ignore-eos",
        "--num-prompts",
        &n.to_string(),
        "--max-concurrency",
        &n.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Runs a `record -o run …` command made in `w` (at most `secs` seconds) and returns the
/// report of the folder it wrote, which must exist and analyze without an input error.
pub fn recorded_report(w: &World, c: Command, secs: u64) -> analyzer::Report {
    let out = run_bounded(c, secs);
    let run = w.dir.join("run");
    assert!(
        run.join("manifest.json").is_file(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let (_, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    a.report
}

/// The result of tripwire `id` in a report, which must have one.
pub fn check_of(r: &analyzer::Report, id: &str) -> analyzer::CheckResult {
    r.checks
        .iter()
        .find(|c| c.id() == id)
        .unwrap_or_else(|| panic!("no {id}: {:?}", r.checks))
        .clone()
}
