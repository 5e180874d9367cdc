//! `record`: the whole recorded run (recorder.md §3). Each step prints a `== ` line; a
//! problem ends the run with its text and stage in the manifest, and the closing steps
//! (after snapshot, series, result, stop, manifest, analysis) still run where they apply.

pub mod address;
pub mod manifest;
pub mod serve;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use analyzer::engine::{engine_from_argv, engine_from_log, shell_split};
use analyzer::json::{self, Json};
use analyzer::Engine;

use crate::docs;
use crate::load::{self, Client};
use crate::probe::{self, ProbeOptions};
use crate::procs::ProcFs;
use crate::scrape::{self, Scraper};
use crate::series::{Recorder, SeriesWriter};
use crate::signals;
use crate::{clock, gpu, progress, say};
use manifest::{BootLog, Manifest, Outcome, Serve};

/// Names a folder must not already hold (recorder.md §3.1).
fn holds_run_files(dir: &Path) -> Option<String> {
    let rd = std::fs::read_dir(dir).ok()?;
    rd.flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .find(|n| {
            [
                "manifest.json",
                "boot.log",
                "run.series.jsonl",
                "load.log",
                "bench.json",
                "bench.jsonl",
            ]
            .contains(&n.as_str())
                || n.ends_with(".snapshot.json")
        })
}

/// Everything `record` is given.
#[derive(Debug, Clone)]
pub struct Options {
    pub dir: PathBuf,
    pub serve: Option<String>,
    pub url: Option<String>,
    pub boot_log: Option<PathBuf>,
    pub requested: Option<i64>,
    pub bench_result: Option<PathBuf>,
    pub interval: f64,
    pub ready_timeout: f64,
    /// The clear-card rule's limit after the stop (120 s; shorter only in tests).
    pub stop_card_timeout: f64,
    pub no_probe: bool,
    pub title: Option<String>,
    pub no_analyze: bool,
    pub json: bool,
    pub strict: bool,
    /// The engine named, and by what (`flag` or `env`).
    pub engine: Option<(Engine, &'static str)>,
    pub load: Vec<String>,
    pub argv: Vec<String>,
}

/// Why the run stopped early.
enum Stop {
    Problem(&'static str, String),
    Interrupted(&'static str),
}

type Step<T> = Result<T, Stop>;

fn problem<T>(stage: &'static str, text: impl Into<String>) -> Step<T> {
    Err(Stop::Problem(stage, text.into()))
}

struct Run {
    o: Options,
    fs: ProcFs,
    m: Manifest,
    engine: Option<Engine>,
    server: Option<serve::Server>,
    processes: Vec<Json>,
    load_started: bool,
    load_failed: bool,
    result_plan: load::ResultFile,
    load_since: SystemTime,
    scraper: Option<Scraper>,
    series: Option<Recorder>,
    progress: progress::Progress,
}

/// Runs `record`; returns the exit status.
pub fn record(o: Options) -> i32 {
    // Usage errors come before anything is touched.
    if o.load.is_empty() {
        eprintln!("inferlint-recorder: record needs the load command after --, e.g. record -o run -- vllm bench serve ...");
        return 2;
    }
    if let Some(name) = holds_run_files(&o.dir) {
        eprintln!(
            "inferlint-recorder: {} already holds a run ({name}); choose a new folder with -o",
            o.dir.display()
        );
        return 2;
    }
    let serve_argv = match &o.serve {
        Some(cmd) => match shell_split(cmd) {
            Some(a) if !a.is_empty() => Some(a),
            _ => {
                eprintln!(
                    "inferlint-recorder: cannot split the --serve command (unbalanced quotes?)"
                );
                return 2;
            }
        },
        None => None,
    };
    signals::install();
    if let Err(e) = std::fs::create_dir_all(&o.dir) {
        eprintln!("inferlint-recorder: cannot create {}: {e}", o.dir.display());
        return 1;
    }
    // Orphans of the server come to us, not to init, and stay recognisably ours.
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let m = Manifest {
        argv: o.argv.clone(),
        mode: if o.serve.is_some() { "serve" } else { "attach" },
        serve: o.serve.as_ref().map(|c| Serve {
            command: c.clone(),
            argv: serve_argv.clone().unwrap_or_default(),
            ..Serve::default()
        }),
        url: String::new(),
        metrics_path: None,
        engine_key: None,
        engine_from: None,
        server_version: None,
        gpus: Json::Arr(vec![]),
        interval_s: o.interval,
        probe: !o.no_probe,
        load: manifest::Load {
            argv_given: o.load.clone(),
            ..Default::default()
        },
        requested_flag: o.requested,
        requested_from_load: load::requested(&o.load),
        bench_result: None,
        boot_log: None,
        title: o.title.clone(),
        notes: vec![],
        started_wall: clock::wall(),
        ended_wall: None,
        outcome: Outcome {
            state: "running",
            stage: None,
            problem: None,
        },
        files: vec![],
    };
    let mut run = Run {
        progress: progress::Progress::new(o.json),
        o,
        fs: ProcFs::default(),
        m,
        engine: None,
        server: None,
        processes: vec![],
        load_started: false,
        load_failed: false,
        result_plan: load::ResultFile::None,
        load_since: SystemTime::now(),
        scraper: None,
        series: None,
    };
    run.save_manifest();
    crate::reaper::start();
    let flow = run.sequence(serve_argv);
    run.close(flow)
}

impl Run {
    fn save_manifest(&self) {
        if let Err(e) = docs::write_json(&self.o.dir, "manifest.json", &self.m.to_json()) {
            eprintln!("inferlint-recorder: cannot write manifest.json: {e}");
        }
    }

    fn write(&self, name: &str, doc: &Json) {
        if let Err(e) = docs::write_json(&self.o.dir, name, doc) {
            eprintln!("inferlint-recorder: cannot write {name}: {e}");
        }
    }

    fn check_signal(&self, stage: &'static str) -> Step<()> {
        if signals::interrupted() {
            Err(Stop::Interrupted(stage))
        } else {
            Ok(())
        }
    }

    fn set_engine(&mut self, e: Engine, from: &'static str) {
        self.engine = Some(e);
        self.m.engine_key = Some(e.key());
        self.m.engine_from = Some(from);
    }

    fn boot_len(&self) -> Option<u64> {
        let b = self.m.boot_log.as_ref()?;
        if b.source != "launched" {
            return None;
        }
        std::fs::metadata(self.o.dir.join("boot.log"))
            .ok()
            .map(|m| m.len())
    }

    /// Steps 2–14.
    fn sequence(&mut self, serve_argv: Option<Vec<String>>) -> Step<()> {
        // 2. Engine.
        let from_serve = serve_argv.as_deref().and_then(engine_from_argv);
        match (self.o.engine, from_serve) {
            (Some((named, _)), Some(s)) if named != s => {
                return problem(
                    "engine",
                    format!(
                        "the engine named is {}, but the --serve command is {}'s",
                        named.display(),
                        s.display()
                    ),
                )
            }
            (Some((named, by)), _) => {
                self.set_engine(named, by);
                say(&format!("== engine: {}", named.display()));
            }
            (None, Some(s)) => {
                self.set_engine(s, "serve command");
                say(&format!(
                    "== engine: {} (from the --serve command)",
                    s.display()
                ));
            }
            (None, None) => {}
        }
        self.m.url = match (&self.o.url, &serve_argv) {
            (Some(u), _) => u.trim_end_matches('/').to_string(),
            (None, Some(a)) => address::from_serve(a, self.engine),
            (None, None) => address::default_url(self.engine),
        };
        self.m.gpus = gpu::facts().map_or(Json::Arr(vec![]), |g| {
            Json::Arr(g.iter().map(|x| x.to_json()).collect())
        });
        self.save_manifest();
        match serve_argv {
            Some(argv) => self.serve_steps(argv)?,
            None => self.attach_step()?,
        }
        self.check_signal(if self.server.is_some() {
            "ready"
        } else {
            "attach"
        })?;
        self.metrics_step()?;
        self.boot_log_step()?;
        self.version_step();
        self.check_signal("metrics")?;
        if !self.o.no_probe {
            self.probe_step()?;
        }
        self.check_signal("before")?;
        self.before_step()?;
        self.load_step()
    }

    /// Steps 3–7.
    fn serve_steps(&mut self, argv: Vec<String>) -> Step<()> {
        if !crate::procs::linux(Path::new("/proc")) {
            return problem(
                "platform",
                "--serve needs Linux (or WSL): stopping the server reads /proc",
            );
        }
        say("== is the GPU free?");
        let (gate, clear) = serve::gate(&self.fs, None);
        self.write("gate.json", &gate);
        match clear {
            None => return Err(Stop::Interrupted("gate")),
            Some(false) => return problem("gate", "the GPU is not free; start no server on it"),
            Some(true) => {}
        }
        let hp = address::host_port(&self.m.url);
        if let Some((h, p)) = &hp {
            if serve::port_taken(h, *p) {
                return problem(
                    "port",
                    format!("something already answers at {}: whatever listens there would be taken for the new server", self.m.url),
                );
            }
        }
        self.check_signal("start")?;
        let log = self.o.dir.join("boot.log");
        say(&format!(
            "== start the server (output in {})",
            log.display()
        ));
        self.m.boot_log = Some(BootLog {
            source: "launched".into(),
            ..Default::default()
        });
        let server = match serve::start(&argv, &log, &self.fs) {
            Ok(s) => s,
            Err(e) => {
                // Nothing ran: no boot log to keep.
                self.m.boot_log = None;
                let _ = std::fs::remove_file(&log);
                return problem("start", e);
            }
        };
        if let Some(s) = self.m.serve.as_mut() {
            s.pid = Some(server.pid);
            s.sid = Some(server.sid);
            s.start_ticks = Some(server.start_ticks);
        }
        self.server = Some(server);
        self.save_manifest();
        let timeout = Duration::from_secs_f64(self.o.ready_timeout);
        let url = self.m.url.clone();
        let port = hp.map(|x| x.1);
        let fs = self.fs.clone();
        let server = self.server.as_mut().expect("just set");
        let r = serve::wait_ready(server, &url, port, timeout, &fs);
        let snap = serve::tree_snapshot(server, &fs, "ready");
        self.processes.push(snap);
        match r {
            Ok(own) => {
                if let Some(s) = self.m.serve.as_mut() {
                    s.ownership = Some(own);
                }
                if own == "unverified" {
                    self.m.notes.push(format!(
                        "ownership of the server at {url} could not be verified"
                    ));
                }
                let len = self.boot_len();
                if let Some(b) = self.m.boot_log.as_mut() {
                    b.ready = len;
                }
                self.save_manifest();
                Ok(())
            }
            Err(serve::NotReady::Interrupted) => Err(Stop::Interrupted("ready")),
            Err(serve::NotReady::Problem(p)) => problem("ready", p),
        }
    }

    fn attach_step(&mut self) -> Step<()> {
        let url = format!("{}/health", self.m.url);
        say(&format!("== is a server answering at {url}?"));
        let u = url.clone();
        match signals::abandonable(0, move || crate::http::healthy(&u, Duration::from_secs(5))) {
            None => Err(Stop::Interrupted("attach")),
            Some(true) => Ok(()),
            Some(false) => problem("attach", format!("no server answers at {url}")),
        }
    }

    /// Step 8.
    fn metrics_step(&mut self) -> Step<()> {
        say("== metrics");
        let base = self.m.url.clone();
        let engine = self.engine;
        let r = signals::abandonable(0, move || {
            let s = Scraper::new(&base);
            scrape::engine_reading(&s, engine).map(|(r, e)| (r.path, e))
        });
        let (path, found) = match r {
            None => return Err(Stop::Interrupted("metrics")),
            Some(Err(text)) => return problem("metrics", text),
            Some(Ok(x)) => x,
        };
        self.m.metrics_path = Some(path);
        match self.engine {
            Some(e) if e != found => {
                return problem(
                    "metrics",
                    format!(
                        "the engine named is {}, but the server at {} is {}'s",
                        e.display(),
                        self.m.url,
                        found.display()
                    ),
                )
            }
            Some(_) => {}
            None => {
                self.set_engine(found, "metrics");
                say(&format!(
                    "== engine: {} (from its metrics)",
                    found.display()
                ));
            }
        }
        self.scraper = Some(Scraper::new(&self.m.url));
        self.save_manifest();
        Ok(())
    }

    /// Step 9.
    fn boot_log_step(&mut self) -> Step<()> {
        let path = match (&self.server, &self.o.boot_log) {
            (Some(_), _) => self.o.dir.join("boot.log"),
            (None, Some(p)) => p.clone(),
            (None, None) => return Ok(()),
        };
        say("== boot log");
        let bytes = std::fs::read(&path).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        if let (Some(e), Some(l)) = (self.engine, engine_from_log(&text)) {
            if e != l {
                return problem(
                    "boot_log",
                    format!(
                        "the engine named is {}, but the boot log is {}'s",
                        e.display(),
                        l.display()
                    ),
                );
            }
        }
        Ok(())
    }

    /// Step 10: `/version`, then `/get_server_info`.
    fn version_step(&mut self) {
        let base = self.m.url.clone();
        let found = signals::abandonable(0, move || {
            let c = crate::http::Client::new(Duration::from_secs(5));
            for ep in ["/version", "/get_server_info"] {
                let Ok(r) = c.get(&format!("{base}{ep}")) else {
                    continue;
                };
                if r.status != 200 {
                    continue;
                }
                let Ok(doc) = json::parse(&r.text()) else {
                    continue;
                };
                if let Some(v) = doc
                    .get("version")
                    .and_then(Json::as_str)
                    .filter(|v| !v.is_empty())
                {
                    return Some((v.to_string(), ep.to_string()));
                }
            }
            None
        });
        self.m.server_version = found.flatten();
    }

    /// Step 11.
    fn probe_step(&mut self) -> Step<()> {
        say("== probe: one request, then 8 at once");
        let base = self.m.url.clone();
        let Some(doc) =
            signals::abandonable(0, move || probe::run(&base, &ProbeOptions::default()))
        else {
            return Err(Stop::Interrupted("before"));
        };
        self.write("probe.json", &doc);
        let r = probe::result(&doc);
        say(&format!(
            "[{:>3}] {}  {}",
            r.id(),
            r.status.terminal_label(),
            r.message
        ));
        Ok(())
    }

    /// Step 12.
    fn before_step(&mut self) -> Step<()> {
        let base = self.m.url.clone();
        let r = signals::abandonable(0, move || Scraper::new(&base).scrape());
        match r {
            None => Err(Stop::Interrupted("before")),
            Some(Err(e)) => problem(
                "before",
                format!("the server did not answer its metrics before the load: {e}"),
            ),
            Some(Ok(reading)) => {
                self.write("before.snapshot.json", &reading.snapshot_json());
                Ok(())
            }
        }
    }

    /// Steps 13–14.
    fn load_step(&mut self) -> Step<()> {
        let writer = SeriesWriter::create(
            &self.o.dir.join("run.series.jsonl"),
            &self.m.url,
            self.o.interval,
        )
        .map_err(|e| Stop::Problem("load", format!("cannot write run.series.jsonl: {e}")))?;
        let rec = Recorder::start(
            Scraper::new(&self.m.url),
            writer,
            Duration::from_secs_f64(self.o.interval),
        );
        self.progress.follow(rec.latest.clone());
        self.series = Some(rec);
        let client = load::client_of(&self.o.load);
        let dir_text = self.o.dir.display().to_string();
        let plan = load::plan(&self.o.load, client, &dir_text);
        self.m.load.argv_run = plan.argv_run.clone();
        self.m.load.appended = plan.appended.clone();
        self.m.load.client = client.map(Client::key);
        self.result_plan = plan.result.clone();
        self.load_since = SystemTime::now();
        self.m.load.started_wall = Some(clock::wall());
        let len = self.boot_len();
        if let Some(b) = self.m.boot_log.as_mut() {
            b.load_start = len;
        }
        self.save_manifest();
        say(&format!("== load: {}", quote(&plan.argv_run)));
        self.load_started = true;
        let echo = self.progress.printer(self.o.json);
        let progress = &self.progress;
        let r = load::run(
            &plan.argv_run,
            &self.o.dir.join("load.log"),
            echo,
            &mut || progress.tick(),
        );
        self.progress.finish();
        self.m.load.ended_wall = Some(clock::wall());
        let len = self.boot_len();
        if let Some(b) = self.m.boot_log.as_mut() {
            b.load_end = len;
        }
        match r {
            Err(e) => {
                // An empty load.log still says the load was attempted.
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.o.dir.join("load.log"));
                self.load_failed = true;
                problem("load", e)
            }
            Ok((ended, interrupted)) => {
                self.m.load.exit = ended.code;
                self.m.load.signal = ended.signal.clone();
                if ended.code != Some(0) {
                    self.load_failed = true;
                    match (&ended.code, &ended.signal) {
                        (Some(c), _) => say(&format!("the load command exited with code {c}")),
                        (None, Some(s)) => say(&format!("the load command was ended by {s}")),
                        _ => {}
                    }
                }
                if interrupted {
                    return Err(Stop::Interrupted("load"));
                }
                Ok(())
            }
        }
    }

    /// Steps 15–16: after snapshot, series closed, result collected, boot log copied.
    fn after_load(&mut self, stop: &mut Option<Stop>) {
        if self.load_started {
            let base = self.m.url.clone();
            let after = signals::abandonable(usize::MAX, move || Scraper::new(&base).scrape());
            match after {
                Some(Ok(r)) => self.write("after.snapshot.json", &r.snapshot_json()),
                Some(Err(e)) if stop.is_none() => {
                    *stop = Some(Stop::Problem(
                        "after",
                        format!("the server did not answer its metrics after the load: {e}"),
                    ));
                }
                Some(Err(_)) => {}
                None => {}
            }
        }
        if let Some(rec) = self.series.take() {
            match rec.finish(Duration::from_secs(10)) {
                Some(s) => {
                    if let Some(n) = s.note {
                        self.m.notes.push(n);
                    }
                    if let Some(e) = s.write_error {
                        self.m.notes.push(format!("the series stopped early: {e}"));
                    }
                }
                None => self
                    .m
                    .notes
                    .push("the series recorder did not stop within 10 s".into()),
            }
        }
        if self.load_started {
            let found = match &self.o.bench_result {
                Some(p) => p.is_file().then(|| p.clone()),
                None => load::find_result(&self.result_plan, self.load_since),
            };
            if let Some(src) = found {
                match load::bring_in(&src, &self.o.dir) {
                    Ok(name) => self.m.bench_result = Some((name, src.display().to_string())),
                    Err(e) => self.m.notes.push(format!(
                        "cannot copy the result file {}: {e}",
                        src.display()
                    )),
                }
            }
        }
        if self.server.is_none() {
            if let Some(src) = &self.o.boot_log {
                match std::fs::read(src) {
                    Ok(b) => {
                        if let Err(e) = docs::write_atomic(&self.o.dir, "boot.log", &b) {
                            self.m.notes.push(format!("cannot copy the boot log: {e}"));
                        } else {
                            self.m.boot_log = Some(BootLog {
                                source: src.display().to_string(),
                                ..Default::default()
                            });
                        }
                    }
                    Err(e) => self
                        .m
                        .notes
                        .push(format!("cannot read the boot log {}: {e}", src.display())),
                }
            }
        }
    }

    /// Step 17.
    fn stop_server(&mut self, stop: &mut Option<Stop>) {
        let fs = self.fs.clone();
        let Some(server) = self.server.as_mut() else {
            return;
        };
        say("== stop the server");
        let snap = serve::tree_snapshot(server, &fs, "stop");
        self.processes.push(snap);
        let len = std::fs::metadata(&server.log).ok().map(|m| m.len());
        if let Some(b) = self.m.boot_log.as_mut() {
            b.stop = len;
        }
        let procs_doc = json::obj([
            ("schema", Json::from("inferlint.processes/1")),
            ("snapshots", Json::Arr(self.processes.clone())),
        ]);
        let _ = docs::write_json(&self.o.dir, "processes.json", &procs_doc);
        // The signal that interrupted the run (if any) starts an orderly stop; any further
        // one escalates it, also when it came before the stop began (while the load was
        // being ended or the after snapshot taken): a second signal is never lost.
        let allowed = signals::count().min(1);
        let stopped = serve::stop(server, &fs, allowed, self.o.stop_card_timeout);
        if let Some(s) = self.m.serve.as_mut() {
            s.exit = server
                .exit
                .map_or(Json::Null, |st| serve::describe_exit(st).1);
        }
        let _ = docs::write_json(&self.o.dir, "teardown.json", &stopped.doc);
        let reason = stopped
            .doc
            .get("reason")
            .and_then(Json::as_str)
            .unwrap_or("not checked");
        say(&format!("== the card after the stop: {reason}"));
        if (stopped.abandoned || signals::count() > allowed) && stop.is_none() {
            *stop = Some(Stop::Interrupted("stop"));
        }
    }

    /// Step 18: the final manifest, the analysis, the exit status.
    fn close(mut self, flow: Step<()>) -> i32 {
        let mut stop = flow.err();
        self.after_load(&mut stop);
        self.stop_server(&mut stop);
        if signals::interrupted() && !matches!(stop, Some(Stop::Interrupted(_))) {
            let stage = match &stop {
                Some(Stop::Problem(s, _)) => *s,
                _ => "load",
            };
            stop = Some(Stop::Interrupted(stage));
        }
        self.m.outcome = match &stop {
            None => Outcome {
                state: "completed",
                stage: None,
                problem: None,
            },
            Some(Stop::Problem(stage, text)) => {
                say(&format!("== problem ({stage}): {text}"));
                Outcome {
                    state: "problem",
                    stage: Some(stage),
                    problem: Some(text.clone()),
                }
            }
            Some(Stop::Interrupted(stage)) => {
                say(&format!(
                    "== interrupted ({})",
                    signals::last_name().unwrap_or("signal")
                ));
                Outcome {
                    state: "interrupted",
                    stage: Some(stage),
                    problem: None,
                }
            }
        };
        self.m.ended_wall = Some(clock::wall());
        self.m.files = list_files(&self.o.dir);
        if !self.m.files.iter().any(|f| f == "manifest.json") {
            self.m.files.push("manifest.json".into());
            self.m.files.sort();
        }
        self.save_manifest();
        let capture = match &stop {
            Some(Stop::Interrupted(_)) => 130,
            Some(Stop::Problem(..)) => 1,
            None if self.load_failed => 1,
            None => 0,
        };
        let analyzed = if self.o.no_analyze {
            None
        } else {
            crate::analyze::run(
                &self.o.dir,
                self.o.strict,
                self.o.json,
                self.o.engine.map(|e| e.0.key()),
            )
        };
        say(&format!("files:  {}", self.o.dir.display()));
        match (capture, analyzed) {
            (0, Some(a)) => a,
            (c, _) => c,
        }
    }
}

fn list_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A vector shell-quoted for display.
pub fn quote(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_refused_folders() {
        assert_eq!(
            quote(&["a".into(), "b c".into(), "it's".into()]),
            "a 'b c' 'it'\\''s'"
        );
        let d = std::env::temp_dir().join(format!("rec-refuse-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        assert_eq!(holds_run_files(&d), None);
        std::fs::write(d.join("x.snapshot.json"), "{}").unwrap();
        assert_eq!(holds_run_files(&d).as_deref(), Some("x.snapshot.json"));
        let _ = std::fs::remove_dir_all(d);
    }
}
