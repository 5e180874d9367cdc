//! Faults around the load and the start: a server that dies on the load tool's first
//! test request (the tool would retry for 600 s), a second Ctrl-C during the load's
//! grace, and a recorder killed while the server is still starting.

use super::*;

/// The load command's processes of this case that are alive (the simulated
/// `vllm bench serve`; the server is `vllm serve`).
fn load_pids(w: &World) -> Vec<i32> {
    w.scoped_pids()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == b"bench"))
        })
        .collect()
}

#[test]
fn a_server_that_dies_on_the_first_test_request_does_not_hang_the_run() {
    let w = World::new("fault-first-request");
    let port = free_port();
    // The load's own ready check (no --ready-check-timeout-sec 0): it retries its test
    // request for up to 600 s against a server that is gone.
    let load = bench(&format!("http://127.0.0.1:{port}"), MODEL, 32, 400);
    let args = record_args(port, "--sim-crash-on-first-request", load);
    let t0 = std::time::Instant::now();
    let mut case = Isolated::record(&w, &args, None);
    let code = case.wait_recorder(90);
    let took = t0.elapsed().as_secs_f64();
    let run = case.run.clone();
    nothing_left(&w);
    let end = case.finish(code);
    eprintln!("  the recording took {took:.1} s");
    assert!(
        end.stdout
            .contains("== the server exited with code 1 during the load: stopping the load"),
        "{}",
        end.stdout
    );
    assert_eq!(stopped_for(&run).as_deref(), Some("server_exited"));
    let a = broken(
        &w,
        "crash on the first test request",
        &end,
        &run,
        "the server exited with code 1 before the recorder stopped it",
    );
    let t7 = one(&a, "T7");
    assert_eq!(t7.status, Status::Fail, "{}", t7.message);
    for id in ["T1", "T10", "T14", "T15", "T17"] {
        let r = one(&a, id);
        assert_eq!(r.status, Status::Unknown, "{id}: {}", r.message);
    }
}

#[test]
fn a_second_ctrl_c_stops_the_load_at_once() {
    let w = World::new("fault-ctrl-c-twice");
    let port = free_port();
    let mut case = Isolated::record(&w, &record_args(port, "", load(port, 4000)), None);
    let run = case.run.clone();
    load_runs(&run, 4);
    let recorder = case.recorder_pid(&w);
    // A Ctrl-C to the recorder alone: the load, not reached, gets its 10 s of grace.
    signal(recorder, libc::SIGINT);
    let t0 = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert!(
        !load_pids(&w).is_empty(),
        "the load runs on after one Ctrl-C"
    );
    signal(recorder, libc::SIGINT);
    assert!(
        wait_until(5, || load_pids(&w).is_empty()),
        "the load still runs after the second Ctrl-C: {:?}",
        load_pids(&w)
    );
    let gone = t0.elapsed().as_secs_f64();
    let code = case.wait_recorder(60);
    nothing_left(&w);
    let end = case.finish(code);
    eprintln!("  the load ended {gone:.1} s after the first Ctrl-C");
    assert!(gone < 9.0, "{gone} s: the grace was not cut");
    assert_eq!(end.code, 130);
    broken(
        &w,
        "Ctrl-C twice",
        &end,
        &run,
        "the recording was interrupted",
    );
}

#[test]
fn a_recorder_killed_while_the_server_starts_leaves_nothing_running() {
    let w = World::new("fault-start-kill");
    let port = free_port();
    // A slow start (about 9 s), so the recorder dies with the engine child up and the
    // server not yet ready.
    let serve = format!("vllm serve {MODEL} --port {port} --max-num-seqs 32 --sim-speed 0.5");
    let mut args: Vec<String> = ["record", "-o", "run", "--no-probe", "--serve"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(serve);
    args.push("--".into());
    args.extend(load(port, 10));
    let mut case = Isolated::record(&w, &args, None);
    let run = case.run.clone();
    let log = run.join("boot.log");
    assert!(
        wait_until(30, || std::fs::read_to_string(&log)
            .is_ok_and(|l| l.contains("EngineCore"))),
        "the engine child did not start"
    );
    let booting = std::fs::read_to_string(&log).unwrap();
    assert!(
        !booting.contains("Application startup complete"),
        "{booting}"
    );
    signal(case.recorder_pid(&w), libc::SIGKILL);
    let code = case.wait_recorder(30);
    assert_eq!(code, 128 + libc::SIGKILL);
    // The server and its engine child stop with the recorder (no teardown --run).
    nothing_left(&w);
    let end = case.finish(code);
    eprintln!(
        "fault case recorder SIGKILL during the start: exit {}",
        end.code
    );
    let (code, shown) = analyze(&w, &run);
    assert_ne!(code, Some(0), "{shown}");
    broke_first(&shown, "the recorder did not finish");
    eprintln!(
        "  inferlint analyze: first line: {}",
        first_verdict_line(&shown)
    );
}

#[test]
fn other_runs_files_under_any_name_are_refused() {
    let w = World::new("fault-stale-names");
    let port = free_port();
    // Another run's GPU samples, a load tool's result under a name of its own, a
    // snapshot saved by hand: the analyzer would read each as this run's.
    for name in ["gpu.samples.jsonl", "benchmarks.json", "old-before.json"] {
        let dir = w.dir.join(format!("run-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), "{}").unwrap();
        let mut c = w.recorder();
        c.arg("record")
            .arg("-o")
            .arg(&dir)
            .arg("--serve")
            .arg(serve(port, ""))
            .arg("--")
            .args(load(port, 10));
        let out = run_bounded(c, 60);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&format!(
                "already holds a run ({name}: the analysis would read it as this run's)"
            )),
            "{err}"
        );
        assert_eq!(files(&dir), [name.to_string()], "nothing written");
    }
    nothing_left(&w);
}

#[test]
fn a_load_script_whose_interpreter_is_gone_is_refused_before_the_server_starts() {
    use std::os::unix::fs::PermissionsExt;
    let w = World::new("fault-load-interpreter");
    let port = free_port();
    let script = w.dir.join("my-load.sh");
    std::fs::write(&script, "#!/gone/venv/bin/python3\nprint('load')\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve"])
        .arg(serve(port, ""))
        .arg("--")
        .arg(&script);
    let out = run_bounded(c, 60);
    let err = text(&out.stderr);
    eprintln!(
        "fault case load interpreter gone: exit {:?}; {}",
        out.status.code(),
        err.trim()
    );
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("its interpreter /gone/venv/bin/python3"),
        "{err}"
    );
    assert!(!w.dir.join("run").exists(), "nothing is started or written");
    nothing_left(&w);
}

/// A load script that leaves a child of its own running (a worker, a log tail).
fn load_with_a_child(w: &World, port: u16) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let script = w.dir.join("load-with-child.sh");
    let bench = load(port, 4000).join(" ");
    std::fs::write(&script, format!("#!/bin/sh\nsleep 300 &\n{bench}\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    vec![script.display().to_string()]
}

#[test]
fn a_load_scripts_own_children_are_stopped_with_the_run() {
    let w = World::new("fault-load-children");
    let port = free_port();
    let mut case = Isolated::record(
        &w,
        &record_args(port, "", load_with_a_child(&w, port)),
        None,
    );
    let run = case.run.clone();
    load_runs(&run, 4);
    signal(case.recorder_pid(&w), libc::SIGTERM);
    // The script's `sleep` holds the load's output pipe: the recorder must not wait on it.
    let code = case.wait_recorder(60);
    nothing_left(&w);
    let end = case.finish(code);
    assert_eq!(end.code, 130);
    broken(
        &w,
        "load script's child",
        &end,
        &run,
        "the recording was interrupted",
    );
}

#[test]
fn a_killed_recorder_leaves_no_process_of_its_load_script() {
    let w = World::new("fault-load-children-kill");
    let port = free_port();
    let mut case = Isolated::record(
        &w,
        &record_args(port, "", load_with_a_child(&w, port)),
        None,
    );
    let run = case.run.clone();
    load_runs(&run, 4);
    assert!(load_pids(&w).len() == 1, "the script's client runs");
    signal(case.recorder_pid(&w), libc::SIGKILL);
    let code = case.wait_recorder(30);
    assert_eq!(code, 128 + libc::SIGKILL);
    // The script gets its parent-death signal; its client and its `sleep` have none: the
    // guard stops them, with the server.
    wait_until(12, || w.scoped_pids().is_empty());
    for p in w.scoped_pids() {
        eprintln!(
            "DEBUG left {p}: {:?} {:?}",
            std::fs::read_to_string(format!("/proc/{p}/cmdline")),
            std::fs::read_to_string(format!("/proc/{p}/stat"))
        );
    }
    nothing_left(&w);
    let end = case.finish(code);
    eprintln!(
        "fault case recorder SIGKILL with a load script's children: exit {}",
        end.code
    );
    let (code, shown) = analyze(&w, &run);
    assert_ne!(code, Some(0), "{shown}");
    broke_first(&shown, "the recorder did not finish");
}
