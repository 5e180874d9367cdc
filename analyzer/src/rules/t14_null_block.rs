//! T14: vLLM exports `num_gpu_blocks = B` but reserves one block, so its usage gauge
//! counts out of B − 1 (checks.md §6). The denominator is inferred from the readings.

use crate::blocks::{self, Inference, InferenceFailure};
use crate::engine::Engine;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Series};
use crate::snapshot::Snapshot;

/// Not applicable to an engine without a block-count info series.
pub fn not_applicable(engine: Engine) -> CheckResult {
    CheckResult::new(
        Tripwire::NullBlock,
        Status::NotApplicable,
        format!(
            "does not apply to {}: T14 is about vLLM's reserved null block, and {} exports no \
             block count",
            engine.display(),
            engine.display()
        ),
    )
    .with("engine", engine.key())
}

/// Runs T14 on a series and an after snapshot. Returns the result and, when it passed,
/// the usable block count (for T9 and the report).
pub fn check(series: &Series, after: &Snapshot) -> (CheckResult, Option<u64>) {
    let snap_engine = Engine::from_metric_names(after.metrics.names()).unwrap_or(Engine::Vllm);
    let Some(info_name) = snap_engine.metrics().cache_info else {
        return (not_applicable(snap_engine), None);
    };
    let reported = after
        .metrics
        .info(info_name, &[])
        .and_then(|labels| labels.iter().find(|(k, _)| k == "num_gpu_blocks"))
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse::<u64>().ok());
    let Some(b) = reported else {
        return (
            CheckResult::new(
                Tripwire::NullBlock,
                Status::Unknown,
                format!("the {info_name} series has no usable num_gpu_blocks label"),
            ),
            None,
        );
    };
    if let Some(bad) = series.implausible_in(&[column::KV_USAGE]) {
        let r = CheckResult::new(
            Tripwire::NullBlock,
            Status::Unknown,
            crate::plausible::cannot_tell(bad),
        )
        .with("reported_num_gpu_blocks", b)
        .with("implausible", bad.to_string());
        return (r, None);
    }
    let inf: Inference = blocks::infer(series.usage_readings());
    let mut r = CheckResult::new(Tripwire::NullBlock, Status::Unknown, String::new())
        .with("reported_num_gpu_blocks", b)
        .with("inferred_usable_blocks", inf.blocks)
        .with("distinct_readings", inf.distinct);
    let Some(n) = inf.blocks else {
        r.message = match inf.failure {
            Some(InferenceFailure::NoReadings) => {
                "no non-zero KV readings in the recording, so the gauge's denominator cannot be inferred".into()
            }
            _ => format!(
                "the {} KV readings are not multiples of any 1/N with N up to {}, so the gauge's denominator cannot be inferred",
                inf.distinct,
                blocks::MAX_DEN
            ),
        };
        return (r, None);
    };
    if !inf.trusted {
        r.message = format!(
            "only {} distinct KV readings: they fit 1/{n}, but a divisor of the true block count could fit by chance",
            inf.distinct
        );
        return (r, None);
    }
    if n + 1 == b {
        r.status = Status::Pass;
        r.message = format!(
            "the KV gauge counts in steps of 1/{n}: num_gpu_blocks ({b}) minus 1 reserved null block"
        );
        (r, Some(n))
    } else {
        r.status = Status::Fail;
        r.message = format!(
            "the KV gauge counts in steps of 1/{n} where {} (num_gpu_blocks {b} - 1) was expected: \
             the gauge's meaning changed, or the recording and the snapshot come from different starts",
            b.saturating_sub(1)
        );
        (r, None)
    }
}
