//! T7 from the recorder's live probe (`probe.json`, docs/tripwires.md#t7): one request, a burst,
//! a health check. The outcome is the recorder's, reached by the shared rule below.

use crate::rules::Tripwire;
use serde::Serialize;

use super::absent::{unusable, Absent, Input, Judged};
use super::failure::{failure_result, plural};
use super::scope::{BootLogScope, RunScope};
use crate::bootlog::BootFacts;
use crate::docs::probe::{Probe, ProbeOutcome, Reply};
use crate::docs::PROBE;
use crate::rules::verdict::{CheckResult, Status};

/// The burst's figures in the evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BurstEvidence {
    pub concurrency: usize,
    pub failed: usize,
    pub max_seconds: Option<f64>,
    pub rejected: usize,
}

/// The probe's evidence: the model, the first reply, the burst's figures, and whether
/// the server answered its health check after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeEvidence {
    pub model: Option<String>,
    pub first: Reply,
    pub burst: BurstEvidence,
    pub alive_after: Option<bool>,
}

/// Requests admission control turned away while the server stayed up.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Admission {
    pub admission_rejections: usize,
    /// The line of the first rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lineno: Option<usize>,
    /// vLLM's `--max-num-queued-reqs`, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_queued_reqs: Option<i64>,
}

const T7: Tripwire = Tripwire::CrashAfterReady;

/// The whole run: the recorder's live probe before the load; when the run's own documents
/// show the server died during the run, that death instead, naming the cause its log
/// shows (one T7 for the run).
pub fn run(cx: &RunScope<'_>) -> Judged {
    let probe = match &cx.probe {
        Input::Present(doc) => Some(from_document(doc)),
        Input::Unusable(e) => Some(unusable(T7, e)),
        _ => None,
    };
    match cx.outcome.t7_death(cx.logs, probe.as_ref()) {
        Some(death) => Ok(death),
        None => probe.ok_or(Absent::NotGiven),
    }
}

/// One start's log: a crash after the server was ready, or requests admission control
/// turned away while it stayed up (a pass that says so). A server the run's documents
/// show dead gets its one T7 from the run.
pub fn boot_log(cx: &BootLogScope<'_>) -> Judged {
    let log = cx
        .log
        .present()
        .filter(|_| !cx.server_died)
        .ok_or(Absent::NotGiven)?;
    let (c, f) = (&log.classification, &log.facts);
    match &c.failure {
        Some(fail) if fail.phase == "serving" => Ok(failure_result(fail, c.rejections)),
        None if c.rejections > 0 => Ok(CheckResult::new(
            T7,
            Status::Pass,
            admission_message(f, c.rejections, c.first_rejection_lineno),
        )
        .found(Admission {
            admission_rejections: c.rejections,
            lineno: c.first_rejection_lineno,
            max_num_queued_reqs: f.max_num_queued_reqs(),
        })),
        _ => Err(Absent::NotGiven),
    }
}

fn admission_message(f: &BootFacts, k: usize, first: Option<usize>) -> String {
    let limit = match f.max_num_queued_reqs() {
        Some(q) => format!("the waiting queue was full (--max-num-queued-reqs {q})"),
        None => "the waiting queue was full".to_string(),
    };
    let at = first.map_or_else(String::new, |n| format!(", the first at line {n}"));
    format!(
        "Admission control turned away {} because {limit}{at}; the server stayed up, so this \
         is not a crash (T8 and T15 show what it did to the run)",
        plural(k, "request", "requests")
    )
}

/// The probe's outcome from its stored replies. The recorder
/// writes this outcome; the analyzer re-derives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub passed: bool,
    pub message: String,
    /// None when the model list failed (the evidence is then empty).
    pub evidence: Option<ProbeEvidence>,
}

impl Outcome {
    fn new(passed: bool, message: String, evidence: Option<ProbeEvidence>) -> Outcome {
        Outcome {
            passed,
            message,
            evidence,
        }
    }
}

/// The rule over the stored replies.
pub fn outcome(doc: &Probe) -> Outcome {
    let Some(first) = &doc.first else {
        let err = doc.models_error.as_deref().unwrap_or("no reply recorded");
        return Outcome::new(false, format!("cannot list models: {err}"), None);
    };
    let burst = doc.burst.as_deref().unwrap_or_default();
    let concurrency = doc
        .request
        .as_ref()
        .map(|r| r.concurrency)
        .or(doc.burst.as_ref().map(Vec::len))
        .unwrap_or(0);
    let rejected = burst.iter().filter(|r| r.rejected()).count();
    let failed = burst.iter().filter(|r| !r.ok && !r.rejected()).count();
    let max_seconds = burst
        .iter()
        .filter_map(|r| r.seconds)
        .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
    let evidence = Some(ProbeEvidence {
        model: doc.model.clone(),
        first: first.clone(),
        burst: BurstEvidence {
            concurrency,
            failed,
            max_seconds,
            rejected,
        },
        alive_after: doc.alive_after,
    });
    if !first.ok {
        let err = first.error.as_deref().unwrap_or("no good reply");
        return Outcome::new(false, format!("first request failed: {err}"), evidence);
    }
    if failed > 0 {
        return Outcome::new(
            false,
            format!("{failed}/{concurrency} burst requests failed"),
            evidence,
        );
    }
    if doc.alive_after != Some(true) {
        return Outcome::new(false, "server died after burst".into(), evidence);
    }
    let message = if rejected > 0 {
        format!(
            "1 + {} concurrent requests served, {rejected} rejected by admission control, server alive",
            concurrency.saturating_sub(rejected)
        )
    } else {
        format!("1 + {concurrency} concurrent requests served, server alive")
    };
    Outcome::new(true, message, evidence)
}

/// T7 from `probe.json`: the document's stored outcome and message.
pub fn from_document(doc: &Probe) -> CheckResult {
    let derived = outcome(doc);
    let passed = match doc.outcome {
        Some(stored) => stored == ProbeOutcome::Pass,
        None => derived.passed,
    };
    let status = if passed { Status::Pass } else { Status::Fail };
    let message = doc.message.clone().unwrap_or(derived.message);
    let mut r = CheckResult::new(T7, status, message);
    if let Some(evidence) = derived.evidence {
        r = r.found(evidence);
    }
    r.source = Some(PROBE.into());
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::{BootLog, Classification, Failure};
    use crate::docs::probe::ProbeRequest;
    use crate::docs::BOOT_LOG;
    use crate::input::InputError;
    use crate::json::{obj, Json};
    use crate::rules::absent::{settle, CantTell};
    use crate::rules::failure::Failed;
    use crate::rules::outcome::{Death, RunOutcome};
    use crate::rules::testing::{said, Folder};

    fn reply(ok: bool, status: Option<u16>, seconds: f64) -> Reply {
        Reply {
            ok,
            status,
            seconds: Some(seconds),
            completion_tokens: ok.then_some(16),
            error: (!ok).then(|| "Service Unavailable".to_string()),
        }
    }

    fn probe(burst: Vec<Reply>, alive: bool) -> Probe {
        Probe {
            model: Some("m".into()),
            request: Some(ProbeRequest {
                concurrency: 8,
                ..ProbeRequest::default()
            }),
            first: Some(reply(true, Some(200), 0.4)),
            burst: Some(burst),
            alive_after: Some(alive),
            ..Probe::default()
        }
    }

    #[test]
    fn the_outcomes_of_recorder_md_6() {
        let good = vec![reply(true, Some(200), 0.5); 8];
        let o = outcome(&probe(good.clone(), true));
        assert!(o.passed);
        assert_eq!(o.message, "1 + 8 concurrent requests served, server alive");
        assert_eq!(
            crate::json::to_compact(&o.evidence.as_ref().unwrap().burst),
            r#"{"concurrency": 8, "failed": 0, "max_seconds": 0.5, "rejected": 0}"#
        );
        assert_eq!(
            outcome(&probe(good, false)).message,
            "server died after burst"
        );
        let mut some_rejected = vec![reply(true, Some(200), 0.5); 4];
        some_rejected.extend(vec![reply(false, Some(503), 0.1); 4]);
        let o = outcome(&probe(some_rejected, true));
        assert!(o.passed);
        assert_eq!(
            o.message,
            "1 + 4 concurrent requests served, 4 rejected by admission control, server alive"
        );
        let mut broken = vec![reply(true, Some(200), 0.5); 5];
        broken.extend(vec![reply(false, None, 0.1); 3]);
        assert_eq!(
            outcome(&probe(broken, true)).message,
            "3/8 burst requests failed"
        );
        let first_rejected = Probe {
            first: Some(reply(false, Some(503), 0.1)),
            burst: None,
            ..probe(vec![], true)
        };
        assert_eq!(
            outcome(&first_rejected).message,
            "first request failed: Service Unavailable"
        );
        let no_models = Probe {
            models_error: Some("connection refused".into()),
            ..Probe::default()
        };
        let o = outcome(&no_models);
        assert_eq!(o.message, "cannot list models: connection refused");
        assert_eq!(o.evidence, None);
    }

    #[test]
    fn the_stored_outcome_wins() {
        let stored = Probe {
            outcome: Some(ProbeOutcome::Fail),
            message: Some("as recorded".into()),
            ..probe(vec![reply(true, Some(200), 0.5); 8], true)
        };
        let r = from_document(&stored);
        assert_eq!(
            (r.status, r.message.as_str()),
            (Status::Fail, "as recorded")
        );
        assert_eq!(r.source.as_deref(), Some("probe.json"));
        let keys: Vec<String> = r.evidence().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["model", "first", "burst", "alive_after"]);
    }

    fn failure(kind: &str, phase: &str, lineno: usize, detail: &str) -> Failure {
        Failure {
            kind: kind.into(),
            phase: phase.into(),
            lineno,
            line: "RuntimeError: CUDA error: an illegal memory access was encountered".into(),
            detail: detail.into(),
        }
    }

    fn log(facts: BootFacts, classification: Classification) -> BootLog {
        BootLog {
            label: BOOT_LOG.into(),
            facts,
            classification,
        }
    }

    fn on_log(log: Input<'_, BootLog>, server_died: bool) -> Judged {
        boot_log(&BootLogScope {
            log,
            with_unparsed: false,
            server_died,
        })
    }

    #[test]
    fn requests_turned_away_by_a_server_that_stayed_up_pass() {
        let l = log(
            BootFacts {
                non_default_args: Some(obj([("max_num_queued_reqs", Json::Int(4))])),
                ..BootFacts::default()
            },
            Classification {
                rejections: 3,
                first_rejection_lineno: Some(207),
                ..Classification::default()
            },
        );
        let r = on_log(Input::Present(&l), false).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "Admission control turned away 3 requests because the waiting queue was full \
                 (--max-num-queued-reqs 4), the first at line 207; the server stayed up, so \
                 this is not a crash (T8 and T15 show what it did to the run)"
            )
        );
        assert_eq!(
            r.finding::<Admission>(),
            Some(&Admission {
                admission_rejections: 3,
                lineno: Some(207),
                max_num_queued_reqs: Some(4),
            })
        );
        // Without the limit or the line, those keys are left out.
        let l = log(
            BootFacts::default(),
            Classification {
                rejections: 1,
                ..Classification::default()
            },
        );
        let r = on_log(Input::Present(&l), false).unwrap();
        assert!(r.message.starts_with(
            "Admission control turned away 1 request because the waiting queue was full;"
        ));
        let keys: Vec<String> = r.evidence().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["admission_rejections"]);
    }

    #[test]
    fn a_crash_while_serving_fails_naming_its_line() {
        let l = log(
            BootFacts::default(),
            Classification {
                failure: Some(failure("cuda_error", "serving", 300, "")),
                rejections: 2,
                ..Classification::default()
            },
        );
        let r = on_log(Input::Present(&l), false).unwrap();
        assert_eq!(
            (r.tripwire, r.status),
            (Tripwire::CrashAfterReady, Status::Fail)
        );
        assert_eq!(
            r.message,
            "The server crashed after it was ready, while serving: a CUDA error (cuda_error, \
             serving phase) at line 300: the line reads \"RuntimeError: CUDA error: an illegal \
             memory access was encountered\"; admission control had also turned away 2 requests"
        );
        let f = r.finding::<Failed>().expect("the failure's finding");
        assert_eq!(
            (f.kind.as_str(), f.phase.as_str(), f.lineno),
            ("cuda_error", "serving", 300)
        );
        assert_eq!(f.admission_rejections, Some(2));
        // A server the run shows dead gets its T7 from the run, not from its log.
        assert_eq!(on_log(Input::Present(&l), true), Err(Absent::NotGiven));
    }

    #[test]
    fn a_log_without_a_crash_or_a_rejection_gives_no_t7() {
        let clean = log(BootFacts::default(), Classification::default());
        assert_eq!(on_log(Input::Present(&clean), false), Err(Absent::NotGiven));
        // A failure during start-up is T12's.
        let boot = log(
            BootFacts::default(),
            Classification {
                failure: Some(failure("out_of_memory", "boot", 80, "")),
                ..Classification::default()
            },
        );
        assert_eq!(on_log(Input::Present(&boot), false), Err(Absent::NotGiven));
        // An unusable log is said once, by T12 and the other start-up checks.
        let bad = InputError::new(BOOT_LOG, None, "not UTF-8");
        assert_eq!(settle(T7, on_log(Input::Unusable(&bad), false)), None);
        assert_eq!(settle(T7, on_log(Input::NotGiven, false)), None);
    }

    #[test]
    fn the_run_reads_the_probe_and_an_unusable_one_cannot_tell() {
        let folder = Folder::default();
        assert_eq!(settle(T7, run(&folder.scope())), None);
        let doc = probe(vec![reply(true, Some(200), 0.5); 8], true);
        let mut cx = folder.scope();
        cx.probe = Input::Present(&doc);
        let r = run(&cx).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "1 + 8 concurrent requests served, server alive"
            )
        );
        assert_eq!(
            r.finding::<ProbeEvidence>().map(|e| e.burst.concurrency),
            Some(8)
        );
        let bad = InputError::new(PROBE, None, "not JSON");
        cx.probe = Input::Unusable(&bad);
        let r = settle(T7, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("unusable input: probe.json"),
            "{}",
            r.message
        );
        assert!(r.finding::<CantTell>().is_some());
    }

    #[test]
    fn a_server_that_died_during_the_run_fails_once_naming_the_cause() {
        let died = Folder {
            outcome: RunOutcome {
                server_died: Some("exited with code 1".into()),
                ..RunOutcome::default()
            },
            ..Folder::default()
        };
        let logs = [log(
            BootFacts::default(),
            Classification {
                set_aside: Some(failure(
                    "cuda_error",
                    "serving",
                    812,
                    "an illegal memory access was encountered",
                )),
                ..Classification::default()
            },
        )];
        let doc = probe(vec![reply(true, Some(200), 0.5); 8], true);
        let mut cx = died.scope();
        cx.logs = &logs;
        cx.probe = Input::Present(&doc);
        let r = run(&cx).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "The server exited with code 1 during the run, before the recorder stopped it; \
                 the log shows cuda error at line 812: an illegal memory access was encountered \
                 (before the load: 1 + 8 concurrent requests served, server alive)"
            )
        );
        let d = r.finding::<Death>().expect("the death's finding");
        assert_eq!(d.server_exit, "exited with code 1");
        assert_eq!(
            (d.kind.as_deref(), d.lineno),
            (Some("cuda_error"), Some(812))
        );
        // Without a log, only how it ended.
        let mut cx = died.scope();
        cx.probe = Input::NotGiven;
        let r = run(&cx).unwrap();
        assert_eq!(r.status, Status::Fail);
        let keys: Vec<String> = r.evidence().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["server_exit"]);
    }
}
