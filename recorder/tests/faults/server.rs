//! The server misbehaving during the load: a `/metrics` that stalls, a server paused with
//! SIGSTOP, and an engine that dies while its API server lives on, still logging.

use super::*;

#[test]
fn a_stalled_metrics_endpoint_is_recorded_and_the_series_checks_cannot_tell() {
    let w = World::new("fault-stall");
    let port = free_port();
    // Two readings before the load (the metrics step, the before snapshot), then about
    // two seconds of the series.
    let sim = "--sim-metrics-stall-after 10";
    let mut case = Isolated::record(&w, &record_args(port, sim, load(port, 1000)), None);
    let code = case.wait_recorder(120);
    let run = case.run.clone();
    nothing_left(&w);
    let end = case.finish(code);
    let a = broken(
        &w,
        "stalled /metrics",
        &end,
        &run,
        "the server did not answer its metrics after the load: timed out after 1 s",
    );
    // Each failed reading is in the series, when and why.
    let s = analyzer::series::Series::read(
        "run.series.jsonl",
        &std::fs::read(run.join("run.series.jsonl")).unwrap(),
    )
    .unwrap();
    assert!(s.failed.len() >= 2, "{:?}", s.failed);
    assert!(s
        .failed
        .iter()
        .all(|f| f.scrape_failed == "timed out after 1 s"));
    for id in ["T8", "T9"] {
        let r = one(&a, id);
        assert_eq!(r.status, Status::Unknown, "{id}: {}", r.message);
        assert!(r.message.contains("the readings stop"), "{}", r.message);
        assert!(
            r.message.contains("(the first: timed out after 1 s)"),
            "{}",
            r.message
        );
    }
    assert!(!run.join("after.snapshot.json").exists());
}

#[test]
fn a_paused_server_stops_the_load_and_is_stopped() {
    let w = World::new("fault-sigstop");
    let port = free_port();
    let mut case = Isolated::record(&w, &record_args(port, "", load(port, 4000)), None);
    let run = case.run.clone();
    load_runs(&run, 4);
    let before = series_now(&run);
    signal(server_pid(&w, &run), libc::SIGSTOP);
    let code = case.wait_recorder(60);
    // The teardown woke it to stop it.
    nothing_left(&w);
    let end = case.finish(code);
    let a = broken(
        &w,
        "server SIGSTOP",
        &end,
        &run,
        "the server was stopped (paused",
    );
    assert!(
        end.stdout.contains("== the server was stopped (paused by a signal or a debugger) for 3 s during the load: stopping the load"),
        "{}",
        end.stdout
    );
    assert_eq!(stopped_for(&run).as_deref(), Some("server_paused"));
    // The readings stopped with the server, before the recorder stopped the load.
    for id in ["T8", "T9"] {
        let r = one(&a, id);
        assert_eq!(r.status, Status::Unknown, "{id}: {}", r.message);
    }
    kept(&run, &before);
}

#[test]
fn an_engine_that_dies_under_a_living_api_server_is_a_t7_failure() {
    let w = World::new("fault-keep-alive");
    let port = free_port();
    let sim = "--sim-crash-at-request 10";
    let args = record_args(port, sim, load(port, 4000));
    // vLLM's own switch: the API server lives on after its engine died, logging a 500
    // line for every request it then gets.
    let keep_alive = [("VLLM_KEEP_ALIVE_ON_ENGINE_DEATH", "1")];
    let mut case = Isolated::record_with(&w, &args, None, &keep_alive);
    let code = case.wait_recorder(120);
    let run = case.run.clone();
    nothing_left(&w);
    let end = case.finish(code);
    let log = std::fs::read_to_string(run.join("boot.log")).unwrap();
    let dead = log.find("EngineDeadError").expect("the crash is logged");
    assert!(
        log[dead..].contains("\"POST /v1/completions HTTP/1.1\" 500"),
        "request lines follow the crash"
    );
    // Its process lives on: only its health check tells, and that stops the load.
    let a = broken(
        &w,
        "engine dead, API server alive",
        &end,
        &run,
        "the server's health check answered 503 Service Unavailable 3 times in a row during the load",
    );
    assert_eq!(stopped_for(&run).as_deref(), Some("server_unhealthy"));
    // Its engine died during the run: one T7, a failure naming the log's cause, whatever
    // request lines came after it.
    let t7 = one(&a, "T7");
    assert_eq!(t7.status, Status::Fail, "{}", t7.message);
    assert!(
        t7.message
            .starts_with("The server stopped answering its health check"),
        "{}",
        t7.message
    );
    assert!(
        t7.message.contains("illegal memory access"),
        "{}",
        t7.message
    );
}
