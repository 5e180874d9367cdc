//! The real SGLang tier: `inferlint-recorder record --serve` around a real SGLang 0.5.23
//! (`python -m sglang.launch_server` on the CPU, PyPI's wheel with this project's stand-in
//! for its CPU kernel package) serving a tiny local model under the load tools an SGLang
//! user runs (`python -m sglang.bench_serving --backend sglang`, and `vllm bench serve`
//! against its OpenAI endpoint), then the analyzer's verdicts and the facts it read from
//! the real log, metrics and processes. Each test starts real servers (20–40 s each on two
//! cores), one at a time. They are ignored by a plain `cargo test` (the reason says how to
//! run them); `cargo xtask real --engine sglang` installs the engine when it is missing
//! and runs them. With `--save` the folders they record replace `fixtures/real/sglang-*`,
//! whose verdicts `real_fixtures.rs` pins without the engine.

mod common;
use common::real::{left_of, save, Sweep};
use common::sglang::{bench, serve, vllm_bench, RealSglang};
use common::*;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use analyzer::engine::Engine;
use analyzer::json::Json;
use analyzer::Analysis;

/// The longest a real start plus its run may take here.
const RUN_LIMIT_S: u64 = 900;
/// The request shape of the loads: 88 prompt tokens, 100 generated.
const SHAPE: (u32, u32) = (88, 100);

/// Records one case into `w.dir/<case>`; the recorder's exit status and its output.
fn record(
    real: &RealSglang,
    w: &World,
    case: &str,
    serve_cmd: &str,
    load: &[String],
) -> (Option<i32>, String) {
    let started = Instant::now();
    let _sweep = Sweep(vec![w.dir.join(case)]);
    let mut c = real.recorder(w);
    c.args(["record", "-o", case, "--no-analyze", "--title"])
        .arg(format!("SGLang 0.5.23 (CPU, real): {case}"))
        .args(["--serve", serve_cmd, "--"])
        .args(load);
    let out = run_bounded(c, RUN_LIMIT_S);
    let shown = format!("{}{}", text(&out.stdout), text(&out.stderr));
    eprintln!(
        "== {case}: recorded in {:.0} s, exit {:?}",
        started.elapsed().as_secs_f64(),
        out.status.code()
    );
    save(&w.dir.join(case), case);
    (out.status.code(), shown)
}

fn check<'a>(a: &'a Analysis, id: &str) -> &'a analyzer::CheckResult {
    a.report
        .checks
        .iter()
        .find(|c| c.id() == id)
        .unwrap_or_else(|| panic!("no {id} in {:?}", a.report.checks))
}

fn evidence_f64(a: &Analysis, id: &str, key: &str) -> Option<f64> {
    check(a, id)
        .evidence_value(key)
        .as_ref()
        .and_then(Json::as_f64)
}

/// A counter's total in a snapshot file (all label sets summed; 0 when the family is not
/// exported yet, as SGLang's retraction counters are not before the first retraction).
fn counter(run: &Path, file: &str, name: &str) -> f64 {
    let text = std::fs::read_to_string(run.join(file)).unwrap();
    let snap = analyzer::snapshot::Snapshot::read(file, text.as_bytes()).unwrap();
    snap.metrics.total(name, &[]).unwrap_or(0.0)
}

/// What broke in the run, a sentence each (the report's banner); empty for a whole run.
fn broke(a: &Analysis) -> Vec<String> {
    a.report
        .banner
        .as_ref()
        .map(|b| b.what_broke.clone())
        .unwrap_or_default()
}

/// The outcome's state and stage.
fn outcome(run: &Path) -> (String, String) {
    let m = json(&run.join("manifest.json"));
    let o = m.get("outcome").unwrap();
    let s = |k: &str| o.get(k).and_then(Json::as_str).unwrap_or("").to_string();
    (s("state"), s("stage"))
}

/// The facts every start of 0.5.23 on the CPU prints, read from the real log: the pool
/// and the running limit it settled on, the context length, page size 1, the backend
/// asked for and no CUDA graphs.
fn assert_cpu_facts(a: &Analysis, pool: i64, cap: i64) {
    let f = a.report.facts.as_ref().expect("boot facts");
    assert_eq!(f.engine, Some(Engine::Sglang));
    assert_eq!(f.version(), Some("0.5.23"), "{f:?}");
    assert_eq!(f.kv_pool_tokens, Some(pool), "{f:?}");
    assert_eq!(f.running_cap, Some(cap), "{f:?}");
    assert_eq!(f.context_len, Some(1024));
    assert_eq!(f.page_size, Some(1));
    assert_eq!(f.requested_backend.as_deref(), Some("torch_native"));
    assert_eq!(f.selected_backends, ["torch_native"]);
    assert_eq!(f.cudagraphs, Some(false));
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
    assert_eq!(a.report.version_note, None);
}

/// A stop by the recorder reads as one: the real log shows SGLang's stop lines (a
/// scheduler "crashed with exit code -15", SIGQUIT, `kill_process_tree`), and neither
/// the log nor the run's outcome counts them as a failure.
fn assert_clean_stop(run: &Path, a: &Analysis) {
    let log = std::fs::read_to_string(run.join("boot.log")).unwrap();
    assert!(log.contains("SIGTERM received."), "no stop in the log");
    assert!(log.contains("crashed with exit code -15"), "{log}");
    for id in ["T7", "T12"] {
        assert!(
            a.report
                .checks
                .iter()
                .filter(|c| c.id() == id)
                .all(|c| c.status.as_str() == "pass"),
            "{id}: {:?}",
            check(a, id)
        );
    }
    assert_eq!(broke(a), Vec::<String>::new());
    assert_eq!(left_of(run), [], "left running");
}

/// A pool that holds the load (4,096 tokens for 4 requests of 188 at once, 8 in all) and
/// one that does not (600 tokens for 8 at once): the first passes T1, T8, T15; the second
/// runs 3 at once and queues the rest (T8 fails; no retraction with `--ignore-eos`, so T1 passes), and
/// the report names the pool as the limit. Both use SGLang's own load tool, whose name
/// T18's hint gives; the first starts without `--disable-cuda-graph`, the second with it.
#[test]
#[ignore = "needs the real SGLang: run `cargo xtask real --engine sglang`"]
fn a_pool_that_fits_and_one_that_queues() {
    let real = RealSglang::get();
    let w = World::bare("real-sglang-pools");
    let model = real.model("tiny-llama");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");

    let (code, out) = record(
        &real,
        &w,
        "sglang-fits",
        &serve(
            &model,
            port,
            "--max-total-tokens 4096 --max-running-requests 8",
        ),
        &bench(&base, &model, SHAPE, 8, 4, true),
    );
    let run = w.dir.join("sglang-fits");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(outcome(&run).0, "completed");
    let (v, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    for id in ["T1", "T8", "T15", "T12", "T5", "T6", "T7"] {
        assert_eq!(status(&v, id), "pass", "{id}: {:?}", check(&a, id));
    }
    assert_eq!(evidence_f64(&a, "T8", "requested"), Some(4.0));
    assert_eq!(evidence_f64(&a, "T15", "client_completed"), Some(8.0));
    assert_cpu_facts(&a, 4096, 8);
    assert_clean_stop(&run, &a);
    let t18 = check(&a, "T18");
    assert!(
        t18.message.contains("sglang.bench_serving") && !t18.message.contains("vllm bench"),
        "{}",
        t18.message
    );

    let (code, out) = record(
        &real,
        &w,
        "sglang-small-pool",
        &serve(
            &model,
            port,
            "--disable-cuda-graph --max-total-tokens 600 --max-running-requests 8",
        ),
        &bench(&base, &model, SHAPE, 8, 8, true),
    );
    let run = w.dir.join("sglang-small-pool");
    assert_eq!(code, Some(0), "{out}");
    let (v, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert_eq!(status(&v, "T8"), "fail", "{:?}", check(&a, "T8"));
    assert_eq!(evidence_f64(&a, "T8", "requested"), Some(8.0));
    let peak = evidence_f64(&a, "T8", "peak_running").unwrap();
    assert!((1.0..8.0).contains(&peak), "{peak}");
    assert_eq!(status(&v, "T1"), "pass", "{:?}", check(&a, "T1"));
    assert_eq!(status(&v, "T15"), "pass", "{:?}", check(&a, "T15"));
    assert_cpu_facts(&a, 600, 8);
    assert_clean_stop(&run, &a);
    let pool = a
        .report
        .limits
        .iter()
        .find(|l| l.key == "cache")
        .unwrap_or_else(|| panic!("no cache finding: {:?}", a.report.limits));
    assert_eq!(pool.tone, "limit", "{pool:?}");
    assert!(pool.text.contains("600 tokens"), "{}", pool.text);
}

/// SGLang's preemption: with a 600-token pool, a scheduler told to be bold
/// (`--schedule-conservativeness 0.05`) and requests that may end early, it admits more
/// than the pool holds and retracts one when the pool is full. T1 fails with the count of
/// `sglang:num_retracted_requests_total` (a family exported only once one happened).
#[test]
#[ignore = "needs the real SGLang: run `cargo xtask real --engine sglang`"]
fn a_retraction() {
    let real = RealSglang::get();
    let w = World::bare("real-sglang-retract");
    let model = real.model("tiny-llama");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let case = "sglang-retract";
    let (code, out) = record(
        &real,
        &w,
        case,
        &serve(
            &model,
            port,
            "--disable-cuda-graph --max-total-tokens 600 --max-running-requests 8 \
             --schedule-conservativeness 0.05",
        ),
        &bench(&base, &model, SHAPE, 16, 8, false),
    );
    let run = w.dir.join(case);
    assert_eq!(code, Some(0), "{out}");
    let name = "sglang:num_retracted_requests_total";
    let retracted =
        counter(&run, "after.snapshot.json", name) - counter(&run, "before.snapshot.json", name);
    let log = std::fs::read_to_string(run.join("boot.log")).unwrap();
    assert!(
        retracted > 0.0,
        "no retraction (log lines: {})",
        log.matches("Retract requests").count()
    );
    assert!(log.contains("KV cache pool is full. Retract requests."));
    let (v, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert_eq!(status(&v, "T1"), "fail", "{:?}", check(&a, "T1"));
    assert_eq!(evidence_f64(&a, "T1", "preemptions"), Some(retracted));
    assert_cpu_facts(&a, 600, 8);
    assert_clean_stop(&run, &a);
}

/// Starts that fail, each for a real reason SGLang 0.5.23 gives here, and T12 names it
/// with its line: a context length above the model's (a ValueError while the arguments
/// are resolved), a pool of one token (no request fits: an assertion), and a pool of ten
/// tokens that takes the server to "Application startup complete" before its own warm-up
/// request is refused (4 tokens allowed, 6 sent) and it exits: a failed start, not a crash
/// while serving.
#[test]
#[ignore = "needs the real SGLang: run `cargo xtask real --engine sglang`"]
fn starts_that_fail() {
    let real = RealSglang::get();
    let w = World::bare("real-sglang-fail");
    let model = real.model("tiny-llama");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    for (case, flags, kind, words) in [
        (
            "sglang-fail-context-length",
            "--disable-cuda-graph --context-length 4096",
            "value_error",
            "User-specified context_length (4096) is greater than the derived context_length (1024)",
        ),
        (
            "sglang-fail-pool",
            "--disable-cuda-graph --max-total-tokens 1",
            "assertion",
            "max_running_request is zero",
        ),
        (
            "sglang-fail-warm-up",
            "--disable-cuda-graph --max-total-tokens 10",
            "assertion",
            "Input length (6 tokens) exceeds the maximum allowed length (4 tokens)",
        ),
    ] {
        let (code, out) = record(
            &real,
            &w,
            case,
            &serve(&model, port, flags),
            &bench(&base, &model, SHAPE, 4, 4, true),
        );
        let run = w.dir.join(case);
        assert_eq!(code, Some(1), "{case}: {out}");
        assert_eq!(outcome(&run).0, "problem", "{case}");
        assert!(!run.join("load.log").exists(), "{case}: the load ran");
        let (v, a) = verdicts(&run);
        assert_eq!(status(&v, "T12"), "fail", "{case}: {v:?}");
        let t12 = check(&a, "T12");
        assert_eq!(
            t12.evidence_value("kind").as_ref().and_then(Json::as_str),
            Some(kind),
            "{case}: {t12:?}"
        );
        assert_eq!(
            t12.evidence_value("phase").as_ref().and_then(Json::as_str),
            Some("boot"),
            "{case}"
        );
        let line = t12.evidence_value("line");
        let line = line.as_ref().and_then(Json::as_str).unwrap();
        let detail = &t12.message;
        assert!(
            line.contains(words) || detail.contains(words),
            "{case}: {line} / {detail}"
        );
        assert!(t12.message.contains("start-up"), "{case}: {}", t12.message);
        assert_eq!(status(&v, "T7"), "-", "{case}: not a crash while serving");
        let broke = broke(&a);
        assert!(
            broke.iter().any(|b| b.contains("before it was ready")),
            "{case}: {broke:?}"
        );
        assert_eq!(left_of(&run), [], "{case}: left running");
    }
}

/// SGLang lowers the running limit it was given when the pool is small: at most half the
/// pool's tokens run at once, so a 14-token pool runs 7 of the 8 asked for, and says so in
/// one log line while its settings still say 8. The facts read from the real log give
/// the limit it settled on, the one it was given and why; T8 reports the lower one.
#[test]
#[ignore = "needs the real SGLang: run `cargo xtask real --engine sglang`"]
fn a_running_limit_lowered_at_start() {
    let real = RealSglang::get();
    let w = World::bare("real-sglang-lowered");
    let model = real.model("tiny-llama");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let case = "sglang-lowered-limit";
    let (code, out) = record(
        &real,
        &w,
        case,
        &serve(
            &model,
            port,
            "--disable-cuda-graph --max-total-tokens 14 --max-running-requests 8",
        ),
        &bench(&base, &model, (4, 4), 8, 8, true),
    );
    let run = w.dir.join(case);
    assert_eq!(code, Some(0), "{out}");
    let log = std::fs::read_to_string(run.join("boot.log")).unwrap();
    assert!(
        log.contains("max_running_requests was reduced from the requested 8 to 7"),
        "{log}"
    );
    let (_, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    let f = a.report.facts.as_ref().unwrap();
    let cap = f.running_cap_info().expect("a running cap");
    assert_eq!(cap.cap, 7);
    assert_eq!(cap.requested_running, Some(8));
    assert_eq!(cap.reason.as_deref(), Some("available KV cache capacity"));
    assert_eq!(evidence_f64(&a, "T8", "running_cap"), Some(7.0));
    assert_eq!(evidence_f64(&a, "T8", "requested"), Some(8.0));
    assert_cpu_facts(&a, 14, 7);
    assert_clean_stop(&run, &a);
}

/// Ctrl-C during the load: the recorder stops the whole server (the launcher, its
/// scheduler and detokenizer); `teardown` afterwards finds nothing to stop, and the
/// stop's lines in the log are no crash.
#[test]
#[ignore = "needs the real SGLang: run `cargo xtask real --engine sglang`"]
fn ctrl_c_during_the_load_then_teardown() {
    let real = RealSglang::get();
    let w = World::bare("real-sglang-ctrl-c");
    let model = real.model("tiny-llama");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let case = "sglang-ctrl-c";
    let mut c = real.recorder(&w);
    c.args(["record", "-o", case, "--no-analyze", "--title"])
        .arg(format!("SGLang 0.5.23 (CPU, real): {case}"))
        .arg("--serve")
        .arg(serve(
            &model,
            port,
            "--disable-cuda-graph --max-total-tokens 4096 --max-running-requests 8",
        ))
        .arg("--")
        .args(bench(&base, &model, SHAPE, 400, 8, true))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group, so "Ctrl-C" goes to the whole group as a terminal's would.
        .process_group(0);
    let run = w.dir.join(case);
    let _sweep = Sweep(vec![run.clone()]);
    let started = Instant::now();
    let mut child = c.spawn().unwrap();
    let series = run.join("run.series.jsonl");
    let running = || {
        std::fs::read_to_string(&series).is_ok_and(|s| {
            s.lines()
                .filter_map(|l| analyzer::json::parse(l).ok())
                .any(|r| r.get("running").and_then(Json::as_f64).unwrap_or(0.0) >= 8.0)
        })
    };
    assert!(
        wait_until(RUN_LIMIT_S, running),
        "the load never ran 8 at once"
    );
    // The real process tree while it serves: the launcher and its two children by name.
    let names: Vec<String> = left_of(&run).into_iter().map(|(_, n)| n).collect();
    for n in ["python", "sglang::schedul", "sglang::detoken"] {
        assert!(names.iter().any(|x| x == n), "{n} not in {names:?}");
    }
    // SAFETY: SIGINT to the process group this test started.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    assert!(
        wait_until(120, || matches!(child.try_wait(), Ok(Some(_)))),
        "record did not end after Ctrl-C"
    );
    assert_eq!(child.wait().unwrap().code(), Some(130));
    eprintln!(
        "== {case}: recorded in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    save(&run, case);
    assert_eq!(
        outcome(&run),
        ("interrupted".to_string(), "load".to_string())
    );
    assert!(
        wait_until(10, || left_of(&run).is_empty()),
        "left after Ctrl-C: {:?}",
        left_of(&run)
    );
    let out = real
        .cmd(&w, RECORDER)
        .arg("teardown")
        .arg("--run")
        .arg(&run)
        .arg("--json")
        .output()
        .unwrap();
    let shown = text(&out.stdout);
    assert_eq!(left_of(&run), [], "{shown}");
    let results = analyzer::json::parse(&shown).unwrap();
    let t2 = &results.as_array().unwrap()[0];
    assert_eq!(t2.get("id").and_then(Json::as_str), Some("T2"), "{shown}");
    assert_eq!(
        t2.get("evidence")
            .and_then(|e| e.get("signalled"))
            .map(Json::to_compact),
        Some("[]".to_string()),
        "{shown}"
    );
    let (v, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    for id in ["T7", "T12"] {
        assert_eq!(status(&v, id), "pass", "{id}: {:?}", check(&a, id));
    }
    // Interrupted by the user (the load tool, slow to end on SIGINT, may be stopped with
    // SIGTERM after it): no fault of the server's.
    let broke = broke(&a);
    assert!(broke[0].contains("interrupted"), "{broke:?}");
    assert!(broke.iter().all(|b| !b.contains("server")), "{broke:?}");
}

/// `vllm bench serve` against SGLang's OpenAI-compatible endpoint, the one load tool a
/// user comparing engines sends to all of them: the client's counts and the server's
/// agree (T15), 8 run at once in the 4,096-token pool (T8), and T18's hint names the
/// tool that ran. Needs the vLLM tier's environment (`cargo xtask real --engine vllm`):
/// without it `cargo xtask real --engine sglang` skips this test and says so.
#[test]
#[ignore = "needs the real SGLang and the vLLM tier's environment: run `cargo xtask real --engine all`"]
fn vllm_bench_serve_against_sglangs_openai_endpoint() {
    let real = RealSglang::get();
    assert!(
        real.vllm.is_some(),
        "INFERLINT_REAL_VENV names no vLLM environment: `cargo xtask real --engine vllm` \
         installs it"
    );
    let w = World::bare("real-sglang-vllm-bench");
    let model = real.model("tiny-llama");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let case = "sglang-vllm-bench";
    let (code, out) = record(
        &real,
        &w,
        case,
        &serve(
            &model,
            port,
            "--disable-cuda-graph --max-total-tokens 4096 --max-running-requests 8",
        ),
        &vllm_bench(&base, &model, 8, 8),
    );
    let run = w.dir.join(case);
    assert_eq!(code, Some(0), "{out}");
    let m = json(&run.join("manifest.json"));
    assert_eq!(
        m.get("load")
            .and_then(|l| l.get("client"))
            .and_then(Json::as_str),
        Some("vllm")
    );
    let (v, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    for id in ["T1", "T8", "T15", "T12", "T7"] {
        assert_eq!(status(&v, id), "pass", "{id}: {:?}", check(&a, id));
    }
    assert_eq!(evidence_f64(&a, "T15", "client_completed"), Some(8.0));
    assert_cpu_facts(&a, 4096, 8);
    assert_clean_stop(&run, &a);
    let t18 = check(&a, "T18");
    assert!(
        t18.message.contains("vllm bench serve") || t18.status.as_str() != "unknown",
        "{}",
        t18.message
    );
}
