//! `cargo bench -p inferlint`: how long `analyze` takes on a real run, and how it grows
//! with the length of a recording: the growth table runs the built `inferlint` on
//! synthetic recordings of 1 hour, 6 hours, 24 hours and 7 days (14,400 to 2,419,200
//! readings at 4 Hz; `long_run.rs`), each as its own process so its peak memory is its
//! own, and prints the time, peak memory, results.json and report.html sizes of
//! `inferlint analyze RUN` (terminal, results.json and report.html all written) and the
//! time of `inferlint series`. When the reference (Python inferlint 0.3.1) is installed in
//! `target/reference/venv` (or `INFERLINT_REFERENCE` names its `inferlint`), its `report`
//! and `series` run on the same folders in the same run, and the ratio table compares.
//! Targets (issue 14): the 7-day folder in at most 4 s with a peak RSS at most 1.5x the
//! input, 40x faster than the reference's `report` and 30x than its `series`; growth
//! linear. Timings are wall clock on a shared machine, printed with the CPU time (user +
//! system) that the load of other processes inflates less. The folders go under
//! `target/` and are removed after.

#[path = "long_run.rs"]
mod long_run;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use analyzer::analysis::{analyze, analyze_with_series, Options};

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

/// One finished process: wall and CPU seconds, peak resident memory in bytes, exit code.
struct Ran {
    wall: f64,
    cpu: f64,
    peak_rss: u64,
    code: i32,
}

/// Runs `cmd` (output discarded) and waits for it with `wait4`, which gives this child's
/// own CPU time and peak memory.
fn run(cmd: &mut Command) -> Ran {
    let start = Instant::now();
    // Reaped by `wait4` below, which std's `wait` would not let us read the usage of.
    #[allow(clippy::zombie_processes)]
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the command");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, which nothing else waits for; the kernel writes
    // the status and the usage into the locals passed.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait for the command");
    let wall = start.elapsed().as_secs_f64();
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ran {
        wall,
        cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
        // Linux counts ru_maxrss in kilobytes.
        peak_rss: usage.ru_maxrss.max(0) as u64 * 1024,
        code: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
    }
}

/// The best (shortest) of `runs` runs of `make()`'s command, by wall time.
fn best_of(runs: usize, make: impl Fn() -> Command) -> Ran {
    let mut best: Option<Ran> = None;
    for _ in 0..runs {
        let r = run(&mut make());
        // Exit 1: a tripwire failed, as the generator's cache-bound run does.
        assert!(r.code == 0 || r.code == 1, "{:?} exited {}", make(), r.code);
        if best.as_ref().is_none_or(|b| r.wall < b.wall) {
            best = Some(r);
        }
    }
    best.expect("at least one run")
}

/// The best of `runs` timings of the analysis alone, in this process.
fn analysis_only(dir: &Path, runs: usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t = Instant::now();
        let run = inferlint::disk::load_run_folder_streamed(dir).expect("list the run folder");
        let opts = Options {
            requested: Some(32),
            ..Options::default()
        };
        let a = analyze_with_series(&run.input, &opts, run.series).expect("analyze");
        let doc = analyzer::json::to_pretty(&a.report, 1);
        std::hint::black_box(&doc);
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// The reference's command line, when installed.
fn reference() -> Option<PathBuf> {
    let p = std::env::var_os("INFERLINT_REFERENCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/reference/venv/bin/inferlint")
        });
    p.is_file().then_some(p)
}

const MB: f64 = 1e6;

/// One length of recording in the growth table.
struct Row {
    label: &'static str,
    readings: usize,
    input: u64,
    analyze: Ran,
    /// Seconds of the analysis alone in this process: the series streamed, the analysis,
    /// results.json's text (what `analyze` does before making report.html).
    analysis: f64,
    results_json: u64,
    report_html: u64,
    series: Ran,
    /// The reference's `report` and `series` on the same folder.
    reference: Option<(Ran, Ran)>,
}

/// Writes each length of recording, runs `analyze` and `series` on it (and the
/// reference's commands), removes it, then prints the two tables.
fn growth(quick: bool) {
    let lengths: &[(&str, usize, usize)] = if quick {
        &[("15 min", 3_600, 1)]
    } else {
        &[
            ("1 h", 14_400, 5),
            ("6 h", 86_400, 3),
            ("24 h", 345_600, 2),
            ("7 d", 2_419_200, 1),
        ]
    };
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_inferlint"));
    let theirs = if quick { None } else { reference() };
    let mut rows = Vec::new();
    for &(label, readings, runs) in lengths {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("growth-{readings}"));
        let input = long_run::write(&dir, readings).expect("write the recording");
        let series_file = dir.join("run.series.jsonl");
        let analyze = best_of(runs, || {
            let mut c = Command::new(&ours);
            c.args(["analyze", "--requested", "32"]).arg(&dir);
            c
        });
        let analysis = analysis_only(&dir, runs);
        let size = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
        let (results_json, report_html) = (size("results.json"), size("report.html"));
        let series = best_of(runs, || {
            let mut c = Command::new(&ours);
            c.args(["series", "--requested", "32"]).arg(&series_file);
            c
        });
        // After ours: the reference writes its own report.html into the folder.
        let reference = theirs.as_ref().map(|exe| {
            let report = best_of(1, || {
                let mut c = Command::new(exe);
                c.args(["report", "--requested", "32"]).arg(&dir);
                c
            });
            let series = best_of(1, || {
                let mut c = Command::new(exe);
                c.args(["series", "--requested", "32"]).arg(&series_file);
                c
            });
            (report, series)
        });
        let _ = std::fs::remove_dir_all(&dir);
        rows.push(Row {
            label,
            readings,
            input,
            analyze,
            analysis,
            results_json,
            report_html,
            series,
            reference,
        });
    }
    print_growth(&rows);
    match theirs {
        Some(exe) => print_ratios(&rows, &exe),
        None if quick => {}
        None => println!(
            "\nthe reference (Python inferlint 0.3.1) is not installed at target/reference/venv \
             (or INFERLINT_REFERENCE): no ratio table"
        ),
    }
}

fn print_growth(rows: &[Row]) {
    println!(
        "\ngrowth: inferlint analyze RUN (terminal, results.json, report.html) and inferlint series FILE"
    );
    println!(
        "(no page s: the same analysis in-process without making report.html; peak MB and x input: \
         analyze's peak resident memory)"
    );
    println!(
        "{:<7} {:>9} {:>9} {:>10} {:>8} {:>10} {:>9} {:>7} {:>10} {:>9} {:>9} {:>8}",
        "length",
        "readings",
        "input MB",
        "analyze s",
        "CPU s",
        "no page s",
        "peak MB",
        "x input",
        "results MB",
        "report MB",
        "series s",
        "CPU s"
    );
    for r in rows {
        println!(
            "{:<7} {:>9} {:>9.1} {:>10.3} {:>8.3} {:>10.3} {:>9.1} {:>7.2} {:>10.3} {:>9.2} {:>9.3} {:>8.3}",
            r.label,
            r.readings,
            r.input as f64 / MB,
            r.analyze.wall,
            r.analyze.cpu,
            r.analysis,
            r.analyze.peak_rss as f64 / MB,
            r.analyze.peak_rss as f64 / r.input as f64,
            r.results_json as f64 / MB,
            r.report_html as f64 / MB,
            r.series.wall,
            r.series.cpu,
        );
    }
    // Linear growth: time and memory per reading stay flat from the 1-hour folder on.
    if let (Some(first), Some(last)) = (rows.first(), rows.last()) {
        let per = |r: &Row| {
            (
                r.analyze.cpu / r.readings as f64 * 1e6,
                r.analyze.peak_rss as f64 / r.readings as f64,
            )
        };
        let ((c0, m0), (c1, m1)) = (per(first), per(last));
        println!(
            "per reading: {c0:.2} -> {c1:.2} us of CPU, {m0:.0} -> {m1:.0} bytes of peak memory ({} to {})",
            first.label, last.label
        );
    }
}

fn print_ratios(rows: &[Row], exe: &Path) {
    println!(
        "\nbeside the reference ({}): its report and series on the same folders, in this run",
        exe.display()
    );
    println!(
        "{:<7} {:>10} {:>10} {:>7} {:>8} {:>9} {:>9} {:>7} {:>8} {:>9}",
        "length",
        "report s",
        "analyze s",
        "x",
        "x CPU",
        "ref MB",
        "series s",
        "ours s",
        "x",
        "x CPU"
    );
    for r in rows {
        let Some((report, series)) = &r.reference else {
            continue;
        };
        println!(
            "{:<7} {:>10.2} {:>10.3} {:>7.1} {:>8.1} {:>9.1} {:>9.2} {:>7.3} {:>8.1} {:>9.1}",
            r.label,
            report.wall,
            r.analyze.wall,
            report.wall / r.analyze.wall,
            report.cpu / r.analyze.cpu,
            report.peak_rss as f64 / MB,
            series.wall,
            r.series.wall,
            series.wall / r.series.wall,
            series.cpu / r.series.cpu,
        );
    }
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
    growth(quick);
    // Last: the high-water mark of memory above would include this log's text.
    bench_boot_log(&fixtures, quick);
}
