//! T7 from the recorder's live probe (`probe.json`, docs/tripwires.md#t7): one request, a burst,
//! a health check. The outcome is the recorder's, reached by the shared rule below.

use crate::rules::Tripwire;
use serde::Serialize;

use super::absent::{unusable, Absent, Input, Judged};
use super::failure::{failure_result, plural};
use super::scope::{BootLogScope, RunScope};
use crate::bootlog::BootFacts;
use crate::docs::probe::{Probe, ProbeOutcome, Reply};
use crate::docs::{self, PROBE};
use crate::json::Json;
use crate::rules::verdict::{CheckResult, Status};

/// The burst's figures in the evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct BurstEvidence {
    concurrency: usize,
    failed: usize,
    max_seconds: Option<f64>,
    rejected: usize,
}

/// The probe's evidence: the model, the first reply, the burst's figures, and whether
/// the server answered its health check after.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Evidence<'a> {
    model: &'a Option<String>,
    first: &'a Reply,
    burst: BurstEvidence,
    alive_after: Option<bool>,
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
        None if c.rejections > 0 => {
            let mut r = CheckResult::new(
                T7,
                Status::Pass,
                admission_message(f, c.rejections, c.first_rejection_lineno),
            )
            .with("admission_rejections", c.rejections);
            if let Some(n) = c.first_rejection_lineno {
                r.set("lineno", n);
            }
            if let Some(q) = f.max_num_queued_reqs() {
                r.set("max_num_queued_reqs", q);
            }
            Ok(r)
        }
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
    /// `{}` when the model list failed.
    pub evidence: Json,
}

impl Outcome {
    fn new(passed: bool, message: String, evidence: Json) -> Outcome {
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
        return Outcome::new(
            false,
            format!("cannot list models: {err}"),
            Json::Obj(Vec::new()),
        );
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
    let evidence = docs::to_json(&Evidence {
        model: &doc.model,
        first,
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
    if let Json::Obj(pairs) = derived.evidence {
        r.evidence = pairs;
    }
    r.source = Some(PROBE.into());
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::probe::ProbeRequest;

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
            o.evidence.get("burst").unwrap().to_compact(),
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
        assert_eq!(o.evidence.to_compact(), "{}");
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
        let keys: Vec<&str> = r.evidence.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["model", "first", "burst", "alive_after"]);
    }
}
