//! What the three servers share around the HTTP layer: the runtime, the listening socket,
//! the stop signals, and the faults given on the command line.

use crate::args::Args;

pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Bind before printing the ready line, so "ready" means "answers".
pub fn bind(host: &str, port: u16) -> anyhow::Result<std::net::TcpListener> {
    let h = if host == "0.0.0.0" || host.is_empty() {
        "127.0.0.1"
    } else {
        host
    };
    let l = std::net::TcpListener::bind((h, port)).map_err(|e| {
        anyhow::anyhow!("[Errno 98] error while attempting to bind on address ('{h}', {port}): {e}")
    })?;
    l.set_nonblocking(true)?;
    Ok(l)
}

/// Wait for SIGTERM, SIGINT or SIGHUP; returns the signal's name.
pub async fn wait_stop() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("sigterm");
    let mut int = signal(SignalKind::interrupt()).expect("sigint");
    let mut hup = signal(SignalKind::hangup()).expect("sighup");
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
        _ = hup.recv() => "SIGHUP",
    }
}

/// Faults switched on by `--sim-*` flags (or `INFERLINT_SIM_FAULT`-style env, see below).
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// T12: die during start-up with a traceback of this kind.
    pub fail_start: Option<String>,
    /// T7: the engine dies when request number N (after ready) arrives.
    pub crash_at: Option<u64>,
    /// Metrics stop answering after N scrapes…
    pub metrics_stall_after: Option<u64>,
    /// …and answer after this many seconds each instead of never
    /// (`--sim-metrics-stall-for S`).
    pub metrics_stall_for: Option<f64>,
    /// T6: the draft model picks its own attention backend.
    pub drafter_ignores_backend: bool,
    /// T4/T11: the memory left for KV differs from start to start.
    pub pool_jitter: bool,
    /// T16: the card throttles after this many busy simulated seconds, for this many (none:
    /// until the end). `--sim-gpu-throttle AFTER[:FOR]` or `INFERLINT_SIM_GPU_THROTTLE`.
    pub gpu_throttle: Option<(f64, Option<f64>)>,
    /// T18: simulated seconds the first step of a batch larger than any before costs after
    /// ready. `--sim-warmup-cost S` or `INFERLINT_SIM_WARMUP_COST`.
    pub warmup_cost: Option<f64>,
    /// A server slow to stop: seconds between the stop signal and the start of its
    /// shutdown, as an engine busy releasing the card takes (`--sim-slow-stop S`, vLLM).
    pub slow_stop: Option<f64>,
}

pub const FAIL_KINDS: &[&str] = &[
    "oom",
    "cuda",
    "accelerator",
    "ld",
    "headers",
    "kv",
    "assert",
];

impl Faults {
    pub fn from_args(a: &Args) -> anyhow::Result<Faults> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let fail_start = a
            .get("sim-fail-start")
            .map(str::to_string)
            .or_else(|| env("INFERLINT_SIM_FAIL_START"));
        if let Some(k) = &fail_start {
            anyhow::ensure!(
                FAIL_KINDS.contains(&k.as_str()),
                "--sim-fail-start: unknown kind '{k}' (known: {})",
                FAIL_KINDS.join(", ")
            );
        }
        let mut crash_at: Option<u64> = a.num("sim-crash-at-request")?;
        if a.has("sim-crash-on-first-request")
            || env("INFERLINT_SIM_CRASH_ON_FIRST_REQUEST").is_some()
        {
            crash_at = Some(1);
        }
        let seconds = |flag: &str, v: &str| -> anyhow::Result<f64> {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| anyhow::anyhow!("--{flag}: not a number of seconds: '{v}'"))
        };
        let gpu_throttle = match a
            .get("sim-gpu-throttle")
            .map(str::to_string)
            .or_else(|| env("INFERLINT_SIM_GPU_THROTTLE"))
        {
            None => None,
            Some(v) => {
                let (after, span) = match v.split_once(':') {
                    Some((a, f)) => (a, Some(f)),
                    None => (v.as_str(), None),
                };
                Some((
                    seconds("sim-gpu-throttle", after)?,
                    span.map(|f| seconds("sim-gpu-throttle", f)).transpose()?,
                ))
            }
        };
        let warmup_cost = a
            .get("sim-warmup-cost")
            .map(str::to_string)
            .or_else(|| env("INFERLINT_SIM_WARMUP_COST"))
            .map(|v| seconds("sim-warmup-cost", &v))
            .transpose()?;
        let slow_stop = a
            .get("sim-slow-stop")
            .map(|v| seconds("sim-slow-stop", v))
            .transpose()?;
        Ok(Faults {
            slow_stop,
            gpu_throttle,
            warmup_cost,
            fail_start,
            crash_at,
            metrics_stall_after: a.num("sim-metrics-stall-after")?,
            metrics_stall_for: a
                .get("sim-metrics-stall-for")
                .map(|v| seconds("sim-metrics-stall-for", v))
                .transpose()?,
            drafter_ignores_backend: a.has("sim-drafter-ignores-backend"),
            pool_jitter: a.has("sim-pool-jitter") || env("INFERLINT_SIM_POOL_JITTER").is_some(),
        })
    }
}
