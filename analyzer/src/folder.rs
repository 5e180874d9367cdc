//! The run folder's files by role (docs/run-folder.md#discovery): which file name plays
//! which part. Pure name matching, so the terminal and the browser find the same files.
//! The names themselves are the documents' (`docs`).

use crate::docs::{
    AFTER_SNAPSHOT, AIPERF_RESULT, AIPERF_SERVER_METRICS, AIPERF_SERVER_METRICS_PREFIXED,
    BEFORE_SNAPSHOT, BENCH_JSON, BENCH_JSONL, BOOT_LOG, FLEET, GATE, GPU_SAMPLES, LOAD_LOG,
    MANIFEST, PROBE, PROCESSES, RECORDER_DOCUMENTS, RESULTS, SERIES, SERIES_SUFFIX,
    SNAPSHOT_SUFFIX, TEARDOWN,
};

/// Which file of a folder plays each role.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    pub boot_log: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    pub series: Option<String>,
    /// `bench.json` or `bench.jsonl`: a parse failure is an input error.
    pub bench_exact: Option<String>,
    /// Otherwise every other `*.json`/`*.jsonl`, sorted: the first that parses and has
    /// both counts wins; failures are skipped silently.
    pub bench_candidates: Vec<String>,
    /// Several load runs' results the recorder saved (`bench-1.json`, `bench-2.json`, …),
    /// in run order, when there are at least two and no `bench.json`: each is a phase.
    pub bench_runs: Vec<String>,
    /// Their per-request exports present in the folder (`bench-N.requests.jsonl`).
    pub bench_requests: Vec<String>,
    pub load_log: Option<String>,
    pub manifest: Option<String>,
    pub gate: Option<String>,
    pub probe: Option<String>,
    pub teardown: Option<String>,
    pub processes: Option<String>,
    /// The recorder's GPU samples (T16).
    pub gpu: Option<String>,
    /// `fleet.json`: the folder records several replicas.
    pub fleet: Option<String>,
    /// AIPerf's scrape of the server's metrics (an AIPerf artifact directory).
    pub aiperf_server: Option<String>,
}

impl Discovery {
    /// Whether the folder holds a file of the server's side of a run (what `analyze`
    /// needs beyond a load tool's result).
    pub fn has_run_files(&self) -> bool {
        self.boot_log.is_some()
            || self.before.is_some()
            || self.after.is_some()
            || self.series.is_some()
            || self.gate.is_some()
            || self.probe.is_some()
            || self.teardown.is_some()
            || self.aiperf_server.is_some()
            || self.fleet.is_some()
    }
}

/// Shell-style `*` matching (no other metacharacters are used by the roles).
fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

fn exact_or_first(names: &[&str], exact: &str, pattern: &str) -> Option<String> {
    if names.contains(&exact) {
        return Some(exact.to_string());
    }
    names
        .iter()
        .find(|n| glob(pattern, n))
        .map(|n| n.to_string())
}

fn exact(names: &[&str], name: &str) -> Option<String> {
    names.contains(&name).then(|| name.to_string())
}

/// Assigns roles to the regular files of a folder, given their names.
pub fn discover(names: &[&str]) -> Discovery {
    let mut sorted: Vec<&str> = names.to_vec();
    sorted.sort_unstable(); // code-point order
    sorted.dedup();
    let names = sorted.as_slice();
    let bench_exact = exact(names, BENCH_JSON).or_else(|| exact(names, BENCH_JSONL));
    let aiperf_server =
        exact_or_first(names, AIPERF_SERVER_METRICS, AIPERF_SERVER_METRICS_PREFIXED);
    let bench_candidates = if bench_exact.is_some() {
        Vec::new()
    } else {
        let mut c: Vec<String> = names
            .iter()
            .filter(|n| n.ends_with(".json") || n.ends_with(".jsonl"))
            .filter(|n| !n.ends_with(SNAPSHOT_SUFFIX) && !n.ends_with(SERIES_SUFFIX))
            .filter(|n| !RECORDER_DOCUMENTS.contains(n) && **n != RESULTS && **n != GPU_SAMPLES)
            .filter(|n| Some(**n) != aiperf_server.as_deref())
            .map(|n| n.to_string())
            .collect();
        // In an AIPerf artifact directory its summary goes first: the per-request
        // records and the inputs beside it are large and never a result.
        c.sort_by_key(|n| n != AIPERF_RESULT);
        c
    };
    let bench_runs = if bench_exact.is_some() {
        Vec::new()
    } else {
        numbered_runs(names)
    };
    let bench_requests = bench_runs
        .iter()
        .filter_map(|n| crate::docs::bench_requests_of(n))
        .filter(|r| names.contains(&r.as_str()))
        .collect();
    Discovery {
        bench_runs,
        bench_requests,
        boot_log: exact_or_first(names, BOOT_LOG, "*boot*.log"),
        before: exact_or_first(names, BEFORE_SNAPSHOT, "*before*.json"),
        after: exact_or_first(names, AFTER_SNAPSHOT, "*after*.json"),
        series: exact_or_first(names, SERIES, "*.series.jsonl"),
        bench_exact,
        bench_candidates,
        load_log: exact(names, LOAD_LOG),
        manifest: exact(names, MANIFEST),
        gate: exact(names, GATE),
        probe: exact(names, PROBE),
        teardown: exact(names, TEARDOWN),
        processes: exact(names, PROCESSES),
        gpu: exact(names, GPU_SAMPLES),
        fleet: exact(names, FLEET),
        aiperf_server,
    }
}

/// `bench-N.json` (or `.jsonl`) names, by N; none unless there are two or more.
fn numbered_runs(names: &[&str]) -> Vec<String> {
    let mut runs: Vec<(u64, &str)> = names
        .iter()
        .filter_map(|n| {
            let stem = n
                .strip_suffix(".json")
                .or_else(|| n.strip_suffix(".jsonl"))?;
            let digits = stem.strip_prefix(crate::docs::BENCH_RUN_PREFIX)?;
            let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
            Some((digits.parse().ok().filter(|_| all_digits)?, *n))
        })
        .collect();
    runs.sort_unstable();
    if runs.len() < 2 {
        return Vec::new();
    }
    runs.into_iter().map(|(_, n)| n.to_string()).collect()
}

/// A folder path as a normalised path: no trailing separator, no `.` segments, no doubled
/// separators (T15's `result_file`).
pub fn normalise(path: &str) -> String {
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// `dir` normalised, joined with `name`.
pub fn join(dir: &str, name: &str) -> String {
    let d = normalise(dir);
    if d == "/" {
        format!("/{name}")
    } else if d == "." {
        name.to_string()
    } else {
        format!("{d}/{name}")
    }
}

/// Loads a run folder's files by role. `names` are the folder's regular files; `read`
/// gives a file's bytes (or why it cannot be read); `dir` is the folder path as typed,
/// used to name files in messages and evidence. The load-tool result is the exact name,
/// else the first candidate that parses and has both counts.
pub fn load(
    dir: &str,
    names: &[&str],
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
) -> crate::inputs::RunInput {
    use crate::inputs::{BenchInput, InputFile, RunInput};
    let found = discover(names);
    let file = |name: &Option<String>| -> Option<InputFile> {
        let n = name.as_ref()?;
        Some(InputFile {
            name: join(dir, n),
            bytes: read(n),
        })
    };
    let as_input = |f: InputFile| BenchInput {
        evidence_path: f.name.clone(),
        file: f,
    };
    let mut runs: Vec<BenchInput> = found
        .bench_runs
        .iter()
        .filter_map(|n| file(&Some(n.clone())).map(as_input))
        .collect();
    if runs.is_empty() && found.bench_exact.is_none() {
        runs = unrecorded_runs(&found.bench_candidates, &file);
    }
    let (bench, bench_more) = if runs.len() >= 2 {
        let more = runs.split_off(1);
        (runs.pop(), more)
    } else {
        let one = match file(&found.bench_exact) {
            Some(f) => Some(as_input(f)),
            None => found.bench_candidates.iter().find_map(|n| {
                let f = file(&Some(n.clone()))?;
                usable(&f).is_some().then(|| as_input(f))
            }),
        };
        (one, Vec::new())
    };
    RunInput {
        boot_logs: file(&found.boot_log).into_iter().collect(),
        before: file(&found.before),
        after: file(&found.after),
        series: file(&found.series),
        bench_requests: found
            .bench_requests
            .iter()
            .filter_map(|n| file(&Some(n.clone())))
            .collect(),
        bench,
        bench_more,
        load_log: file(&found.load_log),
        manifest: file(&found.manifest),
        gate: file(&found.gate),
        probe: file(&found.probe),
        teardown: file(&found.teardown),
        gpu: file(&found.gpu),
        fleet: file(&found.fleet),
        aiperf_server: file(&found.aiperf_server),
        ..RunInput::default()
    }
}

/// A candidate that parses as a result with both counts.
fn usable(f: &crate::inputs::InputFile) -> Option<crate::bench::BenchResult> {
    let b = f.bytes.as_ref().ok()?;
    crate::bench::BenchResult::read(&f.name, b)
        .ok()
        .filter(crate::bench::BenchResult::has_counts)
}

/// Several results of one run each that say when they ended (`vllm bench serve`'s
/// `date`), as a folder of runs not recorded by the recorder holds them: every usable
/// candidate when the first is such a result and at least one more is; else none (the
/// first usable candidate is then the result, as before).
fn unrecorded_runs(
    candidates: &[String],
    file: &dyn Fn(&Option<String>) -> Option<crate::inputs::InputFile>,
) -> Vec<crate::inputs::BenchInput> {
    let one_run = |r: &crate::bench::BenchResult| {
        r.tool.is_none() && r.phases.is_empty() && r.date_end_wall.is_some()
    };
    let mut runs = Vec::new();
    for n in candidates {
        let Some(f) = file(&Some(n.clone())) else {
            continue;
        };
        match usable(&f) {
            Some(r) if one_run(&r) => runs.push(crate::inputs::BenchInput {
                evidence_path: f.name.clone(),
                file: f,
            }),
            // The first usable result is not of this kind: it is the result alone.
            Some(_) if runs.is_empty() => return Vec::new(),
            _ => {}
        }
    }
    if runs.len() < 2 {
        runs.clear();
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_from_names() {
        let d = discover(&[
            "x_boot_1.log",
            "a_before.json",
            "run_after.snapshot.json",
            "zz.series.jsonl",
            "results.json",
            "other.json",
            "load.log",
            "manifest.json",
            "gpu.samples.jsonl",
        ]);
        assert_eq!(d.boot_log.as_deref(), Some("x_boot_1.log"));
        assert_eq!(d.gpu.as_deref(), Some("gpu.samples.jsonl"));
        assert_eq!(d.before.as_deref(), Some("a_before.json"));
        assert_eq!(d.after.as_deref(), Some("run_after.snapshot.json"));
        assert_eq!(d.series.as_deref(), Some("zz.series.jsonl"));
        assert_eq!(d.bench_exact, None);
        assert_eq!(d.bench_candidates, vec!["a_before.json", "other.json"]);
        assert_eq!(d.manifest.as_deref(), Some("manifest.json"));
    }

    #[test]
    fn numbered_results_are_runs_in_order_with_their_exports() {
        let d = discover(&[
            "bench-10.json",
            "bench-2.json",
            "bench-1.json",
            "bench-1.requests.jsonl",
            "bench-x.json",
            "manifest.json",
        ]);
        assert_eq!(
            d.bench_runs,
            ["bench-1.json", "bench-2.json", "bench-10.json"]
        );
        assert_eq!(d.bench_requests, ["bench-1.requests.jsonl"]);
        // One numbered result is a result alone; `bench.json` wins over numbered ones.
        assert!(discover(&["bench-1.json"]).bench_runs.is_empty());
        assert!(discover(&["bench.json", "bench-1.json", "bench-2.json"])
            .bench_runs
            .is_empty());
    }

    #[test]
    fn several_vllm_results_with_dates_are_runs_and_others_stay_alone() {
        let vllm = |c: u32, date: &str| {
            format!(
                r#"{{"date": "{date}", "completed": 4, "total_output_tokens": 64, "max_concurrency": {c}}}"#
            )
        };
        let files = [
            ("a.json", vllm(2, "20261130-203839")),
            ("b.json", vllm(16, "20261130-203939")),
            ("notes.json", "{}".to_string()),
        ];
        let load_with = |files: &[(&str, String)]| {
            let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
            let read = |n: &str| {
                Ok(files
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, t)| t.as_bytes().to_vec())
                    .unwrap())
            };
            load("run", &names, &read)
        };
        let input = load_with(&files);
        assert_eq!(input.bench.as_ref().unwrap().file.name, "run/a.json");
        let more: Vec<&str> = input
            .bench_more
            .iter()
            .map(|b| b.file.name.as_str())
            .collect();
        assert_eq!(more, ["run/b.json"]);
        // Without a date (or with one result) the first usable result is the result alone.
        let undated = [
            (
                "a.json",
                r#"{"completed": 4, "total_output_tokens": 64}"#.to_string(),
            ),
            ("b.json", vllm(16, "20261130-203939")),
        ];
        let input = load_with(&undated);
        assert_eq!(input.bench.as_ref().unwrap().file.name, "run/a.json");
        assert!(input.bench_more.is_empty());
    }

    #[test]
    fn an_aiperf_artifact_directory() {
        let d = discover(&[
            ".aiperf_results_ready.json",
            "inputs.json",
            "profile_export.jsonl",
            "profile_export_aiperf.json",
            "profile_export_aiperf.csv",
            "server_metrics_export.json",
            "server_metrics_export.csv",
        ]);
        assert_eq!(
            d.aiperf_server.as_deref(),
            Some("server_metrics_export.json")
        );
        assert_eq!(
            d.bench_candidates,
            vec![
                "profile_export_aiperf.json",
                ".aiperf_results_ready.json",
                "inputs.json",
                "profile_export.jsonl"
            ]
        );
        assert!(d.has_run_files());
        let d = discover(&["foo.json", "foo_server_metrics.json"]);
        assert_eq!(d.aiperf_server.as_deref(), Some("foo_server_metrics.json"));
        assert_eq!(d.bench_candidates, vec!["foo.json"]);
        assert!(!discover(&["profile_export_aiperf.json"]).has_run_files());
    }

    #[test]
    fn exact_names_win() {
        let d = discover(&["a_boot.log", "boot.log", "bench.jsonl", "bench.json"]);
        assert_eq!(d.boot_log.as_deref(), Some("boot.log"));
        assert_eq!(d.bench_exact.as_deref(), Some("bench.json"));
    }

    #[test]
    fn globbing() {
        assert!(glob("*boot*.log", "boot.log"));
        assert!(glob("*boot*.log", "my-boot-2.log"));
        assert!(!glob("*boot*.log", "boot.log.gz"));
        assert!(glob("*.series.jsonl", "a.series.jsonl"));
        assert!(!glob("*before*.json", "before.jsonl"));
    }

    #[test]
    fn normalising() {
        assert_eq!(
            normalise("fixtures/vllm-0.30/capped/"),
            "fixtures/vllm-0.30/capped"
        );
        assert_eq!(normalise("./a//b/./"), "a/b");
        assert_eq!(join("/x//y/", "bench.json"), "/x/y/bench.json");
        assert_eq!(join(".", "bench.json"), "bench.json");
    }
}
