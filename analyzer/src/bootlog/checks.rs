//! The per-log results: the classifier's T12/T7 (bootlog.md §5.3), T5 (§3), T6 (§4) and
//! check-log's extra T12 for lines in an unknown format (§9).

use super::{BootFacts, BootLog, Failure};
use crate::engine::Engine;
use crate::json::Json;
use crate::num::{shortest, thousands_int};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

/// What a failure kind means, for people.
fn kind_text(kind: &str) -> &'static str {
    match kind {
        "jit_toolchain" => "a kernel build (JIT compiler or linker) error",
        "out_of_memory" => "the GPU ran out of memory",
        "kv_cache_too_small" => "no room was left for the KV cache",
        "accelerator_error" => "a GPU (accelerator) error",
        "cuda_error" => "a CUDA error",
        "assertion" => "a failed assertion",
        "value_error" => "a ValueError",
        "runtime_error" => "a RuntimeError",
        "unclassified_exception" => "an exception",
        "engine_dead" => "the engine process died",
        _ => "an error",
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The classifier's result, then the admission-control T7 pass when there is one.
pub(crate) fn classifier_results(log: &BootLog) -> Vec<CheckResult> {
    let c = &log.classification;
    let f = &log.facts;
    let mut out = Vec::new();
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
            out.push(CheckResult::new(
                Tripwire::UnexplainedFailure,
                Status::Pass,
                msg,
            ));
        }
        Some(fail) => out.push(failure_result(fail, c.rejections)),
    }
    if c.failure.is_none() && c.rejections > 0 {
        let mut r = CheckResult::new(
            Tripwire::CrashAfterReady,
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
        out.push(r);
    }
    out
}

fn failure_result(fail: &Failure, rejections: usize) -> CheckResult {
    let serving = fail.phase == "serving";
    let cause = if fail.detail.is_empty() {
        format!("the line reads \"{}\"", fail.line)
    } else {
        fail.detail.clone()
    };
    let when = if serving {
        "The server crashed after it was ready, while serving"
    } else {
        "The server failed during start-up, before it was ready"
    };
    let mut msg = format!(
        "{when}: {} ({}, {} phase) at line {}: {cause}",
        kind_text(&fail.kind),
        fail.kind,
        fail.phase,
        fail.lineno
    );
    if serving && rejections > 0 {
        msg.push_str(&format!(
            "; admission control had also turned away {}",
            plural(rejections, "request", "requests")
        ));
    }
    let mut r = CheckResult::new(
        if serving {
            Tripwire::CrashAfterReady
        } else {
            Tripwire::UnexplainedFailure
        },
        Status::Fail,
        msg,
    )
    .with("kind", fail.kind.as_str())
    .with("phase", fail.phase.as_str())
    .with("lineno", fail.lineno)
    .with("line", fail.line.as_str());
    if serving && rejections > 0 {
        r.set("admission_rejections", rejections);
    }
    r
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

/// T5: large KV blocks (§3).
pub(crate) fn t5(f: &BootFacts) -> CheckResult {
    let engine = f.engine.unwrap_or(Engine::Vllm).display();
    let requested = f
        .non_default_args
        .as_ref()
        .and_then(|a| a.get("block_size"))
        .cloned();
    let r = requested.clone().unwrap_or(Json::Int(16));
    let r_text = match &r {
        Json::Int(n) => n.to_string(),
        other => other.to_compact(),
    };
    let Some(b) = f.attention_block_size else {
        if let Some(p) = f.page_size {
            return CheckResult::new(
                Tripwire::LargeKvBlocks,
                Status::Pass,
                format!(
                    "{engine} allocates the KV cache in pages of {}, as configured",
                    plural(p.max(0) as usize, "token", "tokens")
                ),
            )
            .with("page_size", p);
        }
        if !f.ready {
            return CheckResult::new(
                Tripwire::LargeKvBlocks,
                Status::Unknown,
                "Can't tell the KV block size: the start did not get far enough to size its \
                 blocks (no block-size line before the log ends)",
            );
        }
        return CheckResult::new(
            Tripwire::LargeKvBlocks,
            Status::Pass,
            format!("No block-size override in the log: KV blocks are {r_text} tokens"),
        )
        .with("block_size", r);
    };
    let same = r.as_f64().is_some_and(|x| x == b as f64) && !matches!(r, Json::Bool(_));
    let mut ev = vec![
        ("block_size".to_string(), Json::Int(b)),
        (
            "requested".to_string(),
            requested.clone().unwrap_or(Json::Null),
        ),
        (
            "mamba_page_padding_pct".to_string(),
            f.mamba_page_padding_pct.map_or(Json::Null, Json::Float),
        ),
    ];
    let pool_blocks = match f.kv_pool_tokens {
        Some(t) if t != 0 && b != 0 => Some(t as f64 / b as f64),
        _ => None,
    };
    if let Some(pb) = pool_blocks {
        ev.push(("pool_blocks".to_string(), Json::Float(pb)));
    }
    let msg = if same {
        format!("KV blocks are {b} tokens, as requested")
    } else {
        let asked = if requested.is_some() {
            format!("{r_text} were requested")
        } else {
            format!("the default is {r_text}")
        };
        let pad = f.mamba_page_padding_pct.map_or_else(String::new, |p| {
            format!(", Mamba pages padded by {}%", shortest(p))
        });
        let pool = match (pool_blocks, f.kv_pool_tokens) {
            (Some(pb), Some(t)) => format!(
                "; the {}-token pool holds only {pb:.1} such blocks",
                thousands_int(t)
            ),
            _ => String::new(),
        };
        format!(
            "KV blocks were forced to {b} tokens ({asked}) to fit the Mamba state{pad}: each \
             request's KV cache is allocated in {b}-token units, so even a short request holds \
             {b} tokens{pool}"
        )
    };
    let mut res = CheckResult::new(
        Tripwire::LargeKvBlocks,
        if same { Status::Pass } else { Status::Warn },
        msg,
    );
    res.evidence = ev;
    res
}

/// T6: requested attention backend ignored (§4).
pub(crate) fn t6(f: &BootFacts) -> CheckResult {
    let engine = f.engine.unwrap_or(Engine::Vllm);
    let flag = if engine == Engine::Trtllm {
        "attn_backend"
    } else {
        "--attention-backend"
    };
    if f.config_args.is_none() {
        return CheckResult::new(
            Tripwire::BackendIgnored,
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
        return evidence(CheckResult::new(
            Tripwire::BackendIgnored,
            Status::Pass,
            msg,
        ));
    };
    if target.is_empty() && drafter.is_empty() {
        return evidence(CheckResult::new(Tripwire::BackendIgnored,
            Status::Unknown,
            format!("{flag} {x} was requested, but the log has no backend selection line to confirm it was used"),
        ));
    }
    if target.iter().any(|t| t != x) {
        return evidence(CheckResult::new(
            Tripwire::BackendIgnored,
            Status::Fail,
            format!(
                "{flag} {x} was requested, but the main model used {}",
                others(target, x)
            ),
        ));
    }
    if drafter.iter().any(|t| t != x) {
        return evidence(CheckResult::new(Tripwire::BackendIgnored,
            Status::Fail,
            format!(
                "{flag} {x} was requested and the main model uses it, but the draft model \
                 (speculative decoding) picked {} on its own; the log does not call this an override",
                others(drafter, x)
            ),
        ));
    }
    evidence(CheckResult::new(
        Tripwire::BackendIgnored,
        Status::Pass,
        format!("{flag} {x} was requested and used"),
    ))
}

/// check-log's T12 `unknown` for recognised lines in an unknown format.
pub(crate) fn unparsed(f: &BootFacts) -> Option<CheckResult> {
    let first = f.unparsed.first()?;
    let n = f.unparsed.len();
    let list: Vec<Json> = f.unparsed.iter().map(super::Unparsed::to_json).collect();
    Some(
        CheckResult::new(
            Tripwire::UnexplainedFailure,
            Status::Unknown,
            format!(
                "{} had an unknown format (first: {} at line {}); the facts they carry are \
                 missing, which a newer engine release can cause",
                plural(n, "recognised log line", "recognised log lines"),
                first.field,
                first.lineno
            ),
        )
        .with("unparsed", Json::Arr(list)),
    )
}
