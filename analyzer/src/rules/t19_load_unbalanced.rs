//! T19: the load was unbalanced across a fleet's replicas: one replica ran at its ceiling
//! (it preempted, or requests waited with its cache full) while another never ran even
//! half as many requests at once, or never filled even half of its own cache. The fleet's
//! throughput then measures the router's placement, not the pool's capacity (the rule and
//! its thresholds: docs/tripwires.md#t19).

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
        .and_then(|c| c.evidence("preemptions")?.as_f64());
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
    let base = |status, msg: String| {
        CheckResult::new(TRIPWIRE, status, msg)
            .with("replicas", replicas.len())
            .with("few_below_share", FEW)
    };
    if replicas.len() < 2 {
        return base(
            Status::NotApplicable,
            "does not apply to a single replica: there is no other to share the load".into(),
        );
    }
    // A saturated replica beside one that ran few, among those known.
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
        if let Some((l, idle)) = idle {
            let other = match idle {
                Idle::Few(p) => format!("never ran more than {} at once", shortest(p)),
                Idle::Room(_, kv) => format!(
                    "never filled more than {}% of its KV cache",
                    crate::num::fixed(kv * 100.0, 0)
                ),
            };
            let r = base(
                Status::Fail,
                format!(
                    "replica {} ran at its ceiling ({why}, up to {} running) while replica {} \
                     {other}: the router placed the load unevenly for what each replica \
                     could hold, so the fleet's figures measure the placement, not the pool",
                    s.id,
                    shortest(*peak_s),
                    l.id,
                ),
            )
            .with("saturated", s.id.as_str())
            .with("saturated_peak_running", *peak_s)
            .with("saturated_because", why.as_str())
            .with("few", l.id.as_str());
            return match idle {
                Idle::Few(p) => r.with("few_peak_running", p),
                Idle::Room(p, kv) => r.with("few_peak_running", p).with("few_peak_kv_usage", kv),
            };
        }
    }
    if let Some(m) = replicas.iter().find(|r| r.peak_running.is_err()) {
        let why = m.peak_running.as_ref().err().cloned().unwrap_or_default();
        return base(
            Status::Unknown,
            format!(
                "replica {}'s running requests are not known ({why}), so whether the load was \
                 balanced can't be told",
                m.id
            ),
        )
        .with("unknown", m.id.as_str());
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
            return base(
                Status::Unknown,
                format!(
                    "replica {} ran up to {} at once and another as few as {}, but whether \
                     {} ran at its ceiling is not known ({why})",
                    u.id,
                    shortest(*peak_u),
                    shortest(lowest),
                    u.id
                ),
            )
            .with("unknown", u.id.as_str());
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
    base(Status::Pass, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            r.evidence("few_peak_kv_usage"),
            Some(&crate::json::Json::from(0.06))
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
}
