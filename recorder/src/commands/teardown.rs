//! `teardown`: find the server processes to stop (every engine's, the
//! named engine's, or only those a run folder's recorder started), say what a substring
//! `pkill -f` would have done instead, stop them, then the clear-card rule; T2 as the
//! analyzer judges the teardown document it fills (written with `-o`).

use std::path::Path;

use anyhow::{bail, Context, Result};

use analyzer::docs::manifest::Manifest;
use analyzer::docs::processes::Processes;
use analyzer::docs::teardown::{Delivery, Launched, SignalRecord, Teardown};
use analyzer::docs::{self, Document, MANIFEST, PROCESSES};
use analyzer::rules::t02_orphaned_engine::{self as t02, Rule};
use analyzer::Engine;

use super::{fs_of, say_to};
use crate::cli::{named_engine, TeardownArgs};
use crate::docs::{exit_status, print_results, write_doc_to};
use crate::procs::{self, Ownership, Proc, ProcFs, Server};
use crate::teardown::{self, Live};

/// Which server processes the teardown stops, and which it leaves alone.
struct Selection {
    /// The run's launched server (`--run`).
    launched: Option<Launched>,
    targets: Vec<Server>,
    left_alone: Vec<Server>,
}

/// A run folder's document.
fn read_doc<T: Document>(dir: &Path, name: &str) -> Result<T> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(docs::read(&path.display().to_string(), &bytes)?)
}

/// The recorded server of a run folder: its ownership and launched PID/session.
fn run_ownership(dir: &Path) -> Result<(Ownership, Launched)> {
    let manifest: Manifest = read_doc(dir, MANIFEST)?;
    let serve = manifest
        .serve
        .context("the run started no server (attach mode)")?;
    let pid = serve.pid.context("the manifest has no server pid")?;
    let sid = serve.sid.unwrap_or(pid);
    // The launched process's start time: from the manifest (written at the start), else
    // from processes.json (written at the stop); unknown otherwise.
    let mut own = Ownership {
        launched: (pid, serve.start_ticks.unwrap_or(u64::MAX)),
        sid,
        known: Default::default(),
    };
    // A folder whose processes.json cannot be read still names its launched server.
    if let Ok(processes) = read_doc::<Processes>(dir, PROCESSES) {
        for p in processes.snapshots.iter().flat_map(|s| &s.processes) {
            own.known.insert((p.pid, p.start_ticks));
            if p.pid == pid {
                own.launched.1 = p.start_ticks;
            }
        }
    }
    Ok((own, Launched { pid, sid }))
}

/// The targets: the run's own processes with `--run`, else every server of the named
/// engine (or of every engine).
fn select(
    args: &TeardownArgs,
    engine: Option<Engine>,
    table: &[Proc],
    all: Vec<Server>,
) -> Result<Selection> {
    let me = std::process::id() as i32;
    let Some(dir) = &args.run else {
        let (targets, left_alone) = all
            .into_iter()
            .partition(|s| engine.is_none_or(|e| s.engine == e));
        return Ok(Selection {
            launched: None,
            targets,
            left_alone,
        });
    };
    let (mut own, launched) = run_ownership(dir)?;
    own.forget_reused_session(table);
    let owned: Vec<Proc> = own
        .owned(table, me)
        .into_iter()
        .filter(|p| p.live())
        .collect();
    let (mut targets, left_alone): (Vec<Server>, Vec<Server>) = all
        .into_iter()
        .partition(|s| owned.iter().any(|p| p.pid == s.proc.pid));
    // Owned processes that no longer look like servers are still the run's own.
    for p in owned {
        if !targets.iter().any(|s| s.proc.pid == p.pid) {
            targets.push(Server {
                proc: p,
                engine: engine.unwrap_or(Engine::Vllm),
            });
        }
    }
    Ok(Selection {
        launched: Some(launched),
        targets,
        left_alone,
    })
}

fn engines_words(mut engines: Vec<Engine>) -> String {
    engines.sort_by_key(|e| e.display());
    engines.dedup();
    let names: Vec<&str> = engines.iter().map(|e| e.display()).collect();
    match names.len() {
        0 => String::new(),
        1 => names[0].to_string(),
        n => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

/// Steps 1–2: the targets, what is left alone and why, and what `pkill -f` would do.
fn show(args: &TeardownArgs, engine: Option<Engine>, fs: &ProcFs, table: &[Proc], sel: &Selection) {
    let say = |line: &str| say_to(args.common.json, line);
    if sel.targets.is_empty() {
        say(&format!(
            "no server processes found ({})",
            engine.map_or("vLLM, SGLang or TensorRT-LLM", Engine::display)
        ));
    }
    for t in &sel.targets {
        say(&teardown::target_line(&t.proc));
    }
    if !sel.left_alone.is_empty() {
        let why = match (&args.run, engine) {
            (Some(d), _) => format!("--run {}", d.display()),
            (None, Some(e)) => format!("--engine {}", e.key()),
            (None, None) => String::new(),
        };
        say(&format!(
            "left alone ({why}): {} processes of {} servers",
            sel.left_alone.len(),
            engines_words(sel.left_alone.iter().map(|s| s.engine).collect())
        ));
    }
    if sel.targets.is_empty() {
        return;
    }
    let pattern = teardown::usual_pattern(&sel.targets);
    let scoped = procs::in_scope(fs, table.to_vec());
    let me = std::process::id() as i32;
    let pkill = teardown::pkill_would(&scoped, &sel.targets, pattern, me);
    let mut parts = Vec::new();
    if pkill.missed > 0 {
        parts.push(format!("miss {}", pkill.missed));
    }
    if pkill.wrongly_hit > 0 {
        parts.push(format!("wrongly hit {}", pkill.wrongly_hit));
    }
    if !parts.is_empty() {
        say(&format!(
            "(pkill -f '{pattern}' would {})",
            parts.join(" and ")
        ));
    }
}

/// Steps 4–5: signal the targets, then the card; the document of it all.
fn stop(args: &TeardownArgs, fs: &ProcFs, sel: Selection) -> Teardown {
    let mut live = Live::new(fs.clone(), usize::MAX);
    let targets: Vec<Proc> = sel.targets.iter().map(|s| s.proc.clone()).collect();
    let stopped = teardown::stop_each(&mut live, &targets, 15.0);
    for r in stopped
        .signals
        .iter()
        .filter(|r| r.result == Delivery::NotPermitted)
    {
        say_to(
            args.common.json,
            &format!("not permitted to signal pid {}", r.to.id()),
        );
    }
    let rule = Rule::new(args.max_used_mib, args.consecutive, args.timeout);
    let check = teardown::card_rule(&mut live, &rule);
    Teardown {
        launched: sel.launched,
        server_exit: None,
        left_after_the_server_stopped: stopped.left.iter().map(|p| p.pid).collect(),
        signals: stopped.signals,
        left_alone: sel.left_alone.iter().map(Server::doc).collect(),
        max_used_mib: rule.max_used_mib,
        consecutive: rule.consecutive,
        interval_s: rule.interval_s,
        timeout_s: rule.timeout_s,
        readings: check.readings,
        clear: check.clear,
        reason: Some(check.reason),
        abandoned: false,
    }
}

/// The PIDs signalled (T2's evidence `signalled`), each once, in order.
fn signalled(signals: &[SignalRecord]) -> Vec<i32> {
    let mut pids: Vec<i32> = Vec::new();
    for r in signals {
        if !pids.contains(&r.to.id()) {
            pids.push(r.to.id());
        }
    }
    pids
}

pub fn teardown(args: TeardownArgs) -> Result<i32> {
    let engine = named_engine(&args.engine)
        .map_err(anyhow::Error::msg)?
        .map(|e| e.0);
    if args.consecutive < 1 {
        bail!("--consecutive must be at least 1");
    }
    let fs = fs_of(&args.proc_root);
    if !procs::linux(&fs.root) {
        print_results(&[t02::needs_linux()], args.common.json);
        return Ok(2);
    }
    let table = fs.table();
    let selection = select(&args, engine, &table, procs::live_servers(&fs))?;
    show(&args, engine, &fs, &table, &selection);
    if args.dry_run {
        return Ok(0);
    }
    let doc = stop(&args, &fs, selection);
    if let Some(out) = &args.out {
        write_doc_to(out, &doc).with_context(|| format!("cannot write {}", out.display()))?;
    }
    let result = t02::torn_down(&doc, &signalled(&doc.signals));
    print_results(std::slice::from_ref(&result), args.common.json);
    Ok(exit_status(&[result], args.common.strict))
}
