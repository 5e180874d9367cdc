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
    for engine in ["vllm", "sglang", "trtllm"] {
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
                n if n.ends_with("snapshot.json") => &["snapshot", "documents", "lenient_json"],
                _ => &["documents", "lenient_json"],
            };
            for t in by_name {
                target(t)(&bytes);
            }
            if name == "boot.log" {
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
