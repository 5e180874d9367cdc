//! The fault trial: runs that break while they are recorded, against the engine
//! simulator. For each fault: the verdicts never go green, the exit status is never 0,
//! what broke is said before any verdict, what was captured stays on disk, and no
//! process of the run is left (every process a test starts carries its scope, so the
//! world can list what survived).

mod common;
use common::*;

use std::path::PathBuf;
use std::process::Stdio;

use analyzer::json::Json;
use analyzer::Status;

const MODEL: &str = "/models/Qwen3-8B";

fn serve(port: u16, sim: &str) -> String {
    format!("vllm serve {MODEL} --port {port} --max-num-seqs 32 {sim}")
}

/// `inferlint analyze DIR`: its exit status and stdout.
fn analyze(w: &World, dir: &std::path::Path) -> (Option<i32>, String) {
    let mut c = w.cmd(sibling("inferlint"));
    c.arg("analyze").arg(dir);
    let out = run_bounded(c, 60);
    (out.status.code(), text(&out.stdout))
}

fn check<'a>(a: &'a analyzer::Analysis, id: &str) -> Vec<&'a analyzer::CheckResult> {
    a.report.checks.iter().filter(|c| c.id() == id).collect()
}

/// The verdict lines start only after every "RUN BROKE" line.
fn broke_first(stdout: &str, what: &str) {
    // The analysis follows the recorder's last step line ("== ...").
    let analysis = stdout
        .rfind("\n== ")
        .and_then(|at| stdout[at + 1..].find('\n').map(|n| &stdout[at + 1 + n..]))
        .unwrap_or(stdout);
    let lines: Vec<&str> = analysis
        .lines()
        .filter(|l| l.starts_with("RUN BROKE") || l.starts_with('['))
        .collect();
    assert!(
        lines.first().is_some_and(|l| l.starts_with("RUN BROKE")),
        "{stdout}"
    );
    let broke: Vec<&&str> = lines
        .iter()
        .take_while(|l| l.starts_with("RUN BROKE"))
        .collect();
    assert!(broke.iter().any(|l| l.contains(what)), "{what}: {stdout}");
}

fn no_green(a: &analyzer::Analysis) {
    assert_ne!(a.exit_status(false), 0);
    let banner = a.report.banner.as_ref().expect("a banner");
    assert!(!banner.what_broke.is_empty());
}

#[test]
fn a_server_that_crashes_during_the_load_fails_t7_once() {
    let w = World::new("fault-crash");
    let port = free_port();
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve"])
        .arg(serve(port, "--sim-crash-at-request 25 --sim-speed 4"))
        .arg("--")
        .args(bench(&format!("http://127.0.0.1:{port}"), MODEL, 32, 400));
    let out = run_bounded(c, 240);
    let stdout = text(&out.stdout);
    assert_ne!(out.status.code(), Some(0), "{stdout}");
    broke_first(
        &stdout,
        "the server exited with code 1 before the recorder stopped it",
    );
    let run = w.dir.join("run");
    let (_, a) = verdicts(&run);
    no_green(&a);
    let t7 = check(&a, "T7");
    assert_eq!(t7.len(), 1, "one T7: {t7:?}");
    assert_eq!(t7[0].status, Status::Fail);
    assert!(
        t7[0].message.contains("illegal memory access"),
        "{}",
        t7[0].message
    );
    for id in ["T1", "T10", "T15"] {
        let c = check(&a, id);
        assert_eq!(c.len(), 1, "{id} is never left out");
        assert_eq!(c[0].status, Status::Unknown, "{id}: {}", c[0].message);
    }
    assert!(check(&a, "T15")[0].message.contains("failed"));
    // What was captured is kept; nothing of the run is left running.
    for f in [
        "before.snapshot.json",
        "boot.log",
        "run.series.jsonl",
        "bench.json",
    ] {
        assert!(run.join(f).is_file(), "{f}");
    }
    assert!(w.scoped_pids().is_empty(), "left: {:?}", w.scoped_pids());
    let doc = json(&run.join("results.json"));
    let what = doc.get("banner").and_then(|b| b.get("what_broke"));
    assert!(what.and_then(Json::as_array).is_some_and(|a| !a.is_empty()));
    let (code, shown) = analyze(&w, &run);
    assert_eq!(code, Some(1));
    broke_first(&shown, "exited with code 1");
}

/// `record` of a long load, returned once the load runs, with its folder.
fn record_until_the_load_runs(w: &World, stdout: Stdio) -> (std::process::Child, PathBuf) {
    let port = free_port();
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--no-probe", "--serve"])
        .arg(serve(port, "--sim-speed 2"))
        .arg("--")
        .args(bench(&format!("http://127.0.0.1:{port}"), MODEL, 64, 4000))
        .stdout(stdout)
        .stderr(Stdio::null());
    let rec = c.spawn().unwrap();
    let run = w.dir.join("run");
    let series = run.join("run.series.jsonl");
    assert!(
        wait_until(90, || std::fs::read_to_string(&series)
            .is_ok_and(|s| s.lines().count() >= 4)),
        "the load did not start"
    );
    (rec, run)
}

#[test]
fn a_server_killed_during_the_load_stops_the_load_and_fails_t7() {
    let w = World::new("fault-kill9");
    let (rec, run) = record_until_the_load_runs(&w, Stdio::piped());
    let pid = json(&run.join("manifest.json"))
        .get("serve")
        .and_then(|s| s.get("pid"))
        .and_then(Json::as_f64)
        .unwrap() as i32;
    // SAFETY: SIGKILL to the server this test's recorder started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let out = rec.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert_ne!(out.status.code(), Some(0), "{stdout}");
    broke_first(&stdout, "was killed by SIGKILL");
    let (_, a) = verdicts(&run);
    no_green(&a);
    let t7 = check(&a, "T7");
    assert_eq!(t7.len(), 1);
    assert_eq!(t7[0].status, Status::Fail, "{}", t7[0].message);
    assert!(w.scoped_pids().is_empty(), "left: {:?}", w.scoped_pids());
}

#[test]
fn a_killed_recorder_leaves_nothing_running_and_an_honest_folder() {
    let w = World::new("fault-recorder");
    let (mut rec, run) = record_until_the_load_runs(&w, Stdio::null());
    let _ = rec.kill();
    let _ = rec.wait();
    // The server and the load get their parent-death signal.
    assert!(
        wait_until(20, || w.scoped_pids().is_empty()),
        "left: {:?}",
        w.scoped_pids()
    );
    let (code, shown) = analyze(&w, &run);
    assert_ne!(code, Some(0), "{shown}");
    broke_first(&shown, "the recorder did not finish");
    let (_, a) = verdicts(&run);
    // No teardown ran: the gate's clear card from before the start proves nothing.
    let t2 = check(&a, "T2");
    assert_eq!(t2.len(), 1);
    assert_eq!(t2[0].status, Status::Unknown, "{}", t2[0].message);
    for id in ["T1", "T10", "T15"] {
        assert_eq!(check(&a, id).len(), 1, "{id} is never left out");
        assert_eq!(check(&a, id)[0].status, Status::Unknown);
    }
}

#[test]
fn a_taken_port_is_a_broken_run() {
    let w = World::new("fault-port");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve"])
        .arg(serve(port, ""))
        .arg("--")
        .args(bench(&format!("http://127.0.0.1:{port}"), MODEL, 4, 10));
    let out = run_bounded(c, 120);
    assert_ne!(out.status.code(), Some(0));
    let run = w.dir.join("run");
    let (code, shown) = analyze(&w, &run);
    assert_eq!(code, Some(2), "{shown}");
    broke_first(&shown, "\"port\"");
    assert!(w.scoped_pids().is_empty());
}

#[test]
fn another_runs_files_and_a_missing_load_command_are_refused_before_anything_starts() {
    let w = World::new("fault-stale");
    let port = free_port();
    let dir = w.dir.join("run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("probe.json"), "{}").unwrap();
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve"])
        .arg(serve(port, ""))
        .arg("--")
        .args(bench(&format!("http://127.0.0.1:{port}"), MODEL, 4, 10));
    let out = run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("already holds a run (probe.json)"));
    assert!(!dir.join("boot.log").exists());

    let mut c = w.recorder();
    c.args(["record", "-o", "fresh", "--serve"])
        .arg(serve(port, ""))
        .args(["--", "no-such-load-tool", "--rate", "1"]);
    let out = run_bounded(c, 60);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("the load command no-such-load-tool cannot be run"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !w.dir.join("fresh").exists(),
        "nothing is started or written"
    );
}
