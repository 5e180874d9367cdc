//! T12: a start that failed, classified from its log. The failure classifier
//! (`bootlog::classify`) finds the line that explains it; a failure during start-up is
//! T12's, one after the server said it was ready is T7's. `check-log` also reports
//! recognised lines in an unknown format as "can't tell" (a newer engine release).

use serde::Serialize;

use super::absent::Judged;
use super::failure::{failure_result, plural};
use super::scope::BootLogScope;
use crate::bootlog::Unparsed;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T12: Tripwire = Tripwire::UnexplainedFailure;

/// Recognised log lines whose value did not parse.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnparsedLines {
    pub unparsed: Vec<Unparsed>,
}

/// One start's log: a pass when no error line explains a failure, a fail naming the cause
/// of one during start-up.
pub fn boot_log(cx: &BootLogScope<'_>) -> Judged {
    let log = cx.log.need()?;
    let (c, f) = (&log.classification, &log.facts);
    match &c.failure {
        None => {
            let msg = match f.ready_lineno {
                Some(n) if f.ready => format!(
                    "No failure in the log: the server became ready at line {n} and no error line \
                     after that explains a crash"
                ),
                _ => "No error line in the log explains a failure (the log never shows the server \
                      ready; a start that hung or was cut short is not judged here)"
                    .to_string(),
            };
            Ok(CheckResult::new(T12, Status::Pass, msg))
        }
        Some(fail) if fail.phase == "serving" => Err(super::absent::Absent::NotGiven),
        Some(fail) => Ok(failure_result(fail, c.rejections)),
    }
}

/// `check-log`'s "can't tell" for recognised lines in an unknown format.
pub fn unparsed_lines(cx: &BootLogScope<'_>) -> Judged {
    let log = cx.log.present().filter(|_| cx.with_unparsed);
    log.and_then(|l| unparsed(&l.facts))
        .ok_or(super::absent::Absent::NotGiven)
}

/// check-log's T12 `unknown` for recognised lines in an unknown format.
fn unparsed(f: &crate::bootlog::BootFacts) -> Option<CheckResult> {
    let first = f.unparsed.first()?;
    let n = f.unparsed.len();
    Some(
        CheckResult::new(
            T12,
            Status::Unknown,
            format!(
                "{} had an unknown format (first: {} at line {}); the facts they carry are \
                 missing, which a newer engine release can cause",
                plural(n, "recognised log line", "recognised log lines"),
                first.field,
                first.lineno
            ),
        )
        .found(UnparsedLines {
            unparsed: f.unparsed.clone(),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::{BootFacts, BootLog, Classification, Failure, Unparsed};
    use crate::docs::BOOT_LOG;
    use crate::input::InputError;
    use crate::json::Json;
    use crate::rules::absent::{settle, Absent, Input};
    use crate::rules::failure::Failed;
    use crate::rules::testing::said;

    fn log(facts: BootFacts, failure: Option<Failure>) -> BootLog {
        BootLog {
            label: BOOT_LOG.into(),
            facts,
            classification: Classification {
                failure,
                rejections: 5,
                ..Classification::default()
            },
        }
    }

    fn cx(log: Input<'_, BootLog>, with_unparsed: bool) -> BootLogScope<'_> {
        BootLogScope {
            log,
            with_unparsed,
            server_died: false,
        }
    }

    fn oom(phase: &str) -> Failure {
        Failure {
            kind: "out_of_memory".into(),
            phase: phase.into(),
            lineno: 88,
            line: "torch.OutOfMemoryError: CUDA out of memory.".into(),
            detail: "CUDA out of memory. Tried to allocate 2.00 GiB".into(),
        }
    }

    #[test]
    fn a_start_without_a_failure_passes() {
        let ready = log(
            BootFacts {
                ready: true,
                ready_lineno: Some(120),
                ..BootFacts::default()
            },
            None,
        );
        let r = boot_log(&cx(Input::Present(&ready), false)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "No failure in the log: the server became ready at line 120 and no error line \
                 after that explains a crash"
            )
        );
        assert!(r.evidence().is_empty());
        let cut = log(BootFacts::default(), None);
        let r = boot_log(&cx(Input::Present(&cut), false)).unwrap();
        assert_eq!(r.status, Status::Pass);
        assert!(r.message.contains("the log never shows the server ready"));
    }

    #[test]
    fn a_failure_during_start_up_fails_naming_its_line() {
        let failed = log(BootFacts::default(), Some(oom("boot")));
        let r = boot_log(&cx(Input::Present(&failed), false)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "The server failed during start-up, before it was ready: the GPU ran out of \
                 memory (out_of_memory, boot phase) at line 88: CUDA out of memory. Tried to \
                 allocate 2.00 GiB"
            )
        );
        assert_eq!(
            r.finding::<Failed>(),
            Some(&Failed {
                kind: "out_of_memory".into(),
                phase: "boot".into(),
                lineno: 88,
                line: "torch.OutOfMemoryError: CUDA out of memory.".into(),
                // Rejections are named only beside a crash while serving.
                admission_rejections: None,
            })
        );
        // One while serving is T7's.
        let serving = log(BootFacts::default(), Some(oom("serving")));
        assert_eq!(
            boot_log(&cx(Input::Present(&serving), false)),
            Err(Absent::NotGiven)
        );
    }

    #[test]
    fn lines_in_an_unknown_format_cannot_tell_when_asked() {
        let line = |field: &str, lineno| Unparsed {
            field: field.into(),
            lineno,
            line: "GPU KV cache size: ? tokens".into(),
        };
        let l = log(
            BootFacts {
                unparsed: vec![line("kv_pool_tokens", 3), line("max_concurrency", 9)],
                ..BootFacts::default()
            },
            None,
        );
        let r = unparsed_lines(&cx(Input::Present(&l), true)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "2 recognised log lines had an unknown format (first: kv_pool_tokens at line 3); \
                 the facts they carry are missing, which a newer engine release can cause"
            )
        );
        let e = r.finding::<UnparsedLines>().expect("the unparsed lines");
        assert_eq!(e.unparsed, l.facts.unparsed);
        assert_eq!(
            r.evidence_value("unparsed"),
            Some(Json::Arr(
                l.facts.unparsed.iter().map(Unparsed::to_json).collect()
            ))
        );
        // Only check-log asks; a log with none says nothing.
        assert_eq!(
            unparsed_lines(&cx(Input::Present(&l), false)),
            Err(Absent::NotGiven)
        );
        let clean = log(BootFacts::default(), None);
        assert_eq!(
            unparsed_lines(&cx(Input::Present(&clean), true)),
            Err(Absent::NotGiven)
        );
    }

    #[test]
    fn an_absent_log_is_said_by_the_one_conversion() {
        assert_eq!(settle(T12, boot_log(&cx(Input::NotGiven, false))), None);
        let bad = InputError::new(BOOT_LOG, None, "not UTF-8");
        let r = settle(T12, boot_log(&cx(Input::Unusable(&bad), true))).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("unusable input: boot.log"),
            "{}",
            r.message
        );
        // The unusable log is said once, not again as unparsed lines.
        assert_eq!(
            settle(T12, unparsed_lines(&cx(Input::Unusable(&bad), true))),
            None
        );
    }
}
