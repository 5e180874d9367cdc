//! `cargo bench -p inferlint`: how long `analyze` takes on a real run and on a 24-hour
//! recording (345,600 readings at 4 Hz, and a 1-hour one), the peak memory it needs and
//! the size of the results.json it writes.
//! Targets: the 24-hour folder in under 0.5 s and under 3x its size in memory, its
//! results.json at most 1 MB (a test holds that limit: `tests/long_run.rs`).

#[path = "long_run.rs"]
mod long_run;

use std::path::{Path, PathBuf};
use std::time::Instant;

use analyzer::analysis::{analyze, Options};

fn load(dir: &Path) -> analyzer::RunInput {
    inferlint::disk::load_run_folder(dir).expect("list the run folder")
}

/// Peak resident memory of this process so far, in bytes (Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn current_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Times `analyze` (file reading included) `runs` times; prints the best and median, and
/// the size of the results.json `inferlint analyze` writes from that analysis.
fn time_it(label: &str, dir: &Path, requested: Option<i64>, runs: usize) {
    let mut times = Vec::new();
    let mut results_json = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let input = load(dir);
        let a = analyze(
            &input,
            &Options {
                requested,
                ..Options::default()
            },
        )
        .expect("analyze");
        std::hint::black_box(&a);
        times.push(t.elapsed().as_secs_f64());
        // As `analyze` writes it (commands.rs).
        results_json = analyzer::json::to_pretty(&a.report, 1).len() + 1;
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{label:<28} best {:>8.2} ms   median {:>8.2} ms   ({runs} runs)   results.json {:.3} MB",
        times[0] * 1e3,
        times[runs / 2] * 1e3,
        results_json as f64 / 1e6
    );
}

/// A boot log of about `mb` megabytes: real logs repeated (or made-up vLLM lines when the
/// recorded runs are absent), so every anchor and the classifier see realistic text.
fn big_boot_log(fixtures: &Path, mb: usize) -> String {
    let mut unit = String::new();
    for rel in [
        "vllm-0.30/live/boot.log",
        "sglang-0.5/live/boot.log",
        "trtllm-1.3/pauses/boot.log",
    ] {
        if let Ok(t) = std::fs::read_to_string(fixtures.join(rel)) {
            unit.push_str(&t);
        }
    }
    if unit.is_empty() {
        for i in 0..2000 {
            unit.push_str(&format!(
                "(EngineCore pid=949) INFO 09-26 17:50:{:02} [gpu_worker.py:578] Available KV cache memory: 2.31 GiB\n",
                i % 60
            ));
        }
    }
    let mut out = String::with_capacity(mb * 1_000_000 + unit.len());
    while out.len() < mb * 1_000_000 {
        out.push_str(&unit);
    }
    out
}

/// Reads the big boot log (facts + classifier) `runs` times; prints the best time and the
/// memory the first reading needed above the text.
fn bench_boot_log(fixtures: &Path, quick: bool) {
    let mb = if quick { 5 } else { 200 };
    let runs = if quick { 1 } else { 3 };
    let text = big_boot_log(fixtures, mb);
    let before = current_rss().unwrap_or(0);
    let mut best = f64::INFINITY;
    let mut extra = 0;
    let mut lines = 0;
    for run in 0..runs {
        let t = Instant::now();
        let (facts, class) = analyzer::bootlog::read_log(&text, None);
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box((&facts, &class));
        if run == 0 {
            extra = peak_rss().unwrap_or(0).saturating_sub(before);
        }
        lines = facts.lines;
    }
    println!(
        "{:<28} best {:>8.2} ms for {:.0} MB, {} lines ({runs} runs); memory above the text {:.1} MB",
        "boot log facts + classifier",
        best * 1e3,
        text.len() as f64 / 1e6,
        lines,
        extra as f64 / 1e6
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs us too: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let fixtures = std::env::var_os("INFERLINT_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures")
        });
    let live = fixtures.join("vllm-0.28/live");
    if live.is_dir() {
        time_it(
            "vllm-0.28/live",
            &live,
            Some(32),
            if quick { 1 } else { 30 },
        );
    } else {
        println!(
            "vllm-0.28/live: recorded runs not found at {}",
            fixtures.display()
        );
    }
    if !quick {
        let hour = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-run-14400");
        long_run::write(&hour, 14_400).expect("write the 1-hour recording");
        time_it("14400 readings (1 h)", &hour, Some(32), 10);
    }
    let samples = if quick { 3_600 } else { 345_600 };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("long-run-{samples}"));
    let size = long_run::write(&dir, samples).expect("write the long recording");
    let before = current_rss().unwrap_or(0);
    time_it(
        &format!("{samples} readings"),
        &dir,
        Some(32),
        if quick { 1 } else { 5 },
    );
    if let Some(peak) = peak_rss() {
        let used = peak.saturating_sub(before);
        println!(
            "{:<28} folder {:.1} MB, peak memory above baseline {:.1} MB ({:.2}x the folder)",
            "",
            size as f64 / 1e6,
            used as f64 / 1e6,
            used as f64 / size as f64
        );
    }
    // Last: the high-water mark of memory above would include this log's text.
    bench_boot_log(&fixtures, quick);
}
