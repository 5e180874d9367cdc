//! The load command: which benchmark client it is (`vllm bench serve`,
//! SGLang's and TensorRT-LLM's scripts, `guidellm run`, `aiperf profile`), the flags that
//! make it save its result into the run folder, where the result lands, and running it with
//! its merged output echoed and appended to `load.log` line by line.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

use analyzer::docs::{self, manifest::Client};
use nix::sys::signal::Signal;

use crate::signals;

pub use analyzer::bench::argv::{flag_value, split_commands, THEN};
use analyzer::bench::argv::{flag_values, has_flag, option_key};

/// A program token by its file name (`/venv/bin/guidellm` is `guidellm`).
fn program_is(token: &str, name: &str) -> bool {
    token.rsplit('/').next() == Some(name)
}

/// The client a load vector runs. Only the vector is inspected: a client inside
/// `bash -c "..."` is not recognised.
pub fn client_of(argv: &[String]) -> Option<Client> {
    if argv.windows(2).any(|w| w[0] == "bench" && w[1] == "serve") {
        return Some(Client::Vllm);
    }
    // `guidellm run` (0.8); `guidellm benchmark` is the older releases' command.
    if argv
        .windows(2)
        .any(|w| program_is(&w[0], "guidellm") && (w[1] == "run" || w[1] == "benchmark"))
    {
        return Some(Client::Guidellm);
    }
    if argv
        .windows(2)
        .any(|w| program_is(&w[0], "aiperf") && w[1] == "profile")
    {
        return Some(Client::Aiperf);
    }
    if argv
        .iter()
        .any(|t| t == "sglang.benchmark.serving" || t == "sglang.bench_serving")
    {
        return Some(Client::Sglang);
    }
    if argv
        .iter()
        .any(|t| t == "tensorrt_llm.serve.scripts.benchmark_serving")
    {
        return Some(Client::Trtllm);
    }
    None
}

/// A whole positive number, all digits.
fn whole(v: &str) -> Option<i64> {
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .then(|| v.parse().ok())
        .flatten()
}

/// The concurrency the load asks for, when it is one number: `--max-concurrency`;
/// GuideLLM's `--profile kind=concurrent,streams=N`; AIPerf's `--concurrency N` without a
/// request rate. A list (a sweep), a rate or several commands (`--then`) give none; the
/// result files tell more.
pub fn requested(argv: &[String]) -> Option<i64> {
    if split_commands(argv).len() > 1 {
        return None;
    }
    match client_of(argv) {
        Some(Client::Guidellm) => {
            let profile = flag_value(argv, "--profile")?;
            (option_key(profile, "kind") == Some("concurrent"))
                .then(|| option_key(profile, "streams").and_then(whole))
                .flatten()
        }
        Some(Client::Aiperf) => {
            if has_flag(argv, "--request-rate") {
                return None;
            }
            whole(flag_value(argv, "--concurrency")?)
        }
        _ => whole(flag_value(argv, "--max-concurrency")?),
    }
}

/// Where the client's result will be.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultFile {
    Exact(PathBuf),
    /// The newest `*.json` in this folder modified since the load started.
    NewestIn(PathBuf),
    None,
}

/// The vector to run and where its result will be.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub argv_run: Vec<String>,
    pub appended: Vec<String>,
    pub result: ResultFile,
}

fn in_dir(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

/// Why a load command cannot run, found before the server starts: a program that is
/// not on PATH, a path that is not an executable file, or a script whose interpreter
/// (its `#!` line) is not one (a virtual environment moved or deleted). Each `--then`
/// command counts.
pub fn cannot_run(argv: &[String]) -> Option<String> {
    split_commands(argv).into_iter().find_map(|c| {
        let prog = c.first()?;
        let found = if prog.contains('/') {
            Some(Path::new(prog).to_path_buf()).filter(|p| runnable(p))
        } else {
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths)
                .map(|d| d.join(prog))
                .find(|p| runnable(p))
        };
        let Some(path) = found else {
            return Some(format!(
                "the load command {prog} cannot be run: no such executable"
            ));
        };
        interpreter(&path)
            .filter(|i| !runnable(Path::new(i)))
            .map(|i| {
                format!(
                    "the load command {prog} cannot be run: its interpreter {i} (the #! line \
                     of {}) is not an executable",
                    path.display()
                )
            })
    })
}

fn runnable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A script's interpreter: the first word of its `#!` line, when it has one.
fn interpreter(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|b| *b == b'\n').next()?;
    let word = String::from_utf8_lossy(line)
        .split_whitespace()
        .next()?
        .to_string();
    Some(word)
}

/// The names a client's result gets in the run folder: `bench.json` (or `.jsonl`, or the
/// `aiperf` artifact folder) for the only load command; `bench-N.json` and so on for the
/// Nth of several, so no run overwrites an earlier one's result.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultNames {
    pub json: String,
    pub jsonl: String,
    pub aiperf_dir: String,
}

impl ResultNames {
    /// Of the only load command.
    pub fn only() -> ResultNames {
        ResultNames {
            json: docs::BENCH_JSON.into(),
            jsonl: docs::BENCH_JSONL.into(),
            aiperf_dir: docs::AIPERF_DIR.into(),
        }
    }

    /// Of the Nth (1-based) of several.
    pub fn nth(n: usize) -> ResultNames {
        ResultNames {
            json: docs::bench_run_json(n),
            jsonl: docs::bench_run_jsonl(n),
            aiperf_dir: format!("{}-{n}", docs::AIPERF_DIR),
        }
    }
}

/// Adds the save flags a recognised client lacks (DIR as given).
pub fn plan(argv: &[String], client: Option<Client>, dir: &str) -> Plan {
    plan_named(argv, client, dir, &ResultNames::only())
}

/// As [`plan`], saving under the given names.
pub fn plan_named(argv: &[String], client: Option<Client>, dir: &str, names: &ResultNames) -> Plan {
    let mut appended: Vec<String> = Vec::new();
    let result = match client {
        None => ResultFile::None,
        Some(Client::Sglang) => match flag_value(argv, "--output-file") {
            Some(f) => ResultFile::Exact(PathBuf::from(f)),
            None => {
                let f = in_dir(dir, &names.jsonl);
                appended = vec!["--output-file".into(), f.clone()];
                ResultFile::Exact(PathBuf::from(f))
            }
        },
        Some(Client::Guidellm) => {
            // An `--output kind=json,path=P` of the user's own, else ours.
            let own = flag_values(argv, "--output").into_iter().find_map(|v| {
                (option_key(v, "kind") == Some("json"))
                    .then(|| option_key(v, "path"))
                    .flatten()
            });
            match own {
                Some(p) => ResultFile::Exact(PathBuf::from(p)),
                None => {
                    let f = in_dir(dir, &names.json);
                    appended = vec!["--output".into(), format!("kind=json,path={f}")];
                    ResultFile::Exact(PathBuf::from(f))
                }
            }
        }
        Some(Client::Aiperf) => {
            let given = flag_value(argv, "--artifact-dir")
                .or_else(|| flag_value(argv, "--output-artifact-dir"));
            let artifacts = match given {
                Some(d) => d.to_string(),
                None => {
                    let d = in_dir(dir, &names.aiperf_dir);
                    appended = vec!["--artifact-dir".into(), d.clone()];
                    d
                }
            };
            // `--profile-export-prefix foo` renames the summary to foo.json.
            let name = flag_value(argv, "--profile-export-prefix")
                .or_else(|| flag_value(argv, "--profile-export-file"))
                .map_or(docs::AIPERF_RESULT.to_string(), |p| {
                    format!("{}.json", p.trim_end_matches(".json"))
                });
            ResultFile::Exact(PathBuf::from(in_dir(&artifacts, &name)))
        }
        Some(Client::Vllm | Client::Trtllm) => {
            if !has_flag(argv, "--save-result") {
                appended = [
                    "--save-result",
                    "--result-dir",
                    dir,
                    "--result-filename",
                    &names.json,
                ]
                .map(String::from)
                .to_vec();
                ResultFile::Exact(PathBuf::from(in_dir(dir, &names.json)))
            } else {
                let rdir = PathBuf::from(flag_value(argv, "--result-dir").unwrap_or("."));
                match flag_value(argv, "--result-filename") {
                    Some(f) => ResultFile::Exact(rdir.join(f)),
                    None => ResultFile::NewestIn(rdir),
                }
            }
        }
    };
    // vLLM's client keeps per-request times only with --save-detailed (T18 compares the
    // first requests with the rest).
    if client == Some(Client::Vllm) && !has_flag(argv, "--save-detailed") {
        appended.push("--save-detailed".into());
    }
    let mut argv_run = argv.to_vec();
    argv_run.extend(appended.iter().cloned());
    Plan {
        argv_run,
        appended,
        result,
    }
}

/// The result file written, if any.
pub fn find_result(result: &ResultFile, since: SystemTime) -> Option<PathBuf> {
    match result {
        ResultFile::None => None,
        ResultFile::Exact(p) => p.is_file().then(|| p.clone()),
        ResultFile::NewestIn(dir) => std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| {
                let m = e.metadata().ok()?.modified().ok()?;
                (m >= since && e.file_type().ok()?.is_file()).then(|| (m, e.path()))
            })
            .max()
            .map(|(_, p)| p),
    }
}

/// AIPerf's per-request export beside its summary (`profile_export.jsonl`).
pub const AIPERF_REQUESTS: &str = "profile_export.jsonl";

/// The steps of an AIPerf sweep (`--concurrency 2,16`): AIPerf writes no summary at
/// `expected` then, but one artifact folder per step beside it (`concurrency_2/`,
/// `concurrency_16/`), each with its own summary. Their summaries, in the order the steps
/// ran (by when each summary was written); none when `expected` is there.
pub fn aiperf_steps(expected: &Path) -> Vec<PathBuf> {
    if expected.is_file() {
        return Vec::new();
    }
    let (Some(dir), Some(name)) = (expected.parent(), expected.file_name()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut steps: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path().join(name))
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    steps.sort();
    steps.into_iter().map(|(_, p)| p).collect()
}

/// Copies a result found outside the folder (or under another name) in as `names.json`
/// (one JSON document) or `names.jsonl` (JSON lines). Returns the name in the folder.
pub fn bring_in(found: &Path, dir: &Path, names: &ResultNames) -> std::io::Result<String> {
    let same = |name: &str| {
        let a = std::fs::canonicalize(found).ok();
        a.is_some() && a == std::fs::canonicalize(dir.join(name)).ok()
    };
    for name in [&names.json, &names.jsonl] {
        if same(name) {
            return Ok(name.clone());
        }
    }
    let bytes = std::fs::read(found)?;
    let text = String::from_utf8_lossy(&bytes);
    let name = if analyzer::json::parse(&text).is_ok() {
        &names.json
    } else {
        &names.jsonl
    };
    crate::docs::write_atomic(dir, name, &bytes)?;
    Ok(name.clone())
}

/// How the load ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Ended {
    pub code: Option<i32>,
    pub signal: Option<String>,
}

fn ended(st: ExitStatus) -> Ended {
    use std::os::unix::process::ExitStatusExt;
    Ended {
        code: st.code(),
        signal: st
            .signal()
            .and_then(|s| Signal::try_from(s).ok())
            .map(|s| s.as_str().to_string()),
    }
}

/// Where echoed lines go: stdout normally, stderr under `--json`; through the progress
/// line so they do not tear it.
pub type Echo = Box<dyn Fn(&str) + Send>;

/// Runs the load: one pipe for stdout and stderr, each line echoed and appended to
/// `log` (UTF-8, invalid bytes replaced), flushed per line. A stop signal ends it:
/// after a terminal Ctrl-C it gets 10 s to finish, then SIGTERM, then SIGKILL 10 s later.
/// `started` is given the load's process id once it runs; `tick` is called about ten
/// times a second while it runs; when it returns true (the server died, a write into the
/// folder failed) the load is stopped at once.
pub fn run(
    argv: &[String],
    log: &Path,
    echo: Echo,
    fault: &crate::write_fault::WriteFault,
    started: &mut dyn FnMut(i32),
    tick: &mut dyn FnMut() -> bool,
) -> Result<(Ended, bool), String> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    let (reader, writer) = std::io::pipe().map_err(|e| e.to_string())?;
    let writer2 = writer.try_clone().map_err(|e| e.to_string())?;
    let Some((prog, args)) = argv.split_first() else {
        return Err("the load command is empty".into());
    };
    let mut cmd = Command::new(prog);
    cmd.args(args).stdout(writer).stderr(writer2);
    // The load dies with the recorder, however the recorder dies (it stays in the
    // recorder's process group, so a terminal's Ctrl-C reaches it too).
    // SAFETY: only an async-signal-safe call (prctl) between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)
        });
    }
    let mut child = crate::reaper::spawn(&mut cmd)
        .map_err(|e| format!("cannot run the load command {prog}: {e}"))?;
    drop(cmd); // our copies of the pipe's write end, so the reader sees its end
    let name = log
        .file_name()
        .map_or_else(|| log.display().to_string(), |n| n.to_string_lossy().into());
    let fault = fault.clone();
    started(child.id() as i32);
    let pump = std::thread::spawn(move || {
        let mut r = BufReader::new(reader);
        let mut buf = Vec::new();
        let mut writing = true;
        loop {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf);
                    let line = line.trim_end_matches('\n').trim_end_matches('\r');
                    echo(line);
                    // A failed write is the run's fault (it stops the load); the output
                    // is still drained so the load never blocks on a full pipe.
                    if writing {
                        let written = file
                            .write_all(format!("{line}\n").as_bytes())
                            .and_then(|()| file.flush());
                        if let Err(e) = written {
                            fault.report(&e, &name);
                            writing = false;
                        }
                    }
                }
            }
        }
    });
    let status = wait(&mut child, tick);
    let stopped = crate::load_leftovers::stop(&crate::procs::ProcFs::default());
    if stopped > 0 {
        crate::say(&format!(
            "== the load command left {stopped} process(es) running: stopped"
        ));
    }
    // Its output to its end; a writer out of reach (another session) is not waited for.
    let until = Instant::now() + Duration::from_secs(5);
    while !pump.is_finished() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    if pump.is_finished() {
        let _ = pump.join();
    }
    let interrupted = signals::interrupted();
    Ok((ended(status), interrupted))
}

/// How often the wait for the load looks at signals and refreshes the live line; the
/// load's end itself wakes it at once.
const WAIT_STEP: Duration = Duration::from_millis(100);

/// Wakes `rx`'s owner when `pid` has ended, without collecting it (WNOWAIT): the exit
/// status stays for `Child::try_wait`.
fn notify_exit(pid: nix::unistd::Pid) -> Receiver<()> {
    use nix::sys::wait::{waitid, Id, WaitPidFlag};
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        while let Err(nix::errno::Errno::EINTR) =
            waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT)
        {}
        let _ = tx.send(());
    });
    rx
}

fn wait(child: &mut Child, tick: &mut dyn FnMut() -> bool) -> ExitStatus {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let exited = notify_exit(pid);
    let mut since_signal: Option<Instant> = None;
    let mut termed: Option<Instant> = None;
    let mut stop_now = false;
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return st;
        }
        if signals::interrupted() || stop_now {
            let t0 = *since_signal.get_or_insert_with(Instant::now);
            // A terminal Ctrl-C reached the load too (same process group): give it a
            // moment to stop on its own; a second one, another signal, or a fault the tick
            // found (a dead server, a failed write) stops it now.
            let grace = if signals::last_was_sigint() && signals::count() == 1 && !stop_now {
                10
            } else {
                0
            };
            if termed.is_none() && t0.elapsed() >= Duration::from_secs(grace) {
                let _ = nix::sys::signal::kill(pid, Signal::SIGTERM);
                termed = Some(Instant::now());
            }
            if termed.is_some_and(|t| t.elapsed() >= Duration::from_secs(10)) {
                let _ = child.kill();
            }
        }
        stop_now |= tick();
        // Woken early by the load's end; once the watcher is gone, the plain step.
        if let Err(RecvTimeoutError::Disconnected) = exited.recv_timeout(WAIT_STEP) {
            std::thread::sleep(WAIT_STEP);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_with_a_missing_interpreter_cannot_run() {
        use std::os::unix::fs::PermissionsExt;
        let d = std::env::temp_dir().join(format!("load-shebang-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let script = |name: &str, text: &str| {
            let p = d.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p.display().to_string()
        };
        let good = script("good", "#!/bin/sh\necho\n");
        let moved = script("moved", "#! /gone/venv/bin/python3 -u\nprint()\n");
        let plain = script("plain", "\x7fELF");
        assert_eq!(cannot_run(std::slice::from_ref(&good)), None);
        assert_eq!(cannot_run(std::slice::from_ref(&plain)), None);
        let why = cannot_run(&[moved.clone(), "--rate".into(), "1".into()]).unwrap();
        assert_eq!(
            why,
            format!(
                "the load command {moved} cannot be run: its interpreter /gone/venv/bin/python3 \
                 (the #! line of {moved}) is not an executable"
            )
        );
        assert!(cannot_run(&["no-such-load-tool".into()])
            .unwrap()
            .ends_with("no such executable"));
        let _ = std::fs::remove_dir_all(d);
    }

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn rewriting_exact_vectors() {
        let a = v("vllm bench serve --model M --max-concurrency 32");
        let p = plan(&a, client_of(&a), "run");
        assert_eq!(
            p.argv_run,
            v("vllm bench serve --model M --max-concurrency 32 --save-result --result-dir run --result-filename bench.json --save-detailed")
        );
        assert_eq!(p.result, ResultFile::Exact("run/bench.json".into()));
        assert_eq!(requested(&a), Some(32));
        assert_eq!(requested(&v("x --max-concurrency=8")), Some(8));
        assert_eq!(requested(&v("x --max-concurrency 8x")), None);

        let a = v("vllm bench serve --save-result --result-dir r --result-filename b.json");
        let p = plan(&a, client_of(&a), "run");
        assert_eq!(p.appended, v("--save-detailed"));
        let a = v("vllm bench serve --save-result --save-detailed --result-dir r --result-filename b.json");
        let p = plan(&a, client_of(&a), "run");
        assert_eq!(p.argv_run, a);
        assert_eq!(p.result, ResultFile::Exact("r/b.json".into()));
        let a = v("vllm bench serve --save-result");
        assert_eq!(
            plan(&a, client_of(&a), "run").result,
            ResultFile::NewestIn(".".into())
        );

        let a = v("python -m tensorrt_llm.serve.scripts.benchmark_serving --model m");
        assert_eq!(client_of(&a), Some(Client::Trtllm));
        assert!(plan(&a, client_of(&a), "d/").argv_run.ends_with(&v(
            "--save-result --result-dir d/ --result-filename bench.json"
        )));

        for m in ["sglang.benchmark.serving", "sglang.bench_serving"] {
            let a = v(&format!("python3 -m {m} --backend sglang"));
            let p = plan(&a, client_of(&a), "/run");
            assert_eq!(p.appended, v("--output-file /run/bench.jsonl"));
        }
        let a = v("python3 -m sglang.bench_serving --output-file mine.jsonl");
        let p = plan(&a, client_of(&a), "run");
        assert_eq!(
            (p.argv_run.clone(), p.result),
            (a, ResultFile::Exact("mine.jsonl".into()))
        );

        let a = v("locust -u 32");
        let p = plan(&a, client_of(&a), "run");
        assert_eq!(
            (client_of(&a), p.argv_run.clone(), p.result),
            (None, a, ResultFile::None)
        );
        assert_eq!(client_of(&v("bash -c vllm_bench_serve")), None);
    }

    #[test]
    fn several_load_commands_each_save_their_own_result() {
        let a = v("vllm bench serve --max-concurrency 2 --then --then vllm bench serve --max-concurrency 16 --then");
        let cmds = split_commands(&a);
        assert_eq!(
            cmds,
            [
                v("vllm bench serve --max-concurrency 2"),
                v("vllm bench serve --max-concurrency 16")
            ]
        );
        assert_eq!(split_commands(&v("locust -u 2")), [v("locust -u 2")]);
        assert_eq!(requested(&a), None, "each run asks for its own");
        let p = plan_named(&cmds[1], client_of(&cmds[1]), "run", &ResultNames::nth(2));
        assert_eq!(
            p.appended,
            v("--save-result --result-dir run --result-filename bench-2.json --save-detailed")
        );
        assert_eq!(p.result, ResultFile::Exact("run/bench-2.json".into()));
        let s = v("python3 -m sglang.bench_serving --backend sglang");
        let p = plan_named(&s, client_of(&s), "run", &ResultNames::nth(3));
        assert_eq!(p.appended, v("--output-file run/bench-3.jsonl"));
        let g = v("aiperf profile --concurrency 8");
        let p = plan_named(&g, client_of(&g), "run", &ResultNames::nth(1));
        assert_eq!(p.appended, v("--artifact-dir run/aiperf-1"));
    }

    #[test]
    fn an_aiperf_sweep_has_one_summary_per_step_in_the_order_they_ran() {
        let dir = std::env::temp_dir().join(format!("aiperf-steps-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let expected = dir.join(docs::AIPERF_RESULT);
        for step in ["concurrency_2", "concurrency_16", "logs"] {
            std::fs::create_dir_all(dir.join(step)).unwrap();
        }
        for step in ["concurrency_2", "concurrency_16"] {
            std::fs::write(dir.join(step).join(docs::AIPERF_RESULT), "{}").unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            aiperf_steps(&expected),
            [
                dir.join("concurrency_2").join(docs::AIPERF_RESULT),
                dir.join("concurrency_16").join(docs::AIPERF_RESULT)
            ]
        );
        std::fs::write(&expected, "{}").unwrap();
        assert!(aiperf_steps(&expected).is_empty(), "a single run's summary");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn guidellm_saves_its_json_report_into_the_folder() {
        let a = v(
            "/venv/bin/guidellm run --backend kind=openai_http,target=http://h:8000 \
                   --profile kind=concurrent,streams=16 --constraint kind=max_requests,count=48",
        );
        assert_eq!(client_of(&a), Some(Client::Guidellm));
        assert_eq!(requested(&a), Some(16));
        let p = plan(&a, client_of(&a), "run");
        assert_eq!(p.appended, v("--output kind=json,path=run/bench.json"));
        assert_eq!(p.result, ResultFile::Exact("run/bench.json".into()));

        let a = v(
            "guidellm run --profile kind=concurrent,streams[0]=2,streams[1]=8 \
                   --output kind=csv,path=x.csv --output=kind=json,path=/tmp/g.json",
        );
        assert_eq!(requested(&a), None, "a sweep asks for no single number");
        let p = plan(&a, client_of(&a), "run");
        assert!(p.appended.is_empty());
        assert_eq!(p.result, ResultFile::Exact("/tmp/g.json".into()));
        assert_eq!(
            requested(&v("guidellm run --profile kind=poisson,rate=4")),
            None
        );
        assert_eq!(
            client_of(&v("guidellm benchmark --target x")),
            Some(Client::Guidellm)
        );
        assert_eq!(client_of(&v("guidellm config")), None);
    }

    #[test]
    fn aiperf_keeps_its_artifacts_in_the_folder() {
        let a =
            v("aiperf profile --model m --url http://h:8000 --concurrency 8 --request-count 24");
        assert_eq!(client_of(&a), Some(Client::Aiperf));
        assert_eq!(requested(&a), Some(8));
        let p = plan(&a, client_of(&a), "run/");
        assert_eq!(p.appended, v("--artifact-dir run/aiperf"));
        assert_eq!(
            p.result,
            ResultFile::Exact("run/aiperf/profile_export_aiperf.json".into())
        );
        let a = v("aiperf profile --concurrency 2,8 --artifact-dir a --profile-export-prefix foo");
        assert_eq!(requested(&a), None);
        let p = plan(&a, client_of(&a), "run");
        assert!(p.appended.is_empty());
        assert_eq!(p.result, ResultFile::Exact("a/foo.json".into()));
        assert_eq!(
            requested(&v("aiperf profile --concurrency 8 --request-rate 4")),
            None,
            "beside a rate, a concurrency is a cap"
        );
    }
}
