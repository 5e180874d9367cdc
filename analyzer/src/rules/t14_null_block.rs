//! T14: vLLM exports `num_gpu_blocks = B` but reserves one block, so its usage gauge
//! counts out of B − 1. The denominator is inferred from the recording's readings
//! (`blocks::GaugeSteps`): it passes when it is B − 1, fails when it is something else,
//! and can't tell with too few distinct readings (fewer than 5 can fit a divisor of the
//! true count by chance) or readings that are no clean multiples of any 1/N.

use serde::Serialize;

use crate::blocks::{self, GaugeSteps, Inference, InferenceFailure};
use crate::engine::Engine;
use crate::rules::absent::Judged;
use crate::rules::scope::{ReplicaScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::Series;

const T14: Tripwire = Tripwire::NullBlock;

/// What the gauge's steps showed against the exported block count.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NullBlock {
    /// The engine, when it exports no block count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reported_num_gpu_blocks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    /// The readings' common denominator (null when they have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inferred_usable_blocks: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distinct_readings: Option<usize>,
}

/// The block count the engine exported, when T14 read it.
pub fn reported_blocks(r: &CheckResult) -> Option<u64> {
    r.finding::<NullBlock>()?.reported_num_gpu_blocks
}

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
    .found(NullBlock {
        engine: Some(engine.key()),
        ..NullBlock::default()
    })
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
            CheckResult::new(T14, Status::Unknown, crate::plausible::cannot_tell(bad)).found(
                NullBlock {
                    reported_num_gpu_blocks: Some(*reported),
                    implausible: Some(bad.to_string()),
                    ..NullBlock::default()
                },
            )
        }
        GaugeSteps::Inferred {
            reported,
            inference,
        } => inferred(*reported, inference),
    }
}

fn inferred(b: u64, inf: &Inference) -> CheckResult {
    let mut r = CheckResult::new(T14, Status::Unknown, String::new()).found(NullBlock {
        reported_num_gpu_blocks: Some(b),
        inferred_usable_blocks: Some(inf.blocks),
        distinct_readings: Some(inf.distinct),
        ..NullBlock::default()
    });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::testing::{gauges, said, series, snapshot};

    /// A vLLM recording whose KV gauge reads k/`n` for each k, and an after snapshot
    /// exporting `blocks`.
    fn steps(n: u64, ks: &[u64], blocks: u64) -> GaugeSteps {
        let rows = ks
            .iter()
            .map(|&k| gauges(1.0, 0.0, k as f64 / n as f64))
            .collect();
        let s = series(Engine::Vllm, rows);
        let after = snapshot(
            &format!("vllm:cache_config_info{{num_gpu_blocks=\"{blocks}\"}} 1\n"),
            20.0,
        );
        GaugeSteps::read(&s, &after)
    }

    #[test]
    fn steps_of_one_block_fewer_than_exported_pass() {
        let st = steps(63, &[1, 2, 5, 9, 20, 33], 64);
        let r = judge(&st);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(r.message.contains("steps of 1/63"), "{}", r.message);
        assert_eq!(st.usable_blocks(), Some(63));
        assert_eq!(reported_blocks(&r), Some(64));
    }

    #[test]
    fn steps_of_another_count_fail() {
        let st = steps(50, &[1, 2, 5, 9, 20, 33], 64);
        let r = judge(&st);
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert_eq!(st.usable_blocks(), None);
    }

    #[test]
    fn too_few_distinct_readings_cannot_tell() {
        let st = steps(63, &[2, 4], 64);
        let r = judge(&st);
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(
            r.message.starts_with("only 2 distinct KV readings"),
            "{}",
            r.message
        );
        assert_eq!(st.usable_blocks(), None);
    }

    #[test]
    fn an_engine_without_a_block_count_is_not_judged() {
        let r = not_applicable(Engine::Sglang);
        assert_eq!(r.status, Status::NotApplicable);
        assert_eq!(
            said(&r).1,
            "does not apply to SGLang: T14 is about vLLM's reserved null block, and SGLang exports no block count"
        );
    }
}
