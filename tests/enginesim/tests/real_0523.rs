//! The simulator's SGLang personality against the real SGLang 0.5.23 recorded in
//! `fixtures/real/sglang-*` (PyPI's wheel on this project's CPU-only machines, `--device
//! cpu --attention-backend torch_native`): started with the same flags, it must give the
//! analyzer the same things to read, so the two cannot drift apart silently. Compared:
//! the boot facts the analyzer finds and their values, the lines of the stop on SIGTERM,
//! the batch lines' graph word, the `sglang:` metric families with their types and label
//! keys, the server's child processes, the running limit lowered to fit a small pool, and
//! the starts a tiny pool fails.
//!
//! The simulator reads no model files, so the tiny model's context length (1024, from its
//! config) is given to it as `--context-length`; the real start prints it in its limits
//! line, which is where the analyzer reads it.

mod common;
use common::*;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use analyzer::prom::Exposition;

fn fixture(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/real")
        .join(case)
}

fn read(case: &str, name: &str) -> String {
    let p = fixture(case).join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A real folder's metrics text after the load.
fn real_metrics(case: &str) -> String {
    let doc: serde_json::Value = serde_json::from_str(&read(case, "after.snapshot.json")).unwrap();
    doc["text"].as_str().unwrap().to_string()
}

/// The real server's flags (`python -m sglang.launch_server --model-path M FLAGS`),
/// without the model, host and port.
fn real_flags(case: &str) -> Vec<String> {
    let m: serde_json::Value = serde_json::from_str(&read(case, "manifest.json")).unwrap();
    let argv: Vec<String> = m["serve"]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert_eq!(argv[..3], ["python", "-m", "sglang.launch_server"]);
    let mut flags = Vec::new();
    let mut it = argv.iter().skip(3);
    while let Some(f) = it.next() {
        if ["--model-path", "--port", "--host"].contains(&f.as_str()) {
            it.next();
            continue;
        }
        flags.push(f.clone());
    }
    flags
}

const MODEL: &str = "/work/models/tiny-llama";

/// The simulated SGLang with a real case's flags, until it is ready (or has exited).
struct SimSglang {
    child: std::process::Child,
    dir: PathBuf,
    log: PathBuf,
    port: u16,
}

impl SimSglang {
    fn start(case: &str) -> SimSglang {
        let port = free_port();
        let dir = tmpdir(&format!("real0523-{case}"));
        let bin = bin_dir(&dir);
        let log = dir.join("boot.log");
        let f = std::fs::File::create(&log).unwrap();
        let mut args: Vec<String> = ["serve", "--model-path", MODEL, "--sim-speed", "50"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(real_flags(case));
        args.extend(["--context-length".into(), "1024".into()]);
        args.extend([
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
        ]);
        let child = std::os::unix::process::CommandExt::process_group(
            Command::new(bin.join("sglang"))
                .args(&args)
                .env("INFERLINT_SIM_GPU_STATE", dir.join("gpu"))
                .stdout(f.try_clone().unwrap())
                .stderr(f)
                .stdin(Stdio::null()),
            0,
        )
        .spawn()
        .unwrap();
        SimSglang {
            child,
            dir,
            log,
            port,
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(&self.log).unwrap_or_default()).to_string()
    }

    fn wait_ready(&self) {
        let ready = (0..600).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            get(self.port, "/health").is_ok_and(|(st, _)| st == 200)
        });
        assert!(ready, "not ready:\n{}", self.text());
    }

    /// Waits for the server to end on its own; how it ended.
    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let end = (0..600).find_map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            self.child.try_wait().ok().flatten()
        });
        end.unwrap_or_else(|| panic!("the server did not end:\n{}", self.text()))
    }

    /// SIGTERM to its group, as the recorder's stop sends it; how it ended.
    fn stop(&mut self) -> std::process::ExitStatus {
        // SAFETY: SIGTERM to the process group this test started.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGTERM) };
        self.wait_exit()
    }
}

impl Drop for SimSglang {
    fn drop(&mut self) {
        // SAFETY: whatever is left of the group this test started.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The facts the analyzer reads, by name, with values: those a start of these flags
/// decides. The memory figures are left out (the real ones measure the host's free
/// memory, noise on a CPU), and so are the settings dict (546 keys against the
/// simulator's few) and the line counts.
fn facts(log: &str) -> BTreeMap<&'static str, serde_json::Value> {
    let f = analyzer::bootlog::read_facts(log, None);
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
    let cap = f.running_cap_info();
    BTreeMap::from([
        ("engine", serde_json::json!(f.engine.map(|e| e.key()))),
        ("page_size", serde_json::json!(f.page_size)),
        ("running_cap", serde_json::json!(f.running_cap)),
        ("requested_running", serde_json::json!(f.requested_running)),
        (
            "lowered_because",
            serde_json::json!(cap.and_then(|c| c.reason)),
        ),
        ("requested_backend", serde_json::json!(f.requested_backend)),
        ("selected_backends", serde_json::json!(f.selected_backends)),
        ("kv_pool_tokens", serde_json::json!(f.kv_pool_tokens)),
        ("context_len", serde_json::json!(f.context_len)),
        ("cudagraphs", serde_json::json!(f.cudagraphs)),
        ("speculative", serde_json::json!(f.speculative)),
        ("ready", serde_json::json!(f.ready)),
        ("processes", serde_json::json!(f.processes.len())),
    ])
}

/// A line without its `[YYYY-MM-DD HH:MM:SS] ` stamp, pids and ports as `N`.
fn shape(line: &str) -> String {
    let body = match line.strip_prefix('[') {
        Some(rest) if rest.as_bytes().get(19) == Some(&b']') => &rest[21..],
        _ => line,
    };
    let mut out = String::new();
    let mut digits = false;
    for c in body.chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('N');
            }
            digits = true;
        } else {
            digits = false;
            out.push(c);
        }
    }
    out
}

/// The lines from `SIGTERM received.` on, as shapes.
fn stop_lines(log: &str) -> Vec<String> {
    let from = log
        .lines()
        .position(|l| l.contains("SIGTERM received."))
        .unwrap_or_else(|| panic!("no stop in:\n{log}"));
    log.lines()
        .skip(from)
        .filter(|l| !l.contains("\"GET /metrics"))
        .map(shape)
        .collect()
}

/// Each `sglang:` series name: its family's type and its label key sets (`le` aside).
fn families(text: &str) -> BTreeMap<String, String> {
    let types: BTreeMap<String, String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .map(|(n, t)| (n.to_string(), t.trim().to_string()))
        .collect();
    let e = Exposition::parse(text).unwrap();
    let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in &e.samples {
        if !s.name.starts_with("sglang:") {
            continue;
        }
        let k: Vec<&str> = s
            .labels
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| *k != "le")
            .collect();
        keys.entry(s.name.clone()).or_default().insert(k.join(","));
    }
    keys.into_iter()
        .map(|(name, k)| {
            let base = ["_bucket", "_count", "_sum"]
                .iter()
                .find_map(|x| name.strip_suffix(x))
                .filter(|b| types.get(*b).is_some_and(|t| t == "histogram"))
                .unwrap_or(&name)
                .to_string();
            let ty = types.get(&base).cloned().unwrap_or_default();
            let k: Vec<String> = k.into_iter().collect();
            (name, format!("{ty} {{{}}}", k.join("} {")))
        })
        .collect()
}

/// The real server's `sglang::` children at readiness, from `processes.json`.
fn real_children(case: &str) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(&read(case, "processes.json")).unwrap();
    let ready = doc["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["when"] == "ready")
        .expect("a snapshot at readiness");
    let mut names: Vec<String> = ready["processes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["comm"].as_str())
        .filter(|c| c.starts_with("sglang::"))
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

/// `comm` of every live `sglang::` process in a process group, sorted.
fn sim_children(pgid: i32) -> Vec<String> {
    let mut names = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split_whitespace().collect();
        let name = &stat[open + 1..close];
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid)
            && fields[0] != "Z"
            && name.starts_with("sglang::")
        {
            names.push(name.to_string());
        }
    }
    names.sort();
    names
}

#[test]
fn the_simulated_0523_gives_the_analyzer_what_the_real_one_does() {
    let case = "sglang-small-pool";
    let mut sim = SimSglang::start(case);
    sim.wait_ready();
    // The real load's shape: 8 requests at once of 88 prompt tokens and 100 generated,
    // streamed (the warm-up was not), so the 600-token pool fills and its cache evicts.
    let port = sim.port;
    let load: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let prompt: Vec<String> = (0..88).map(|k| format!("w{}", i * 100 + k)).collect();
                let body = format!(
                    r#"{{"model":"{MODEL}","prompt":"{}","max_tokens":100,"stream":{}}}"#,
                    prompt.join(" "),
                    i % 2 == 0
                );
                post(port, "/v1/completions", &body).unwrap()
            })
        })
        .collect();
    for h in load {
        let (st, reply) = h.join().unwrap();
        assert_eq!(st, 200, "{reply}");
    }
    let (st, metrics) = get(sim.port, "/metrics").unwrap();
    assert_eq!(st, 200);
    let children = sim_children(sim.child.id() as i32);
    let ended = sim.stop();
    let log = sim.text();
    let real_log = read(case, "boot.log");

    assert_eq!(facts(&log), facts(&real_log));
    assert_eq!(
        analyzer::bootlog::read_facts(&log, None).untested_version_note(),
        None
    );
    // The batch lines name the CPU's graphs, off.
    for l in [&log, &real_log] {
        assert!(l.contains("cpu graph: False"), "{l}");
        assert!(!l.contains("cuda graph: True"));
    }
    // The stop reads as the real one's, line for line, and ends with the launcher killed.
    assert_eq!(stop_lines(&log), stop_lines(&real_log));
    let m: serde_json::Value = serde_json::from_str(&read(case, "manifest.json")).unwrap();
    assert_eq!(m["serve"]["exit"], "SIGKILL");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(ended.signal(), Some(libc::SIGKILL));
    // The classifier and the run's outcome see no failure in either stop.
    for l in [&log, &real_log] {
        assert_eq!(analyzer::bootlog::classify(l).failure, None);
    }

    // Metrics: every sglang: series, its type and its label keys.
    let real = families(&real_metrics(case));
    let simulated = families(&metrics);
    let only = |a: &BTreeMap<String, String>, b: &BTreeMap<String, String>| -> Vec<String> {
        a.keys().filter(|k| !b.contains_key(*k)).cloned().collect()
    };
    assert_eq!(
        only(&real, &simulated),
        Vec::<String>::new(),
        "missing in the simulator"
    );
    assert_eq!(
        only(&simulated, &real),
        Vec::<String>::new(),
        "not in the real engine"
    );
    for (name, shape) in &real {
        assert_eq!(simulated.get(name), Some(shape), "{name}");
    }

    assert_eq!(children, real_children(case));
}

/// The retraction counters appear as the real ones do once a request was retracted, and
/// the running limit is lowered to fit a small pool with the real one's line.
#[test]
fn the_simulated_0523_lowers_its_limit_as_the_real_one_does() {
    let case = "sglang-lowered-limit";
    let mut sim = SimSglang::start(case);
    sim.wait_ready();
    sim.stop();
    let log = sim.text();
    let real_log = read(case, "boot.log");
    assert_eq!(facts(&log), facts(&real_log));
    let lowered = |l: &str| -> Vec<String> {
        l.lines()
            .filter(|l| l.contains("was reduced from the requested"))
            .map(shape)
            .collect()
    };
    assert_eq!(lowered(&log), lowered(&real_log));
    assert_eq!(lowered(&log).len(), 1);
}

/// The classifier's reading (kind, phase, line) of a log.
fn failure(log: &str) -> Option<(String, String, String)> {
    analyzer::bootlog::classify(log)
        .failure
        .map(|f| (f.kind, f.phase, f.line))
}

/// The starts a tiny pool fails read as the real ones: a pool of one token (no request
/// fits) and one of ten (the server's own warm-up request refused after "Application
/// startup complete"); the launcher kills itself either way.
#[test]
fn the_simulated_0523_fails_as_the_real_one_does() {
    for case in ["sglang-fail-pool", "sglang-fail-warm-up"] {
        let mut sim = SimSglang::start(case);
        let ended = sim.wait_exit();
        let log = sim.text();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(ended.signal(), Some(libc::SIGKILL), "{case}:\n{log}");
        let real_log = read(case, "boot.log");
        assert!(failure(&real_log).is_some(), "{case}");
        assert_eq!(failure(&log), failure(&real_log), "{case}:\n{log}");
        assert!(!analyzer::bootlog::read_facts(&log, None).ready, "{case}");
    }
}
