//! A 24-hour recording (345,600 readings at 4 Hz, written by the benchmark's generator):
//! `analyze` writes a results.json of at most 1 MB whose charts keep, of every line, the
//! exact lowest and highest value and the first and last sample, and say they are reduced;
//! and a report.html of at most 3 MB whose carried run (`inferlint.pack/2`) gives back the
//! folder's files byte for byte, so the page's verdicts are the command line's.

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

#[test]
fn a_day_long_recording_gives_a_results_json_of_at_most_one_megabyte() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("long-run-test-24h");
    long_run::write(&dir, SAMPLES).expect("write the 24-hour recording");
    let out = Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .args(["analyze", "--requested", "32", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let out = Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .args(["analyze", "--requested", "32", "--json", "--html"])
        .arg(&html)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let size = std::fs::metadata(&html).unwrap().len();
    assert!(size <= 3 * MB, "report.html is {size} bytes");
    let want = verdicts(&parse(std::str::from_utf8(&out.stdout).unwrap()).unwrap());
    assert!(want.len() >= 9, "{want:?}");

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
