//! The rules read from the series (T8, T9, T14, and T1 when it reads the paused gauge)
//! judge only the readings they have. When those stop before the load ends
//! (`series::coverage`), a pass or a failure would speak for a part of the load as if it
//! were the whole: each becomes "can't tell", naming where the readings end and why, and
//! keeps what the readings it had showed as evidence.

use super::registry::Tripwire::{self, ConcurrencyNotReached, FallingCeiling, NullBlock};
use super::t01_silent_preemption::Evictions;
use super::verdict::{CheckResult, Status};
use crate::series::coverage::Coverage;

/// The tripwires judged on the series alone.
const ON_THE_SERIES: [Tripwire; 3] = [ConcurrencyNotReached, FallingCeiling, NullBlock];

/// Turns the verdicts of series rules into "can't tell" when the readings end early;
/// `stopped` is the recorder's own problem, if it stopped for one.
pub fn qualify(results: &mut [CheckResult], coverage: &Coverage, stopped: Option<&str>) {
    let Some(why) = coverage.cannot_tell(stopped) else {
        return;
    };
    // T1 from the paused gauge counts the readings it read; from a counter it does not.
    let from_readings = |r: &CheckResult| {
        r.finding::<Evictions>()
            .is_some_and(|e| e.readings.is_some())
    };
    let judged = |r: &CheckResult| {
        ON_THE_SERIES.contains(&r.tripwire)
            || (r.tripwire == Tripwire::SilentPreemption && from_readings(r))
    };
    for r in results.iter_mut().filter(|r| judged(r)) {
        if matches!(r.status, Status::Pass | Status::Warn | Status::Fail) {
            let seen = std::mem::replace(&mut r.message, format!("can't tell: {why}"));
            r.status = Status::Unknown;
            r.set("on_the_readings_recorded", seen);
            r.set("readings_end_early", why.as_str());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;
    use crate::series::coverage::Why;
    use Tripwire::*;

    fn early() -> Coverage {
        Coverage::EndsEarly {
            last_reading_s: Some(3.0),
            load_end_s: 9.0,
            why: Why::FileEnds,
        }
    }

    fn paused(n: usize) -> Evictions {
        Evictions {
            readings: Some(n),
            ..Evictions::default()
        }
    }

    #[test]
    fn series_verdicts_become_cant_tell_and_keep_what_they_saw() {
        let mut results = vec![
            CheckResult::new(
                ConcurrencyNotReached,
                Status::Fail,
                "the server never ran more than 1 at once",
            ),
            CheckResult::new(FallingCeiling, Status::Pass, "fine"),
            CheckResult::new(NullBlock, Status::NotApplicable, "not on this engine"),
            CheckResult::new(
                SilentPreemption,
                Status::Pass,
                "no preemptions during the run",
            ),
            CheckResult::new(SilentPreemption, Status::Fail, "paused").found(paused(4)),
            CheckResult::new(CrashAfterReady, Status::Pass, "server alive"),
            CheckResult::new(FallingCeiling, Status::Unknown, "can't tell: no KV reading"),
        ];
        let no_space = "no space left on device while writing x";
        qualify(&mut results, &early(), Some(no_space));
        let statuses: Vec<Status> = results.iter().map(|r| r.status).collect();
        use Status::*;
        assert_eq!(
            statuses,
            [
                Unknown,
                Unknown,
                NotApplicable,
                Pass,
                Unknown,
                Pass,
                Unknown
            ]
        );
        assert!(results[0].message.starts_with(
            "can't tell: the readings stop 3.0 s into the load, which ran 9.0 s; the recorder \
             stopped: no space left on device while writing x"
        ));
        assert_eq!(
            results[0].evidence_value("on_the_readings_recorded"),
            Some(Json::from("the server never ran more than 1 at once"))
        );
        // A rule that already could not tell keeps its own reason.
        assert_eq!(results[6].message, "can't tell: no KV reading");
    }

    #[test]
    fn covered_readings_change_nothing() {
        let mut results = vec![CheckResult::new(ConcurrencyNotReached, Status::Pass, "ok")];
        qualify(&mut results, &Coverage::Covered, None);
        assert_eq!(results[0].status, Status::Pass);
        assert_eq!(results[0].message, "ok");
    }
}
