//! T6: the attention backend asked for is not the one running. The engine picks a
//! backend for the main model and, with speculative decoding, for the draft model; either
//! can differ from `--attention-backend` without the log calling it an override.

use super::absent::Judged;
use super::scope::BootLogScope;
use crate::bootlog::BootFacts;
use crate::engine::Engine;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T6: Tripwire = Tripwire::BackendIgnored;

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
        r.with("requested", f.requested_backend.clone())
            .with("target", target.clone())
            .with("drafter", drafter.clone())
            .with("speculative", f.speculative)
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
