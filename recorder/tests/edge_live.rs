//! The edges of `record` on live simulated servers: a second signal during the stop, a
//! foreign listener during the boot wait (T13), a foreign server left alone by the final
//! sweep, the recorder killed outright (the parent-death signal, then `teardown --run`),
//! and `--json` keeping stdout for the Report.

mod common;
use common::*;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use analyzer::json::Json;

/// A process this test started outside the recorder, killed with its whole process group
/// (the simulated vLLM's engine child shares it) and reaped when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: SIGKILL to the group this test created for the child.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Guard {
    fn pid(&self) -> i32 {
        self.0.id() as i32
    }
}

/// The recorder, with its stdout lines arriving on a channel.
struct Recording {
    child: Child,
    lines: Receiver<String>,
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Recording {
    fn spawn(mut c: std::process::Command) -> Recording {
        c.stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Recording { child, lines }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits for a stdout line starting with `prefix`.
    fn wait_line(&self, prefix: &str, secs: u64) -> bool {
        let end = Instant::now() + Duration::from_secs(secs);
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    /// The exit code, within `secs`.
    fn exit_code(&mut self, secs: u64) -> Option<i32> {
        assert!(
            wait_until(secs, || matches!(self.child.try_wait(), Ok(Some(_)))),
            "record did not end within {secs} s"
        );
        self.child.wait().unwrap().code()
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill({pid}, {sig})");
}

/// The launched server's PID from the manifest, once it is there.
fn launched_pid(run: &Path) -> i32 {
    let mut pid = None;
    assert!(
        wait_until(60, || {
            pid = std::fs::read_to_string(run.join("manifest.json"))
                .ok()
                .and_then(|t| analyzer::json::parse(&t).ok())
                .and_then(|m| m.get("serve")?.get("pid")?.as_i64_trunc());
            pid.is_some()
        }),
        "no server pid in the manifest"
    );
    pid.unwrap() as i32
}

/// `(ppid, first argument)` of a process.
fn parent_and_arg0(pid: i32) -> Option<(i32, Vec<u8>)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some((ppid, cmd.split(|b| *b == 0).next()?.to_vec()))
}

/// The `VLLM::EngineCore` child of a simulated vLLM, waited for.
fn engine_core_of(parent: i32, secs: u64) -> i32 {
    let mut found = None;
    assert!(
        wait_until(secs, || {
            found = std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
                .find(|p| {
                    parent_and_arg0(*p)
                        .is_some_and(|(pp, a0)| pp == parent && a0.starts_with(b"VLLM::EngineCore"))
                });
            found.is_some()
        }),
        "no VLLM::EngineCore under {parent}"
    );
    found.unwrap()
}

/// A simulated vLLM this test starts itself, in its own process group, ready.
fn foreign_vllm(w: &World, port: u16, scope: &str, gpu: &Path) -> Guard {
    let log_path = w.dir.join(format!("foreign-{port}.log"));
    let log = std::fs::File::create(&log_path).unwrap();
    let mut c = w.cmd(w.bin.join("vllm"));
    c.args([
        "serve",
        "/models/Qwen3-8B",
        "--port",
        &port.to_string(),
        "--sim-speed",
        "60",
    ])
    .env("INFERLINT_RECORDER_SCOPE", scope)
    .env("INFERLINT_SIM_GPU_STATE", gpu)
    .stdout(log.try_clone().unwrap())
    .stderr(log)
    .stdin(Stdio::null())
    .process_group(0);
    let g = Guard(c.spawn().unwrap());
    assert!(
        wait_until(60, || std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .contains("Application startup complete")),
        "the foreign server did not become ready"
    );
    g
}

fn outcome(run: &Path) -> (String, String, Option<String>) {
    let m = json(&run.join("manifest.json"));
    let o = m.get("outcome").unwrap();
    let s = |k: &str| o.get(k).and_then(Json::as_str).map(str::to_string);
    (
        s("state").unwrap_or_default(),
        s("stage").unwrap_or_default(),
        s("problem"),
    )
}

/// The PIDs and groups `record` signalled, from `teardown.json`.
fn signalled(td: &Json) -> Vec<(String, i64, String)> {
    td.get("signals")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .map(|s| {
            let (k, id) = match s.get("group").and_then(Json::as_i64_trunc) {
                Some(g) => ("group", g),
                None => ("pid", s.get("pid").and_then(Json::as_i64_trunc).unwrap()),
            };
            (
                k.to_string(),
                id,
                s.get("signal").and_then(Json::as_str).unwrap().to_string(),
            )
        })
        .collect()
}

/// `record` in its load against a simulated vLLM slow to stop (its shutdown starts 20 s
/// after the stop signal, as an engine busy releasing the card). Returns the recorder,
/// the launched PID and the engine child's.
fn record_with_a_slow_stop(w: &World) -> (Recording, i32, i32) {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve = format!(
        "vllm serve /models/Qwen3-8B --port {port} --max-num-seqs 8 --sim-speed 10 --sim-slow-stop 20"
    );
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--no-probe", "--serve", &serve, "--"])
        .args(bench(&base, "/models/Qwen3-8B", 64, 4000));
    let rec = Recording::spawn(c);
    let run = w.dir.join("run");
    let series = run.join("run.series.jsonl");
    assert!(
        wait_until(90, || std::fs::read_to_string(&series)
            .is_ok_and(|s| s.lines().count() >= 4)),
        "the load did not start"
    );
    let top = launched_pid(&run);
    let core = engine_core_of(top, 10);
    (rec, top, core)
}

/// The folder and processes after an escalated stop: exit 130, everything of the run
/// gone at once, `abandoned`, no card check, T2 `unknown`.
fn check_abandoned(w: &World, rec: &mut Recording, top: i32, core: i32, since: Instant) {
    let code = rec.exit_code(30);
    let took = since.elapsed();
    assert_eq!(code, Some(130));
    // No 30 s SIGTERM wait, no 15 s sweep and no card check after the second signal.
    assert!(took < Duration::from_secs(12), "{took:?}");
    assert!(!alive(top) && !alive(core));
    assert!(
        wait_until(10, || w.scoped_pids().is_empty()),
        "left running: {:?}",
        w.scoped_pids()
    );
    let run = w.dir.join("run");
    let (state, stage, _) = outcome(&run);
    assert_eq!((state.as_str(), stage.as_str()), ("interrupted", "load"));
    let td = json(&run.join("teardown.json"));
    assert_eq!(
        td.get("abandoned").and_then(Json::as_bool),
        Some(true),
        "{}",
        td.to_compact()
    );
    assert!(td.get("clear").unwrap().is_null());
    assert_eq!(
        td.get("readings").and_then(Json::as_array).map(|r| r.len()),
        Some(0)
    );
    let sig = signalled(&td);
    let sid = i64::from(top);
    assert_eq!(sig[0], ("group".into(), sid, "SIGTERM".into()), "{sig:?}");
    assert!(
        sig.contains(&("group".into(), sid, "SIGKILL".into())),
        "{sig:?}"
    );
    assert!(
        !sig.iter().any(|s| s.2 == "SIGTERM" && s.0 == "pid"),
        "the sweep waited on SIGTERM: {sig:?}"
    );
    let (v, a) = verdicts(&run);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert_eq!(status(&v, "T2"), "unknown", "{v:?}");
}

/// SIGTERM during the load, then SIGINT while the stop waits for a
/// server that is slow to exit: no more waiting, SIGKILL to the group and every owned
/// process, `abandoned`, exit 130, T2 `unknown`.
#[test]
fn a_second_signal_during_the_stop_kills_at_once_and_abandons_the_teardown() {
    let w = World::new("escalate");
    let (mut rec, top, core) = record_with_a_slow_stop(&w);
    signal(rec.pid(), libc::SIGTERM);
    assert!(
        rec.wait_line("== stop the server", 60),
        "the stop did not begin"
    );
    // The API server got SIGTERM and is slow to act on it.
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    signal(rec.pid(), libc::SIGINT);
    check_abandoned(&w, &mut rec, top, core, t);
}

/// Two signals in a row during the load (an impatient double Ctrl-C, or SIGTERM then
/// SIGHUP): the second one arrives while the load is being ended, before the stop has
/// begun. It must not be lost: the stop is escalated as if it came during the stop.
#[test]
fn a_second_signal_before_the_stop_began_still_escalates_it() {
    let w = World::new("escalate2");
    let (mut rec, top, core) = record_with_a_slow_stop(&w);
    let t = Instant::now();
    signal(rec.pid(), libc::SIGTERM);
    signal(rec.pid(), libc::SIGHUP);
    check_abandoned(&w, &mut rec, top, core, t);
}

/// T13 (docs/tripwires.md#t13): the launched server is slow and never binds the port;
/// meanwhile another process starts listening there and answers `/health` 200. The marker
/// in the log and the 200 are not enough: the listening socket is not the run's, so the
/// run ends with the problem, and the foreign process is never signalled.
#[test]
fn a_foreign_listener_during_the_boot_wait_is_not_adopted() {
    let w = World::new("t13");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    // A server that prints the ready line once told to, and never listens.
    let serve = "sh -c 'while [ ! -e go ]; do sleep 0.1; done; echo \"INFO:     Application startup complete.\"; exec sleep 120'";
    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "run",
        "--no-probe",
        "--url",
        &url,
        "--serve",
        serve,
        "--",
        "true",
    ]);
    let mut rec = Recording::spawn(c);
    let run = w.dir.join("run");
    let launched = launched_pid(&run);
    // The foreign listener: a simulated vLLM of another campaign (its own scope and card).
    let other_gpu = w.dir.join("other-gpu");
    let foreign = foreign_vllm(&w, port, &format!("{}-other", w.scope), &other_gpu);
    std::fs::write(w.dir.join("go"), "").unwrap();
    let code = rec.exit_code(60);
    assert_eq!(code, Some(1));

    let (state, stage, problem) = outcome(&run);
    assert_eq!((state.as_str(), stage.as_str()), ("problem", "ready"));
    assert_eq!(
        problem.as_deref(),
        Some(format!("the server at {url} is not the one this run started").as_str())
    );
    let have = files(&run);
    for f in ["boot.log", "gate.json", "processes.json", "teardown.json"] {
        assert!(have.contains(&f.to_string()), "{f}: {have:?}");
    }
    for f in ["load.log", "before.snapshot.json", "run.series.jsonl"] {
        assert!(!have.contains(&f.to_string()), "{f}: {have:?}");
    }
    // Only the run's own server was signalled; the foreign one still serves, untouched.
    let td = json(&run.join("teardown.json"));
    for (_, id, _) in signalled(&td) {
        assert!(id == i64::from(launched), "signalled {id}");
    }
    assert!(!alive(launched));
    assert!(alive(foreign.pid()), "the foreign server was stopped");
    assert!(
        text(&std::fs::read(w.dir.join(format!("foreign-{port}.log"))).unwrap())
            .lines()
            .all(|l| !l.contains("Shutting down"))
    );
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    let procs = json(&run.join("processes.json"));
    let listed: Vec<i64> = procs
        .get("snapshots")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .flat_map(|s| s.get("processes").and_then(Json::as_array).unwrap())
        .filter_map(|p| p.get("pid").and_then(Json::as_i64_trunc))
        .collect();
    assert!(!listed.contains(&i64::from(foreign.pid())), "{listed:?}");
    assert!(
        wait_until(10, || w.scoped_pids().is_empty()),
        "left running: {:?}",
        w.scoped_pids()
    );
    drop(foreign);
}

/// The sweep after the stop: a second simulated vLLM in the same scope, started by the test
/// while the run boots, is a server of every engine's kind but not the run's: the final
/// sweep leaves it running and lists it in `left_alone`, and T2 fails on it.
#[test]
fn the_final_sweep_leaves_a_foreign_server_alive_and_lists_it() {
    let w = World::new("leftalone");
    let port = free_port();
    let serve = format!("vllm serve /models/Qwen3-8B --port {port} --sim-speed 60");
    let mut c = w.recorder();
    c.args([
        "record",
        "-o",
        "run",
        "--no-probe",
        "--stop-card-timeout",
        "3",
        "--serve",
        &serve,
        "--",
        "sh",
        "-c",
        "while [ ! -e go ]; do sleep 0.1; done; echo load done",
    ]);
    let mut rec = Recording::spawn(c);
    let run = w.dir.join("run");
    let launched = launched_pid(&run);
    // Past the gate: start a server of another campaign on the same card and scope.
    let fport = free_port();
    let foreign = foreign_vllm(&w, fport, &w.scope, &w.dir.join("gpu"));
    let fcore = engine_core_of(foreign.pid(), 10);
    std::fs::write(w.dir.join("go"), "").unwrap();
    let code = rec.exit_code(90);

    let (state, _, _) = outcome(&run);
    assert_eq!(state, "completed");
    assert!(!alive(launched));
    assert!(
        alive(foreign.pid()) && alive(fcore),
        "the foreign server was stopped"
    );
    let td = json(&run.join("teardown.json"));
    assert_eq!(td.get("abandoned").and_then(Json::as_bool), Some(false));
    let alone = td.get("left_alone").and_then(Json::as_array).unwrap();
    let entry = |pid: i32| {
        alone
            .iter()
            .find(|e| e.get("pid").and_then(Json::as_i64_trunc) == Some(i64::from(pid)))
            .unwrap_or_else(|| panic!("{pid} not in left_alone: {}", td.to_compact()))
    };
    let top = entry(foreign.pid());
    assert_eq!(top.get("engine").and_then(Json::as_str), Some("vllm"));
    let argv: Vec<&str> = top
        .get("argv")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .filter_map(Json::as_str)
        .collect();
    assert!(argv[0].ends_with("/vllm"), "{argv:?}");
    assert_eq!(argv[1..4], ["serve", "/models/Qwen3-8B", "--port"]);
    let core = entry(fcore);
    assert_eq!(core.get("engine").and_then(Json::as_str), Some("vllm"));
    assert_eq!(
        core.get("argv")
            .and_then(Json::as_array)
            .and_then(|a| a.first())
            .and_then(Json::as_str),
        Some("VLLM::EngineCore")
    );
    assert_eq!(alone.len(), 2, "{}", td.to_compact());
    for (_, id, _) in signalled(&td) {
        assert!(id != i64::from(foreign.pid()) && id != i64::from(fcore));
    }
    assert_eq!(td.get("clear").and_then(Json::as_bool), Some(false));
    let reason = td.get("reason").and_then(Json::as_str).unwrap();
    assert!(reason.ends_with("2 server processes alive"), "{reason}");
    let (v, _) = verdicts(&run);
    assert_eq!(status(&v, "T2"), "fail", "{v:?}");
    if sibling("inferlint").is_file() {
        assert_eq!(code, Some(1));
    }
    drop(foreign);
}

/// The recorder and its guard (`recorder/src/guard.rs`) killed outright together during
/// the boot wait. The launched server's top process gets its parent-death SIGTERM and is
/// gone within seconds; its vLLM engine child (no such signal, as in vLLM), with no guard
/// to stop its group, is orphaned and keeps the card. Then `teardown --run DIR` stops
/// exactly that run's processes, by its recorded session: not a server of another
/// campaign on the same card, not a bystander named "vllm serve". (With the guard alive,
/// the fault trial's `a_recorder_killed_while_the_server_starts_leaves_nothing_running`
/// shows nothing left.)
#[test]
fn sigkill_in_the_boot_wait_parent_death_then_teardown_run_finishes() {
    let w = World::new("orphanrun");
    let port = free_port();
    let serve = format!("vllm serve /models/Qwen3-8B --port {port} --sim-speed 0.05");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", &serve, "--", "true"]);
    let mut rec = Recording::spawn(c);
    let run = w.dir.join("run");
    let top = launched_pid(&run);
    let core = engine_core_of(top, 30);
    let fport = free_port();
    let foreign = foreign_vllm(&w, fport, &w.scope, &w.dir.join("gpu"));
    let fcore = engine_core_of(foreign.pid(), 10);
    let mut bystander = w.cmd("bash");
    bystander
        .args(["-c", "exec -a 'tail -f vllm serve.log' sleep 120"])
        .stdin(Stdio::null())
        .process_group(0);
    let bystander = Guard(bystander.spawn().unwrap());
    assert!(wait_until(5, || parent_and_arg0(bystander.pid())
        .is_some_and(|(_, a)| a.starts_with(b"tail"))));

    let guard = w
        .scoped_pids()
        .into_iter()
        .find(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.trim_end() == "inferlint-guard")
        })
        .expect("the recorder's guard");
    signal(guard, libc::SIGKILL);
    signal(rec.pid(), libc::SIGKILL);
    let _ = rec.child.wait();
    assert!(
        wait_until(5, || !alive(top)),
        "the server's top process outlived the recorder"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        alive(core),
        "the engine child should be orphaned, not stopped"
    );
    // The recorder never closed the folder.
    assert_eq!(outcome(&run).0, "running");

    let mut c = w.recorder();
    c.args([
        "teardown",
        "--run",
        "run",
        "--timeout",
        "3",
        "-o",
        "teardown.json",
    ]);
    let out = run_bounded(c, 60);
    let so = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{so}\n{}", text(&out.stderr));
    assert_eq!(so.matches("target  pid=").count(), 1, "{so}");
    assert!(
        so.contains(&format!("target  pid={core:<8}VLLM::EngineCore")),
        "{so}"
    );
    assert!(
        so.contains("left alone (--run run): 2 processes of vLLM servers"),
        "{so}"
    );
    assert!(so.contains("[ T2] TRIPWIRE-FAILED  "), "{so}");
    assert!(!alive(core));
    assert!(
        alive(foreign.pid()) && alive(fcore),
        "the foreign server was stopped"
    );
    assert!(alive(bystander.pid()), "the bystander was signalled");
    let td = json(&w.dir.join("teardown.json"));
    let sig = signalled(&td);
    assert_eq!(sig, vec![("pid".into(), i64::from(core), "SIGTERM".into())]);
    assert_eq!(
        td.get("launched")
            .and_then(|l| l.get("pid"))
            .and_then(Json::as_i64_trunc),
        Some(i64::from(top))
    );
    drop(foreign);
    drop(bystander);
}

/// The recorder killed outright during the load. The parent-death
/// SIGTERM reaches the server's top process, which shuts down as on any SIGTERM (its log
/// says so) and stops its engine child; `teardown --run` then finds nothing of the run.
#[test]
fn sigkill_in_the_load_the_server_gets_its_parent_death_sigterm() {
    let w = World::new("pdeath");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve =
        format!("vllm serve /models/Qwen3-8B --port {port} --max-num-seqs 8 --sim-speed 10");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--no-probe", "--serve", &serve, "--"])
        .args(bench(&base, "/models/Qwen3-8B", 64, 4000));
    let mut rec = Recording::spawn(c);
    let run = w.dir.join("run");
    let series = run.join("run.series.jsonl");
    assert!(
        wait_until(90, || std::fs::read_to_string(&series)
            .is_ok_and(|s| s.lines().count() >= 4)),
        "the load did not start"
    );
    let top = launched_pid(&run);
    let core = engine_core_of(top, 10);
    signal(rec.pid(), libc::SIGKILL);
    let _ = rec.child.wait();
    assert!(
        wait_until(8, || !alive(top) && !alive(core)),
        "the server outlived the recorder"
    );
    let boot = text(&std::fs::read(run.join("boot.log")).unwrap());
    assert!(
        boot.contains("[shutdown] EngineCore: trigger received signal=SIGTERM"),
        "{}",
        &boot[boot.len().saturating_sub(2000)..]
    );
    assert!(boot.contains("Application shutdown complete."));
    assert!(!run.join("teardown.json").exists());
    let mut c = w.recorder();
    c.args(["teardown", "--run", "run", "--dry-run"]);
    let out = run_bounded(c, 30);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).starts_with("no server processes found"),
        "{}",
        text(&out.stdout)
    );
}

/// With `--json`, stdout carries only the Report `analyze` prints;
/// progress and the load's output go to stderr.
#[test]
fn json_mode_keeps_stdout_for_the_report() {
    let w = World::new("jsonout");
    let analyzer = sibling("inferlint");
    assert!(
        analyzer.is_file(),
        "{} is missing: run `cargo build -p analyzer` first",
        analyzer.display()
    );
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve = format!("vllm serve /models/Qwen3-8B --port {port} --sim-speed 60");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--json", "--serve", &serve, "--"])
        .args(bench(&base, "/models/Qwen3-8B", 4, 16));
    let out = run_bounded(c, 120);
    let so = text(&out.stdout);
    let se = text(&out.stderr);
    let report = analyzer::json::parse(&so)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{so}"));
    assert_eq!(
        report.get("schema").and_then(Json::as_str),
        Some("inferlint.report/1")
    );
    assert!(
        report.get("checks").and_then(Json::as_array).is_some(),
        "{so}"
    );
    assert!(!so.contains("== "), "{so}");
    for line in [
        "== engine: vLLM (from the --serve command)",
        "== probe: one request, then 8 at once",
        "== load: vllm bench serve ",
        "Successful requests:",
        "== stop the server",
        "files:  run",
    ] {
        assert!(se.contains(line), "{line} not on stderr:\n{se}");
    }
    assert_eq!(outcome(&w.dir.join("run")).0, "completed");
    // The exit status is the analyzer's, as without --json.
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 1 || code == 2, "{code}");
}
