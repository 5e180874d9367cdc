//! The real engine for the real-engine tier (`cargo xtask real`): where its environment
//! and models are, commands that run it as its recipe says (`VLLM_TARGET_DEVICE=cpu`, no
//! hub, 1 GiB of KV space), one real server at a time, and the recorded folders copied
//! into `fixtures/real/` when asked.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use super::World;

/// The environment `cargo xtask real` installed and the models it built.
pub struct Real {
    pub venv: PathBuf,
    pub models: PathBuf,
    /// Held for the whole test: one real server at a time (each wants both cores).
    _one_at_a_time: MutexGuard<'static, ()>,
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

impl Real {
    /// The tier's environment, from `INFERLINT_REAL_VENV` and `INFERLINT_REAL_MODELS`
    /// (`cargo xtask real` sets both); a clear failure when they are missing.
    pub fn get() -> Real {
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    panic!("{name} is not set: the real-engine tests run under `cargo xtask real`")
                })
        };
        let venv = var("INFERLINT_REAL_VENV");
        let models = var("INFERLINT_REAL_MODELS");
        assert!(
            venv.join("bin/vllm").is_file(),
            "{} has no bin/vllm",
            venv.display()
        );
        let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        Real {
            venv,
            models,
            _one_at_a_time: guard,
        }
    }

    /// A model's folder (`tiny-llama`, `tiny-llama-h16`).
    pub fn model(&self, name: &str) -> String {
        let p = self.models.join(name);
        assert!(p.join("config.json").is_file(), "{} missing", p.display());
        p.display().to_string()
    }

    /// A command in `w` with the environment's `vllm` first on PATH and vLLM's CPU
    /// settings: the CPU platform (without it vLLM loads kernels this CPU lacks), no
    /// model hub, 1 GiB of KV space.
    pub fn cmd(&self, w: &World, prog: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = w.cmd(prog);
        let path = std::env::join_paths(std::iter::once(self.venv.join("bin")).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        c.env("PATH", path)
            .env("VLLM_TARGET_DEVICE", "cpu")
            .env("HF_HUB_OFFLINE", "1")
            .env("VLLM_CPU_KVCACHE_SPACE", "1")
            .env_remove("INFERLINT_SIM_GPU_STATE");
        c
    }

    pub fn recorder(&self, w: &World) -> Command {
        let mut c = self.cmd(w, super::RECORDER);
        c.stdin(std::process::Stdio::null());
        c
    }
}

/// `vllm bench serve` with the tier's request shape (88 prompt tokens, `out` generated).
pub fn bench(base: &str, model: &str, prompts: u32, concurrency: u32, out: u32) -> Vec<String> {
    let mut v: Vec<String> = ["vllm", "bench", "serve", "--backend", "vllm", "--model"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.push(model.to_string());
    for (flag, value) in [
        ("--base-url", base.to_string()),
        ("--dataset-name", "random".into()),
        ("--random-input-len", "88".into()),
        ("--random-output-len", out.to_string()),
        ("--num-prompts", prompts.to_string()),
        ("--max-concurrency", concurrency.to_string()),
    ] {
        v.push(flag.into());
        v.push(value);
    }
    v.push("--ignore-eos".into());
    v
}

/// The `vllm serve` command of a case, on loopback.
pub fn serve(model: &str, port: u16, flags: &str) -> String {
    format!("vllm serve {model} {flags} --host 127.0.0.1 --port {port}")
}

/// With `INFERLINT_REAL_SAVE` set (`cargo xtask real --save`), copies a recorded folder
/// to `$INFERLINT_REAL_SAVE/<case>` (without the analyzer's outputs), replacing the old.
pub fn save(run: &Path, case: &str) {
    let Some(to) = std::env::var_os("INFERLINT_REAL_SAVE") else {
        return;
    };
    let to = PathBuf::from(to).join(case);
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(run).unwrap().flatten() {
        let name = e.file_name();
        if name == "results.json" || name == "report.html" || !e.path().is_file() {
            continue;
        }
        std::fs::copy(e.path(), to.join(&name)).unwrap();
    }
    eprintln!("saved {case} to {}", to.display());
}

/// The session the recorder started the server in (`manifest.json` `serve.sid`), once
/// the manifest names it.
pub fn server_session(run: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(run.join("manifest.json")).ok()?;
    let m = analyzer::json::parse(&text).ok()?;
    let serve = m.get("serve")?;
    let sid = serve
        .get("sid")
        .or_else(|| serve.get("pid"))?
        .as_i64_trunc()?;
    i32::try_from(sid).ok().filter(|&s| s > 1)
}

/// Live processes (not zombies) of a session, with their `comm`: the real server's API
/// process `vllm`, its `VLLM::EngineCor` and `VLLM::Worker`, the resource tracker. A real
/// vLLM renames its children with setproctitle, which overwrites their environment, so
/// the test scope cannot find them; their session can.
pub fn session_processes(sid: i32) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        // After the name: state, ppid, pgrp, session.
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        if fields.get(3).and_then(|s| s.parse::<i32>().ok()) == Some(sid) {
            out.push((pid, stat[open + 1..close].to_string()));
        }
    }
    out.sort();
    out
}

/// The processes of a run's server session still alive (empty before the manifest names
/// the session).
pub fn left_of(run: &Path) -> Vec<(i32, String)> {
    server_session(run)
        .map(session_processes)
        .unwrap_or_default()
}

/// Kills what is left of the servers of the given runs when dropped: the safety net for a
/// failing test (the world's scope does not reach a real vLLM's renamed children).
pub struct Sweep(pub Vec<PathBuf>);

impl Drop for Sweep {
    fn drop(&mut self) {
        for run in &self.0 {
            for (pid, _) in left_of(run) {
                // SAFETY: SIGKILL to a process of the session this test's recorder started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}
