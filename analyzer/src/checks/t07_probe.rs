//! T7 from the recorder's live probe (`probe.json`, recorder.md §6): one request, a burst,
//! a health check. The outcome is the recorder's, reached by the shared rule below.

use crate::json::{obj, Json};
use crate::verdict::{CheckResult, Status};

/// Whether a reply record was good, and whether it was an admission-control rejection.
fn reply_flags(reply: &Json) -> (bool, bool) {
    let ok = reply.get("ok").and_then(Json::as_bool) == Some(true);
    let rejected = !ok && reply.get("status").and_then(Json::as_i64_trunc) == Some(503);
    (ok, rejected)
}

/// The probe's outcome from its stored replies (recorder.md §6 step 7): `(passed,
/// message, evidence)`. The recorder writes this outcome; the analyzer re-derives it.
pub fn outcome(doc: &Json) -> (bool, String, Json) {
    let Some(first) = doc.get("first").filter(|f| !f.is_null()) else {
        let err = doc
            .get("models_error")
            .and_then(Json::as_str)
            .unwrap_or("no reply recorded");
        return (false, format!("cannot list models: {err}"), obj::<&str>([]));
    };
    let alive = doc.get("alive_after").and_then(Json::as_bool);
    let burst = doc.get("burst").and_then(Json::as_array);
    let concurrency = doc
        .get("request")
        .and_then(|r| r.get("concurrency"))
        .and_then(Json::as_i64_trunc)
        .or(burst.map(|b| b.len() as i64))
        .unwrap_or(0);
    let (mut failed, mut rejected, mut max_s) = (0i64, 0i64, None::<f64>);
    for reply in burst.unwrap_or_default() {
        let (ok, rej) = reply_flags(reply);
        if rej {
            rejected += 1;
        } else if !ok {
            failed += 1;
        }
        if let Some(s) = reply.get("seconds").and_then(Json::as_f64) {
            max_s = Some(max_s.map_or(s, |m: f64| m.max(s)));
        }
    }
    let evidence = obj([
        ("model", doc.get("model").cloned().unwrap_or(Json::Null)),
        ("first", first.clone()),
        (
            "burst",
            obj([
                ("concurrency", Json::Int(concurrency)),
                ("failed", Json::Int(failed)),
                ("max_seconds", Json::from(max_s)),
                ("rejected", Json::Int(rejected)),
            ]),
        ),
        ("alive_after", Json::from(alive)),
    ]);
    let (first_ok, _) = reply_flags(first);
    if !first_ok {
        let err = first
            .get("error")
            .and_then(Json::as_str)
            .unwrap_or("no good reply");
        return (false, format!("first request failed: {err}"), evidence);
    }
    if failed > 0 {
        return (
            false,
            format!("{failed}/{concurrency} burst requests failed"),
            evidence,
        );
    }
    if alive != Some(true) {
        return (false, "server died after burst".to_string(), evidence);
    }
    let msg = if rejected > 0 {
        format!(
            "1 + {} concurrent requests served, {rejected} rejected by admission control, server alive",
            concurrency - rejected
        )
    } else {
        format!("1 + {concurrency} concurrent requests served, server alive")
    };
    (true, msg, evidence)
}

/// T7 from `probe.json`: the document's stored outcome and message.
pub fn from_document(doc: &Json) -> CheckResult {
    let (derived_pass, derived_msg, evidence) = outcome(doc);
    let status = match doc.get("outcome").and_then(Json::as_str) {
        Some("pass") => Status::Pass,
        Some("fail") => Status::Fail,
        _ if derived_pass => Status::Pass,
        _ => Status::Fail,
    };
    let message = doc
        .get("message")
        .and_then(Json::as_str)
        .map_or(derived_msg, str::to_string);
    let mut r = CheckResult::new(7, status, message);
    if let Json::Obj(pairs) = evidence {
        r.evidence = pairs;
    }
    r.source = Some("probe.json".into());
    r
}
