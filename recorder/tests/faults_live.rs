//! The fault trial: runs that break while they are recorded, against the engine
//! simulator, each in a PID namespace of its own where the machine allows one
//! (`common::isolated`). For each fault: the verdicts never go green, the exit status is
//! never 0, what broke is said before any verdict, what was captured stays on disk, and no
//! process of the run is left (every process a case starts carries its scope, so the
//! world can list what survived, before the namespace is gone).
//!
//! The cases by family: the server (`faults/server.rs`), signals to the recorder
//! (`faults/signals.rs`), the run folder (`faults/disk.rs`), the load and the start
//! (`faults/load.rs`), and here the crash, the
//! killed server, the taken port and another run's files. Each prints its exit status and
//! the first line the terminal showed about the run (`cargo test -- --nocapture`).

mod common;
use common::isolated::{first_verdict_line, host_pid, Ended, Isolated};
use common::*;

#[path = "faults/disk.rs"]
mod disk;
#[path = "faults/load.rs"]
mod load_start;
#[path = "faults/server.rs"]
mod server;
#[path = "faults/signals.rs"]
mod signals;

use std::path::Path;

use analyzer::json::Json;
use analyzer::Status;

const MODEL: &str = "/models/Qwen3-8B";

/// The simulated server's command: `sim` adds its faults.
fn serve(port: u16, sim: &str) -> String {
    format!("vllm serve {MODEL} --port {port} --max-num-seqs 32 --sim-speed 4 {sim}")
}

/// A load of 32 requests at once of `out_len` tokens each, without the client's single
/// test request first (so the server is busy at once): about 2.4 s per 400 tokens.
fn load(port: u16, out_len: u32) -> Vec<String> {
    let mut argv = bench(&format!("http://127.0.0.1:{port}"), MODEL, 32, out_len);
    argv.extend(["--ready-check-timeout-sec".to_string(), "0".to_string()]);
    argv
}

/// `record` of `serve` under `load`, with the trial's short waits: a reading may take 1 s,
/// the card 10 s to read clear.
fn record_args(port: u16, sim: &str, load: Vec<String>) -> Vec<String> {
    let mut a: Vec<String> = [
        "record",
        "-o",
        "run",
        "--no-probe",
        "--scrape-timeout",
        "1",
        "--stop-card-timeout",
        "10",
        "--serve",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(serve(port, sim));
    a.push("--".into());
    a.extend(load);
    a
}

/// `inferlint analyze DIR`: its exit status and stdout.
fn analyze(w: &World, dir: &Path) -> (Option<i32>, String) {
    let mut c = w.cmd(sibling("inferlint"));
    c.arg("analyze").arg(dir);
    let out = run_bounded(c, 60);
    (out.status.code(), text(&out.stdout))
}

fn check<'a>(a: &'a analyzer::Analysis, id: &str) -> Vec<&'a analyzer::CheckResult> {
    a.report.checks.iter().filter(|c| c.id() == id).collect()
}

/// The one result of a tripwire.
fn one<'a>(a: &'a analyzer::Analysis, id: &str) -> &'a analyzer::CheckResult {
    let c = check(a, id);
    assert_eq!(c.len(), 1, "one {id}: {c:?}");
    c[0]
}

/// The verdict lines start only after every "RUN BROKE" line, one of which says `what`.
fn broke_first(stdout: &str, what: &str) {
    let lines: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !(l.starts_with("RUN BROKE") || l.starts_with('[')))
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

/// What every broken recording must show: a failing exit status, what broke said first
/// (the recorder's own analysis, and `inferlint analyze` again), no green verdict, and
/// nothing of the run left running. Prints the case's exit status and first line.
fn broken(w: &World, case: &str, end: &Ended, run: &Path, what: &str) -> analyzer::Analysis {
    eprintln!(
        "fault case {case}: exit {}; first line: {}",
        end.code,
        end.first_verdict_line()
    );
    assert_ne!(end.code, 0, "{}", end.stdout);
    broke_first(&end.stdout, what);
    let (code, shown) = analyze(w, run);
    assert!(matches!(code, Some(c) if c != 0), "{shown}");
    assert_eq!(first_verdict_line(&shown), end.first_verdict_line());
    let (_, a) = verdicts(run);
    no_green(&a);
    a
}

/// Nothing of the run is left (looked at while the case's namespace still lives).
fn nothing_left(w: &World) {
    assert!(
        wait_until(10, || w.scoped_pids().is_empty()),
        "left: {:?}",
        w.scoped_pids()
    );
}

/// The series' complete lines as they are now.
fn series_now(run: &Path) -> String {
    let text = std::fs::read_to_string(run.join("run.series.jsonl")).unwrap_or_default();
    match text.rfind('\n') {
        Some(end) => text[..=end].to_string(),
        None => String::new(),
    }
}

/// No captured reading is lost: the series still starts with what it held earlier.
fn kept(run: &Path, earlier: &str) {
    let now = std::fs::read_to_string(run.join("run.series.jsonl")).unwrap();
    assert!(now.starts_with(earlier), "the series lost lines it had");
}

/// Waits until the load is under way: the series holds `rows` lines or more.
fn load_runs(run: &Path, rows: usize) {
    assert!(
        wait_until(60, || series_now(run).lines().count() >= rows),
        "the load did not start"
    );
}

/// Why the recorder stopped the load, as the manifest says (`load.stopped_for`).
fn stopped_for(run: &Path) -> Option<String> {
    json(&run.join("manifest.json"))
        .get("load")
        .and_then(|l| l.get("stopped_for"))
        .and_then(Json::as_str)
        .map(str::to_string)
}

/// The server's PID (as this test sees it), from the manifest.
fn server_pid(w: &World, run: &Path) -> i32 {
    let pid = json(&run.join("manifest.json"))
        .get("serve")
        .and_then(|s| s.get("pid"))
        .and_then(Json::as_f64)
        .expect("the server's pid") as i32;
    host_pid(w, pid)
}

/// A signal to a process of this case.
fn signal(pid: i32, sig: i32) {
    // SAFETY: a signal to a process this test's recording started (it carries the scope).
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "signal {sig} to {pid}");
}

#[test]
fn a_server_that_crashes_during_the_load_fails_t7_once() {
    let w = World::new("fault-crash");
    let port = free_port();
    let sim = "--sim-crash-at-request 25";
    let mut case = Isolated::record(&w, &record_args(port, sim, load(port, 400)), None);
    let code = case.wait_recorder(120);
    let run = case.run.clone();
    nothing_left(&w);
    let end = case.finish(code);
    let how = "the server exited with code 1 before the recorder stopped it";
    let a = broken(&w, "crash at request 25", &end, &run, how);
    let t7 = one(&a, "T7");
    assert_eq!(t7.status, Status::Fail);
    assert!(
        t7.message.contains("illegal memory access"),
        "{}",
        t7.message
    );
    for id in ["T1", "T10", "T15"] {
        assert_eq!(one(&a, id).status, Status::Unknown, "{id}");
    }
    assert!(one(&a, "T15").message.contains("failed"));
    // What was captured is kept.
    for f in [
        "before.snapshot.json",
        "boot.log",
        "run.series.jsonl",
        "bench.json",
    ] {
        assert!(run.join(f).is_file(), "{f}");
    }
    let doc = json(&run.join("results.json"));
    let what = doc.get("banner").and_then(|b| b.get("what_broke"));
    assert!(what.and_then(Json::as_array).is_some_and(|a| !a.is_empty()));
}

#[test]
fn a_server_killed_during_the_load_stops_the_load_and_fails_t7() {
    let w = World::new("fault-kill9");
    let port = free_port();
    let mut case = Isolated::record(&w, &record_args(port, "", load(port, 4000)), None);
    let run = case.run.clone();
    load_runs(&run, 4);
    let before = series_now(&run);
    signal(server_pid(&w, &run), libc::SIGKILL);
    let code = case.wait_recorder(60);
    nothing_left(&w);
    let end = case.finish(code);
    let a = broken(&w, "server SIGKILL", &end, &run, "was killed by SIGKILL");
    assert_eq!(one(&a, "T7").status, Status::Fail);
    kept(&run, &before);
}

#[test]
fn a_killed_recorder_leaves_nothing_running_and_an_honest_folder() {
    let w = World::new("fault-recorder");
    let port = free_port();
    let mut case = Isolated::record(&w, &record_args(port, "", load(port, 4000)), None);
    let run = case.run.clone();
    load_runs(&run, 4);
    let before = series_now(&run);
    signal(case.recorder_pid(&w), libc::SIGKILL);
    let code = case.wait_recorder(30);
    // The server and the load get their parent-death signal.
    nothing_left(&w);
    let end = case.finish(code);
    assert_eq!(end.code, 128 + libc::SIGKILL);
    eprintln!("fault case recorder SIGKILL: exit {}", end.code);
    let (code, shown) = analyze(&w, &run);
    assert_ne!(code, Some(0), "{shown}");
    broke_first(&shown, "the recorder did not finish");
    eprintln!(
        "  inferlint analyze: first line: {}",
        first_verdict_line(&shown)
    );
    let (_, a) = verdicts(&run);
    no_green(&a);
    // No teardown ran: the gate's clear card from before the start proves nothing.
    assert_eq!(one(&a, "T2").status, Status::Unknown);
    for id in ["T1", "T10", "T15"] {
        assert_eq!(one(&a, id).status, Status::Unknown, "{id}");
    }
    kept(&run, &before);
}

#[test]
fn a_taken_port_is_a_broken_run() {
    let w = World::new("fault-port");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut case = Isolated::record(&w, &record_args(port, "", load(port, 10)), None);
    let code = case.wait_recorder(60);
    let run = case.run.clone();
    nothing_left(&w);
    let end = case.finish(code);
    eprintln!("fault case port taken: exit {}", end.code);
    assert_ne!(end.code, 0);
    let (code, shown) = analyze(&w, &run);
    assert_eq!(code, Some(2), "{shown}");
    broke_first(&shown, "\"port\"");
    eprintln!(
        "  inferlint analyze: first line: {}",
        first_verdict_line(&shown)
    );
    drop(listener);
    // The checks of the load that never ran say why they cannot tell, never left out.
    let (_, a) = verdicts(&run);
    no_green(&a);
    for id in ["T1", "T8", "T9", "T10", "T14", "T15"] {
        let r = one(&a, id);
        assert_eq!(r.status, Status::Unknown, "{id}");
        assert_eq!(
            r.message,
            "can't tell: the recording stopped at the step \"port\", before the load ran"
        );
    }
    // CI output says it first too: an error case in JUnit, an ::error in GitHub's.
    for (format, first) in [
        ("github", "::error title=run the recording itself"),
        ("junit", "<?xml"),
    ] {
        let mut c = w.cmd(sibling("inferlint"));
        c.arg("analyze").arg(&run).args(["--format", format]);
        let out = run_bounded(c, 60);
        assert_eq!(out.status.code(), Some(2), "{format}");
        let shown = text(&out.stdout);
        assert!(shown.starts_with(first), "{format}: {shown}");
        assert!(
            shown.contains("The run broke: the recording stopped at the step"),
            "{shown}"
        );
        if format == "junit" {
            let case = shown.find("<testcase").unwrap();
            assert!(
                shown[case..]
                    .find("<error")
                    .is_some_and(|e| e < shown[case..].find("</testcase>").unwrap()),
                "{shown}"
            );
        }
    }
}

#[test]
fn another_runs_files_and_a_missing_load_command_are_refused_before_anything_starts() {
    let w = World::new("fault-stale");
    let port = free_port();
    let dir = w.dir.join("run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("probe.json"), "{}").unwrap();
    let case = Isolated::record(&w, &record_args(port, "", load(port, 10)), None);
    let mut case = case;
    let code = case.wait_recorder(60);
    nothing_left(&w);
    let end = case.finish(code);
    eprintln!(
        "fault case stale files: exit {}; {}",
        end.code,
        end.stderr.trim()
    );
    assert_eq!(end.code, 2);
    assert!(end
        .stderr
        .contains("already holds a run (probe.json: the analysis would read it"));
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
