//! A 24-hour recording (345,600 readings at 4 Hz, written by the benchmark's generator):
//! `analyze` writes a results.json of at most 1 MB whose charts keep, of every line, the
//! exact lowest and highest value and the first and last sample, and say they are reduced;
//! and it needs at most 1.5 times the folder's size in memory (the series streams into
//! its rows, never held as text and rows at once), and a report.html of at most 3 MB whose
//! carried run (`inferlint.pack/2`) gives back the folder's files byte for byte, so the
//! page's verdicts are the command line's.

#[path = "../benches/long_run.rs"]
mod long_run;

use std::path::PathBuf;
use std::process::Command;

use analyzer::analysis::{analyze, Options};
use analyzer::compare::find_load_start;
use analyzer::engine::Engine;
use analyzer::insights::charts::{self, ChartInputs, TimeChart};
use analyzer::json::{parse, Json};
use analyzer::pack;
use analyzer::page;
use analyzer::series::Series;

const SAMPLES: usize = 345_600;
const MB: u64 = 1_000_000;

fn numbers(j: &Json) -> Vec<Option<f64>> {
    j.as_array()
        .expect("an array")
        .iter()
        .map(Json::as_f64)
        .collect()
}

/// The lowest and highest present value.
fn extremes(values: &[Option<f64>]) -> (f64, f64) {
    values
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

/// The written chart against the chart of every reading.
fn check_chart(written: &Json, full: &TimeChart) {
    let key = &full.key;
    assert_eq!(
        written.get("reduced_from").and_then(Json::as_f64),
        Some(SAMPLES as f64),
        "{key}"
    );
    let caption = written.get("caption").and_then(Json::as_str).unwrap();
    assert!(
        caption.contains("of its 345,600 samples"),
        "{key}: {caption}"
    );
    let t = numbers(written.get("t").unwrap());
    assert!(t.len() < SAMPLES / 40, "{key}: {} samples kept", t.len());
    assert_eq!(
        t.first().copied().flatten(),
        full.t.first().copied(),
        "{key}"
    );
    assert_eq!(t.last().copied().flatten(), full.t.last().copied(), "{key}");
    let lines = written.get("lines").and_then(Json::as_array).unwrap();
    assert_eq!(lines.len(), full.lines.len(), "{key}");
    for (w, f) in lines.iter().zip(&full.lines) {
        let values = numbers(w.get("values").unwrap());
        assert_eq!(values.len(), t.len(), "{key}/{}", f.key);
        assert_eq!(extremes(&values), extremes(&f.values), "{key}/{}", f.key);
        assert_eq!(values.first(), f.values.first(), "{key}/{}", f.key);
        assert_eq!(values.last(), f.values.last(), "{key}/{}", f.key);
    }
    // Merged marks keep every eviction: their counts sum to the chart's.
    let marks = written.get("markers").and_then(Json::as_array).unwrap();
    let counted: f64 = marks
        .iter()
        .filter_map(|m| m.get("count").and_then(Json::as_f64))
        .sum();
    assert_eq!(counted, full.markers.iter().map(|m| m.count).sum::<f64>());
}

/// `inferlint analyze --requested 32 --json [extra] DIR`, which must say nothing on stderr.
fn analyze_quietly(dir: &std::path::Path, extra: &[&std::ffi::OsStr]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .args(["analyze", "--requested", "32", "--json"])
        .args(extra)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn a_day_long_recording_gives_a_results_json_of_at_most_one_megabyte() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-run-test-24h");
    long_run::write(&dir, SAMPLES).expect("write the 24-hour recording");
    let out = analyze_quietly(&dir, &[]);
    let results = dir.join("results.json");
    let size = std::fs::metadata(&results).unwrap().len();
    assert!(size <= MB, "results.json is {size} bytes");
    let text = std::fs::read_to_string(&results).unwrap();
    assert_eq!(text.as_bytes(), out.stdout.as_slice());
    let doc = parse(&text).unwrap();
    let written = doc.get("charts").unwrap();

    // Every reading's charts, as the Report had them before reducing.
    let bytes = std::fs::read(dir.join("run.series.jsonl")).unwrap();
    let series = Series::read("run.series.jsonl", &bytes).unwrap();
    let times = series.times();
    let full = charts::build(&ChartInputs {
        engine: Engine::Vllm,
        series: Some(&series),
        cache: None,
        logs: &[],
        requested: Some(32),
        // The generator's gauge moves in steps of 1/42 (T14 finds them).
        usable_blocks: Some(42),
        times: &times,
        gpu: None,
    });
    let mut checked = 0;
    for chart in [&full.requests, &full.kv, &full.tokens]
        .into_iter()
        .flatten()
    {
        check_chart(written.get(&chart.key).unwrap(), chart);
        checked += 1;
    }
    assert_eq!(checked, 3);

    // Comparing runs aligns them on every reading, not on the reduced charts.
    let input = inferlint::disk::load_run_folder(&dir).unwrap();
    let opts = Options {
        requested: Some(32),
        ..Options::default()
    };
    let report = analyze(&input, &opts).unwrap().report;
    let start = analyzer::compare::load_start(&report);
    assert_eq!(start, find_load_start(&full, Some(Engine::Vllm), None));
    assert_eq!(start.0, Some(0.0));
}

/// Runs `cmd` and returns its exit code and its own peak resident memory in bytes
/// (`wait4`'s accounting of this one child).
fn peak_memory_of(cmd: &mut Command) -> (i32, u64) {
    // Reaped by `wait4` below, which std's `wait` would not let us read the usage of.
    #[allow(clippy::zombie_processes)]
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, which nothing else waits for; the kernel writes
    // the status and the usage into the locals passed.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    assert!(libc::WIFEXITED(status), "analyze was killed");
    // Linux counts ru_maxrss in kilobytes.
    (libc::WEXITSTATUS(status), usage.ru_maxrss as u64 * 1024)
}

/// `inferlint analyze` on a fresh recording of `samples` readings: the folder's size and
/// the command's peak memory.
fn analyze_memory(name: &str, samples: usize) -> (u64, u64) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let size = long_run::write(&dir, samples).expect("write the recording");
    let (code, peak) = peak_memory_of(
        Command::new(env!("CARGO_BIN_EXE_inferlint"))
            .args(["analyze", "--requested", "32"])
            .arg(&dir),
    );
    let written = ["results.json", "report.html"].map(|n| dir.join(n).is_file());
    let _ = std::fs::remove_dir_all(&dir);
    // Exit 1: the generator's run is bound by its cache (a tripwire fails).
    assert_eq!(code, 1, "{name}");
    assert_eq!(written, [true, true], "{name}");
    (size, peak)
}

/// Memory grows by at most 1.5 bytes per byte of recording: from a 1-hour folder to a
/// 24-hour one, above what the command needs anyway (its own code, larger in a debug
/// build; `cargo bench -p inferlint` prints the whole peak of a release build).
#[test]
fn analyze_needs_at_most_one_and_a_half_bytes_of_memory_per_byte_of_recording() {
    let (small, small_peak) = analyze_memory("long-run-test-1h-memory", 14_400);
    let (day, day_peak) = analyze_memory("long-run-test-24h-memory", SAMPLES);
    let grown = day_peak.saturating_sub(small_peak) as f64;
    let read = (day - small) as f64;
    eprintln!(
        "peak memory grew {:.2} bytes per byte of recording",
        grown / read
    );
    assert!(
        grown <= 1.5 * read,
        "peak memory grew {grown} bytes for {read} more bytes of recording ({:.2}x; \
         {small_peak} bytes for the 1-hour folder, {day_peak} for the 24-hour one)",
        grown / read
    );
}

/// Every verdict of a Report as (id, status, message), sorted.
fn verdicts(report: &Json) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = report
        .get("checks")
        .and_then(Json::as_array)
        .expect("checks")
        .iter()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(Json::as_str).unwrap_or("").to_string();
            (s("id"), s("status"), s("message"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_day_long_recording_gives_a_report_html_of_at_most_three_megabytes_carrying_it_whole() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-run-test-24h-html");
    long_run::write(&dir, SAMPLES).expect("write the 24-hour recording");
    let html = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-run-test-24h.html");
    let out = analyze_quietly(&dir, &["--html".as_ref(), html.as_os_str()]);
    let size = std::fs::metadata(&html).unwrap().len();
    assert!(size <= 3 * MB, "report.html is {size} bytes");
    let want = verdicts(&parse(std::str::from_utf8(&out.stdout).unwrap()).unwrap());
    assert!(want.len() >= 7, "{want:?}");

    // The run the page carries (as the command packs it when no viewer is built in).
    let input = inferlint::disk::load_run_folder(&dir).unwrap();
    let opts = Options {
        requested: Some(32),
        ..Options::default()
    };
    let text = std::fs::read_to_string(&html).unwrap();
    let carried = match page::embedded_run(&text) {
        Some(run) => run.to_string(),
        None => pack::encode(&pack::to_pack(&input, &opts, None)),
    };
    assert!(
        carried.contains("\"c\":"),
        "the series is carried as columns"
    );
    let back = pack::decode(&carried).unwrap();
    let (unpacked, unpacked_opts) = pack::from_pack(&back);
    let series = |i: &analyzer::analysis::RunInput| i.series.clone().unwrap().bytes.unwrap();
    assert!(
        series(&unpacked) == series(&input),
        "the series came back changed"
    );
    assert_eq!(unpacked.before.unwrap().bytes, input.before.unwrap().bytes);
    // What the page computes from it: the command line's verdicts.
    let report = analyze(&pack::from_pack(&back).0, &unpacked_opts)
        .unwrap()
        .report;
    let got = verdicts(&parse(&analyzer::json::to_compact(&report)).unwrap());
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&html).unwrap();
}
