//! The bodies of the commands: `record` hands over to `record::record`; the single-step
//! commands are short enough to live here.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use analyzer::analysis::{mismatch, NamedEngine};
use analyzer::json::{obj, Json};
use analyzer::{CheckResult, Engine, Status};
use anyhow::{bail, Context, Result};

use crate::cli::{
    named_engine, GpuArgs, ProbeArgs, RecordArgs, SnapshotArgs, TeardownArgs, WatchArgs,
};
use crate::docs::{self, print_results};
use crate::gpu::{self, Rule};
use crate::procs::{self, Ownership, ProcFs};
use crate::scrape::{self, Scraper};
use crate::series::{self, SeriesWriter};
use crate::teardown::{self, Live, SignalRecord};
use crate::{probe, record, signals};

fn named(by: &'static str) -> &'static str {
    if by == "flag" {
        "--engine"
    } else {
        "INFERLINT_ENGINE"
    }
}

/// `record-YYYYMMDD-HHMMSS` in local time.
fn default_folder() -> PathBuf {
    let now = nix::libc::time_t::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
    .unwrap_or(0);
    // SAFETY: localtime_r writes into the zeroed struct we own.
    let mut tm: nix::libc::tm = unsafe { std::mem::zeroed() };
    unsafe { nix::libc::localtime_r(&now, &mut tm) };
    PathBuf::from(format!(
        "record-{:04}{:02}{:02}-{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    ))
}

pub fn record(a: RecordArgs, argv: Vec<String>) -> Result<i32> {
    let engine = named_engine(&a.engine).map_err(anyhow::Error::msg)?;
    if !(a.interval > 0.0 && a.interval.is_finite()) {
        bail!("--interval must be a positive number of seconds");
    }
    if !(a.ready_timeout > 0.0 && a.ready_timeout.is_finite()) {
        bail!("--ready-timeout must be a positive number of seconds");
    }
    if !(a.stop_card_timeout >= 0.0 && a.stop_card_timeout.is_finite()) {
        bail!("--stop-card-timeout must be a number of seconds");
    }
    crate::set_json(a.common.json);
    let mut load = a.load;
    if load.first().is_some_and(|x| x == "--") {
        load.remove(0);
    }
    Ok(record::record(record::Options {
        dir: a.out.unwrap_or_else(default_folder),
        serve: a.serve,
        url: a.url,
        boot_log: a.boot_log,
        requested: a.requested,
        bench_result: a.bench_result,
        interval: a.interval,
        ready_timeout: a.ready_timeout,
        stop_card_timeout: a.stop_card_timeout,
        no_probe: a.no_probe,
        title: a.title,
        no_analyze: a.no_analyze,
        json: a.common.json,
        strict: a.common.strict,
        engine,
        load,
        argv,
    }))
}

/// The first reading of `snapshot` and `watch`: an engine's metrics, the named one.
fn checked_reading(
    url: &str,
    engine: Option<(Engine, &'static str)>,
) -> std::result::Result<(Scraper, scrape::Reading), i32> {
    let s = Scraper::new(url);
    match scrape::engine_reading(&s, engine.map(|e| e.0)) {
        Err(text) => {
            eprintln!("inferlint: {text}");
            Err(2)
        }
        Ok((r, found)) => match engine {
            Some((e, by)) if e != found => {
                let what = format!("the metrics at {}", s.base);
                eprintln!(
                    "inferlint: {}",
                    mismatch(
                        NamedEngine {
                            engine: e,
                            by: named(by)
                        },
                        &what,
                        found
                    )
                );
                Err(2)
            }
            _ => Ok((s, r)),
        },
    }
}

pub fn snapshot(a: SnapshotArgs) -> Result<i32> {
    let engine = named_engine(&a.engine).map_err(anyhow::Error::msg)?;
    let (_, r) = match checked_reading(&a.url, engine) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    docs::write_json_to(&a.out, &r.snapshot_json())
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    println!(
        "{} samples, scrape {:.3}s -> {}",
        r.metrics.samples.len(),
        r.latency_s,
        a.out.display()
    );
    Ok(0)
}

pub fn watch(a: WatchArgs) -> Result<i32> {
    let engine = named_engine(&a.engine).map_err(anyhow::Error::msg)?;
    if !(a.interval > 0.0 && a.interval.is_finite()) {
        bail!("--interval must be a positive number of seconds");
    }
    let (scraper, _) = match checked_reading(&a.url, engine) {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    signals::install();
    if let Some(p) = a.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(p)?;
    }
    let mut w = SeriesWriter::create(&a.out, &scraper.base, a.interval)
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let duration = a.duration;
    std::thread::spawn(move || {
        let t0 = Instant::now();
        while !signals::interrupted() && duration.is_none_or(|d| t0.elapsed().as_secs_f64() < d) {
            std::thread::sleep(Duration::from_millis(10));
        }
        stop2.store(true, Ordering::SeqCst);
    });
    let latest = Arc::new(std::sync::Mutex::new(None));
    let s = series::record_until(
        &scraper,
        &mut w,
        Duration::from_secs_f64(a.interval),
        &stop,
        &latest,
        true,
    );
    if let Some(e) = s.write_error {
        eprintln!(
            "inferlint-recorder: writing {} failed: {e}",
            a.out.display()
        );
    }
    println!("{} samples -> {}", s.rows, a.out.display());
    if let Some(n) = s.note {
        eprintln!("{n}");
    }
    Ok(0)
}

pub fn probe(a: ProbeArgs) -> Result<i32> {
    let opts = probe::ProbeOptions {
        model: a.model,
        concurrency: a.concurrency,
        max_tokens: a.max_tokens,
    };
    let doc = probe::run(&a.url, &opts);
    if let Some(out) = &a.out {
        docs::write_json_to(out, &doc)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    let r = probe::result(&doc);
    print_results(std::slice::from_ref(&r), a.common.json);
    Ok(if r.status == Status::Pass { 0 } else { 1 })
}

fn fs_of(root: &Option<PathBuf>) -> ProcFs {
    root.clone()
        .map_or_else(ProcFs::default, |root| ProcFs { root })
}

const NEEDS_LINUX: &str = "Checking that the GPU is free needs Linux: it finds the server's processes in /proc. Run it where the server runs.";

pub fn gpu_inspect(a: GpuArgs) -> Result<i32> {
    if a.consecutive < 1 {
        bail!("--consecutive must be at least 1");
    }
    let facts = gpu::facts();
    let say = |l: &str| {
        if a.common.json {
            eprintln!("{l}");
        } else {
            println!("{l}");
        }
    };
    match &facts {
        Some(g) if !g.is_empty() => g.iter().flat_map(|x| x.lines()).for_each(|l| say(&l)),
        _ => say("no NVIDIA GPU found: nvidia-smi is missing or failed"),
    }
    let gpus = Json::Arr(
        facts
            .unwrap_or_default()
            .iter()
            .map(gpu::Gpu::to_json)
            .collect(),
    );
    let fs = fs_of(&a.proc_root);
    let linux = procs::linux(&fs.root);
    let rule = Rule {
        max_used_mib: a.max_used_mib,
        consecutive: a.consecutive,
        interval_s: 2.0,
        timeout_s: a.timeout,
    };
    let (result, doc) = if !linux {
        let mut r = CheckResult::new(2, Status::Unknown, NEEDS_LINUX);
        r.set("gpus", gpus.clone());
        let none = gpu::Verdict {
            readings: Vec::new(),
            clear: None,
            reason: NEEDS_LINUX.to_string(),
        };
        let doc = none.gate_document(&rule, Vec::new(), false, Some(gpus.clone()));
        (r, doc)
    } else {
        let mut live = Live::new(fs.clone(), usize::MAX);
        let v = teardown::card_rule(&mut live, &rule);
        let servers: Vec<Json> = procs::live_servers(&fs)
            .iter()
            .map(|s| s.to_json())
            .collect();
        let mut r = match v.clear {
            Some(true) => CheckResult::new(2, Status::Pass, v.reason.clone()),
            _ => CheckResult::new(
                2,
                Status::Fail,
                format!("card not clear; refusing to boot. {}", v.reason),
            ),
        };
        r.set("readings", v.readings_json());
        r.set("gpus", gpus.clone());
        let doc = v.gate_document(&rule, servers, true, Some(gpus));
        (r, doc)
    };
    if let Some(out) = &a.out {
        docs::write_json_to(out, &doc)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    print_results(std::slice::from_ref(&result), a.common.json);
    Ok(docs::exit_status(&[result], a.common.strict))
}

/// The recorded server of a run folder: its ownership and launched PID/session.
fn run_ownership(dir: &std::path::Path) -> Result<(Ownership, Json)> {
    let m = std::fs::read_to_string(dir.join("manifest.json"))
        .with_context(|| format!("cannot read {}/manifest.json", dir.display()))?;
    let m = analyzer::json::parse(&m).map_err(|e| anyhow::anyhow!("manifest.json: {e}"))?;
    let serve = m
        .get("serve")
        .filter(|s| !s.is_null())
        .context("the run started no server (attach mode)")?;
    let pid = serve
        .get("pid")
        .and_then(Json::as_i64_trunc)
        .context("the manifest has no server pid")? as i32;
    let sid = serve
        .get("sid")
        .and_then(Json::as_i64_trunc)
        .unwrap_or(i64::from(pid)) as i32;
    // The launched process's start time: from the manifest (written at the start), else
    // from processes.json (written at the stop); unknown otherwise.
    let start_ticks = serve
        .get("start_ticks")
        .and_then(Json::as_i64_trunc)
        .map_or(u64::MAX, |t| t as u64);
    let mut own = Ownership {
        launched: (pid, start_ticks),
        sid,
        known: Default::default(),
    };
    if let Ok(t) = std::fs::read_to_string(dir.join("processes.json")) {
        if let Ok(doc) = analyzer::json::parse(&t) {
            for snap in doc
                .get("snapshots")
                .and_then(Json::as_array)
                .unwrap_or_default()
            {
                for p in snap
                    .get("processes")
                    .and_then(Json::as_array)
                    .unwrap_or_default()
                {
                    if let (Some(pid), Some(st)) = (
                        p.get("pid").and_then(Json::as_i64_trunc),
                        p.get("start_ticks").and_then(Json::as_i64_trunc),
                    ) {
                        own.known.insert((pid as i32, st as u64));
                        if pid as i32 == own.launched.0 {
                            own.launched.1 = st as u64;
                        }
                    }
                }
            }
        }
    }
    Ok((
        own,
        obj([
            ("pid", Json::from(i64::from(pid))),
            ("sid", Json::from(i64::from(sid))),
        ]),
    ))
}

fn engines_words(mut v: Vec<Engine>) -> String {
    v.sort_by_key(|e| e.display());
    v.dedup();
    let names: Vec<&str> = v.iter().map(|e| e.display()).collect();
    match names.len() {
        0 => String::new(),
        1 => names[0].to_string(),
        n => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

pub fn teardown(a: TeardownArgs) -> Result<i32> {
    let engine = named_engine(&a.engine)
        .map_err(anyhow::Error::msg)?
        .map(|e| e.0);
    if a.consecutive < 1 {
        bail!("--consecutive must be at least 1");
    }
    let fs = fs_of(&a.proc_root);
    if !procs::linux(&fs.root) {
        let r = CheckResult::new(2, Status::Unknown, NEEDS_LINUX);
        print_results(std::slice::from_ref(&r), a.common.json);
        return Ok(2);
    }
    let say = |l: &str| {
        if a.common.json {
            eprintln!("{l}");
        } else {
            println!("{l}");
        }
    };
    let me = std::process::id() as i32;
    let table = fs.table();
    let all = procs::live_servers(&fs);
    let (launched, targets, left_alone) = match &a.run {
        Some(dir) => {
            let (mut own, launched) = run_ownership(dir)?;
            own.forget_reused_session(&table);
            let owned: Vec<i32> = own
                .owned(&table, me)
                .iter()
                .filter(|p| p.live())
                .map(|p| p.pid)
                .collect();
            let (t, l): (Vec<_>, Vec<_>) =
                all.into_iter().partition(|s| owned.contains(&s.proc.pid));
            // Owned processes that no longer look like servers are still the run's own.
            let mut t = t;
            for p in own.owned(&table, me).into_iter().filter(|p| p.live()) {
                if !t.iter().any(|s| s.proc.pid == p.pid) {
                    t.push(procs::Server {
                        proc: p,
                        engine: engine.unwrap_or(Engine::Vllm),
                    });
                }
            }
            (launched, t, l)
        }
        None => {
            let (t, l): (Vec<_>, Vec<_>) = all
                .into_iter()
                .partition(|s| engine.is_none_or(|e| s.engine == e));
            (Json::Null, t, l)
        }
    };
    if targets.is_empty() {
        say(&format!(
            "no server processes found ({})",
            engine.map_or("vLLM, SGLang or TensorRT-LLM", Engine::display)
        ));
    }
    for t in &targets {
        say(&teardown::target_line(&t.proc));
    }
    if !left_alone.is_empty() {
        let why = match (&a.run, engine) {
            (Some(d), _) => format!("--run {}", d.display()),
            (None, Some(e)) => format!("--engine {}", e.key()),
            (None, None) => String::new(),
        };
        say(&format!(
            "left alone ({why}): {} processes of {} servers",
            left_alone.len(),
            engines_words(left_alone.iter().map(|s| s.engine).collect())
        ));
    }
    if !targets.is_empty() {
        let pattern = teardown::usual_pattern(&targets);
        let scoped = procs::in_scope(&fs, table.clone());
        let (miss, wrong) = teardown::pkill_would(&scoped, &targets, pattern, me);
        let mut parts = Vec::new();
        if miss > 0 {
            parts.push(format!("miss {miss}"));
        }
        if wrong > 0 {
            parts.push(format!("wrongly hit {wrong}"));
        }
        if !parts.is_empty() {
            say(&format!(
                "(pkill -f '{pattern}' would {})",
                parts.join(" and ")
            ));
        }
    }
    if a.dry_run {
        return Ok(0);
    }
    let mut live = Live::new(fs.clone(), usize::MAX);
    let procs_: Vec<procs::Proc> = targets.iter().map(|s| s.proc.clone()).collect();
    let (records, left) = teardown::stop_each(&mut live, &procs_, 15.0);
    for r in &records {
        if r.result == teardown::Sent::NotPermitted {
            say(&format!(
                "not permitted to signal pid {}",
                match r.to {
                    teardown::To::Pid(p) | teardown::To::Group(p) => p,
                }
            ));
        }
    }
    let rule = Rule {
        max_used_mib: a.max_used_mib,
        consecutive: a.consecutive,
        interval_s: 2.0,
        timeout_s: a.timeout,
    };
    let v = teardown::card_rule(&mut live, &rule);
    let left_json: Vec<Json> = left.iter().map(|p| Json::from(i64::from(p.pid))).collect();
    let mut r = match v.clear {
        Some(true) => CheckResult::new(2, Status::Pass, v.reason.clone()),
        _ => CheckResult::new(2, Status::Fail, v.reason.clone()),
    };
    r.set("readings", v.readings_json());
    r.set(
        "signalled",
        Json::Arr(
            procs_
                .iter()
                .map(|p| Json::from(i64::from(p.pid)))
                .collect(),
        ),
    );
    if let Some(out) = &a.out {
        let doc = obj([
            ("schema", Json::from("inferlint.teardown/1")),
            ("launched", launched),
            (
                "signals",
                Json::Arr(records.iter().map(SignalRecord::to_json).collect()),
            ),
            ("server_exit", Json::Null),
            ("left_after_the_server_stopped", Json::Arr(left_json)),
            (
                "left_alone",
                Json::Arr(left_alone.iter().map(|s| s.to_json()).collect()),
            ),
            ("max_used_mib", Json::Int(rule.max_used_mib)),
            ("consecutive", Json::from(i64::from(rule.consecutive))),
            ("interval_s", Json::Float(rule.interval_s)),
            ("timeout_s", Json::Float(rule.timeout_s)),
            ("readings", v.readings_json()),
            ("clear", Json::from(v.clear)),
            ("reason", Json::from(v.reason.as_str())),
            ("abandoned", Json::Bool(false)),
        ]);
        docs::write_json_to(out, &doc)
            .with_context(|| format!("cannot write {}", out.display()))?;
    }
    print_results(std::slice::from_ref(&r), a.common.json);
    Ok(docs::exit_status(&[r], a.common.strict))
}
