//! `manifest.json` (recorder.md §9.2): how far the run got, written at the first step and
//! rewritten (atomically) as the run goes, so it is always readable.

use analyzer::json::{obj, Json};

/// Where the run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub state: &'static str,
    pub stage: Option<&'static str>,
    pub problem: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Serve {
    pub command: String,
    pub argv: Vec<String>,
    pub pid: Option<i32>,
    pub sid: Option<i32>,
    /// The launched process's start time (clock ticks after boot, from /proc), so a later
    /// `teardown --run` can tell the launched process from a reused PID or session id.
    pub start_ticks: Option<u64>,
    pub exit: Json,
    pub ownership: Option<&'static str>,
}

impl Default for Serve {
    fn default() -> Self {
        Serve {
            command: String::new(),
            argv: vec![],
            pid: None,
            sid: None,
            start_ticks: None,
            exit: Json::Null,
            ownership: None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Load {
    pub argv_given: Vec<String>,
    pub argv_run: Vec<String>,
    pub client: Option<&'static str>,
    pub appended: Vec<String>,
    pub exit: Option<i32>,
    pub signal: Option<String>,
    pub started_wall: Option<f64>,
    pub ended_wall: Option<f64>,
}

#[derive(Debug, Clone, Default)]
pub struct BootLog {
    pub source: String,
    pub ready: Option<u64>,
    pub load_start: Option<u64>,
    pub load_end: Option<u64>,
    pub stop: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Manifest {
    pub argv: Vec<String>,
    pub mode: &'static str,
    pub serve: Option<Serve>,
    pub url: String,
    pub metrics_path: Option<String>,
    pub engine_key: Option<&'static str>,
    pub engine_from: Option<&'static str>,
    pub server_version: Option<(String, String)>,
    pub gpus: Json,
    pub interval_s: f64,
    pub probe: bool,
    pub load: Load,
    pub requested_flag: Option<i64>,
    pub requested_from_load: Option<i64>,
    pub bench_result: Option<(String, String)>,
    pub boot_log: Option<BootLog>,
    pub title: Option<String>,
    pub notes: Vec<String>,
    pub started_wall: f64,
    pub ended_wall: Option<f64>,
    pub outcome: Outcome,
    pub files: Vec<String>,
}

fn strings(v: &[String]) -> Json {
    Json::Arr(v.iter().map(|s| Json::from(s.as_str())).collect())
}

impl Manifest {
    pub fn to_json(&self) -> Json {
        let serve = self.serve.as_ref().map_or(Json::Null, |s| {
            obj([
                ("command", Json::from(s.command.as_str())),
                ("argv", strings(&s.argv)),
                ("pid", Json::from(s.pid.map(i64::from))),
                ("sid", Json::from(s.sid.map(i64::from))),
                ("start_ticks", Json::from(s.start_ticks)),
                ("exit", s.exit.clone()),
                ("ownership", Json::from(s.ownership)),
            ])
        });
        let l = &self.load;
        let boot = self.boot_log.as_ref().map_or(Json::Null, |b| {
            obj([
                ("source", Json::from(b.source.as_str())),
                ("ready", Json::from(b.ready)),
                ("load_start", Json::from(b.load_start)),
                ("load_end", Json::from(b.load_end)),
                ("stop", Json::from(b.stop)),
            ])
        });
        obj([
            ("schema", Json::from("inferlint.run/1")),
            (
                "recorder",
                obj([
                    ("name", Json::from("inferlint-recorder")),
                    ("version", Json::from(env!("CARGO_PKG_VERSION"))),
                ]),
            ),
            ("argv", strings(&self.argv)),
            ("mode", Json::from(self.mode)),
            ("serve", serve),
            ("url", Json::from(self.url.as_str())),
            ("metrics_path", Json::from(self.metrics_path.clone())),
            (
                "engine",
                obj([
                    ("key", Json::from(self.engine_key)),
                    ("from", Json::from(self.engine_from)),
                ]),
            ),
            (
                "server_version",
                self.server_version.as_ref().map_or(Json::Null, |(v, e)| {
                    obj([
                        ("version", Json::from(v.as_str())),
                        ("endpoint", Json::from(e.as_str())),
                    ])
                }),
            ),
            ("gpus", self.gpus.clone()),
            ("interval_s", Json::Float(self.interval_s)),
            ("probe", Json::Bool(self.probe)),
            (
                "load",
                obj([
                    ("argv_given", strings(&l.argv_given)),
                    ("argv_run", strings(&l.argv_run)),
                    ("client", Json::from(l.client)),
                    ("appended", strings(&l.appended)),
                    ("exit", Json::from(l.exit.map(i64::from))),
                    ("signal", Json::from(l.signal.clone())),
                    ("started_wall", Json::from(l.started_wall)),
                    ("ended_wall", Json::from(l.ended_wall)),
                ]),
            ),
            (
                "requested",
                obj([
                    ("flag", Json::from(self.requested_flag)),
                    ("from_load", Json::from(self.requested_from_load)),
                ]),
            ),
            (
                "bench_result",
                self.bench_result.as_ref().map_or(Json::Null, |(f, s)| {
                    obj([
                        ("file", Json::from(f.as_str())),
                        ("source", Json::from(s.as_str())),
                    ])
                }),
            ),
            ("boot_log", boot),
            ("title", Json::from(self.title.clone())),
            ("notes", strings(&self.notes)),
            ("started_wall", Json::Float(self.started_wall)),
            ("ended_wall", Json::from(self.ended_wall)),
            (
                "outcome",
                obj([
                    ("state", Json::from(self.outcome.state)),
                    ("stage", Json::from(self.outcome.stage)),
                    ("problem", Json::from(self.outcome.problem.clone())),
                ]),
            ),
            ("files", strings(&self.files)),
        ])
    }
}
