//! T9: with the cache full, the number of requests that fit falls as their outputs grow,
//! so no single "max concurrency" describes the run (docs/tripwires.md#t9).

use serde::Serialize;

use crate::blocks::ceiling;
use crate::engine::Engine;
use crate::num::fixed;
use crate::rules::absent::Judged;
use crate::rules::scope::{PhaseScope, ReplicaScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Field, Series};

const T9: Tripwire = Tripwire::FallingCeiling;

/// Usage at or above this counts as a full cache.
pub const SATURATED: f64 = 0.9;

/// How many requests fit in the cache, reading by reading, and the share of it one
/// request held.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ceilings {
    /// The fewest and most requests that fit, in whole blocks.
    pub ceiling_min: i64,
    pub ceiling_max: i64,
    /// How many fit at the fullest reading (null when it gives no ceiling).
    pub ceiling_at_fullest: Option<i64>,
    /// The smallest and largest share of the cache one request held.
    pub share_min: f64,
    pub share_max: f64,
    /// The readings judged.
    pub samples: usize,
    /// Which readings: `saturated` (cache at least 90% full), else `busy`.
    pub basis: &'static str,
    /// The cache's usable blocks (null when the KV gauge's steps do not show them).
    pub usable_blocks: Option<u64>,
    /// The shares in blocks, when the usable blocks are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_request_min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_request_max: Option<f64>,
    /// The engine's gauges move only when a request completes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gauges_lag: Option<bool>,
}

/// A refused reading of the running or KV-usage gauge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refused {
    pub implausible: String,
}

/// What T9 reads of a set of busy readings.
#[derive(Debug, Clone, Copy)]
struct Figures {
    samples: usize,
    /// The lowest and highest ceiling in whole blocks.
    extremes: Option<(i64, i64)>,
    share_min: f64,
    share_max: f64,
}

impl Default for Figures {
    fn default() -> Figures {
        Figures {
            samples: 0,
            extremes: None,
            share_min: f64::INFINITY,
            share_max: f64::NEG_INFINITY,
        }
    }
}

impl Figures {
    /// One reading of `run` requests holding `u` of the cache, its ceiling `c` (`None`
    /// when not known yet).
    fn take(&mut self, run: f64, u: f64, c: Option<i64>) {
        self.samples += 1;
        self.extremes_take(c);
        let share = u / run;
        self.share_min = self.share_min.min(share);
        self.share_max = self.share_max.max(share);
    }

    /// One reading's ceiling, when it has one.
    fn extremes_take(&mut self, c: Option<i64>) {
        if let Some(c) = c {
            let (lo, hi) = self.extremes.unwrap_or((c, c));
            self.extremes = Some((lo.min(c), hi.max(c)));
        }
    }
}

/// The whole run's recording.
pub fn run(cx: &RunScope<'_>) -> Judged {
    Ok(check(cx.series.need()?, cx.usable_blocks()))
}

/// One phase's readings.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    Ok(check(&cx.window.need()?.inner, cx.usable_blocks))
}

/// One replica's recording.
pub fn replica(cx: &ReplicaScope<'_>) -> Judged {
    Ok(check(cx.series.need()?, cx.usable_blocks()))
}

pub fn check(series: &Series, usable_blocks: Option<u64>) -> CheckResult {
    let engine = series.engine();
    if let Some(bad) = series.implausible_in(&[column::RUNNING, column::KV_USAGE]) {
        return CheckResult::new(T9, Status::Unknown, crate::plausible::cannot_tell(bad)).found(
            Refused {
                implausible: bad.to_string(),
            },
        );
    }
    // The figures of the saturated readings, which are judged when there are any, and
    // those of every busy reading, whose ceilings a second pass finds only when there
    // are none (a ceiling costs a 128-bit division): no reading is kept.
    let (mut busy, mut saturated) = (Figures::default(), Figures::default());
    let mut fullest: Option<(f64, f64)> = None;
    for (run, u) in series.busy() {
        busy.take(run, u, None);
        if u >= SATURATED {
            saturated.take(run, u, ceiling(run, u, usable_blocks));
        }
        if fullest.is_none_or(|(_, most)| u > most) {
            fullest = Some((run, u));
        }
    }
    if saturated.samples == 0 {
        for (run, u) in series.busy() {
            busy.extremes_take(ceiling(run, u, usable_blocks));
        }
    }
    if busy.samples == 0 {
        let mut msg = "no sample has requests running and KV cache in use".to_string();
        if let Some(hint) = engine.missing_gauges_hint() {
            if series.rows.values(Field::Running).all(|r| r.is_none()) {
                msg.push_str(&format!("; {hint}"));
            }
        }
        return CheckResult::new(T9, Status::Unknown, msg);
    }
    let (basis, set) = if saturated.samples == 0 {
        ("busy", busy)
    } else {
        ("saturated", saturated)
    };
    let Figures {
        samples: n,
        extremes,
        share_min,
        share_max,
    } = set;
    let at_fullest = fullest.and_then(|(run, u)| ceiling(run, u, usable_blocks));
    let Some((cmin, cmax)) = extremes else {
        return CheckResult::new(
            T9,
            Status::Unknown,
            "no sample gives a ceiling in whole blocks".to_string(),
        );
    };
    let blocks = |share: f64| usable_blocks.map(|b| share * b as f64);
    judge(
        engine,
        Ceilings {
            ceiling_min: cmin,
            ceiling_max: cmax,
            ceiling_at_fullest: at_fullest,
            share_min,
            share_max,
            samples: n,
            basis,
            usable_blocks,
            blocks_per_request_min: blocks(share_min),
            blocks_per_request_max: blocks(share_max),
            gauges_lag: engine.gauges_lag().then_some(true),
        },
    )
}

/// A pass when one ceiling held on every reading judged, else a warning.
fn judge(engine: Engine, e: Ceilings) -> CheckResult {
    let (cmin, cmax, basis) = (e.ceiling_min, e.ceiling_max, e.basis);
    let pool = if engine == Engine::Sglang {
        "the fullest memory pool (KV cache or request state)"
    } else {
        "the cache"
    };
    let pct = |x: f64| fixed(x * 100.0, 1);
    let share_text = if pct(e.share_min) == pct(e.share_max) {
        format!("{}%", pct(e.share_min))
    } else {
        format!("{}% to {}%", pct(e.share_min), pct(e.share_max))
    };
    let (status, mut message) = if cmin == cmax {
        (
            Status::Pass,
            format!(
                "one request held {share_text} of {pool}, so floor(1/share) = {cmin} fit, on \
                 every {basis} sample"
            ),
        )
    } else {
        (
            Status::Warn,
            format!(
                "the number of requests that fit moved between {cmin} and {cmax} as requests \
                 grew (one request held {share_text} of {pool}), so concurrency was not a \
                 constant of this run"
            ),
        )
    };
    if engine.gauges_lag() {
        message.push_str(&format!(
            "; this rests on {} readings, because TensorRT-LLM's gauges move only when a \
             request completes",
            e.samples
        ));
    }
    CheckResult::new(T9, status, message).found(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Phase;
    use crate::docs::SERIES;
    use crate::input::InputError;
    use crate::rules::absent::{settle, CantTell, Gap, Input};
    use crate::rules::scope::ReplicaScope;
    use crate::rules::testing::{gauges, said, series, Folder};

    #[test]
    fn one_ceiling_on_every_full_reading_passes() {
        // The last reading is busy but not full: only the full ones are judged.
        let s = series(
            Engine::Vllm,
            vec![
                gauges(9.0, 0.0, 0.9),
                gauges(9.0, 2.0, 0.9),
                gauges(2.0, 0.0, 0.3),
            ],
        );
        let r = check(&s, None);
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "one request held 10.0% of the cache, so floor(1/share) = 10 fit, on every \
                 saturated sample"
            )
        );
        let e = r.finding::<Ceilings>().expect("T9's finding");
        assert_eq!(
            (e.ceiling_min, e.ceiling_max, e.ceiling_at_fullest),
            (10, 10, Some(10))
        );
        assert_eq!(
            (e.samples, e.basis, e.usable_blocks),
            (2, "saturated", None)
        );
        assert_eq!((e.blocks_per_request_min, e.gauges_lag), (None, None));
        // Without the block count, it is written as null and the blocks per request left
        // out.
        assert_eq!(
            r.evidence_value("usable_blocks"),
            Some(crate::json::Json::Null)
        );
        assert_eq!(r.evidence_value("blocks_per_request_min"), None);
    }

    #[test]
    fn a_ceiling_that_falls_as_requests_grow_warns() {
        let s = series(
            Engine::Vllm,
            vec![gauges(9.0, 0.0, 0.9), gauges(6.0, 3.0, 0.96)],
        );
        let r = check(&s, Some(100));
        assert_eq!(
            said(&r),
            (
                Status::Warn,
                "the number of requests that fit moved between 6 and 10 as requests grew (one \
                 request held 10.0% to 16.0% of the cache), so concurrency was not a constant \
                 of this run"
            )
        );
        let e = r.finding::<Ceilings>().unwrap();
        assert_eq!(
            (e.ceiling_min, e.ceiling_max, e.ceiling_at_fullest),
            (6, 10, Some(6))
        );
        assert_eq!(e.usable_blocks, Some(100));
        assert_eq!(e.blocks_per_request_min, Some(e.share_min * 100.0));
        assert_eq!(e.blocks_per_request_max, Some(e.share_max * 100.0));
        assert!((e.share_max - 0.16).abs() < 1e-12, "{}", e.share_max);
    }

    #[test]
    fn lagging_gauges_and_busy_readings_say_what_they_rest_on() {
        let s = series(
            Engine::Trtllm,
            vec![gauges(4.0, 0.0, 0.5), gauges(4.0, 0.0, 0.5)],
        );
        let r = check(&s, None);
        assert_eq!(r.status, Status::Pass);
        assert!(r
            .message
            .contains("on every busy sample; this rests on 2 readings"));
        let e = r.finding::<Ceilings>().unwrap();
        assert_eq!(
            (e.basis, e.ceiling_min, e.gauges_lag),
            ("busy", 8, Some(true))
        );
    }

    #[test]
    fn without_a_busy_reading_or_a_whole_block_it_cannot_tell() {
        let idle = series(Engine::Vllm, vec![gauges(0.0, 0.0, 0.0); 3]);
        let r = check(&idle, None);
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "no sample has requests running and KV cache in use"
            )
        );
        assert!(r.evidence().is_empty());
        let tiny = series(Engine::Vllm, vec![gauges(1.0, 0.0, 0.001)]);
        let r = check(&tiny, Some(100));
        assert_eq!(
            said(&r),
            (Status::Unknown, "no sample gives a ceiling in whole blocks")
        );
        // A refused reading could have moved the ceiling.
        let mut s = series(Engine::Vllm, vec![gauges(9.0, 0.0, 0.9)]);
        s.gate_running(4, SERIES);
        let r = check(&s, None);
        assert_eq!(r.status, Status::Unknown);
        assert_eq!(
            r.finding::<Refused>(),
            Some(&Refused {
                implausible: s.implausible[0].to_string()
            })
        );
    }

    #[test]
    fn each_scope_says_an_absent_series_the_one_way() {
        let folder = Folder::default();
        let mut cx = folder.scope();
        assert_eq!(settle(T9, run(&cx)), None);
        let bad = InputError::new(SERIES, Some(2), "not JSON");
        cx.series = Input::Unusable(&bad);
        let r = settle(T9, run(&cx)).unwrap();
        assert!(
            r.message.starts_with("unusable input: run.series.jsonl"),
            "{}",
            r.message
        );
        let s = series(Engine::Vllm, vec![gauges(9.0, 0.0, 0.9)]);
        cx.series = Input::Present(&s);
        assert_eq!(run(&cx).unwrap().status, Status::Pass);

        let replica = ReplicaScope {
            id: "a",
            engine: Engine::Vllm,
            pair: Input::NotGiven,
            after: Input::NotGiven,
            series: Input::Missing(Gap::Replica {
                id: "a".into(),
                what: SERIES.into(),
            }),
            gauge_steps: None,
            share: None,
            scrape_s: None,
        };
        let r = settle(T9, super::replica(&replica)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "replicas/a/ has no run.series.jsonl, so this replica's T9 can't be told"
            )
        );
        assert_eq!(
            r.finding::<CantTell>().and_then(|c| c.replica.as_deref()),
            Some("a")
        );

        let p = Phase::default();
        let why = "no reading inside the phase: too few to measure it";
        let ph = PhaseScope {
            phase: &p,
            window: Input::Missing(Gap::Phase(why.into())),
            engine: Engine::Vllm,
            facts: None,
            usable_blocks: None,
            tool: "GuideLLM 0.8.1",
        };
        assert_eq!(
            said(&settle(T9, phase(&ph)).unwrap()),
            (Status::Unknown, why)
        );
    }
}
