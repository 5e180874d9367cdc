//! T8: the load tool kept N requests open, but the server may have run far fewer (checks.md
//! §3).

use super::server_down::ServerDown;
use crate::bootlog::{BootFacts, RunningCap};
use crate::engine::Engine;
use crate::json::Json;
use crate::num::shortest;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Series};

pub fn check(series: &Series, requested: i64, facts: Option<&BootFacts>) -> CheckResult {
    let engine = series.engine();
    let peak = series.peak_running();
    let in_flight = series.peak_in_flight();
    let mut r = CheckResult::new(
        Tripwire::ConcurrencyNotReached,
        Status::Unknown,
        String::new(),
    )
    .with("requested", requested)
    .with("peak_running", peak)
    .with("peak_in_flight", in_flight);
    let queued_limit = facts.and_then(BootFacts::max_num_queued_reqs);
    if let Some(f) = facts {
        if let (Some(x), Some(len)) = (f.max_concurrency, f.max_concurrency_request_len) {
            r.set("boot_line_max_concurrency", x);
            r.set("boot_line_request_len", len);
        }
        if let Some(l) = queued_limit {
            r.set("max_num_queued_reqs", l);
        }
        if let Some(t) = f.max_num_queued_tokens() {
            r.set("max_num_queued_tokens", t);
        }
    }
    // A refused reading could have been the peak: can't tell (plausible.rs).
    if let Some(bad) = series.implausible_in(&[column::RUNNING, column::WAITING]) {
        r.message = crate::plausible::cannot_tell(bad);
        r.set("implausible", bad.to_string());
        return r;
    }
    let Some(peak) = peak else {
        r.message = "the recording has no running-requests readings".into();
        if let Some(hint) = engine.missing_gauges_hint() {
            r.message.push_str(&format!("; {hint}"));
        }
        return r;
    };
    if engine.gauges_lag() {
        r.set("gauges_lag", true);
    }
    let req = requested as f64;
    if peak >= req {
        r.status = Status::Pass;
        r.message = format!(
            "the server ran up to {} requests at once, as many as the {requested} asked for",
            shortest(peak)
        );
        return r;
    }
    if engine.gauges_lag() {
        r.message = format!(
            "{requested} requested; the recording never showed more than {} running, but {}'s \
             gauge moves only when a request completes, so more may have run between readings",
            shortest(peak),
            engine.display()
        );
        return r;
    }
    r.status = Status::Fail;
    r.message = format!(
        "{requested} requested, but the server never ran more than {} at once",
        shortest(peak)
    );
    if let (Some(l), Some(f)) = (queued_limit, in_flight) {
        if l < requested && f >= l as f64 {
            r.message.push_str(&format!(
                "; admission control (--max-num-queued-reqs {l}) kept at most {l} in flight, so \
                 the other {} were rejected rather than queued",
                requested - l
            ));
        }
    }
    if let Some(cap) = facts.and_then(BootFacts::running_cap_info) {
        r.set("running_cap", Json::Int(cap.cap));
        if peak >= cap.cap as f64 && cap.cap < requested {
            r.message.push_str(&format!("; {}", explain_cap(&cap)));
        }
    }
    r
}

/// T8 when the server was down before the load: can't tell, and why (not "ran at most 0").
pub fn server_down(requested: i64, down: &ServerDown) -> CheckResult {
    CheckResult::new(
        Tripwire::ConcurrencyNotReached,
        Status::Unknown,
        format!(
            "{requested} requested, but the server was down before the load started: {}; \
             nothing the load sent reached a running server, so how many it runs at once \
             can't be told",
            down.reason
        ),
    )
    .with("requested", requested)
    .with("server_down", down.reason.as_str())
}

/// Why the server ran at most `cap` at once, naming the engine and its own setting
/// (checks.md §3.1).
pub fn explain_cap(cap: &RunningCap) -> String {
    let setting = |n: i64| match cap.engine {
        Engine::Trtllm => format!("max_batch_size {n}"),
        Engine::Sglang => format!("--max-running-requests {n}"),
        Engine::Vllm => format!("--max-num-seqs {n}"),
    };
    let name = cap.engine.display();
    if cap.from_max_num_seqs {
        return format!(
            "the server runs at most {} at once ({})",
            cap.cap,
            setting(cap.cap)
        );
    }
    match cap.requested_running {
        Some(asked) if asked > cap.cap => {
            let why = cap
                .reason
                .as_deref()
                .map(|r| format!(" because of the {r}"))
                .unwrap_or_default();
            let settled = if cap.engine == Engine::Trtllm {
                format!(
                    " (its log reports the limit it settled on as max_num_requests {})",
                    cap.cap
                )
            } else {
                String::new()
            };
            format!(
                "{name} lowered its running limit to {}{why} although it was started with {}{settled}",
                cap.cap,
                setting(asked)
            )
        }
        _ => format!(
            "the server runs at most {} at once ({})",
            cap.cap,
            setting(cap.cap)
        ),
    }
}
