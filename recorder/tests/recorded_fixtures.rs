//! The run folders recorded with `inferlint-recorder` against the simulator
//! (`fixtures/recorded/`, made as its README says): every file a complete serve-mode run
//! writes, and the verdicts the analyzer gives on them, pinned.

mod common;
use common::*;

use std::path::PathBuf;

use analyzer::json::Json;

fn folder(engine: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/recorded")
        .join(engine)
}

fn pinned(engine: &str, expect: &[(&str, &str)]) {
    pinned_in(engine, engine, expect);
}

/// `name`'s folder, recorded from `engine`'s simulator.
fn pinned_in(name: &str, engine: &str, expect: &[(&str, &str)]) {
    pinned_and_analyzed(name, engine, expect);
}

/// [`pinned_in`], giving the analysis.
fn pinned_and_analyzed(name: &str, engine: &str, expect: &[(&str, &str)]) -> analyzer::Analysis {
    let dir = folder(name);
    for f in [
        "after.snapshot.json",
        "before.snapshot.json",
        "bench.json",
        "boot.log",
        "gate.json",
        "load.log",
        "manifest.json",
        "probe.json",
        "processes.json",
        "run.series.jsonl",
        "teardown.json",
    ] {
        assert!(dir.join(f).is_file(), "{engine}: {f} missing");
    }
    let m = json(&dir.join("manifest.json"));
    assert_eq!(
        m.get("schema").and_then(Json::as_str),
        Some("inferlint.run/1")
    );
    assert_eq!(
        m.get("engine").unwrap().get("key").and_then(Json::as_str),
        Some(engine)
    );
    assert_eq!(
        m.get("outcome")
            .unwrap()
            .get("state")
            .and_then(Json::as_str),
        Some("completed")
    );
    let a = assert_verdicts(&dir, expect);
    assert!(m
        .get("title")
        .and_then(Json::as_str)
        .is_some_and(|t| t.contains("simulated")));
    a
}

#[test]
fn vllm_hybrid_run() {
    pinned(
        "vllm",
        &[
            ("T1", "fail"),
            ("T2", "pass"),
            ("T5", "warn"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "fail"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "pass"),
            ("T15", "pass"),
            // Recorded before the GPU sampler and per-request times: T16 and T18 can't
            // tell; the simulator then counted no prefix-cache hit.
            ("T16", "unknown"),
            ("T17", "pass"),
            ("T18", "unknown"),
            ("T21", "pass"),
            ("T22", "pass"),
            ("T20", "unknown"),
            ("T23", "unknown"),
            ("T24", "pass"),
        ],
    );
}

/// The run above recorded again with per-request times (`--save-detailed`) and the
/// simulator at a quarter of the speed: the replay draws a column per request, and the
/// columns drop where the preemption counter rose.
#[test]
fn vllm_hybrid_run_with_per_request_times_replays_its_preemptions() {
    let a = pinned_and_analyzed(
        "vllm-replay",
        "vllm",
        &[
            ("T1", "fail"),
            ("T2", "pass"),
            ("T5", "warn"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "fail"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "pass"),
            ("T15", "pass"),
            ("T16", "pass"),
            ("T17", "pass"),
            // No compilation in the log while the load ran; the first requests' times
            // alone cannot tell.
            ("T18", "unknown"),
            ("T20", "pass"),
            ("T21", "pass"),
            ("T22", "pass"),
            // The simulator at --sim-speed times its histograms on its own clock.
            ("T23", "unknown"),
            ("T24", "pass"),
        ],
    );
    let r = a.report.replay.as_ref().expect("a replay");
    assert_eq!(r.mode, analyzer::insights::replay::Mode::Requests);
    assert_eq!(r.requests, 32);
    let f = &r.frames;
    let evicted: f64 = f.evicted.iter().sum();
    let t1 = a.report.checks.iter().find(|c| c.id() == "T1").unwrap();
    assert!(
        t1.message.starts_with(&format!("{evicted} preemptions")),
        "{evicted} vs {}",
        t1.message
    );
    // Every rise of the counter in the recording drops as many columns at its frame.
    let text = std::fs::read_to_string(folder("vllm-replay").join("run.series.jsonl")).unwrap();
    let counter: Vec<f64> = text
        .lines()
        .skip(1)
        .filter_map(|l| analyzer::json::parse(l).ok()?.get("preemptions")?.as_f64())
        .collect();
    assert_eq!(counter.len(), f.len(), "one frame per reading");
    for j in 1..f.len() {
        let rose = counter[j] - counter[j - 1];
        let dropped = f.columns[j].iter().filter(|c| **c == Some(0.0)).count();
        if rose > 0.0 {
            assert_eq!(dropped as f64, rose, "frame {j} at {} s", f.t[j]);
        }
    }
    // The reconstruction never runs more at once than the server did.
    let most = f.columns.iter().map(|c| c.iter().flatten().count()).max();
    assert_eq!(most, Some(10));
}

/// A run on a card that throttles part-way, with prompts sharing a 192-token prefix and
/// no warm-up before the measurement (`--sim-gpu-throttle`, `--random-prefix-len`,
/// `--sim-warmup-cost`): T16 fails, T17 and T18 warn.
#[test]
fn vllm_throttled_shared_prefix_cold_start() {
    pinned_in(
        "vllm-t16-t18",
        "vllm",
        &[
            ("T1", "pass"),
            ("T2", "pass"),
            ("T5", "pass"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "pass"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "pass"),
            ("T15", "pass"),
            ("T16", "fail"),
            ("T17", "warn"),
            ("T18", "warn"),
            ("T20", "pass"),
            ("T21", "pass"),
            ("T22", "pass"),
            // The simulator at --sim-speed times its histograms on its own clock.
            ("T23", "unknown"),
            ("T24", "pass"),
        ],
    );
    let dir = folder("vllm-t16-t18");
    assert!(dir.join(analyzer::docs::GPU_SAMPLES).is_file());
    let names = files(&dir);
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let d = analyzer::folder::discover(&refs);
    assert_eq!(d.gpu.as_deref(), Some(analyzer::docs::GPU_SAMPLES));
    assert_eq!(d.series.as_deref(), Some("run.series.jsonl"));
    assert_eq!(d.bench_exact.as_deref(), Some("bench.json"));
}

#[test]
fn sglang_run() {
    pinned(
        "sglang",
        &[
            ("T1", "pass"),
            ("T2", "pass"),
            ("T5", "pass"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "pass"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "not_applicable"),
            ("T15", "pass"),
            // The simulator exported no prefix-cache counter when this was recorded.
            ("T16", "unknown"),
            ("T17", "not_applicable"),
            ("T18", "unknown"),
            ("T21", "pass"),
            ("T22", "pass"),
            ("T20", "unknown"),
            ("T23", "unknown"),
            ("T24", "pass"),
        ],
    );
}

#[test]
fn trtllm_run() {
    pinned(
        "trtllm",
        &[
            ("T1", "pass"),
            ("T2", "pass"),
            ("T5", "pass"),
            ("T6", "pass"),
            ("T7", "pass"),
            ("T8", "unknown"),
            ("T9", "warn"),
            ("T10", "pass"),
            ("T12", "pass"),
            ("T14", "not_applicable"),
            ("T15", "pass"),
            // No `trtllm_prompt_cached_tokens_total` then: absent is never zero.
            ("T16", "unknown"),
            ("T17", "unknown"),
            ("T18", "unknown"),
            ("T21", "pass"),
            ("T22", "pass"),
            ("T20", "unknown"),
            ("T23", "unknown"),
            ("T24", "pass"),
        ],
    );
}

/// No recorder file name matches a discovery pattern of the reference for another role,
/// and the analyzer finds every file of a recorded folder by name.
#[test]
fn the_analyzer_finds_every_recorded_file_by_name() {
    let names = files(&folder("vllm"));
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let d = analyzer::folder::discover(&refs);
    assert_eq!(d.boot_log.as_deref(), Some("boot.log"));
    assert_eq!(d.before.as_deref(), Some("before.snapshot.json"));
    assert_eq!(d.after.as_deref(), Some("after.snapshot.json"));
    assert_eq!(d.series.as_deref(), Some("run.series.jsonl"));
    assert_eq!(d.bench_exact.as_deref(), Some("bench.json"));
    assert_eq!(d.load_log.as_deref(), Some("load.log"));
    for (got, want) in [
        (&d.manifest, "manifest.json"),
        (&d.gate, "gate.json"),
        (&d.probe, "probe.json"),
        (&d.teardown, "teardown.json"),
        (&d.processes, "processes.json"),
    ] {
        assert_eq!(got.as_deref(), Some(want));
    }
    for n in [
        "manifest.json",
        "gate.json",
        "probe.json",
        "teardown.json",
        "processes.json",
        "load.log",
    ] {
        assert!(
            !n.contains("boot")
                && !n.contains("before")
                && !n.contains("after")
                && !n.ends_with(".series.jsonl"),
            "{n}"
        );
    }
}
