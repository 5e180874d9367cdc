//! A load where every request failed. The run measured no answer at all: its rate of
//! generated tokens, its agreement of client and server, its prefix-cache hits say
//! nothing of the load, and a server that ran no request did not limit the concurrency:
//! the requests never reached it. T22 fails such a run; T8, T10, T15 and T17 read this
//! fact from their scope (never from T22's result) and say so instead of passing.

use crate::bench::{BenchResult, Phase};
use crate::num::thousands_int;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

/// Every request the load sent failed.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFailed {
    /// How many it sent.
    pub sent: i64,
    /// The load tool, for messages ("GuideLLM 0.8.1", "the load tool").
    pub tool: String,
}

impl LoadFailed {
    /// From the counts a load tool wrote: none completed and some failed.
    pub fn of_counts(completed: Option<i64>, failed: Option<i64>, tool: &str) -> Option<Self> {
        match (completed, failed) {
            (Some(0), Some(f)) if f > 0 => Some(LoadFailed {
                sent: f,
                tool: tool.to_string(),
            }),
            _ => None,
        }
    }

    /// The whole load of a result.
    pub fn of(b: &BenchResult) -> Option<Self> {
        LoadFailed::of_counts(b.completed, b.failed, b.tool_name())
    }

    /// One phase of a sweep.
    pub fn of_phase(p: &Phase, tool: &str) -> Option<Self> {
        LoadFailed::of_counts(p.completed, p.failed, tool)
    }

    /// "every one of the 24 requests GuideLLM 0.8.1 sent failed (T22)".
    pub fn clause(&self) -> String {
        let sent = match self.sent {
            1 => "the only request".to_string(),
            n => format!("every one of the {} requests", thousands_int(n)),
        };
        format!("{sent} {} sent failed (T22)", self.tool)
    }

    /// "Can't tell" in place of a verdict on a load that produced nothing: `what` says
    /// what there is then nothing of ("no rate of the load to check").
    pub fn cannot_tell(&self, tripwire: Tripwire, what: &str) -> CheckResult {
        CheckResult::new(
            tripwire,
            Status::Unknown,
            format!("{}, so there is {what}", self.clause()),
        )
        .with("requests_sent", self.sent)
        .with("requests_completed", 0)
    }

    /// T8's message when the server ran none of them: they never reached its scheduler.
    pub fn never_reached(&self, requested: i64) -> String {
        format!(
            "{requested} requested, but the requests never reached the server's engine: {}, \
             so the server had nothing to run, not too little room",
            self.clause()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_load_with_no_success_and_some_failure() {
        assert_eq!(LoadFailed::of_counts(Some(0), Some(0), "t"), None);
        assert_eq!(LoadFailed::of_counts(Some(1), Some(23), "t"), None);
        assert_eq!(LoadFailed::of_counts(None, Some(24), "t"), None);
        let f = LoadFailed::of_counts(Some(0), Some(24), "GuideLLM 0.8.1").unwrap();
        assert_eq!(
            f.clause(),
            "every one of the 24 requests GuideLLM 0.8.1 sent failed (T22)"
        );
        let r = f.cannot_tell(Tripwire::IntegerSecondTimer, "no rate of the load to check");
        assert_eq!(r.status, Status::Unknown);
        assert!(r
            .message
            .ends_with("so there is no rate of the load to check"));
        assert!(f
            .never_reached(24)
            .contains("never reached the server's engine"));
    }
}
