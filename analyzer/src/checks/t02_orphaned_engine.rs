//! T2: an engine process left holding the GPU. Observed live by the recorder at its GPU
//! gate and teardown; read here from `teardown.json`, else `gate.json` (checks.md §8).

use crate::json::Json;
use crate::verdict::{CheckResult, Status};

/// T2 from a recorder document. `name` is `teardown.json` or `gate.json`.
pub fn from_document(name: &str, doc: &Json) -> CheckResult {
    let is_gate = name == "gate.json";
    let reason = doc
        .get("reason")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string();
    let linux = doc.get("linux").and_then(Json::as_bool);
    let abandoned = doc.get("abandoned").and_then(Json::as_bool) == Some(true);
    let clear = doc.get("clear").and_then(Json::as_bool);
    let (status, message) = if linux == Some(false) {
        (
            Status::Unknown,
            "checking that the GPU is free needs Linux: the server's processes are found in /proc"
                .to_string(),
        )
    } else if abandoned {
        (
            Status::Unknown,
            "the stop was cut short by a second signal, so the card was not checked".to_string(),
        )
    } else {
        match clear {
            Some(true) => (Status::Pass, reason.clone()),
            Some(false) if is_gate => (
                Status::Fail,
                format!("card not clear; refusing to start a server. {reason}"),
            ),
            Some(false) => (Status::Fail, reason.clone()),
            None => (
                Status::Unknown,
                "the card was not checked after the stop".to_string(),
            ),
        }
    };
    let mut r = CheckResult::new(2, status, message);
    r.set(
        "readings",
        doc.get("readings").cloned().unwrap_or(Json::Null),
    );
    if is_gate {
        if let Some(g) = doc.get("gpus") {
            r.set("gpus", g.clone());
        }
    } else {
        r.set(
            "left_after_the_server_stopped",
            doc.get("left_after_the_server_stopped")
                .cloned()
                .unwrap_or(Json::Null),
        );
    }
    r.source = Some(name.to_string());
    r
}
