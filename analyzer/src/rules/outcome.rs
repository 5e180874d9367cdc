//! How the recording itself ended, as a verdict input. A benchmark can print a clean
//! summary while the run under it broke: the server died during the load, the recorder
//! was killed, a step failed, or every request failed. Those facts live in
//! `manifest.json` (the recording's state, how the server and the load command ended)
//! and `teardown.json` (whether the recorder had to stop the server or found it gone).
//!
//! A broken run is never green: [`RunOutcome::broke`] names each fault in a sentence,
//! the terminal prints them first, the exit status is never 0, and T7 fails when the
//! server died on its own (one T7 line, naming the cause the log shows).

use serde::Serialize;

use crate::bench::BenchResult;
use crate::bootlog::{BootLog, Failure};
use crate::docs::manifest::{Exit, LoadStop};
use crate::docs::teardown::{Delivery, Target, Teardown};
use crate::manifest::Manifest;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

/// What the recording's own documents say about how it ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutcome {
    /// Each fault, a sentence, in the order they matter; empty for a run that completed.
    pub broke: Vec<String>,
    /// How the server ended on its own ("exited with code 1"), when it was not stopped.
    pub server_died: Option<String>,
    /// The recorder never finished: the manifest still says "running".
    pub recorder_died: bool,
    /// The recorder started the server but no teardown ran.
    pub no_teardown: bool,
    /// Why the after-load snapshot is missing, for the checks that need it.
    pub after_missing: Option<String>,
    /// The recording stopped before it started a server or the load (a port taken, a
    /// card not clear): why every reading of the load is missing.
    pub before_load: Option<String>,
}

/// T7's finding for a server that died during the run: how it ended, and the line of the
/// log that shows the cause, when one does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Death {
    /// "exited with code 1", "was killed by SIGKILL".
    pub server_exit: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lineno: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
}

/// The inputs the outcome reads.
pub struct Evidence<'a> {
    pub manifest: Option<&'a Manifest>,
    pub teardown: Option<&'a Teardown>,
    pub bench: Option<&'a BenchResult>,
    /// A snapshot before the load exists and none after it.
    pub before_only: bool,
    /// Whether the boot log shows the server ready (None: no log).
    pub server_ready: Option<bool>,
}

/// "exited with code 1", "was killed by SIGKILL".
fn ended(exit: &Exit) -> String {
    match exit {
        Exit::Code(c) => format!("exited with code {c}"),
        Exit::Signal(s) => format!("was killed by {s}"),
    }
}

/// The server ended before the teardown stopped it: it has an exit, and no stop signal
/// reached its process group (signals to single PIDs are the sweep of what it left).
fn died_on_its_own(m: &Manifest, t: Option<&Teardown>) -> Option<String> {
    let exit = m.serve_exit.as_ref()?;
    let t = t?;
    let group = t.launched.map(|l| l.sid);
    let reached = t.signals.iter().any(|s| {
        s.result == Delivery::Sent
            && matches!(s.to, Target::Group(g) if group.is_none_or(|sid| sid == g))
    });
    (!reached).then(|| ended(exit))
}

fn stage_problem(m: &Manifest) -> String {
    let stage = m.outcome_stage.as_deref().unwrap_or("an unknown step");
    match m.outcome_problem.as_deref().filter(|p| !p.is_empty()) {
        Some(p) => format!("at the step \"{stage}\": {p}"),
        None => format!("at the step \"{stage}\""),
    }
}

/// Reads how the run ended.
pub fn read(e: &Evidence<'_>) -> RunOutcome {
    let mut out = RunOutcome::default();
    let Some(m) = e.manifest else {
        return out;
    };
    match died_on_its_own(m, e.teardown) {
        // A start that failed is T12's: the run never began.
        Some(how) if e.server_ready == Some(false) => out.broke.push(format!(
            "the server {how} on its own before it was ready: the run never began"
        )),
        Some(how) => {
            out.broke.push(format!(
                "the server {how} before the recorder stopped it: it died during the \
                 run"
            ));
            out.server_died = Some(how);
        }
        None => {}
    }
    // An engine that died under a living API server: only its health check said so.
    if out.server_died.is_none() && m.load_stopped_for == Some(LoadStop::ServerUnhealthy) {
        out.server_died = Some(
            "stopped answering its health check (its engine died; its process lived on)".into(),
        );
    }
    match m.outcome_state.as_deref() {
        Some("running") => {
            out.recorder_died = true;
            out.broke.push(
                "the recorder did not finish: manifest.json still says \"running\" (the recorder \
                 was killed or crashed), so the files end where it stopped"
                    .to_string(),
            );
        }
        Some("interrupted") => out.broke.push(format!(
            "the recording was interrupted {}",
            stage_problem(m)
        )),
        Some("problem") => out
            .broke
            .push(format!("the recording stopped {}", stage_problem(m))),
        _ => {}
    }
    let stopped = matches!(
        m.outcome_state.as_deref(),
        Some("problem" | "interrupted" | "running")
    );
    if stopped && !m.served && m.load_started_wall.is_none() {
        let stage = m.outcome_stage.as_deref().unwrap_or("an unknown step");
        out.before_load = Some(format!(
            "the recording stopped at the step \"{stage}\", before the load ran"
        ));
    }
    if m.served && e.teardown.is_none() {
        out.no_teardown = true;
    }
    match (m.load_exit, m.load_signal.as_deref()) {
        (_, Some(sig)) => out
            .broke
            .push(format!("the load command was stopped by {sig}")),
        (Some(c), None) if c != 0 => out
            .broke
            .push(format!("the load command exited with code {c}")),
        _ => {}
    }
    if let Some(b) = e.bench {
        if let (Some(0), Some(f)) = (b.completed, b.failed.filter(|&f| f > 0)) {
            out.broke.push(format!(
                "the load tool counted no completed request and {f} failed: its figures measure \
                 nothing"
            ));
        }
    }
    if e.before_only {
        out.after_missing = Some(match (&out.server_died, m.outcome_state.as_deref()) {
            (Some(how), _) => {
                format!("no snapshot after the load: the server {how} during the run")
            }
            (None, Some("running")) => {
                "no snapshot after the load: the recorder did not finish".to_string()
            }
            (None, Some("completed")) | (None, None) => {
                "no snapshot after the load (after.snapshot.json is missing)".to_string()
            }
            (None, Some(_)) => format!(
                "no snapshot after the load: the recording stopped {}",
                stage_problem(m)
            ),
        });
    }
    out
}

impl RunOutcome {
    /// The run broke in a way that leaves its verdicts short of the whole run.
    pub fn is_broken(&self) -> bool {
        !self.broke.is_empty()
    }

    /// The one T7 of a server that died on its own: a failure naming the exit and the
    /// cause the log shows, whatever the probe before the load found.
    pub fn t7_death(&self, logs: &[BootLog], earlier: Option<&CheckResult>) -> Option<CheckResult> {
        let how = self.server_died.as_ref()?;
        let cause = logs.first().and_then(|l| {
            let c = &l.classification;
            c.failure
                .as_ref()
                .filter(|f| f.phase == "serving")
                .or(c.set_aside.as_ref())
        });
        let mut msg = format!("The server {how} during the run, before the recorder stopped it");
        if let Some(f) = cause {
            msg.push_str(&format!("; the log shows {}", cause_text(f)));
        }
        if let Some(r) = earlier.filter(|r| r.status == Status::Pass) {
            msg.push_str(&format!(" (before the load: {})", r.message));
        }
        Some(
            CheckResult::new(Tripwire::CrashAfterReady, Status::Fail, msg).found(Death {
                server_exit: how.clone(),
                kind: cause.map(|f| f.kind.clone()),
                lineno: cause.map(|f| f.lineno),
                line: cause.map(|f| f.line.clone()),
            }),
        )
    }
}

fn cause_text(f: &Failure) -> String {
    let what = if f.detail.is_empty() {
        format!("\"{}\"", f.line)
    } else {
        f.detail.clone()
    };
    format!("{} at line {}: {what}", f.kind.replace('_', " "), f.lineno)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::teardown::{Launched, SignalRecord, StopSignal};

    fn served(exit: Option<Exit>, state: &str) -> Manifest {
        Manifest {
            served: true,
            serve_exit: exit,
            outcome_state: Some(state.into()),
            load_given: true,
            ..Manifest::default()
        }
    }

    fn stopped() -> Teardown {
        Teardown {
            signals: vec![SignalRecord {
                elapsed_s: 0.0,
                to: Target::Group(5),
                signal: StopSignal::Term,
                result: Delivery::Sent,
            }],
            ..Teardown::default()
        }
    }

    fn ev<'a>(m: &'a Manifest, t: Option<&'a Teardown>) -> Evidence<'a> {
        Evidence {
            manifest: Some(m),
            teardown: t,
            bench: None,
            before_only: false,
            server_ready: None,
        }
    }

    #[test]
    fn a_server_stopped_by_the_teardown_did_not_die() {
        let m = served(Some(Exit::Code(0)), "completed");
        let t = stopped();
        let o = read(&ev(&m, Some(&t)));
        assert_eq!(o, RunOutcome::default());
        assert!(!o.is_broken());
        // SGLang's launcher ends its stop by killing itself: the teardown of a real 0.5.23
        // (`fixtures/real/sglang-fits/teardown.json`) reads "server_exit": "SIGKILL" after
        // its SIGTERM to the group. A stop that was sent, not a death.
        let m = served(Some(Exit::Signal("SIGKILL".into())), "completed");
        let t = crate::docs::read::<Teardown>(
            "teardown.json",
            br#"{"schema": "inferlint.teardown/1", "launched": {"pid": 29038, "sid": 29038},
                "signals": [{"elapsed_s": 0.024, "group": 29038, "signal": "SIGTERM", "result": "sent"}],
                "server_exit": "SIGKILL", "left_after_the_server_stopped": [], "left_alone": []}"#,
        )
        .unwrap();
        assert_eq!(read(&ev(&m, Some(&t))), RunOutcome::default());
    }

    #[test]
    fn a_server_gone_before_the_teardown_died_during_the_run() {
        let m = served(Some(Exit::Code(1)), "problem");
        let o = read(&ev(&m, Some(&Teardown::default())));
        assert_eq!(o.server_died.as_deref(), Some("exited with code 1"));
        assert!(
            o.broke[0].starts_with("the server exited with code 1 before the recorder stopped it")
        );
        // One that never became ready failed to start (T12), it did not die in the run.
        let o = read(&Evidence {
            server_ready: Some(false),
            ..ev(&m, Some(&Teardown::default()))
        });
        assert_eq!(o.server_died, None);
        assert!(o.broke[0].ends_with("before it was ready: the run never began"));
        let m = served(Some(Exit::Signal("SIGKILL".into())), "completed");
        let mut t = stopped();
        t.signals[0].result = Delivery::Gone;
        let o = read(&ev(&m, Some(&t)));
        assert_eq!(o.server_died.as_deref(), Some("was killed by SIGKILL"));
        // Killed with `kill -9`: the sweep then stops the engine it left, by PID.
        let t = Teardown {
            launched: Some(Launched { pid: 5, sid: 5 }),
            signals: vec![SignalRecord {
                elapsed_s: 0.017,
                to: Target::Pid(6),
                signal: StopSignal::Term,
                result: Delivery::Sent,
            }],
            ..Teardown::default()
        };
        let o = read(&ev(&m, Some(&t)));
        assert_eq!(o.server_died.as_deref(), Some("was killed by SIGKILL"));
    }

    #[test]
    fn an_engine_dead_under_a_living_api_server_died_during_the_run() {
        // The recorder stopped the load on its failing health check, then stopped the
        // server itself: no exit of its own, yet its engine died.
        let mut m = served(Some(Exit::Code(0)), "problem");
        m.load_stopped_for = Some(LoadStop::ServerUnhealthy);
        let o = read(&ev(&m, Some(&stopped())));
        assert_eq!(
            o.server_died.as_deref(),
            Some("stopped answering its health check (its engine died; its process lived on)")
        );
        let t7 = o.t7_death(&[], None).unwrap();
        assert_eq!(t7.status, Status::Fail);
        assert!(t7
            .message
            .starts_with("The server stopped answering its health check"));
        // The other faults the recorder stops a load for are not the engine's death.
        for other in [LoadStop::ServerPaused, LoadStop::WriteFailed] {
            m.load_stopped_for = Some(other);
            assert_eq!(read(&ev(&m, Some(&stopped()))).server_died, None);
        }
    }

    #[test]
    fn a_killed_recorder_and_a_missing_teardown_are_said() {
        let m = served(None, "running");
        let o = read(&Evidence {
            before_only: true,
            ..ev(&m, None)
        });
        assert!(o.recorder_died && o.no_teardown);
        assert!(
            o.broke[0].contains("still says \"running\""),
            "{:?}",
            o.broke
        );
        assert_eq!(
            o.after_missing.as_deref(),
            Some("no snapshot after the load: the recorder did not finish")
        );
    }

    #[test]
    fn a_refused_start_and_a_failed_load_are_said() {
        let mut m = served(None, "problem");
        m.outcome_stage = Some("port".into());
        m.outcome_problem = Some("port 8000 is already taken".into());
        m.load_exit = Some(3);
        let o = read(&ev(&m, Some(&stopped())));
        assert_eq!(
            o.broke,
            [
                "the recording stopped at the step \"port\": port 8000 is already taken",
                "the load command exited with code 3"
            ]
        );
        let bench = BenchResult {
            completed: Some(0),
            failed: Some(32),
            ..BenchResult::default()
        };
        let m = served(None, "completed");
        let t = stopped();
        let o = read(&Evidence {
            bench: Some(&bench),
            ..ev(&m, Some(&t))
        });
        assert!(o.broke[0].contains("no completed request and 32 failed"));
    }

    #[test]
    fn a_recording_refused_before_the_load_lacks_its_readings() {
        let mut m = Manifest {
            outcome_state: Some("problem".into()),
            outcome_stage: Some("port".into()),
            load_given: true,
            ..Manifest::default()
        };
        let o = read(&ev(&m, None));
        assert_eq!(
            o.before_load.as_deref(),
            Some("the recording stopped at the step \"port\", before the load ran")
        );
        // A server the recorder started, or a load that ran, has its own gaps said.
        m.served = true;
        assert_eq!(read(&ev(&m, None)).before_load, None);
        m.served = false;
        m.load_started_wall = Some(1.0);
        assert_eq!(read(&ev(&m, None)).before_load, None);
        m.load_started_wall = None;
        m.outcome_state = Some("completed".into());
        assert_eq!(read(&ev(&m, None)).before_load, None);
    }

    #[test]
    fn without_a_manifest_nothing_is_known_to_have_broken() {
        let o = read(&Evidence {
            manifest: None,
            teardown: None,
            bench: None,
            before_only: true,
            server_ready: None,
        });
        assert_eq!(o, RunOutcome::default());
    }
}
