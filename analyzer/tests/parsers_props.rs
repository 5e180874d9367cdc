//! Property tests: no parser panics on any bytes, and damage to a real run folder never
//! panics the whole analysis.

mod common;

use analyzer::analysis::{analyze, Options};
use analyzer::bench::BenchResult;
use analyzer::prom::Exposition;
use analyzer::series::Series;
use analyzer::snapshot::Snapshot;
use analyzer::{folder, json};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn no_parser_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = json::parse(&text);
        let _ = Exposition::parse(&text);
        let _ = Snapshot::read("f", &bytes);
        let _ = Series::read("f", &bytes);
        let _ = BenchResult::read("f", &bytes);
        let _ = analyzer::bench::untimed_requests(&text);
    }

    #[test]
    fn prometheus_like_text_never_panics(lines in proptest::collection::vec(
        "[a-z_:{}\"=,\\\\ .0-9eE+-]{0,40}", 0..20)) {
        let text = lines.join("\n");
        if let Ok(e) = Exposition::parse(&text) {
            for s in &e.samples {
                prop_assert!(!s.name.is_empty());
            }
        }
        let _ = Snapshot::read("f", text.as_bytes());
    }

    #[test]
    fn json_like_text_never_panics(s in "[\\[\\]{}\",:0-9a-zA-Z.eE+ -]{0,80}") {
        let _ = json::parse(&s);
        let _ = Series::read("f", s.as_bytes());
        let _ = BenchResult::read("f", s.as_bytes());
    }
}

/// Cuts, garbage and flipped bytes in each file of recorded folders: the analysis either
/// reports or refuses cleanly, and any input error names the damaged file.
#[test]
fn damaged_run_folders_never_panic() {
    let Some(root) = common::recorded() else {
        return;
    };
    let mut rng = 0x2026_1130_u64;
    let mut next = move |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n.max(1) as u64) as usize
    };
    for run in [
        "vllm-0.30/live",
        "sglang-0.5/qwen3-8b",
        "trtllm-1.3/pauses",
        "vllm-0.28/live",
    ] {
        let dir = root.join(run);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| n != "results.json" && n != "report.html")
            .collect();
        names.sort();
        let files: Vec<(String, Vec<u8>)> = names
            .iter()
            .map(|n| (n.clone(), std::fs::read(dir.join(n)).unwrap()))
            .collect();
        for round in 0..40 {
            let victim = next(files.len());
            let mut damaged = files.clone();
            let b = &mut damaged[victim].1;
            let pos = next(b.len());
            match round % 4 {
                0 => b.truncate(pos),
                1 => b
                    .splice(pos..pos, (0..50).map(|i| (i * 37 % 256) as u8))
                    .for_each(drop),
                2 if !b.is_empty() => b[pos] ^= 0xFF,
                _ => b.clear(),
            }
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let read = |n: &str| {
                damaged
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| "missing".to_string())
            };
            let input = folder::load(run, &refs, &read);
            let opts = Options {
                requested: Some(32),
                ..Options::default()
            };
            if let Ok(a) = analyze(&input, &opts) {
                for e in &a.errors {
                    assert!(
                        e.file.ends_with(&damaged[victim].0),
                        "{e} names another file"
                    );
                }
            }
        }
    }
}
