//! Signals to the recorder during the load: SIGTERM and SIGHUP stop the run as Ctrl-C
//! does (the load, the after snapshot, the server, the manifest "interrupted", exit 130);
//! after a SIGKILL of the recorder and its guard, `teardown --run` finds and stops what
//! they could not.

use super::*;

/// A stop signal during the load: an orderly, recorded end.
fn interrupted_by(sig: i32, name: &str) {
    let w = World::new(&format!("fault-{}", name.to_lowercase()));
    let port = free_port();
    let mut case = Isolated::record(&w, &record_args(port, "", load(port, 4000)), None);
    let run = case.run.clone();
    load_runs(&run, 4);
    let before = series_now(&run);
    signal(case.recorder_pid(&w), sig);
    let code = case.wait_recorder(60);
    nothing_left(&w);
    let end = case.finish(code);
    let a = broken(&w, name, &end, &run, "the recording was interrupted");
    assert_eq!(end.code, 130);
    assert!(
        end.stdout.contains(&format!("== interrupted ({name})")),
        "{}",
        end.stdout
    );
    let outcome = json(&run.join("manifest.json"));
    let outcome = outcome.get("outcome").unwrap();
    assert_eq!(
        outcome.get("state").and_then(Json::as_str),
        Some("interrupted")
    );
    assert_eq!(outcome.get("stage").and_then(Json::as_str), Some("load"));
    // The closing steps ran: the after snapshot, the stop, the card.
    for f in ["after.snapshot.json", "teardown.json", "processes.json"] {
        assert!(run.join(f).is_file(), "{f}");
    }
    assert_eq!(one(&a, "T2").status, Status::Pass, "the teardown ran");
    kept(&run, &before);
}

#[test]
fn a_sigterm_to_the_recorder_ends_the_run_in_order() {
    interrupted_by(libc::SIGTERM, "SIGTERM");
}

#[test]
fn a_sighup_to_the_recorder_ends_the_run_in_order() {
    interrupted_by(libc::SIGHUP, "SIGHUP");
}

#[test]
fn after_a_killed_recorder_teardown_finds_and_stops_what_is_left() {
    let w = World::new("fault-leftover");
    let port = free_port();
    let mut case = Isolated::record(&w, &record_args(port, "", load(port, 4000)), None);
    let run = case.run.clone();
    load_runs(&run, 4);
    // A paused server cannot act on its parent-death signal, and with the recorder's
    // guard killed too (both at once, as a `kill -9` of every recorder process does),
    // it outlives the recorder.
    let server = server_pid(&w, &run);
    signal(server, libc::SIGSTOP);
    signal(case.guard_pid(&w), libc::SIGKILL);
    signal(case.recorder_pid(&w), libc::SIGKILL);
    let code = case.wait_recorder(30);
    assert_eq!(code, 128 + libc::SIGKILL);
    let left = w.scoped_pids();
    assert!(
        left.contains(&server),
        "the paused server is left: {left:?}"
    );
    // Inside the namespace, as the recorder saw its processes.
    let mut c = case.inside(&w, RECORDER);
    c.args(["teardown", "--timeout", "10", "--run"]).arg(&run);
    let out = run_bounded(c, 60);
    let shown = text(&out.stdout);
    eprintln!(
        "fault case leftover after SIGKILL: teardown --run exit {:?}; {}",
        out.status.code(),
        shown.lines().last().unwrap_or("")
    );
    assert!(
        shown.contains("target  pid="),
        "{shown}{}",
        text(&out.stderr)
    );
    nothing_left(&w);
    let end = case.finish(code);
    drop(end);
    // No teardown of the recorder's own ran: T2 cannot pass on the gate's reading.
    let (code, shown) = analyze(&w, &run);
    assert_ne!(code, Some(0), "{shown}");
    broke_first(&shown, "the recorder did not finish");
    eprintln!(
        "  inferlint analyze: first line: {}",
        first_verdict_line(&shown)
    );
    let (_, a) = verdicts(&run);
    let t2 = one(&a, "T2");
    assert_eq!(t2.status, Status::Unknown, "{}", t2.message);
}
