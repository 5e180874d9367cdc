//! T16, T17 and T18 recorded end to end against the engine simulator, each verdict
//! flipped by one change to the same run: the throttle fault on and off (T16), a long
//! shared prompt prefix or none (T17), no warm-up or a warm-up phase at the load's
//! concurrency (T18). Each verdict is checked in the terminal, in `results.json` and in
//! the run carried by `report.html`.

mod common;
use common::*;

use analyzer::json::Json;
use analyzer::Status;

const MODEL: &str = "/root/models/Qwen3-8B";

/// `vllm bench serve` with prompts of `prefix + input` tokens.
fn load(base: &str, n: u32, conc: u32, prefix: u32, input: u32, out: u32) -> Vec<String> {
    let mut v: Vec<String> = [
        "vllm",
        "bench",
        "serve",
        "--model",
        MODEL,
        "--base-url",
        base,
        "--dataset-name",
        "random",
        "--random-input-len",
        &input.to_string(),
        "--random-output-len",
        &out.to_string(),
        "--ignore-eos",
        "--num-prompts",
        &n.to_string(),
        "--max-concurrency",
        &conc.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if prefix > 0 {
        v.extend(["--random-prefix-len".to_string(), prefix.to_string()]);
    }
    v
}

/// A recorded run: its folder, the recorder's terminal output, and its verdicts.
struct Recorded {
    w: World,
    stdout: String,
    report: analyzer::Report,
}

impl Recorded {
    fn run(name: &str, sim_flags: &str, load_args: impl Fn(&str) -> Vec<String>) -> Recorded {
        let w = World::new(name);
        let port = free_port();
        let base = format!("http://127.0.0.1:{port}");
        let serve = format!("vllm serve {MODEL} --port {port} --max-num-seqs 32 {sim_flags}");
        let mut c = w.recorder();
        c.args(["record", "-o", "run", "--serve", &serve, "--"])
            .args(load_args(&base));
        let out = run_bounded(c, 240);
        let stdout = text(&out.stdout);
        let run = w.dir.join("run");
        assert!(
            run.join("manifest.json").is_file(),
            "{stdout}\n{}",
            text(&out.stderr)
        );
        let (_, a) = verdicts(&run);
        assert!(a.errors.is_empty(), "{:?}", a.errors);
        Recorded {
            w,
            stdout,
            report: a.report,
        }
    }

    fn dir(&self) -> std::path::PathBuf {
        self.w.dir.join("run")
    }

    fn result(&self, tripwire: u8) -> &analyzer::CheckResult {
        self.report
            .checks
            .iter()
            .find(|c| c.tripwire.number() == tripwire)
            .unwrap_or_else(|| panic!("no T{tripwire}"))
    }

    /// The verdict, the same in the terminal, in results.json and in the page's run.
    fn verdict(&self, tripwire: u8) -> Status {
        let r = self.result(tripwire);
        let id = r.id();
        if sibling("inferlint").is_file() {
            let line = format!("[T{tripwire}] {}", r.status.terminal_label());
            assert!(
                self.stdout
                    .lines()
                    .any(|l| l.trim_start().starts_with(&line)),
                "{line} not in\n{}",
                self.stdout
            );
            let results = json(&self.dir().join(analyzer::docs::RESULTS));
            let written = results
                .get("checks")
                .and_then(Json::as_array)
                .unwrap()
                .iter()
                .find(|c| c.get("id").and_then(Json::as_str) == Some(id.as_str()))
                .unwrap_or_else(|| panic!("{id} not in results.json"));
            assert_eq!(
                written.get("status").and_then(Json::as_str),
                Some(r.status.as_str()),
                "{id} in results.json"
            );
            let page = std::fs::read_to_string(self.dir().join(analyzer::docs::REPORT)).unwrap();
            match analyzer::page::embedded_run(&page) {
                // The interactive page computes the verdicts from the run it carries.
                Some(run) => {
                    let pack = analyzer::pack::decode(run).unwrap();
                    let (input, opts) = analyzer::pack::from_pack(&pack);
                    let shown = analyzer::analyze(&input, &opts).unwrap();
                    let on_page = shown
                        .report
                        .checks
                        .iter()
                        .find(|c| c.tripwire.number() == tripwire);
                    assert_eq!(
                        on_page.map(|c| c.status),
                        Some(r.status),
                        "{id} on the page"
                    );
                }
                // The plain page (no viewer built) lists them.
                None => {
                    let item = format!(
                        "data-tripwire=\"{id}\" data-status=\"{}\"",
                        r.status.as_str()
                    );
                    assert!(page.contains(&item), "{item} not on the page");
                }
            }
        } else {
            eprintln!("note: target/debug/inferlint not built: terminal, results.json and page not checked");
        }
        r.status
    }

    fn evidence(&self, tripwire: u8, key: &str) -> f64 {
        self.result(tripwire)
            .evidence_value(key)
            .as_ref()
            .and_then(Json::as_f64)
            .unwrap_or_else(|| panic!("T{tripwire} has no {key}"))
    }

    /// The load tool's output tokens per second.
    fn throughput(&self) -> f64 {
        json(&self.dir().join("bench.json"))
            .get("output_throughput")
            .and_then(Json::as_f64)
            .unwrap()
    }

    /// A counter's growth between the before and after readings, as the simulator counted.
    fn counted(&self, name: &str) -> f64 {
        let read = |f: &str| {
            let p = self.dir().join(f);
            analyzer::snapshot::Snapshot::read(f, &std::fs::read(p).unwrap())
                .unwrap()
                .metrics
                .total(name, &[])
                .unwrap()
        };
        read("after.snapshot.json") - read("before.snapshot.json")
    }
}

#[test]
fn t16_a_card_that_throttles_fails_and_the_same_run_without_it_passes() {
    let run = |name: &str, fault: &str| {
        Recorded::run(name, &format!("--sim-speed 4 {fault}"), |base| {
            load(base, 32, 16, 0, 64, 300)
        })
    };
    let hot = run("t16-hot", "--sim-gpu-throttle 4");
    let cool = run("t16-cool", "");
    for r in [&hot, &cool] {
        assert!(r.dir().join(analyzer::docs::GPU_SAMPLES).is_file());
        assert!(r.report.charts.gpu.is_some(), "the GPU chart");
    }
    assert_eq!(hot.verdict(16), Status::Fail, "{}", hot.result(16).message);
    assert!(hot.evidence(16, "throttled_share") >= 0.5);
    assert!(hot
        .result(16)
        .message
        .contains("1,395 MHz of its 3,105 MHz"));
    assert!(!hot.report.charts.gpu.as_ref().unwrap().bands.is_empty());
    assert_eq!(
        cool.verdict(16),
        Status::Pass,
        "{}",
        cool.result(16).message
    );
    assert!(cool.report.charts.gpu.as_ref().unwrap().bands.is_empty());
    // The simulated engine slowed with its clock.
    assert!(
        hot.throughput() < 0.8 * cool.throughput(),
        "{} vs {} tokens/s",
        hot.throughput(),
        cool.throughput()
    );
}

#[test]
fn t17_a_long_shared_prefix_warns_with_the_share_the_simulator_counted() {
    // 24 prompts of 224 tokens (block 16), plus the client's test request, which repeats
    // the first prompt. With a 192-token shared prefix the first measured request finds
    // its whole prompt cached but its last token (223), the others the prefix's 12 blocks.
    // At speed 2 the load lasts about 1.5 s: several readings of the series, so the
    // chart of the share has something to draw (at 20 it ended inside one reading).
    let run = |name: &str, prefix: u32| {
        Recorded::run(name, "--sim-speed 2", move |base| {
            load(base, 24, 8, prefix, 224 - prefix, 32)
        })
    };
    let shared = run("t17-shared", 192);
    let hits = shared.counted("vllm:prefix_cache_hits_total");
    let queries = shared.counted("vllm:prefix_cache_queries_total");
    assert_eq!((hits, queries), (223.0 + 23.0 * 192.0, 25.0 * 224.0));
    assert_eq!(
        shared.verdict(17),
        Status::Warn,
        "{}",
        shared.result(17).message
    );
    assert_eq!(shared.evidence(17, "hit_tokens"), hits);
    assert_eq!(shared.evidence(17, "queried_tokens"), queries);
    // The test request is left out: 24 measured prompts.
    let share = hits / (queries - 224.0);
    assert!(
        (shared.evidence(17, "share") - share).abs() < 1e-4,
        "{share}"
    );
    let message = &shared.result(17).message;
    assert!(message.contains("(86.3%)"), "{message}");
    assert!(
        message.contains("vllm:prefix_cache_hits_total"),
        "{message}"
    );
    let chart = shared
        .report
        .charts
        .prefix_cache
        .as_ref()
        .expect("the chart");
    assert!(chart.lines[1].values.iter().flatten().any(|v| *v > 50.0));

    let own = run("t17-own", 0);
    assert_eq!(own.verdict(17), Status::Pass, "{}", own.result(17).message);
}

#[test]
fn t18_no_warm_up_warns_and_a_warm_up_phase_passes() {
    // The probe runs batches of up to 8; the load runs 16 at once, a batch size the
    // simulated engine first compiles for (6 simulated seconds, 1.5 s at 4×).
    let run = |name: &str, warmups: u32| {
        Recorded::run(name, "--sim-speed 4 --sim-warmup-cost 6", move |base| {
            let mut v = load(base, 48, 16, 0, 32, 64);
            if warmups > 0 {
                v.extend(["--num-warmups".to_string(), warmups.to_string()]);
            }
            v
        })
    };
    let cold = run("t18-cold", 0);
    assert_eq!(
        cold.verdict(18),
        Status::Warn,
        "{}",
        cold.result(18).message
    );
    assert_eq!(cold.evidence(18, "first_requests"), 16.0);
    assert!(cold.evidence(18, "ratio") >= 3.0);
    assert!(cold.evidence(18, "excess_s") >= 0.3);
    let message = &cold.result(18).message;
    assert!(
        message.contains("Compiling a graph for compile range (1, 16)"),
        "{message}"
    );
    assert!(message.contains("--num-warmups"), "{message}");

    let warm = run("t18-warm", 16);
    assert_eq!(
        warm.verdict(18),
        Status::Pass,
        "{}",
        warm.result(18).message
    );
    assert!(warm.evidence(18, "ratio") < 3.0);
}
