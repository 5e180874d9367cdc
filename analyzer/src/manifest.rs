//! The facts the analyzer takes from the recorder's `manifest.json` (the document is
//! `docs::Manifest`, docs/run-folder.md#manifest): the report title, the server version,
//! the requested concurrency, whether `load.log` counts, how far the run got, and when
//! the load ran (its wall times and the boot log's length at its start and end, for T18).

use crate::docs;
use crate::input::InputError;

/// The manifest's facts the analyzer uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub title: Option<String>,
    pub server_version: Option<String>,
    /// The recorder's `--requested`.
    pub requested_flag: Option<i64>,
    /// The load command's `--max-concurrency`.
    pub requested_from_load: Option<i64>,
    /// True when the load was no recognised client (`load.client` null): then `load.log`
    /// is not counted (docs/run-folder.md#load-log).
    pub load_unrecognised: bool,
    /// A load command was given (`load.argv_given` not empty).
    pub load_given: bool,
    /// The load command's program, by file name (`locust`), for messages.
    pub load_program: Option<String>,
    pub outcome_state: Option<String>,
    pub outcome_stage: Option<String>,
    pub outcome_problem: Option<String>,
    /// The recorder launched the server itself (`record --serve`, a PID recorded).
    pub served: bool,
    /// How the server the recorder started ended, when it did.
    pub serve_exit: Option<docs::manifest::Exit>,
    /// How the load command ended: its exit code, or the signal that stopped it.
    pub load_exit: Option<i32>,
    pub load_signal: Option<String>,
    /// The load command's start and end (wall clock).
    pub load_started_wall: Option<f64>,
    pub load_ended_wall: Option<f64>,
    /// The boot log's byte length at readiness, at the load's start and at its end; only
    /// for a log the recorder's own server wrote.
    pub boot_log_at: Option<BootLogAt>,
    /// Several load commands (`load.runs`): each one's result file in the folder and its
    /// start and end (wall clock), in order.
    pub load_runs: Vec<LoadRunMarks>,
}

/// When one of several load commands ran, and the result it saved.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadRunMarks {
    pub result_file: Option<String>,
    pub started_wall: Option<f64>,
    pub ended_wall: Option<f64>,
}

/// Byte lengths of the recorder's own boot log at three moments.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BootLogAt {
    pub ready: Option<u64>,
    pub load_start: Option<u64>,
    pub load_end: Option<u64>,
}

impl Manifest {
    /// Reads `manifest.json`; `file` names it in errors.
    pub fn read(file: &str, bytes: &[u8]) -> Result<Manifest, InputError> {
        docs::read::<docs::Manifest>(file, bytes).map(|m| Manifest::from_doc(&m))
    }

    pub fn from_doc(doc: &docs::Manifest) -> Manifest {
        let outcome = doc.outcome.as_ref();
        Manifest {
            title: doc.title.clone().filter(|t| !t.is_empty()),
            server_version: doc
                .server_version
                .as_ref()
                .map(|v| v.version.clone())
                .filter(|v| !v.is_empty()),
            requested_flag: doc.requested.flag,
            requested_from_load: doc.requested.from_load,
            load_unrecognised: doc.load.client.is_none(),
            load_given: !doc.load.argv_given.is_empty(),
            load_program: doc
                .load
                .argv_given
                .first()
                .map(|p| p.rsplit('/').next().unwrap_or(p).to_string()),
            outcome_state: outcome.map(|o| o.state.as_str().to_string()),
            outcome_stage: outcome
                .and_then(|o| o.stage)
                .map(|s| s.as_str().to_string()),
            outcome_problem: outcome.and_then(|o| o.problem.clone()),
            served: doc.mode == docs::manifest::Mode::Serve
                && doc.serve.as_ref().is_some_and(|s| s.pid.is_some()),
            serve_exit: doc.serve.as_ref().and_then(|s| s.exit.clone()),
            load_exit: doc.load.exit,
            load_signal: doc.load.signal.clone(),
            load_started_wall: doc.load.started_wall,
            load_ended_wall: doc.load.ended_wall,
            boot_log_at: doc
                .boot_log
                .as_ref()
                .filter(|b| b.source == docs::manifest::BootLog::LAUNCHED)
                .map(|b| BootLogAt {
                    ready: b.ready,
                    load_start: b.load_start,
                    load_end: b.load_end,
                }),
            load_runs: doc
                .load
                .runs
                .iter()
                .map(|r| LoadRunMarks {
                    result_file: r.result.as_ref().map(|b| b.file.clone()),
                    started_wall: r.started_wall,
                    ended_wall: r.ended_wall,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_used_keys() {
        let m = Manifest::read(
            "manifest.json",
            br#"{"schema": "inferlint.run/1", "title": "t", "server_version": {"version": "0.5.20", "endpoint": "/get_server_info"},
                "requested": {"flag": null, "from_load": 32}, "load": {"client": null},
                "outcome": {"state": "interrupted", "stage": "load", "problem": null}}"#,
        )
        .unwrap();
        assert_eq!(m.title.as_deref(), Some("t"));
        assert_eq!(m.server_version.as_deref(), Some("0.5.20"));
        assert_eq!(m.requested_flag, None);
        assert_eq!(m.requested_from_load, Some(32));
        assert!(m.load_unrecognised);
        assert!(!m.load_given);
        assert_eq!(m.outcome_state.as_deref(), Some("interrupted"));
        assert_eq!(m.outcome_stage.as_deref(), Some("load"));
    }
}
