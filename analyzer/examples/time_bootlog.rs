//! Times reading boot logs (facts + classifier), best of several runs:
//!
//! - `cargo run --release -p analyzer --example time_bootlog` builds the 200 MB log of
//!   `cargo bench -p inferlint` (the recorded vLLM, SGLang and TensorRT-LLM logs of
//!   `shared/fixtures` repeated; `INFERLINT_FIXTURES` names another folder) and reads it
//!   three times;
//! - `… --example time_bootlog -- FILE [REPEAT [RUNS]]` reads FILE repeated REPEAT times.

use std::path::PathBuf;
use std::time::Instant;

/// The logs the benchmark repeats, as in `analyzer/cli/benches/analyze.rs`.
const BENCH_LOGS: [&str; 3] = [
    "vllm-0.30/live/boot.log",
    "sglang-0.5/live/boot.log",
    "trtllm-1.3/pauses/boot.log",
];

/// The benchmark's log: its three real logs repeated to at least `mb` megabytes.
fn bench_log(mb: usize) -> String {
    let fixtures = std::env::var_os("INFERLINT_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures"));
    let mut unit = String::new();
    for rel in BENCH_LOGS {
        let path = fixtures.join(rel);
        match std::fs::read_to_string(&path) {
            Ok(t) => unit.push_str(&t),
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                std::process::exit(2);
            }
        }
    }
    let mut out = String::with_capacity(mb * 1_000_000 + unit.len());
    while out.len() < mb * 1_000_000 {
        out.push_str(&unit);
    }
    out
}

/// Peak resident memory of this process so far, in bytes (Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// CPU time this process has used so far, in seconds (Linux; ticks of 10 ms): on a shared
/// machine it varies less than the wall-clock time.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let user: f64 = fields.nth(11)?.parse().ok()?;
    let system: f64 = fields.next()?.parse().ok()?;
    Some((user + system) / 100.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (text, runs) = match args.next() {
        None => (bench_log(200), 3),
        Some(p) => {
            let repeat: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(1);
            let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(1);
            let one =
                String::from_utf8_lossy(&std::fs::read(&p).expect("read the log")).into_owned();
            (one.repeat(repeat), runs.max(1))
        }
    };
    let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..runs {
        let cpu = cpu_seconds();
        let t = Instant::now();
        let (facts, class) = analyzer::bootlog::read_log(&text, None);
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu.zip(cpu_seconds()).map(|(a, b)| b - a);
        std::hint::black_box(&class);
        best = best.min(secs);
        best_cpu = best_cpu.min(cpu.unwrap_or(f64::INFINITY));
        println!(
            "{} lines, {} MB in {:.3} s (CPU {:.2} s)",
            facts.lines,
            text.len() / 1_000_000,
            secs,
            cpu.unwrap_or(f64::NAN)
        );
    }
    let peak = peak_rss().map_or(String::new(), |p| {
        format!("; peak memory {:.0} MB", p as f64 / 1e6)
    });
    println!("best of {runs}: {best:.3} s (CPU {best_cpu:.2} s){peak}");
}
