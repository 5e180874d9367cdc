//! The plausibility gate, check by check (mutation style): the project's recorded runs give
//! their usual verdicts; the same run with one implausible value in a field a check reads
//! makes that check "can't tell", naming the file, line and value, and never a pass.

mod common;

use analyzer::analysis::{analyze, Analysis, Options};
use analyzer::folder;
use analyzer::rules::verdict::Status;

/// A recorded run's files, by name.
fn run_files(engine: &str) -> Vec<(String, Vec<u8>)> {
    let dir = common::workspace_root()
        .join("fixtures/recorded")
        .join(engine);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn analyze_files(files: &[(String, Vec<u8>)]) -> Analysis {
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let read = |n: &str| {
        files
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| "missing".to_string())
    };
    let input = folder::load("run", &names, &read);
    analyze(&input, &Options::default()).expect("an analysis")
}

fn status(a: &Analysis, t: u8) -> Status {
    a.report
        .checks
        .iter()
        .find(|r| r.tripwire.number() == t)
        .unwrap_or_else(|| panic!("no T{t} in {:?}", a.report.checks))
        .status
}

fn message(a: &Analysis, t: u8) -> String {
    a.report
        .checks
        .iter()
        .find(|r| r.tripwire.number() == t)
        .map(|r| r.message.clone())
        .unwrap_or_default()
}

/// Replaces the first match of `from` on a line of `file` (after `skip` matching lines)
/// with `to`; returns the 1-based line changed.
fn mutate(files: &mut [(String, Vec<u8>)], file: &str, from: &str, to: &str) -> usize {
    let (_, bytes) = files.iter_mut().find(|(n, _)| n == file).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let mut out = Vec::new();
    let mut changed = None;
    for (i, line) in text.split('\n').enumerate() {
        if changed.is_none() && line.contains(from) {
            out.push(line.replacen(from, to, 1));
            changed = Some(i + 1);
        } else {
            out.push(line.to_string());
        }
    }
    *bytes = out.join("\n").into_bytes();
    changed.unwrap_or_else(|| panic!("{from} not in {file}"))
}

/// One mutation: the check's verdict before, and "can't tell" naming file:line and value
/// after.
fn assert_gated(engine: &str, t: u8, file: &str, from: &str, to: &str, value: &str) {
    let mut files = run_files(engine);
    let before = analyze_files(&files);
    assert_ne!(
        status(&before, t),
        Status::Unknown,
        "T{t} on the plain {engine} run: {}",
        message(&before, t)
    );
    let line = mutate(&mut files, file, from, to);
    let after = analyze_files(&files);
    let msg = message(&after, t);
    assert_eq!(status(&after, t), Status::Unknown, "T{t}: {msg}");
    let place = if file.ends_with(".json") {
        format!("run/{file}:")
    } else {
        format!("run/{file}:{line}:")
    };
    assert!(msg.contains(&place), "T{t}: {msg} lacks {place}");
    assert!(
        msg.contains(&format!("= {value} ")),
        "T{t}: {msg} lacks {value}"
    );
    assert!(!after.implausible.is_empty());
}

/// A metric's sample in a snapshot's text, and the same sample reading `NaN`.
fn nan_sample(engine: &str, file: &str, metric: &str) -> (String, String) {
    let files = run_files(engine);
    let text =
        String::from_utf8_lossy(&files.iter().find(|(n, _)| n == file).unwrap().1).into_owned();
    let at = text.find(&format!("{metric}{{")).unwrap();
    let sample = &text[at..at + text[at..].find("\\n").unwrap()];
    let value = sample.rsplit(' ').next().unwrap();
    let bad = format!("{} NaN", &sample[..sample.len() - value.len() - 1]);
    (sample.to_string(), bad)
}

#[test]
fn a_nan_preemption_counter_is_not_a_pass() {
    let (sample, bad) = nan_sample("vllm", "after.snapshot.json", "vllm:num_preemptions_total");
    assert_gated("vllm", 1, "after.snapshot.json", &sample, &bad, "NaN");
    let (sample, bad) = nan_sample("vllm", "before.snapshot.json", "vllm:num_preemptions_total");
    assert_gated("vllm", 1, "before.snapshot.json", &sample, &bad, "NaN");
}

#[test]
fn a_nan_token_counter_gives_no_rate() {
    let (sample, bad) = nan_sample(
        "vllm",
        "after.snapshot.json",
        "vllm:generation_tokens_total",
    );
    assert_gated("vllm", 10, "after.snapshot.json", &sample, &bad, "NaN");
    assert_gated("vllm", 15, "after.snapshot.json", &sample, &bad, "NaN");
}

#[test]
fn an_impossible_kv_fraction_gives_no_ceiling_and_no_block_count() {
    for t in [9, 14] {
        assert_gated(
            "vllm",
            t,
            "run.series.jsonl",
            "\"kv_usage\": 0.09523809523809523",
            "\"kv_usage\": 1e308",
            "1e308",
        );
    }
}

#[test]
fn an_impossible_running_gauge_is_no_pass_and_no_fail() {
    for (to, shown) in [("1e9", "1000000000"), ("-5.0", "-5")] {
        for t in [8, 9] {
            assert_gated(
                "vllm",
                t,
                "run.series.jsonl",
                "\"running\": 1.0",
                &format!("\"running\": {to}"),
                shown,
            );
        }
    }
}

#[test]
fn a_count_past_2_to_the_53_is_not_counted() {
    let files = run_files("vllm");
    let bench = String::from_utf8(
        files
            .iter()
            .find(|(n, _)| n == "bench.json")
            .unwrap()
            .1
            .clone(),
    )
    .unwrap();
    let at = bench.find("\"completed\":").unwrap() + "\"completed\":".len();
    let n: String = bench[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    assert_gated(
        "vllm",
        15,
        "bench.json",
        &format!("\"completed\":{n}"),
        "\"completed\":9223372036854775808",
        "9.223372036854776e18",
    );
}

#[test]
fn a_running_gauge_above_the_engines_own_limit_is_refused() {
    // The recorded vLLM run's boot log gives its limit; a reading above it is damage.
    let files = run_files("vllm");
    let a = analyze_files(&files);
    assert!(a.implausible.is_empty(), "{:?}", a.implausible);
    let log = String::from_utf8_lossy(&files.iter().find(|(n, _)| n == "boot.log").unwrap().1)
        .into_owned();
    let facts = analyzer::bootlog::read_facts(&log, None);
    let Some(cap) = facts.running_cap_info() else {
        return;
    };
    let mut files = files;
    mutate(
        &mut files,
        "run.series.jsonl",
        "\"running\": 1.0",
        &format!("\"running\": {}.0", cap.cap + 1),
    );
    let a = analyze_files(&files);
    assert_eq!(status(&a, 9), Status::Unknown, "{}", message(&a, 9));
    assert!(message(&a, 9).contains("boot log"), "{}", message(&a, 9));
}

#[test]
fn the_notes_name_each_file_once() {
    let mut files = run_files("sglang");
    for _ in 0..3 {
        mutate(
            &mut files,
            "run.series.jsonl",
            "\"running\": 1.0",
            "\"running\": NaN",
        );
    }
    let a = analyze_files(&files);
    let notes: Vec<&String> = a
        .notes
        .iter()
        .filter(|n| n.contains("implausible"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("and 2 more"), "{}", notes[0]);
}

#[test]
fn a_span_longer_than_a_year_gives_no_rate() {
    let mut files = run_files("vllm");
    let text = String::from_utf8_lossy(
        &files
            .iter()
            .find(|(n, _)| n == "before.snapshot.json")
            .unwrap()
            .1,
    )
    .into_owned();
    let line_of = |key: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(key))
            .unwrap()
            .trim()
            .to_string()
    };
    // A wall clock of 1.0 (plausible alone) and no monotonic clock: 57 years apart.
    let (wall, mono) = (line_of("\"t_wall\""), line_of("\"t_mono_ns\""));
    mutate(
        &mut files,
        "before.snapshot.json",
        &wall,
        "\"t_wall\": 1.0,",
    );
    mutate(
        &mut files,
        "before.snapshot.json",
        &mono,
        "\"t_mono_ns\": null,",
    );
    let a = analyze_files(&files);
    assert_eq!(status(&a, 10), Status::Unknown, "{}", message(&a, 10));
    assert!(
        message(&a, 10).contains("longer than a year"),
        "{}",
        message(&a, 10)
    );
}

#[test]
fn a_nan_prefix_cache_counter_is_not_a_pass() {
    // The plain vLLM run passes T17; a NaN hits counter would give a NaN share.
    let (sample, bad) = nan_sample(
        "vllm",
        "after.snapshot.json",
        "vllm:prefix_cache_hits_total",
    );
    assert_gated("vllm", 17, "after.snapshot.json", &sample, &bad, "NaN");
    let (sample, bad) = nan_sample(
        "vllm",
        "before.snapshot.json",
        "vllm:prefix_cache_queries_total",
    );
    assert_gated("vllm", 17, "before.snapshot.json", &sample, &bad, "NaN");
}

#[test]
fn an_impossible_gpu_reading_gives_no_throttle_verdict() {
    for (from, to, shown) in [
        (
            "\"sm_clock_mhz\": 1395.0",
            "\"sm_clock_mhz\": 1e308",
            "1e308",
        ),
        ("\"util_pct\": 97.0", "\"util_pct\": NaN", "NaN"),
        ("\"temp_c\": 71.0", "\"temp_c\": -300.0", "-300"),
        (
            "\"power_w\": 441.3",
            "\"power_w\": 9223372036854775808",
            "9.223372036854776e18",
        ),
        (
            "\"max_sm_clock_mhz\": 3105.0",
            "\"max_sm_clock_mhz\": 0.0",
            "0",
        ),
    ] {
        assert_gated("vllm-t16-t18", 16, "gpu.samples.jsonl", from, to, shown);
    }
}

#[test]
fn an_implausible_time_to_first_token_gives_no_warm_up_verdict() {
    // The result is one JSON object: a refusal names the file (its keys have no line).
    for (to, shown) in [("NaN", "NaN"), ("-1.0", "-1"), ("1e308", "1e308")] {
        assert_gated(
            "vllm-t16-t18",
            18,
            "bench.json",
            "\"ttfts\":[0.5353598,",
            &format!("\"ttfts\":[{to},"),
            shown,
        );
    }
    let a = {
        let mut files = run_files("vllm-t16-t18");
        mutate(
            &mut files,
            "bench.json",
            "\"start_times\":[0.000098665,",
            "\"start_times\":[-5.0,",
        );
        analyze_files(&files)
    };
    assert_eq!(status(&a, 18), Status::Unknown, "{}", message(&a, 18));
    assert!(message(&a, 18).contains("start_times[0] = -5 "));
    // T15 does not read per-request times: its verdict stands.
    assert_ne!(status(&a, 15), Status::Unknown, "{}", message(&a, 15));
}
