//! One tripwire result (a `results.json` check object: `id`, `name`, `status`,
//! `message`, `evidence`, and `source` when it was read from one file) and the exit-status
//! rule.

use std::any::Any;
use std::fmt;

use serde::{Serialize, Serializer};

use super::registry::Tripwire;
use crate::json::{ordered_map, Json};

/// The five statuses a check can return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Fail,
    Warn,
    Unknown,
    Pass,
    NotApplicable,
}

impl Status {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Unknown => "unknown",
            Status::NotApplicable => "not_applicable",
        }
    }

    /// The terminal label.
    pub fn terminal_label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "TRIPWIRE-FAILED",
            Status::Unknown => "????",
            Status::NotApplicable => "N/A",
        }
    }

    /// The page's icon beside the label.
    pub fn icon(self) -> &'static str {
        match self {
            Status::Fail => "✖",
            Status::Warn => "▲",
            Status::Unknown => "?",
            Status::Pass => "✔",
            Status::NotApplicable => "–",
        }
    }

    /// Whether the page shows a result of this status in full; passes and
    /// not-applicables are folded.
    pub fn shown_in_full(self) -> bool {
        matches!(self, Status::Fail | Status::Warn | Status::Unknown)
    }

    /// Whether the page's count line lists this status when no result has it: every
    /// status but "does not apply", which is only mentioned when it occurs.
    pub fn counted_when_absent(self) -> bool {
        self != Status::NotApplicable
    }

    /// The label the report page shows.
    pub fn report_label(self) -> &'static str {
        match self {
            Status::Pass => "Pass",
            Status::Warn => "Warning",
            Status::Fail => "Tripwire failed",
            Status::Unknown => "Can't tell",
            Status::NotApplicable => "Does not apply",
        }
    }

    /// The status its JSON spelling names.
    pub fn parse(s: &str) -> Option<Status> {
        Some(match s {
            "pass" => Status::Pass,
            "warn" => Status::Warn,
            "fail" => Status::Fail,
            "unknown" => Status::Unknown,
            "not_applicable" => Status::NotApplicable,
            _ => return None,
        })
    }
}

/// Written as its JSON spelling ([`Status::as_str`]).
impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What a rule read and found, as a check's `evidence`: each rule's own struct, written
/// field by field in its order. Other modules read it by its type
/// ([`CheckResult::finding`]), never back from its JSON.
pub trait Evidence: fmt::Debug + Send + Sync + Any {
    /// The fields as `results.json` writes them, in order.
    fn pairs(&self) -> Vec<(String, Json)>;
    fn clone_box(&self) -> Box<dyn Evidence>;
    fn as_any(&self) -> &dyn Any;
}

impl<T> Evidence for T
where
    T: Serialize + Clone + fmt::Debug + Send + Sync + 'static,
{
    fn pairs(&self) -> Vec<(String, Json)> {
        match crate::docs::to_json(self) {
            Json::Obj(pairs) => pairs,
            _ => Vec::new(),
        }
    }

    fn clone_box(&self) -> Box<dyn Evidence> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// No evidence: an empty object.
#[derive(Debug, Clone, Serialize)]
struct Nothing {}

/// One verdict.
#[derive(Debug)]
pub struct CheckResult {
    pub tripwire: Tripwire,
    pub status: Status,
    pub message: String,
    /// The rule's own evidence.
    finding: Box<dyn Evidence>,
    /// Keys added after the rule's own, by its scope or the run (a broken run's
    /// `partial_run`, the file a load tool's scrape came from); a key the finding has is
    /// replaced in its place.
    notes: Vec<(String, Json)>,
    /// The one input the verdict was read from, when there is one.
    pub source: Option<String>,
}

impl Clone for CheckResult {
    fn clone(&self) -> Self {
        CheckResult {
            tripwire: self.tripwire,
            status: self.status,
            message: self.message.clone(),
            finding: self.finding.clone_box(),
            notes: self.notes.clone(),
            source: self.source.clone(),
        }
    }
}

impl PartialEq for CheckResult {
    fn eq(&self, other: &Self) -> bool {
        self.tripwire == other.tripwire
            && self.status == other.status
            && self.message == other.message
            && self.source == other.source
            && self.evidence() == other.evidence()
    }
}

impl CheckResult {
    pub fn new(tripwire: Tripwire, status: Status, message: impl Into<String>) -> Self {
        CheckResult {
            tripwire,
            status,
            message: message.into(),
            finding: Box::new(Nothing {}),
            notes: Vec::new(),
            source: None,
        }
    }

    /// The rule's evidence.
    pub fn found(mut self, evidence: impl Evidence) -> Self {
        self.finding = Box::new(evidence);
        self
    }

    /// The rule's evidence, when it is of type `T`.
    pub fn finding<T: Evidence>(&self) -> Option<&T> {
        self.finding.as_any().downcast_ref::<T>()
    }

    /// Adds (or replaces) one key after the rule's own evidence.
    pub fn with(mut self, key: &str, value: impl Into<Json>) -> Self {
        self.set(key, value);
        self
    }

    pub fn set(&mut self, key: &str, value: impl Into<Json>) {
        let value = value.into();
        if let Some(slot) = self.notes.iter_mut().find(|(k, _)| k == key) {
            slot.1 = value;
        } else {
            self.notes.push((key.to_string(), value));
        }
    }

    /// The whole evidence, in order, as `results.json` writes it.
    pub fn evidence(&self) -> Vec<(String, Json)> {
        let mut pairs = self.finding.pairs();
        for (k, v) in &self.notes {
            match pairs.iter_mut().find(|(key, _)| key == k) {
                Some(slot) => slot.1 = v.clone(),
                None => pairs.push((k.clone(), v.clone())),
            }
        }
        pairs
    }

    /// One evidence value as written: for tests and for showing it, never for reading a
    /// finding back (that is [`CheckResult::finding`]).
    pub fn evidence_value(&self, key: &str) -> Option<Json> {
        self.evidence()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn id(&self) -> String {
        self.tripwire.id()
    }

    pub fn name(&self) -> &'static str {
        self.tripwire.slug()
    }
}

/// Written as a `results.json` check object.
impl Serialize for CheckResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ResultObject {
            id: self.id(),
            name: self.name(),
            status: self.status,
            message: &self.message,
            evidence: &self.evidence(),
            source: self.source.as_deref(),
        }
        .serialize(s)
    }
}

/// The result object's layout: `id` and `name` follow from the tripwire number.
#[derive(Serialize)]
struct ResultObject<'a> {
    id: String,
    name: &'static str,
    status: Status,
    message: &'a str,
    #[serde(serialize_with = "ordered_map")]
    evidence: &'a [(String, Json)],
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
}

/// Exit status for a list of results: 1 on a fail (or a warn under `strict`), else 2 on
/// an unknown or an unusable input, else 0.
pub fn exit_status(results: &[CheckResult], strict: bool, input_unusable: bool) -> i32 {
    let any = |s: Status| results.iter().any(|r| r.status == s);
    if any(Status::Fail) || (strict && any(Status::Warn)) {
        1
    } else if any(Status::Unknown) || input_unusable {
        2
    } else {
        0
    }
}

/// What each result means and what to do about it, in
/// the report's order of statuses.
pub const STATUS_MEANINGS: [(Status, &str); 5] = [
    (
        Status::Fail,
        "The tripwire caught its problem in this run. Read the finding, fix the cause and run \
         again, or report the number together with the finding.",
    ),
    (
        Status::Warn,
        "Something may distort the numbers without proving they are wrong. Keep the warning \
         with the results.",
    ),
    (
        Status::Unknown,
        "The files could not decide. Supply the file named in the message, or check the \
         engine's version; never read it as a pass.",
    ),
    (
        Status::Pass,
        "Checked and fine. Nothing to do; it covers this run only.",
    ),
    (
        Status::NotApplicable,
        "The check does not concern this engine or this kind of run. Nothing to do.",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::to_compact;

    #[test]
    fn exit_rule() {
        let r = |s| CheckResult::new(Tripwire::SilentPreemption, s, "");
        assert_eq!(
            exit_status(&[r(Status::Pass), r(Status::Warn)], false, false),
            0
        );
        assert_eq!(exit_status(&[r(Status::Warn)], true, false), 1);
        assert_eq!(
            exit_status(&[r(Status::Unknown), r(Status::Fail)], false, false),
            1
        );
        assert_eq!(exit_status(&[r(Status::Unknown)], false, false), 2);
        assert_eq!(exit_status(&[r(Status::NotApplicable)], false, false), 0);
        assert_eq!(exit_status(&[], false, true), 2);
    }

    #[test]
    fn result_json_shape() {
        let r = CheckResult::new(
            Tripwire::SilentPreemption,
            Status::Fail,
            "22 preemptions during the run",
        )
        .with("engine", "vllm")
        .with("preemptions", 22.0);
        assert_eq!(
            to_compact(&r),
            r#"{"id": "T1", "name": "silent-preemption", "status": "fail", "message": "22 preemptions during the run", "evidence": {"engine": "vllm", "preemptions": 22.0}}"#
        );
        let mut from_log = CheckResult::new(Tripwire::NullBlock, Status::NotApplicable, "");
        from_log.source = Some("boot.log".into());
        assert_eq!(
            to_compact(&from_log),
            r#"{"id": "T14", "name": "null-block", "status": "not_applicable", "message": "", "evidence": {}, "source": "boot.log"}"#
        );
    }

    #[test]
    fn every_status_has_one_meaning_in_the_report_order() {
        let order: Vec<Status> = STATUS_MEANINGS.iter().map(|(s, _)| *s).collect();
        let mut sorted = order.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(order, sorted);
        assert_eq!(order.len(), 5);
        assert!(STATUS_MEANINGS.iter().all(|(_, m)| m.ends_with('.')));
    }
}
