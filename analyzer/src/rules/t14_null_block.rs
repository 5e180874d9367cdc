//! T14: vLLM exports `num_gpu_blocks = B` but reserves one block, so its usage gauge
//! counts out of B − 1. The denominator is inferred from the recording's readings
//! (`blocks::GaugeSteps`): it passes when it is B − 1, fails when it is something else,
//! and can't tell with too few distinct readings (fewer than 5 can fit a divisor of the
//! true count by chance) or readings that are no clean multiples of any 1/N.

use crate::blocks::{self, GaugeSteps, Inference, InferenceFailure};
use crate::engine::Engine;
use crate::rules::absent::Judged;
use crate::rules::scope::{ReplicaScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::Series;

const T14: Tripwire = Tripwire::NullBlock;

/// The whole run: the recording's readings against the after snapshot's block count.
pub fn run(cx: &RunScope<'_>) -> Judged {
    on_series(cx.series.need()?, cx.after.need(), cx.gauge_steps)
}

/// One replica, on its own recording and after snapshot.
pub fn replica(cx: &ReplicaScope<'_>) -> Judged {
    on_series(cx.series.need()?, cx.after.need(), cx.gauge_steps)
}

fn on_series(
    series: &Series,
    after: Result<&crate::snapshot::Snapshot, crate::rules::absent::Absent>,
    steps: Option<&GaugeSteps>,
) -> Judged {
    if series.engine().metrics().cache_info.is_none() {
        return Ok(not_applicable(series.engine()));
    }
    after?;
    Ok(steps.map_or_else(|| not_applicable(series.engine()), judge))
}

/// Not applicable to an engine without a block-count info series.
pub fn not_applicable(engine: Engine) -> CheckResult {
    CheckResult::new(
        T14,
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

/// The verdict on the gauge's steps.
pub fn judge(steps: &GaugeSteps) -> CheckResult {
    match steps {
        GaugeSteps::NoInfoSeries(engine) => not_applicable(*engine),
        GaugeSteps::NoBlockCount { info } => CheckResult::new(
            T14,
            Status::Unknown,
            format!("the {info} series has no usable num_gpu_blocks label"),
        ),
        GaugeSteps::Refused { reported, bad } => {
            CheckResult::new(T14, Status::Unknown, crate::plausible::cannot_tell(bad))
                .with("reported_num_gpu_blocks", *reported)
                .with("implausible", bad.to_string())
        }
        GaugeSteps::Inferred {
            reported,
            inference,
        } => inferred(*reported, inference),
    }
}

fn inferred(b: u64, inf: &Inference) -> CheckResult {
    let mut r = CheckResult::new(T14, Status::Unknown, String::new())
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
        return r;
    };
    if !inf.trusted {
        r.message = format!(
            "only {} distinct KV readings: they fit 1/{n}, but a divisor of the true block count could fit by chance",
            inf.distinct
        );
        return r;
    }
    if n + 1 == b {
        r.status = Status::Pass;
        r.message = format!(
            "the KV gauge counts in steps of 1/{n}: num_gpu_blocks ({b}) minus 1 reserved null block"
        );
    } else {
        r.status = Status::Fail;
        r.message = format!(
            "the KV gauge counts in steps of 1/{n} where {} (num_gpu_blocks {b} - 1) was expected: \
             the gauge's meaning changed, or the recording and the snapshot come from different starts",
            b.saturating_sub(1)
        );
    }
    r
}
