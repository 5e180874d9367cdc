//! What the analyzer reads from the recorder's `manifest.json` (recorder.md §9.2).

use crate::input::{decode_strict, InputError};
use crate::json::{self, Json};

/// The manifest's facts the analyzer uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub title: Option<String>,
    pub server_version: Option<String>,
    /// The recorder's `--requested`.
    pub requested_flag: Option<i64>,
    /// The load command's `--max-concurrency`.
    pub requested_from_load: Option<i64>,
    /// True when the manifest records the load command and it was no recognised client
    /// (`load.client` null): then `load.log` is not counted (formats.md §6.4).
    pub load_unrecognised: bool,
    pub outcome_state: Option<String>,
    pub outcome_stage: Option<String>,
    pub outcome_problem: Option<String>,
}

/// Reads and checks a recorder document: a JSON object.
pub fn read_document(file: &str, bytes: &[u8]) -> Result<Json, InputError> {
    let text = decode_strict(file, bytes)?;
    let doc = json::parse(text).map_err(|e| InputError::new(file, Some(e.line), e.reason))?;
    if doc.as_object().is_none() {
        return Err(InputError::new(file, None, "expected a JSON object"));
    }
    Ok(doc)
}

impl Manifest {
    pub fn from_json(doc: &Json) -> Manifest {
        let s = |v: Option<&Json>| v.and_then(Json::as_str).map(str::to_string);
        let int = |v: Option<&Json>| match v {
            Some(Json::Int(i)) => Some(*i),
            _ => None,
        };
        let requested = doc.get("requested");
        let load = doc.get("load");
        let outcome = doc.get("outcome");
        Manifest {
            title: s(doc.get("title")).filter(|t| !t.is_empty()),
            server_version: s(doc.get("server_version").and_then(|v| v.get("version")))
                .filter(|v| !v.is_empty()),
            requested_flag: int(requested.and_then(|r| r.get("flag"))),
            requested_from_load: int(requested.and_then(|r| r.get("from_load"))),
            load_unrecognised: load
                .and_then(|l| l.get("client"))
                .is_some_and(Json::is_null),
            outcome_state: s(outcome.and_then(|o| o.get("state"))),
            outcome_stage: s(outcome.and_then(|o| o.get("stage"))),
            outcome_problem: s(outcome.and_then(|o| o.get("problem"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_used_keys() {
        let doc = json::parse(
            r#"{"schema": "inferlint.run/1", "title": "t", "server_version": {"version": "0.5.20", "endpoint": "/get_server_info"},
                "requested": {"flag": null, "from_load": 32}, "load": {"client": null},
                "outcome": {"state": "interrupted", "stage": "load", "problem": null}}"#,
        )
        .unwrap();
        let m = Manifest::from_json(&doc);
        assert_eq!(m.title.as_deref(), Some("t"));
        assert_eq!(m.server_version.as_deref(), Some("0.5.20"));
        assert_eq!(m.requested_flag, None);
        assert_eq!(m.requested_from_load, Some(32));
        assert!(m.load_unrecognised);
        assert_eq!(m.outcome_state.as_deref(), Some("interrupted"));
    }
}
