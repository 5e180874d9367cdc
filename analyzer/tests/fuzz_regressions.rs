//! The fuzz targets' checks (`analyzer/fuzz/src/lib.rs`) in the ordinary test run: every
//! finding saved in `analyzer/fuzz/regressions/<target>/` replayed through its target, and
//! every target run on the project's recorded runs (the seeds of its corpus).

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz_checks;

mod common;

use std::path::Path;

fn target(name: &str) -> fn(&[u8]) {
    fuzz_checks::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| panic!("{name}: no such fuzz target"))
}

#[test]
fn every_saved_finding_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut replayed = 0;
    for dir in std::fs::read_dir(&root).unwrap().flatten() {
        if !dir.file_type().unwrap().is_dir() {
            continue;
        }
        let check = target(&dir.file_name().to_string_lossy());
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            check(&std::fs::read(f.path()).unwrap());
            replayed += 1;
        }
    }
    eprintln!("{replayed} saved findings replayed");
}

#[test]
fn every_target_holds_on_the_recorded_runs() {
    for engine in ["vllm", "sglang", "trtllm", "vllm-t16-t18"] {
        let dir = common::workspace_root()
            .join("fixtures/recorded")
            .join(engine);
        let mut whole = Vec::new();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for (k, name) in names.iter().enumerate() {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let by_name: &[&str] = match name.as_str() {
                "run.series.jsonl" => &["series", "lenient_json"],
                "boot.log" => &["python_literal"],
                "bench.json" => &["bench", "lenient_json"],
                "gpu.samples.jsonl" => &[],
                n if n.ends_with("snapshot.json") => &["snapshot", "documents", "lenient_json"],
                _ => &["documents", "lenient_json"],
            };
            for t in by_name {
                target(t)(&bytes);
            }
            if name == "boot.log" {
                let engine = engine.split('-').next().unwrap();
                target(&format!("bootlog_{engine}"))(&bytes);
            }
            if k > 0 {
                whole.extend_from_slice(fuzz_checks::FILE_SEPARATOR);
            }
            whole.extend_from_slice(name.as_bytes());
            whole.push(b'\n');
            whole.extend_from_slice(&bytes);
        }
        target("run")(&whole);
        target("pack")(&whole);
    }
}

#[test]
fn the_aiperf_records_target_holds_on_the_recorded_exports() {
    let dir = common::workspace_root().join("fixtures/loadtools/recorded/aiperf-sweep-2-16");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with(".requests.jsonl") {
            target("aiperf_records")(&std::fs::read(e.path()).unwrap());
            seen += 1;
        }
    }
    assert_eq!(seen, 2, "the two steps' exports in {}", dir.display());
}

/// A recorded run as one `run` fuzz input, with `from` replaced by `to` in `file`.
fn whole_run(engine: &str, file: &str, from: &str, to: &str) -> Vec<u8> {
    let dir = common::workspace_root()
        .join("fixtures/recorded")
        .join(engine);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut whole = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let mut text = String::from_utf8(std::fs::read(dir.join(name)).unwrap()).unwrap();
        if name == file {
            assert!(text.contains(from), "{from} not in {file}");
            text = text.replacen(from, to, 1);
        }
        if k > 0 {
            whole.extend_from_slice(fuzz_checks::FILE_SEPARATOR);
        }
        whole.extend_from_slice(name.as_bytes());
        whole.push(b'\n');
        whole.extend_from_slice(text.as_bytes());
    }
    whole
}

#[test]
fn the_run_invariant_holds_with_refused_values_in_t16_to_t18() {
    use analyzer::engine::Engine;
    use analyzer::plausible::{Implausible, Why};
    // The invariant knows who reads each new field.
    let at =
        |file: &str, field: &str| Implausible::new(file, Some(2), field, f64::NAN, Why::NotANumber);
    let readers = |i: &Implausible| fuzz_checks::readers(i, Engine::Vllm).to_vec();
    assert_eq!(readers(&at("run/gpu.samples.jsonl", "sm_clock_mhz")), [16]);
    assert_eq!(readers(&at("run/bench.json", "ttfts[3]")), [18]);
    assert_eq!(readers(&at("run/bench.json", "completed")), [15]);
    assert_eq!(
        readers(&at("run/after.prom", "vllm:prefix_cache_hits_total")),
        [17]
    );
    // And it holds where a pass was at stake (T17 passes on the plain vLLM run).
    for (engine, file, from, to) in [
        ("vllm", "after.snapshot.json", "vllm:prefix_cache_hits_total{engine=\\\"0\\\",model_name=\\\"/models/Qwen3.8-27B-W4A16-AutoRound\\\"} 0.0", "vllm:prefix_cache_hits_total{engine=\\\"0\\\",model_name=\\\"/models/Qwen3.8-27B-W4A16-AutoRound\\\"} NaN"),
        ("vllm-t16-t18", "gpu.samples.jsonl", "\"sm_clock_mhz\": 1395.0", "\"sm_clock_mhz\": 1e308"),
        ("vllm-t16-t18", "bench.json", "\"ttfts\":[0.5353598,", "\"ttfts\":[NaN,"),
    ] {
        target("run")(&whole_run(engine, file, from, to));
    }
}
