//! Many replicas recorded through the real parts: three simulated vLLM replicas
//! (`inferlint-enginesim`), Debian's Prometheus scraping them every second, and the real
//! `vllm-router` (PyPI, round robin) in front of them. `record --prometheus --match
//! --router-metrics` records a `vllm bench serve` run through the router; the folder is
//! checked against what each replica itself served. A balanced fleet passes T1 on every
//! replica; a fleet with one tiny KV pool fails T1 on that replica only.
//!
//! Ignored by a plain `cargo test` (they need `prometheus` and `vllm-router`);
//! `cargo xtask test` (or `cargo xtask fleet`) installs what is missing and runs them,
//! giving the tools in `INFERLINT_PROMETHEUS` and `INFERLINT_VLLM_ROUTER`. With
//! `INFERLINT_FLEET_SAVE=DIR` the tiny-pool run is copied to DIR (the fixture).
//! Ports 18200–18299 only.

mod common;
use analyzer::rules::Tripwire;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use analyzer::docs::{self, Fleet, SnapshotDoc};
use analyzer::prom::Exposition;
use analyzer::series::Series;

const MODEL: &str = "Qwen/Qwen3-8B";
/// Prompts per run, and the bench's concurrency (about 4 per replica).
const PROMPTS: u32 = 45;
const CONCURRENCY: u32 = 12;
/// Every replica must accept every request: round robin sends each one anywhere.
const MAX_MODEL_LEN: &str = "1024";
/// 64 blocks of 16 tokens: one request of 256 + 128 tokens fits, four at once do not.
const TINY_BLOCKS: &str = "64";

fn tool(var: &str) -> PathBuf {
    let p = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{var} is not set: run these tests with `cargo xtask fleet`"));
    assert!(p.is_file(), "{var}={} is not a file", p.display());
    p
}

/// The ports of one fleet: `base+1..=base+3` the replicas, `base+10` the router,
/// `base+11` its exporter, `base+20` Prometheus.
struct Ports {
    base: u16,
}

impl Ports {
    fn replica(&self, i: u16) -> u16 {
        self.base + 1 + i
    }
    /// A target in Prometheus' config where nothing listens: never a replica.
    fn dead(&self) -> u16 {
        self.base + 4
    }
    fn router(&self) -> u16 {
        self.base + 10
    }
    fn router_metrics(&self) -> u16 {
        self.base + 11
    }
    fn prometheus(&self) -> u16 {
        self.base + 20
    }
}

fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// Processes this test started, stopped by their pids (SIGTERM, then SIGKILL after 5 s).
struct Started(Vec<(String, Child)>);

impl Started {
    fn start(&mut self, name: &str, mut c: std::process::Command, log: &Path) {
        let f = std::fs::File::create(log).unwrap();
        c.stdout(f.try_clone().unwrap())
            .stderr(f)
            .stdin(Stdio::null());
        let child = c
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.0.push((name.to_string(), child));
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        for (_, c) in &self.0 {
            // SAFETY: a signal to a process this test started.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        }
        for (_, c) in &mut self.0 {
            let end = Instant::now() + Duration::from_secs(5);
            while Instant::now() < end && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

fn get(u: &str) -> Option<String> {
    let out = std::process::Command::new("curl")
        .args(["-sf", "-m", "2", u])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn prometheus_config(p: &Ports) -> String {
    let targets: Vec<String> = (0..3)
        .map(|i| p.replica(i))
        .chain([p.dead()])
        .map(|port| format!("\"127.0.0.1:{port}\""))
        .collect();
    format!(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 15s\n\
         scrape_configs:\n  - job_name: vllm\n    static_configs:\n      - targets: [{}]\n\
         \x20 - job_name: router\n    static_configs:\n      - targets: [\"127.0.0.1:{}\"]\n",
        targets.join(", "),
        p.router_metrics()
    )
}

/// A fleet up and scraped: three replicas (`tiny`: the third with a 64-block pool),
/// Prometheus on a fresh data folder, the router. Stopped when dropped.
struct Up {
    started: Started,
    ports: Ports,
    took_s: f64,
}

fn fleet_up(w: &World, ports: Ports, tiny: bool) -> Up {
    let t0 = Instant::now();
    let mut started = Started(vec![]);
    let prom_dir = w.dir.join("prometheus");
    std::fs::create_dir_all(&prom_dir).unwrap();
    std::fs::write(prom_dir.join("prometheus.yml"), prometheus_config(&ports)).unwrap();
    let mut c = w.cmd(tool("INFERLINT_PROMETHEUS"));
    c.arg(format!(
        "--config.file={}",
        prom_dir.join("prometheus.yml").display()
    ))
    .arg(format!(
        "--storage.tsdb.path={}",
        prom_dir.join("data").display()
    ))
    .arg(format!(
        "--web.listen-address=127.0.0.1:{}",
        ports.prometheus()
    ))
    .arg("--storage.tsdb.retention.time=1d");
    started.start("prometheus", c, &w.dir.join("prometheus.log"));
    for i in 0..3 {
        let mut c = w.cmd("vllm");
        c.args(["serve", MODEL, "--host", "127.0.0.1", "--port"])
            .arg(ports.replica(i).to_string())
            .args(["--max-model-len", MAX_MODEL_LEN]);
        if tiny && i == 2 {
            c.args(["--sim-kv-blocks", TINY_BLOCKS]);
        }
        started.start("replica", c, &w.dir.join(format!("replica-{i}.log")));
    }
    let mut c = w.cmd(tool("INFERLINT_VLLM_ROUTER"));
    c.args(["--host", "127.0.0.1", "--port"])
        .arg(ports.router().to_string())
        .arg("--worker-urls")
        .args((0..3).map(|i| url(ports.replica(i))))
        .args([
            "--policy",
            "round_robin",
            "--worker-startup-check-interval",
            "1",
        ])
        .args(["--prometheus-host", "127.0.0.1", "--prometheus-port"])
        .arg(ports.router_metrics().to_string());
    started.start("router", c, &w.dir.join("router.log"));
    let up_query = format!(
        "{}/api/v1/query?query=count(up%3D%3D1)",
        url(ports.prometheus())
    );
    let down_query = up_query.replace("%3D%3D1", "%3D%3D0");
    let ready = wait_until(90, || {
        get(&format!("{}/readiness", url(ports.router()))).is_some()
            && get(&up_query).is_some_and(|t| t.contains("\"4\"]"))
            && get(&down_query).is_some_and(|t| t.contains("\"1\"]"))
    });
    if !ready {
        for log in ["prometheus.log", "router.log", "replica-0.log"] {
            eprintln!(
                "--- {log}\n{}",
                std::fs::read_to_string(w.dir.join(log)).unwrap_or_default()
            );
        }
        panic!("the fleet did not come up in 90 s");
    }
    Up {
        started,
        ports,
        took_s: t0.elapsed().as_secs_f64(),
    }
}

fn bench(router: &str) -> Vec<String> {
    [
        "vllm",
        "bench",
        "serve",
        "--backend",
        "openai",
        "--base-url",
        router,
        "--endpoint",
        "/v1/completions",
        "--model",
        MODEL,
        "--dataset-name",
        "random",
        "--random-input-len",
        "256",
        "--random-output-len",
        "128",
        "--ignore-eos",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        "--num-prompts".to_string(),
        PROMPTS.to_string(),
        "--max-concurrency".to_string(),
        CONCURRENCY.to_string(),
    ])
    .collect()
}

/// Records a run through the router into `w.dir/case`; the folder.
fn record(w: &World, up: &Up, case: &str) -> PathBuf {
    let p = &up.ports;
    let mut c = w.recorder();
    c.args(["record", "-o", case, "--no-analyze", "--url"])
        .arg(url(p.router()))
        .arg("--prometheus")
        .arg(url(p.prometheus()))
        .args([
            "--match",
            "{job=\"vllm\"}",
            "--interval",
            "0.25",
            "--router-metrics",
        ])
        .arg(format!("{}/metrics", url(p.router_metrics())))
        .arg("--")
        .args(bench(&url(p.router())));
    let t0 = Instant::now();
    let out = run_bounded(c, 300);
    let stdout = text(&out.stdout);
    eprintln!(
        "== {case}: recorded in {:.1} s\n{stdout}{}",
        t0.elapsed().as_secs_f64(),
        text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{case}");
    w.dir.join(case)
}

fn snapshot(path: &Path) -> Exposition {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: SnapshotDoc = docs::read(&path.display().to_string(), &bytes).unwrap();
    Exposition::parse(&doc.text).unwrap()
}

/// A counter's rise over the load in a replica's folder.
fn rise(dir: &Path, name: &str) -> f64 {
    let before = snapshot(&dir.join(docs::BEFORE_SNAPSHOT)).total(name, &[]);
    let after = snapshot(&dir.join(docs::AFTER_SNAPSHOT)).total(name, &[]);
    after.unwrap() - before.unwrap_or(0.0)
}

/// What a replica's series shows: rows, seconds covered, distinct readings (rows where
/// any gauge changed) and its peak of running requests.
fn series_facts(dir: &Path) -> (usize, f64, usize, f64) {
    let path = dir.join(docs::SERIES);
    let s = Series::read(&path.display().to_string(), &std::fs::read(&path).unwrap()).unwrap();
    let rows: Vec<_> = s.rows.iter().collect();
    assert!(!rows.is_empty(), "{}: no rows", path.display());
    assert!(rows.iter().all(|r| r.t_mono_ns.is_none()));
    let span = rows.last().unwrap().t_wall - rows[0].t_wall;
    let key = |r: &analyzer::docs::Row| (r.running, r.waiting, r.kv_usage, r.generation_tokens);
    let distinct = rows.windows(2).filter(|w| key(&w[0]) != key(&w[1])).count() + 1;
    let peak = rows.iter().filter_map(|r| r.running).fold(0.0, f64::max);
    (rows.len(), span, distinct, peak)
}

/// Everything a fleet folder must hold, checked against the replicas themselves; the
/// replica folders by port.
fn check_folder(dir: &Path, up: &Up) -> BTreeMap<u16, PathBuf> {
    let p = &up.ports;
    let fleet: Fleet =
        docs::read("fleet.json", &std::fs::read(dir.join(docs::FLEET)).unwrap()).unwrap();
    assert_eq!(fleet.replicas.len(), 3, "{fleet:?}");
    assert_eq!(fleet.router_url.as_deref(), Some(url(p.router()).as_str()));
    assert_eq!(fleet.selector.as_deref(), Some("{job=\"vllm\"}"));
    assert_eq!(fleet.scrape_interval_s, Some(1.0));
    // --interval 0.25 is below the scrape interval: the series step is raised to it.
    assert_eq!(fleet.step_s, Some(1.0));
    let manifest = json(&dir.join(docs::MANIFEST));
    assert_eq!(
        manifest.get("metrics_source").and_then(|j| j.as_str()),
        Some("prometheus")
    );
    assert_eq!(
        manifest
            .get("outcome")
            .and_then(|o| o.get("state"))
            .and_then(|s| s.as_str()),
        Some("completed")
    );
    // The target Prometheus cannot scrape is named, not recorded.
    let notes = manifest.get("notes").and_then(|n| n.as_array()).unwrap();
    let dead = format!("127.0.0.1:{}", p.dead());
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains(&dead))),
        "{notes:?}"
    );
    for top in [docs::BEFORE_SNAPSHOT, docs::AFTER_SNAPSHOT, docs::SERIES] {
        assert!(
            !dir.join(top).exists(),
            "{top} at the top of a fleet folder"
        );
    }
    for f in [docs::PROBE, docs::LOAD_LOG, docs::BENCH_JSON] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let mut by_port = BTreeMap::new();
    let mut served = 0.0;
    for i in 0..3 {
        let port = p.replica(i);
        let r = fleet
            .replicas
            .iter()
            .find(|r| r.instance == format!("127.0.0.1:{port}"))
            .unwrap_or_else(|| panic!("no replica {port} in {fleet:?}"));
        assert_eq!(r.id, format!("127.0.0.1-{port}"));
        assert_eq!(r.labels.get("job").map(String::as_str), Some("vllm"));
        assert_eq!(r.scrape_interval_s, Some(1.0));
        let rdir = dir.join(docs::REPLICAS_DIR).join(&r.id);
        // The after snapshot holds what the replica itself says now (nothing ran since).
        let own = Exposition::parse(&get(&format!("{}/metrics", url(port))).unwrap()).unwrap();
        let after = snapshot(&rdir.join(docs::AFTER_SNAPSHOT));
        for name in [
            "vllm:request_success_total",
            "vllm:generation_tokens_total",
            "vllm:prompt_tokens_total",
            "vllm:num_preemptions_total",
        ] {
            assert_eq!(
                after.total(name, &[]),
                own.total(name, &[]),
                "{port} {name}"
            );
        }
        let n = rise(&rdir, "vllm:request_success_total");
        served += n;
        // Round robin over three: a third each, give or take the bench's test request.
        let third = f64::from(PROMPTS) / 3.0;
        assert!((n - third).abs() <= 2.0, "replica {port} served {n}");
        let (rows, span, distinct, peak) = series_facts(&rdir);
        eprintln!(
            "== replica {port}: {n} requests, {} preemptions; series {rows} rows over {span:.0} s, {distinct} distinct readings ({:.2}/s), running peak {peak}",
            rise(&rdir, "vllm:num_preemptions_total"),
            distinct as f64 / span.max(1.0)
        );
        by_port.insert(port, rdir);
    }
    // The load's prompts, plus the bench's one test request.
    let prompts = f64::from(PROMPTS);
    assert!(
        (prompts..=prompts + 1.0).contains(&served),
        "{served} requests served for {PROMPTS} prompts"
    );
    // The router's own exporter, read directly, counts per worker.
    let router = snapshot(&dir.join(docs::ROUTER_DIR).join(docs::AFTER_SNAPSHOT));
    assert!(router.has("vllm_router_processed_requests_total"));
    assert!(dir
        .join(docs::ROUTER_DIR)
        .join(docs::BEFORE_SNAPSHOT)
        .is_file());
    by_port
}

/// T1's verdict on one replica's folder, read as a single server's.
fn t1(dir: &Path) -> String {
    let (v, a) = verdicts(dir);
    assert!(a.errors.is_empty(), "{}: {:?}", dir.display(), a.errors);
    status(&v, "T1")
}

#[test]
#[ignore = "needs prometheus and vllm-router: `cargo xtask fleet` installs and runs them"]
fn a_balanced_fleet_passes_on_every_replica() {
    let w = World::new("fleet-balanced");
    let up = fleet_up(&w, Ports { base: 18200 }, false);
    eprintln!("== balanced fleet up in {:.1} s", up.took_s);
    let dir = record(&w, &up, "balanced");
    let replicas = check_folder(&dir, &up);
    for (port, rdir) in &replicas {
        assert_eq!(rise(rdir, "vllm:num_preemptions_total"), 0.0, "{port}");
        assert_eq!(t1(rdir), "pass", "replica {port}");
    }
    // The whole folder, as `inferlint analyze` reads a fleet: nothing preempted, the
    // router's count matches each replica's, the load was balanced.
    let (v, a) = verdicts(&dir);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert_eq!(status(&v, "T1"), "pass");
    assert_eq!(status(&v, "T15"), "pass");
    assert_eq!(status(&v, "T19"), "pass");
    assert_eq!(a.report.replicas.len(), 3);
    one_step_commands(&w, &up);
    interrupted(&w, &up);
    drop(up.started);
}

/// Ctrl-C during the load: the closing steps still write every replica's after snapshot
/// and series.
fn interrupted(w: &World, up: &Up) {
    let p = &up.ports;
    let mut c = w.recorder();
    let mut load = bench(&url(p.router()));
    let n = load.iter().position(|a| a == "--num-prompts").unwrap();
    load[n + 1] = "400".into();
    c.args([
        "record",
        "-o",
        "ctrl-c",
        "--no-analyze",
        "--no-probe",
        "--url",
    ])
    .arg(url(p.router()))
    .arg("--prometheus")
    .arg(url(p.prometheus()))
    .args(["--match", "{job=\"vllm\"}", "--"])
    .args(load)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let dir = w.dir.join("ctrl-c");
    assert!(wait_until(60, || dir.join(docs::LOAD_LOG).is_file()));
    std::thread::sleep(Duration::from_secs(5));
    // SAFETY: SIGINT to the recorder this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    eprintln!(
        "== ctrl-c: closed {:.1} s after SIGINT\n{}",
        t0.elapsed().as_secs_f64(),
        text(&out.stdout)
    );
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let manifest = json(&dir.join(docs::MANIFEST));
    assert_eq!(
        manifest
            .get("outcome")
            .and_then(|o| o.get("state"))
            .and_then(|s| s.as_str()),
        Some("interrupted")
    );
    for i in 0..3 {
        let rdir = dir
            .join(docs::REPLICAS_DIR)
            .join(format!("127.0.0.1-{}", p.replica(i)));
        assert!(
            rise(&rdir, "vllm:request_success_total") > 0.0,
            "{}",
            rdir.display()
        );
        let (rows, span, _, _) = series_facts(&rdir);
        assert!(
            rows >= 4 && span >= 3.0,
            "{}: {rows} rows over {span} s",
            rdir.display()
        );
    }
}

/// `snapshot` and `watch` through Prometheus: one file per replica in the `-o` folder.
fn one_step_commands(w: &World, up: &Up) {
    let prom = url(up.ports.prometheus());
    let mut c = w.recorder();
    c.args([
        "snapshot",
        "--prometheus",
        &prom,
        "--match",
        "{job=\"vllm\"}",
        "-o",
        "snaps",
    ]);
    let out = run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut c = w.recorder();
    c.args([
        "watch",
        "--prometheus",
        &prom,
        "--match",
        "{job=\"vllm\"}",
        "-o",
        "watched",
    ])
    .args(["--interval", "1", "--duration", "3"]);
    let out = run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for i in 0..3 {
        let port = up.ports.replica(i);
        let own = Exposition::parse(&get(&format!("{}/metrics", url(port))).unwrap()).unwrap();
        let snap = snapshot(&w.dir.join(format!("snaps/127.0.0.1-{port}.snapshot.json")));
        let name = "vllm:request_success_total";
        assert_eq!(snap.total(name, &[]), own.total(name, &[]), "{port}");
        let path = w.dir.join(format!("watched/127.0.0.1-{port}.series.jsonl"));
        let s = Series::read("watched", &std::fs::read(&path).unwrap()).unwrap();
        assert!(
            s.rows.len() >= 2,
            "{}: {} rows",
            path.display(),
            s.rows.len()
        );
        assert!(s.rows.iter().all(|r| r.running == Some(0.0)));
    }
}

#[test]
#[ignore = "needs prometheus and vllm-router: `cargo xtask fleet` installs and runs them"]
fn a_tiny_pool_fails_t1_on_that_replica_only() {
    let w = World::new("fleet-tiny");
    let up = fleet_up(&w, Ports { base: 18240 }, true);
    eprintln!("== tiny-pool fleet up in {:.1} s", up.took_s);
    let dir = record(&w, &up, "tiny-pool");
    let replicas = check_folder(&dir, &up);
    let tiny = up.ports.replica(2);
    for (port, rdir) in &replicas {
        let preempted = rise(rdir, "vllm:num_preemptions_total");
        let verdict = t1(rdir);
        if *port == tiny {
            assert!(preempted > 0.0, "the tiny replica was never preempted");
            assert_eq!(verdict, "fail", "replica {port}");
        } else {
            assert_eq!(preempted, 0.0, "replica {port}");
            assert_eq!(verdict, "pass", "replica {port}");
        }
    }
    // The whole folder: T1 fails naming the tiny replica alone, and T19 shows the
    // imbalance (an even split over replicas of uneven capacity).
    let (v, a) = verdicts(&dir);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert_eq!(status(&v, "T1"), "fail");
    assert_eq!(status(&v, "T19"), "fail");
    let failed: Vec<String> = a
        .report
        .replicas
        .iter()
        .filter(|r| {
            r.checks
                .iter()
                .any(|c| c.tripwire == Tripwire::SilentPreemption && c.status.as_str() == "fail")
        })
        .map(|r| r.instance.clone().unwrap_or_default())
        .collect();
    assert_eq!(failed, [format!("127.0.0.1:{tiny}")]);
    if let Some(to) = std::env::var_os("INFERLINT_FLEET_SAVE") {
        save(&dir, Path::new(&to));
    }
    drop(up.started);
}

/// Copies a recorded folder (without what `analyze` writes) to `to`, replacing it.
fn save(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    copy(from, to);
    eprintln!("== saved {} to {}", from.display(), to.display());
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        if name == docs::RESULTS || name == docs::REPORT {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

/// Usage errors need no tool: they come before anything runs or is written.
#[test]
fn fleet_usage_errors_exit_2_and_write_nothing() {
    let w = World::bare("fleet-usage");
    let cases: [&[&str]; 5] = [
        &[
            "record",
            "-o",
            "r",
            "--prometheus",
            "http://127.0.0.1:18299",
            "--",
            "true",
        ],
        &[
            "record",
            "-o",
            "r",
            "--match",
            "{job=\"vllm\"}",
            "--",
            "true",
        ],
        &[
            "record",
            "-o",
            "r",
            "--serve",
            "vllm serve m",
            "--prometheus",
            "http://127.0.0.1:18299",
            "--match",
            "{job=\"vllm\"}",
            "--",
            "true",
        ],
        &[
            "record",
            "-o",
            "r",
            "--prometheus",
            "http://127.0.0.1:18299",
            "--match",
            "up{job=\"vllm\"}",
            "--",
            "true",
        ],
        &[
            "snapshot",
            "http://127.0.0.1:18298",
            "--prometheus",
            "http://127.0.0.1:18299",
            "--match",
            "{job=\"vllm\"}",
            "-o",
            "r",
        ],
    ];
    for args in cases {
        let mut c = w.recorder();
        c.args(args);
        let out = run_bounded(c, 30);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(!w.dir.join("r").exists(), "{args:?} wrote r/");
    }
    // A Prometheus that does not answer is the run's problem, named with its URL; the
    // router answers its health check (a server that says 200 to everything).
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let router = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Write};
        for conn in l.incoming().flatten() {
            let mut r = BufReader::new(conn);
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let _ = r
                .into_inner()
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "r",
        "--no-analyze",
        "--no-probe",
        "--url",
        &router,
    ])
    .args([
        "--prometheus",
        "http://127.0.0.1:18299",
        "--match",
        "{job=\"vllm\"}",
        "--",
        "true",
    ]);
    let out = run_bounded(c, 60);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("== problem (metrics): Prometheus: http://127.0.0.1:18299/-/ready: "),
        "{stdout}"
    );
    assert!(!w.dir.join("r").join(docs::FLEET).exists());
}
