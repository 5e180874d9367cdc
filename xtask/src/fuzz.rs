//! `cargo xtask fuzz [--seconds N] [TARGET...]` and `cargo xtask fuzz-campaign [--seconds N]
//! [TARGET...]`: the fuzz targets of `analyzer/fuzz` (one per parser), run with cargo fuzz
//! on the stable toolchain (`RUSTC_BOOTSTRAP=1`), each seeded at run time from the
//! recorded runs (`../shared/fixtures`, never copied into the project) and the project's
//! own `fixtures/`. `fuzz` is the short run of `cargo xtask ci`; `fuzz-campaign` the long
//! one. A finding stops the run with the input's path: copy it into
//! `analyzer/fuzz/regressions/<target>/`, where the analyzer's test `fuzz_regressions`
//! replays it through the same checks.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::tools::{cargo_bin, output};
use crate::{cargo, recorded, root, run};

/// Every target, as `analyzer/fuzz/Cargo.toml` declares them.
const TARGETS: &[&str] = &[
    "prom",
    "snapshot",
    "lenient_json",
    "series",
    "bench",
    "aiperf_records",
    "python_literal",
    "bootlog_vllm",
    "bootlog_sglang",
    "bootlog_trtllm",
    "pack",
    "documents",
    "run",
];

/// Seconds per target in `cargo xtask ci` (13 targets: about two minutes of fuzzing after
/// the build, so CI stays inside its hour on two cores; the long run is the campaign).
pub(crate) const CI_SECONDS: u64 = 10;
/// Seconds per target of a campaign unless told.
const CAMPAIGN_SECONDS: u64 = 600;
/// cargo-fuzz, installed when missing.
const CARGO_FUZZ: &str = "0.13.2";

/// The same separator as `analyzer_fuzz::FILE_SEPARATOR`: a whole run in one input.
const FILE_SEPARATOR: &[u8] = b"\n\x00--inferlint-fuzz-file--\x00\n";
/// Seeds are cut to this many bytes at a line end (a long series adds nothing to a seed).
const SEED_BYTES: usize = 32 * 1024;

fn fuzz_dir() -> PathBuf {
    root().join("analyzer/fuzz")
}

/// `cargo xtask fuzz` (`campaign` false) or `fuzz-campaign`, with the rest of the
/// command line.
pub(crate) fn fuzz(args: &[String], campaign: bool) -> Result<()> {
    let mut seconds = if campaign {
        CAMPAIGN_SECONDS
    } else {
        CI_SECONDS
    };
    let mut chosen = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                seconds = it
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&s| s > 0)
                    .context("--seconds takes a whole number of seconds above 0")?;
            }
            t if TARGETS.contains(&t) => chosen.push(t),
            other => bail!("{other}: not a fuzz target (known: {})", TARGETS.join(", ")),
        }
    }
    if chosen.is_empty() {
        chosen = TARGETS.to_vec();
    }
    ensure_cargo_fuzz()?;
    seed_all()?;
    let started = Instant::now();
    run(fuzz_cmd("build").arg("-O"))?;
    eprintln!("== fuzz targets built in {:.0?}", started.elapsed());
    let mut found = Vec::new();
    for t in &chosen {
        let corpus = fuzz_dir().join("corpus").join(t);
        let artifacts = fuzz_dir().join("artifacts").join(t);
        std::fs::create_dir_all(&artifacts)?;
        // A target whose seeds were all filtered out still runs, from nothing.
        std::fs::create_dir_all(&corpus)?;
        // libFuzzer's progress goes to a log per target (thousands of lines a run);
        // the terminal gets one line per target, and the log's tail on a finding.
        let log = fuzz_dir().join("logs").join(format!("{t}.log"));
        std::fs::create_dir_all(log.parent().unwrap())?;
        let out = std::fs::File::create(&log)?;
        // The built binary itself: `cargo fuzz run` would rebuild whenever a source
        // changed during a long campaign.
        let status = Command::new(target_dir().join(t))
            .arg(&corpus)
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .args(["-timeout=10", "-rss_limit_mb=2048", "-print_final_stats=1"])
            .current_dir(root())
            .stdout(out.try_clone()?)
            .stderr(out)
            .status()
            .with_context(|| format!("cannot run cargo fuzz on {t}"))?;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        eprintln!("   {t}: {}", summary(&text));
        if !status.success() {
            let tail: Vec<&str> = text.lines().rev().take(30).collect();
            for l in tail.iter().rev() {
                eprintln!("     {l}");
            }
            found.push(format!(
                "{t}: see {} and {}",
                artifacts.display(),
                log.display()
            ));
        }
    }
    eprintln!(
        "== fuzzing: {} target(s), {seconds} s each, {:.0?} in all",
        chosen.len(),
        started.elapsed()
    );
    if !found.is_empty() {
        bail!(
            "fuzzing found inputs that break an invariant (copy each into \
             analyzer/fuzz/regressions/<target>/ and fix):\n  {}",
            found.join("\n  ")
        );
    }
    Ok(())
}

/// "120577 runs in 331 s, coverage 635": libFuzzer's final line and last coverage figure.
fn summary(log: &str) -> String {
    let done = log
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("Done "))
        .map(|d| d.replace(" second(s)", " s"));
    let cov = log
        .lines()
        .rev()
        .find_map(|l| l.split_once(" cov: ").map(|(_, r)| r))
        .and_then(|r| r.split_whitespace().next());
    match (done, cov) {
        (Some(d), Some(c)) => format!("{d}, coverage {c}"),
        (Some(d), None) => d,
        _ => "did not finish (see its log)".to_string(),
    }
}

/// `cargo fuzz SUB --fuzz-dir analyzer/fuzz`, on the stable toolchain.
/// Where `cargo fuzz build -O` puts the targets.
fn target_dir() -> PathBuf {
    fuzz_dir().join(format!(
        "target/{}-unknown-linux-gnu/release",
        std::env::consts::ARCH
    ))
}

fn fuzz_cmd(sub: &str) -> Command {
    let mut c = cargo();
    c.args(["fuzz", sub, "--fuzz-dir"])
        .arg(fuzz_dir())
        .env("RUSTC_BOOTSTRAP", "1");
    c
}

fn ensure_cargo_fuzz() -> Result<()> {
    let have = output(Command::new(cargo_bin().join("cargo-fuzz")).arg("--version"));
    if have.is_some_and(|v| v.contains(CARGO_FUZZ)) {
        return Ok(());
    }
    run(cargo().args(["install", "cargo-fuzz", "--locked", "--version", CARGO_FUZZ]))
}

/// Writes every target's seeds into `analyzer/fuzz/corpus/<target>/seed-*` (the corpus
/// folder is not committed; what the fuzzer adds beside the seeds is kept between runs).
fn seed_all() -> Result<()> {
    let mut runs: Vec<PathBuf> = Vec::new();
    let mut sources = vec![root().join("fixtures")];
    sources.extend(recorded());
    for s in &sources {
        collect_runs(s, &mut runs);
    }
    runs.sort();
    let corpus = fuzz_dir().join("corpus");
    let mut count = 0;
    for (i, dir) in runs.iter().enumerate() {
        let engine = engine_of(dir);
        let mut run_files: Vec<(String, Vec<u8>)> = Vec::new();
        for e in std::fs::read_dir(dir)?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let outputs = [analyzer::docs::RESULTS, analyzer::docs::REPORT];
            if !e.file_type()?.is_file() || outputs.contains(&name.as_str()) {
                continue;
            }
            let bytes = std::fs::read(e.path())?;
            let head = cut(&bytes).to_vec();
            let seed_as = |target: &str, tag: &str, what: &[u8]| -> Result<()> {
                let d = corpus.join(target);
                std::fs::create_dir_all(&d)?;
                std::fs::write(d.join(format!("seed-{i}-{name}{tag}")), what)?;
                Ok(())
            };
            let seed = |target: &str, what: &[u8]| seed_as(target, "", what);
            if name.ends_with(".prom") {
                seed("prom", &head)?;
                seed("snapshot", &head)?;
            }
            if name.ends_with(".json") && name.contains("snapshot") {
                seed("snapshot", &bytes)?;
                seed("documents", &bytes)?;
                if let Some(text) = prometheus_text(&bytes) {
                    seed("prom", cut(text.as_bytes()))?;
                }
            }
            if name.ends_with(".series.jsonl") {
                seed("series", &head)?;
                let first_line = head.split(|&b| b == b'\n').next().unwrap_or_default();
                seed("documents", first_line)?;
            }
            if name.starts_with(analyzer::docs::BENCH_JSON) {
                seed("bench", &head)?;
            }
            if name.ends_with(".requests.jsonl") {
                seed("aiperf_records", &head)?;
            }
            if name.ends_with(".json") && bytes.len() <= 256 * 1024 {
                seed("lenient_json", &bytes)?;
                if analyzer::docs::RECORDER_DOCUMENTS.contains(&name.as_str()) {
                    seed("documents", &bytes)?;
                }
            }
            if name.ends_with(".log") && name.contains("boot") {
                if let Some(e) = engine {
                    seed(&format!("bootlog_{e}"), &head)?;
                }
                for (k, lit) in python_literals(&bytes).into_iter().enumerate() {
                    seed_as("python_literal", &format!("-{k}"), lit)?;
                }
            }
            let keep = if name.ends_with(".json") && bytes.len() <= 256 * 1024 {
                bytes
            } else {
                head
            };
            run_files.push((name, keep));
        }
        run_files.sort();
        let mut whole = Vec::new();
        for (k, (name, bytes)) in run_files.iter().enumerate() {
            if k > 0 {
                whole.extend_from_slice(FILE_SEPARATOR);
            }
            whole.extend_from_slice(name.as_bytes());
            whole.push(b'\n');
            whole.extend_from_slice(bytes);
        }
        for t in ["run", "pack"] {
            let d = corpus.join(t);
            std::fs::create_dir_all(&d)?;
            std::fs::write(d.join(format!("seed-{i}")), &whole)?;
        }
        count += 1;
    }
    eprintln!("== fuzz corpora seeded from {count} run folders");
    Ok(())
}

/// Folders holding at least one run file, under `dir`.
fn collect_runs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut has_files = false;
    for e in entries.flatten() {
        match e.file_type() {
            Ok(t) if t.is_dir() => collect_runs(&e.path(), out),
            Ok(t) if t.is_file() => has_files = true,
            _ => {}
        }
    }
    if has_files {
        out.push(dir.to_path_buf());
    }
}

/// The engine of a fixture folder, by its path (`vllm-0.30/...`, `recorded/sglang`).
fn engine_of(dir: &Path) -> Option<&'static str> {
    let p = dir.to_string_lossy();
    ["vllm", "sglang", "trtllm"]
        .into_iter()
        .find(|e| p.contains(&format!("/{e}")))
}

/// At most [`SEED_BYTES`], cut after a line end.
fn cut(bytes: &[u8]) -> &[u8] {
    if bytes.len() <= SEED_BYTES {
        return bytes;
    }
    let head = &bytes[..SEED_BYTES];
    match head.iter().rposition(|&b| b == b'\n') {
        Some(i) => &head[..=i],
        None => head,
    }
}

/// A snapshot document's Prometheus text.
fn prometheus_text(bytes: &[u8]) -> Option<String> {
    let v = analyzer::json::parse(std::str::from_utf8(bytes).ok()?).ok()?;
    v.get("text")?.as_str().map(str::to_string)
}

/// The argument dicts a boot log prints (`non-default args: {...}`), as written.
fn python_literals(bytes: &[u8]) -> Vec<&[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let at = line.windows(3).position(|w| w == b": {")?;
            Some(&line[at + 2..])
        })
        .take(20)
        .collect()
}
