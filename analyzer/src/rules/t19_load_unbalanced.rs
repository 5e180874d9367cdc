//! T19: the load was unbalanced across a fleet's replicas: one replica ran at its ceiling
//! (it preempted, or requests waited with its cache full) while another never ran even
//! half as many requests at once, or never filled even half of its own cache. The fleet's
//! throughput then measures the router's placement, not the pool's capacity (the rule and
//! its thresholds: docs/tripwires.md#t19).

use serde::Serialize;

use crate::num::shortest;
use crate::rules::absent::{Input, Judged};
use crate::rules::scope::{FleetScope, ReplicaScope};
use crate::rules::t09_falling_ceiling::SATURATED;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Field};

/// The tripwire's number: the first after the single-server ones.
pub const TRIPWIRE: Tripwire = Tripwire::LoadUnbalanced;

/// Another replica's peak running under this share of a saturated replica's peak counts
/// as running few: the saturated one carried at least twice its load. The same share of
/// its own KV cache, never reached, counts as having had room: an even split by count
/// (round robin) over replicas of uneven capacity still leaves one at its ceiling.
pub const FEW: f64 = 0.5;

/// What T19 found: the fleet's size and the threshold, then the replica that ran at its
/// ceiling beside the one that had room, or the replica that can't be told.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Balance {
    pub replicas: usize,
    /// [`FEW`].
    pub few_below_share: f64,
    /// The replica at its ceiling, its peak running and why it counts as at its ceiling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saturated: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saturated_peak_running: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saturated_because: Option<String>,
    /// The replica that had room: its peak running, and its peak KV use when that is what
    /// shows the room.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub few: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub few_peak_running: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub few_peak_kv_usage: Option<f64>,
    /// The replica whose running requests or ceiling are not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

/// Whether a replica ran at its ceiling during the run.
#[derive(Debug, Clone, PartialEq)]
pub enum Saturation {
    /// Yes, and why ("6 preemptions", "requests waited with the cache 97% full").
    Yes(String),
    No,
    /// Not known, and why.
    Unknown(String),
}

/// One replica as T19 sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub id: String,
    /// The most requests its recording showed running at once, or why it is not known.
    pub peak_running: Result<f64, String>,
    /// The fullest its KV cache was (a fraction), when its recording says.
    pub peak_kv: Option<f64>,
    pub saturation: Saturation,
}

/// How another replica shows the load was misplaced.
enum Idle {
    /// It ran under half as many at once.
    Few(f64),
    /// It never filled half of its cache (its peak running, its peak KV use).
    Room(f64, f64),
}

/// The verdict over every replica of the fleet.
/// The fleet: each replica's peak and whether it ran at its ceiling.
pub fn fleet(cx: &FleetScope<'_>) -> Judged {
    let loaded: Vec<Loaded> = cx
        .replicas
        .iter()
        .zip(cx.replica_results)
        .map(|(rep, results)| loaded(rep, results))
        .collect();
    Ok(check(&loaded))
}

/// A replica as T19 sees it: its peak running and whether it ran at its ceiling (it
/// preempted, by its own T1, or requests waited with its cache at least 90% full).
fn loaded(rep: &ReplicaScope<'_>, results: &[CheckResult]) -> Loaded {
    let series = rep.series.present();
    let refused = series
        .and_then(|s| s.implausible_in(&[column::RUNNING, column::WAITING, column::KV_USAGE]));
    let peak_running = match (series, refused, &rep.series) {
        (_, Some(bad), _) => Err(format!("an implausible value: {bad}")),
        (Some(s), None, _) => s
            .peak_running()
            .ok_or_else(|| "its recording has no running readings".to_string()),
        (None, _, Input::Unusable(e)) => Err(format!("unusable recording: {e}")),
        (None, _, _) => Err("no recording".to_string()),
    };
    let t1 = results
        .iter()
        .find(|c| c.tripwire == Tripwire::SilentPreemption);
    let preemptions = t1
        .filter(|c| matches!(c.status, Status::Pass | Status::Fail))
        .and_then(crate::rules::t01_silent_preemption::preemptions);
    let queued_full = series.filter(|_| refused.is_none()).and_then(|s| {
        let usage = s.rows.values(Field::KvUsage);
        s.rows
            .values(Field::Waiting)
            .zip(usage)
            .filter_map(|(w, kv)| Some((w?, kv?)))
            .filter(|(w, kv)| *w > 0.0 && *kv >= SATURATED)
            .map(|(_, kv)| kv)
            .reduce(f64::max)
    });
    let saturation = match (t1.map(|c| c.status), preemptions, queued_full) {
        (Some(Status::Fail), Some(n), _) => Saturation::Yes(crate::num::plural(n, "preemption")),
        (Some(Status::Fail), None, _) => Saturation::Yes("it preempted".into()),
        (_, _, Some(kv)) => Saturation::Yes(format!(
            "requests waited with the cache {}% full",
            crate::num::fixed(kv * 100.0, 0)
        )),
        (Some(Status::Pass), _, _) if series.is_some() => Saturation::No,
        (Some(Status::Pass), _, _) => Saturation::Unknown("no recording".into()),
        (_, _, _) => Saturation::Unknown(t1.map_or("no T1".to_string(), |c| c.message.clone())),
    };
    let peak_kv = series
        .filter(|_| refused.is_none())
        .and_then(|s| s.rows.values(Field::KvUsage).flatten().reduce(f64::max));
    Loaded {
        id: rep.id.to_string(),
        peak_running,
        peak_kv,
        saturation,
    }
}

pub fn check(replicas: &[Loaded]) -> CheckResult {
    let base = Balance {
        replicas: replicas.len(),
        few_below_share: FEW,
        ..Balance::default()
    };
    let said = |status, msg: String, e: Balance| CheckResult::new(TRIPWIRE, status, msg).found(e);
    if replicas.len() < 2 {
        return said(
            Status::NotApplicable,
            "does not apply to a single replica: there is no other to share the load".into(),
            base,
        );
    }
    if let Some(r) = misplaced(replicas, &base) {
        return r;
    }
    if let Some(m) = replicas.iter().find(|r| r.peak_running.is_err()) {
        let why = m.peak_running.as_ref().err().cloned().unwrap_or_default();
        return said(
            Status::Unknown,
            format!(
                "replica {}'s running requests are not known ({why}), so whether the load was \
                 balanced can't be told",
                m.id
            ),
            Balance {
                unknown: Some(m.id.clone()),
                ..base
            },
        );
    }
    let lowest = replicas
        .iter()
        .filter_map(|r| r.peak_running.as_ref().ok().copied())
        .fold(f64::INFINITY, f64::min);
    // A replica whose ceiling is not known could be the saturated one.
    for u in replicas {
        let (Saturation::Unknown(why), Ok(peak_u)) = (&u.saturation, &u.peak_running) else {
            continue;
        };
        if lowest < FEW * peak_u {
            return said(
                Status::Unknown,
                format!(
                    "replica {} ran up to {} at once and another as few as {}, but whether \
                     {} ran at its ceiling is not known ({why})",
                    u.id,
                    shortest(*peak_u),
                    shortest(lowest),
                    u.id
                ),
                Balance {
                    unknown: Some(u.id.clone()),
                    ..base
                },
            );
        }
    }
    let saturated: Vec<&str> = replicas
        .iter()
        .filter(|r| matches!(r.saturation, Saturation::Yes(_)))
        .map(|r| r.id.as_str())
        .collect();
    let msg = if saturated.is_empty() {
        format!(
            "no replica ran at its ceiling (peaks from {} to {} running)",
            shortest(lowest),
            shortest(
                replicas
                    .iter()
                    .filter_map(|r| r.peak_running.as_ref().ok().copied())
                    .fold(f64::NEG_INFINITY, f64::max)
            )
        )
    } else {
        format!(
            "{} ran at its ceiling, and every other replica ran at least half as many at once \
             and filled at least half of its cache",
            saturated.join(", ")
        )
    };
    said(Status::Pass, msg, base)
}

/// A saturated replica beside one that ran few or never filled half of its cache, among
/// those known: the fail naming both.
fn misplaced(replicas: &[Loaded], base: &Balance) -> Option<CheckResult> {
    for s in replicas {
        let (Saturation::Yes(why), Ok(peak_s)) = (&s.saturation, &s.peak_running) else {
            continue;
        };
        let idle = replicas.iter().filter(|l| l.id != s.id).find_map(|l| {
            let p = *l.peak_running.as_ref().ok()?;
            if p < FEW * peak_s {
                return Some((l, Idle::Few(p)));
            }
            let kv = l.peak_kv.filter(|kv| *kv < FEW)?;
            Some((l, Idle::Room(p, kv)))
        });
        let Some((l, idle)) = idle else {
            continue;
        };
        let (other, few_peak_running, few_peak_kv_usage) = match idle {
            Idle::Few(p) => (
                format!("never ran more than {} at once", shortest(p)),
                p,
                None,
            ),
            Idle::Room(p, kv) => (
                format!(
                    "never filled more than {}% of its KV cache",
                    crate::num::fixed(kv * 100.0, 0)
                ),
                p,
                Some(kv),
            ),
        };
        let message = format!(
            "replica {} ran at its ceiling ({why}, up to {} running) while replica {} {other}: \
             the router placed the load unevenly for what each replica could hold, so the \
             fleet's figures measure the placement, not the pool",
            s.id,
            shortest(*peak_s),
            l.id,
        );
        return Some(
            CheckResult::new(TRIPWIRE, Status::Fail, message).found(Balance {
                saturated: Some(s.id.clone()),
                saturated_peak_running: Some(*peak_s),
                saturated_because: Some(why.clone()),
                few: Some(l.id.clone()),
                few_peak_running: Some(few_peak_running),
                few_peak_kv_usage,
                ..base.clone()
            }),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::input::InputError;
    use crate::json::Json;
    use crate::rules::absent::Gap;
    use crate::rules::testing::{gauges, series};
    use crate::series::Series;

    /// The evidence as `results.json` writes it.
    fn written(r: &CheckResult) -> String {
        Json::Obj(r.evidence()).to_compact()
    }

    fn found(r: &CheckResult) -> &Balance {
        r.finding::<Balance>().expect("T19's evidence")
    }

    fn loaded(id: &str, peak: Option<f64>, sat: Saturation) -> Loaded {
        Loaded {
            id: id.into(),
            peak_running: peak.ok_or_else(|| "no recording".to_string()),
            peak_kv: None,
            saturation: sat,
        }
    }

    #[test]
    fn an_even_split_over_uneven_replicas_fails_when_another_had_room() {
        // Round robin: the same count each, but one pool was tiny.
        let tiny = loaded("tiny", Some(3.0), Saturation::Yes("8 preemptions".into()));
        let big = |kv| Loaded {
            peak_kv: Some(kv),
            ..loaded("big", Some(4.0), Saturation::No)
        };
        let r = check(&[tiny.clone(), big(0.06)]);
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(
            r.message
                .contains("replica big never filled more than 6% of its KV cache"),
            "{}",
            r.message
        );
        assert_eq!(found(&r).few_peak_kv_usage, Some(0.06));
        assert_eq!(
            found(&r).saturated_because.as_deref(),
            Some("8 preemptions")
        );
        // Half of its cache used: it had no room to spare by this rule.
        assert_eq!(check(&[tiny, big(0.5)]).status, Status::Pass);
    }

    #[test]
    fn a_saturated_replica_beside_one_that_ran_few_fails() {
        let r = check(&[
            loaded("a", Some(10.0), Saturation::Yes("6 preemptions".into())),
            loaded("b", Some(4.0), Saturation::No),
        ]);
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(r
            .message
            .contains("replica a ran at its ceiling (6 preemptions"));
        // Half exactly is not few.
        let r = check(&[
            loaded("a", Some(10.0), Saturation::Yes("6 preemptions".into())),
            loaded("b", Some(5.0), Saturation::No),
        ]);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
    }

    #[test]
    fn uneven_peaks_without_a_ceiling_pass_and_missing_ones_cannot_tell() {
        let even = check(&[
            loaded("a", Some(16.0), Saturation::No),
            loaded("b", Some(4.0), Saturation::No),
        ]);
        assert_eq!(even.status, Status::Pass);
        let missing = check(&[
            loaded("a", Some(16.0), Saturation::No),
            loaded("b", None, Saturation::Unknown("no readings".into())),
        ]);
        assert_eq!(missing.status, Status::Unknown);
        assert!(missing.message.contains("replica b"), "{}", missing.message);
        let unknown_ceiling = check(&[
            loaded("a", Some(16.0), Saturation::Unknown("no readings".into())),
            loaded("b", Some(4.0), Saturation::No),
        ]);
        assert_eq!(unknown_ceiling.status, Status::Unknown);
        let single = check(&[loaded("a", Some(1.0), Saturation::No)]);
        assert_eq!(single.status, Status::NotApplicable);
    }

    #[test]
    fn the_evidence_of_each_outcome_in_its_order() {
        let base = r#""replicas": 2, "few_below_share": 0.5"#;
        let sat = || loaded("a", Some(10.0), Saturation::Yes("6 preemptions".into()));
        let r = check(&[sat(), loaded("b", Some(4.0), Saturation::No)]);
        assert_eq!(
            written(&r),
            format!(
                r#"{{{base}, "saturated": "a", "saturated_peak_running": 10.0, "saturated_because": "6 preemptions", "few": "b", "few_peak_running": 4.0}}"#
            )
        );
        let roomy = Loaded {
            peak_kv: Some(0.25),
            ..loaded("b", Some(8.0), Saturation::No)
        };
        let r = check(&[sat(), roomy]);
        assert_eq!(r.status, Status::Fail);
        assert_eq!(
            written(&r),
            format!(
                r#"{{{base}, "saturated": "a", "saturated_peak_running": 10.0, "saturated_because": "6 preemptions", "few": "b", "few_peak_running": 8.0, "few_peak_kv_usage": 0.25}}"#
            )
        );
        let r = check(&[
            loaded("a", Some(16.0), Saturation::No),
            loaded("b", None, Saturation::Unknown("no readings".into())),
        ]);
        assert_eq!(
            r.message,
            "replica b's running requests are not known (no recording), so whether the load \
             was balanced can't be told"
        );
        assert_eq!(written(&r), format!(r#"{{{base}, "unknown": "b"}}"#));
        assert_eq!(found(&r).unknown.as_deref(), Some("b"));
        assert_eq!(found(&r).saturated, None);
        let r = check(&[
            loaded("a", Some(16.0), Saturation::Unknown("no T1".into())),
            loaded("b", Some(4.0), Saturation::No),
        ]);
        assert_eq!(written(&r), format!(r#"{{{base}, "unknown": "a"}}"#));
        let r = check(&[sat(), loaded("b", Some(5.0), Saturation::No)]);
        assert_eq!(r.status, Status::Pass);
        assert_eq!(written(&r), format!("{{{base}}}"));
        let r = check(&[sat()]);
        assert_eq!(written(&r), r#"{"replicas": 1, "few_below_share": 0.5}"#);
    }

    fn replica<'a>(id: &'a str, series: Input<'a, Series>) -> ReplicaScope<'a> {
        ReplicaScope {
            id,
            engine: Engine::Vllm,
            pair: Input::NotGiven,
            after: Input::NotGiven,
            series,
            gauge_steps: None,
            share: None,
            scrape_s: None,
        }
    }

    fn fleet_scope<'a>(
        replicas: &'a [ReplicaScope<'a>],
        results: &'a [Vec<CheckResult>],
    ) -> FleetScope<'a> {
        FleetScope {
            replicas,
            replica_results: results,
            requested: None,
            step_s: None,
            scrape_s: None,
            bench: None,
            expected_extra: 0,
            down: false,
        }
    }

    fn t1(status: Status) -> Vec<CheckResult> {
        vec![CheckResult::new(Tripwire::SilentPreemption, status, "")]
    }

    #[test]
    fn the_fleet_reads_each_replicas_recording_and_its_t1() {
        // a: requests waited with the cache full; b ran 2 at once.
        let full = series(
            Engine::Vllm,
            vec![gauges(8.0, 3.0, 0.97), gauges(8.0, 0.0, 0.5)],
        );
        let light = series(
            Engine::Vllm,
            vec![gauges(2.0, 0.0, 0.6), gauges(1.0, 0.0, 0.2)],
        );
        let reps = [
            replica("a", Input::Present(&full)),
            replica("b", Input::Present(&light)),
        ];
        let results = [t1(Status::Pass), t1(Status::Pass)];
        let r = fleet(&fleet_scope(&reps, &results)).unwrap();
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(
            r.message.starts_with(
                "replica a ran at its ceiling (requests waited with the cache 97% full, up to 8 \
                 running) while replica b never ran more than 2 at once"
            ),
            "{}",
            r.message
        );
        let e = found(&r);
        assert_eq!(
            (e.saturated.as_deref(), e.saturated_peak_running),
            (Some("a"), Some(8.0))
        );
        assert_eq!(
            (e.few.as_deref(), e.few_peak_running),
            (Some("b"), Some(2.0))
        );
        assert_eq!(e.few_peak_kv_usage, None);
        // Even peaks, neither at its ceiling: pass.
        let reps = [
            replica("a", Input::Present(&light)),
            replica("b", Input::Present(&light)),
        ];
        assert_eq!(
            fleet(&fleet_scope(&reps, &results)).unwrap().status,
            Status::Pass
        );
    }

    #[test]
    fn a_replica_without_a_usable_recording_cannot_tell() {
        let full = series(Engine::Vllm, vec![gauges(8.0, 3.0, 0.97)]);
        let e = InputError::new("replicas/b/run.series.jsonl", Some(2), "not JSON");
        let gap = Gap::Replica {
            id: "b".into(),
            what: "run.series.jsonl".into(),
        };
        let results = [t1(Status::Pass), t1(Status::Pass)];
        for (b, why) in [
            (
                Input::Unusable(&e),
                "unusable recording: replicas/b/run.series.jsonl:2: not JSON",
            ),
            (Input::Missing(gap), "no recording"),
            (Input::NotGiven, "no recording"),
        ] {
            let reps = [replica("a", Input::Present(&full)), replica("b", b)];
            let r = fleet(&fleet_scope(&reps, &results)).unwrap();
            assert_eq!(r.status, Status::Unknown, "{}", r.message);
            assert_eq!(
                r.message,
                format!(
                    "replica b's running requests are not known ({why}), so whether the load \
                     was balanced can't be told"
                )
            );
        }
        // A single replica: nothing to share the load with.
        let reps = [replica("a", Input::Present(&full))];
        let r = fleet(&fleet_scope(&reps, &results[..1])).unwrap();
        assert_eq!(r.status, Status::NotApplicable);
    }
}
