//! A failure the boot-log classifier found, said for people: T12 when it came during
//! start-up, T7 when it came after the server said it was ready.

use serde::Serialize;

use crate::bootlog::Failure;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

/// The line that explains a failure, as the classifier found it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failed {
    /// The classifier's kind (`out_of_memory`, `cuda_error`, …).
    pub kind: String,
    /// `boot` or `serving`.
    pub phase: String,
    pub lineno: usize,
    pub line: String,
    /// A crash while serving: the requests admission control had turned away before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission_rejections: Option<usize>,
}

/// A failure as the classifier found it: T12 during start-up, T7 while serving.
pub(super) fn failure_result(fail: &Failure, rejections: usize) -> CheckResult {
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
    CheckResult::new(
        if serving {
            Tripwire::CrashAfterReady
        } else {
            Tripwire::UnexplainedFailure
        },
        Status::Fail,
        msg,
    )
    .found(Failed {
        kind: fail.kind.clone(),
        phase: fail.phase.clone(),
        lineno: fail.lineno,
        line: fail.line.clone(),
        admission_rejections: (serving && rejections > 0).then_some(rejections),
    })
}

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

pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
