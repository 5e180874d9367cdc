//! T6: the attention backend asked for is not the one running. The engine picks a
//! backend for the main model and, with speculative decoding, for the draft model; either
//! can differ from `--attention-backend` without the log calling it an override.

use serde::Serialize;

use super::absent::Judged;
use super::scope::BootLogScope;
use crate::bootlog::BootFacts;
use crate::engine::Engine;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T6: Tripwire = Tripwire::BackendIgnored;

/// The backend asked for and the ones the log shows selected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Backends {
    /// The backend asked for (null when none was).
    pub requested: Option<String>,
    /// The main model's backends.
    pub target: Vec<String>,
    /// The draft model's backends (speculative decoding).
    pub drafter: Vec<String>,
    /// Whether the start used a draft model (null when the log does not say).
    pub speculative: Option<bool>,
}

/// One start's log.
pub fn boot_log(cx: &BootLogScope<'_>) -> Judged {
    Ok(t6(&cx.log.need()?.facts))
}

/// The backend asked for against the ones the log shows selected.
pub fn t6(f: &BootFacts) -> CheckResult {
    let engine = f.engine.unwrap_or(Engine::Vllm);
    let flag = if engine == Engine::Trtllm {
        "attn_backend"
    } else {
        "--attention-backend"
    };
    if f.config_args.is_none() {
        return CheckResult::new(
            T6,
            Status::Unknown,
            format!(
                "Can't tell whether a requested attention backend was used: the log has no \
                 readable {} arguments line (the start died before printing it, or it is in an \
                 unknown format)",
                engine.display()
            ),
        );
    }
    let target = &f.selected_backends;
    let drafter = &f.drafter_backends;
    let evidence = |r: CheckResult| {
        r.found(Backends {
            requested: f.requested_backend.clone(),
            target: target.clone(),
            drafter: drafter.clone(),
            speculative: f.speculative,
        })
    };
    let others = |list: &[String], x: &str| {
        let mut v: Vec<&str> = list
            .iter()
            .map(String::as_str)
            .filter(|s| *s != x)
            .collect();
        v.sort_unstable();
        v.dedup();
        v.join(", ")
    };
    let Some(x) = f.requested_backend.as_deref() else {
        let mut chosen: Vec<&str> = Vec::new();
        for t in target {
            if !chosen.contains(&t.as_str()) {
                chosen.push(t);
            }
        }
        let chose = if chosen.is_empty() {
            "one".to_string()
        } else {
            chosen.join(", ")
        };
        let mut msg = format!(
            "Nothing to check: no attention backend was requested ({flag} not set), and {} chose {chose} itself",
            engine.display()
        );
        if f.speculative == Some(false) {
            msg.push_str("; there was no draft model either");
        }
        return evidence(CheckResult::new(T6, Status::Pass, msg));
    };
    if target.is_empty() && drafter.is_empty() {
        return evidence(CheckResult::new(T6,
            Status::Unknown,
            format!("{flag} {x} was requested, but the log has no backend selection line to confirm it was used"),
        ));
    }
    if target.iter().any(|t| t != x) {
        return evidence(CheckResult::new(
            T6,
            Status::Fail,
            format!(
                "{flag} {x} was requested, but the main model used {}",
                others(target, x)
            ),
        ));
    }
    if drafter.iter().any(|t| t != x) {
        return evidence(CheckResult::new(T6,
            Status::Fail,
            format!(
                "{flag} {x} was requested and the main model uses it, but the draft model \
                 (speculative decoding) picked {} on its own; the log does not call this an override",
                others(drafter, x)
            ),
        ));
    }
    evidence(CheckResult::new(
        T6,
        Status::Pass,
        format!("{flag} {x} was requested and used"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::{BootLog, Classification};
    use crate::docs::BOOT_LOG;
    use crate::input::InputError;
    use crate::json::Json;
    use crate::rules::absent::{settle, Input};
    use crate::rules::testing::said;

    fn judged(facts: BootFacts) -> CheckResult {
        let log = BootLog {
            label: BOOT_LOG.into(),
            facts,
            classification: Classification::default(),
        };
        boot_log(&BootLogScope {
            log: Input::Present(&log),
            with_unparsed: false,
            server_died: false,
        })
        .expect("T6 judges every log it is given")
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// A log with its arguments line, `asked` as the backend requested, and the backends
    /// it shows selected for the main and the draft model.
    fn started(asked: Option<&str>, target: &[&str], drafter: &[&str]) -> BootFacts {
        BootFacts {
            config_args: Some(Json::Obj(Vec::new())),
            requested_backend: asked.map(str::to_string),
            selected_backends: names(target),
            drafter_backends: names(drafter),
            speculative: Some(!drafter.is_empty()),
            ..BootFacts::default()
        }
    }

    #[test]
    fn the_backend_asked_for_and_used_passes() {
        let r = judged(started(
            Some("FLASHINFER"),
            &["FLASHINFER"],
            &["FLASHINFER"],
        ));
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "--attention-backend FLASHINFER was requested and used"
            )
        );
        assert_eq!(
            r.finding::<Backends>(),
            Some(&Backends {
                requested: Some("FLASHINFER".into()),
                target: names(&["FLASHINFER"]),
                drafter: names(&["FLASHINFER"]),
                speculative: Some(true),
            })
        );
        let r = judged(started(None, &["FLASH_ATTN", "FLASH_ATTN"], &[]));
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "Nothing to check: no attention backend was requested (--attention-backend not \
                 set), and vLLM chose FLASH_ATTN itself; there was no draft model either"
            )
        );
        assert_eq!(
            crate::json::to_compact(&Json::Obj(r.evidence())),
            r#"{"requested": null, "target": ["FLASH_ATTN", "FLASH_ATTN"], "drafter": [], "speculative": false}"#
        );
    }

    #[test]
    fn a_backend_other_than_the_one_asked_for_fails() {
        let r = judged(started(
            Some("FLASHINFER"),
            &["TRITON_ATTN", "FLASHINFER"],
            &[],
        ));
        assert_eq!(
            said(&r),
            (
                Status::Fail,
                "--attention-backend FLASHINFER was requested, but the main model used TRITON_ATTN"
            )
        );
        assert_eq!(r.finding::<Backends>().map(|b| b.target.len()), Some(2));
        let r = judged(BootFacts {
            engine: Some(Engine::Trtllm),
            ..started(Some("TRTLLM"), &["TRTLLM"], &["FLASHINFER"])
        });
        assert_eq!(r.status, Status::Fail);
        assert!(
            r.message.starts_with(
                "attn_backend TRTLLM was requested and the main model uses it, but the draft \
                 model (speculative decoding) picked FLASHINFER on its own"
            ),
            "{}",
            r.message
        );
        assert_eq!(
            r.finding::<Backends>().map(|b| &b.drafter[..]),
            Some(&names(&["FLASHINFER"])[..])
        );
    }

    #[test]
    fn without_the_lines_that_decide_it_cannot_tell() {
        let r = judged(BootFacts::default());
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message
                .contains("the log has no readable vLLM arguments line"),
            "{}",
            r.message
        );
        assert!(r.evidence().is_empty());
        let r = judged(started(Some("FLASHINFER"), &[], &[]));
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "--attention-backend FLASHINFER was requested, but the log has no backend \
                 selection line to confirm it was used"
            )
        );
        assert_eq!(
            r.finding::<Backends>().map(|b| b.speculative),
            Some(Some(false))
        );
    }

    #[test]
    fn an_absent_log_is_said_by_the_one_conversion() {
        let cx = |log| BootLogScope {
            log,
            with_unparsed: false,
            server_died: false,
        };
        assert_eq!(settle(T6, boot_log(&cx(Input::NotGiven))), None);
        let bad = InputError::new(BOOT_LOG, Some(3), "not UTF-8");
        let r = settle(T6, boot_log(&cx(Input::Unusable(&bad)))).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("unusable input: boot.log"),
            "{}",
            r.message
        );
    }
}
