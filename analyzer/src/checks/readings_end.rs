//! Checks of the series (T8, T9, T14, and T1 when it reads the paused gauge) judge only
//! the readings they have. When those stop before the load ends (`series::coverage`), a
//! pass or a failure would speak for a part of the load as if it were the whole: each
//! becomes "can't tell", naming where the readings end and why, and keeps what the
//! readings it had showed as evidence.

use crate::series::coverage::Coverage;
use crate::verdict::{CheckResult, Status};

/// The tripwires judged on the series alone.
const ON_THE_SERIES: [u8; 3] = [8, 9, 14];

/// T1 read from the series (TensorRT-LLM's paused gauge) carries this evidence.
const T1_FROM_READINGS: &str = "readings";

/// Turns the verdicts of series checks into "can't tell" when the readings end early;
/// `stopped` is the recorder's own problem, if it stopped for one.
pub fn qualify(results: &mut [CheckResult], coverage: &Coverage, stopped: Option<&str>) {
    let Some(why) = coverage.cannot_tell(stopped) else {
        return;
    };
    let judged = |r: &CheckResult| {
        ON_THE_SERIES.contains(&r.tripwire)
            || (r.tripwire == 1 && r.evidence(T1_FROM_READINGS).is_some())
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
    use crate::series::coverage::Why;

    fn early() -> Coverage {
        Coverage::EndsEarly {
            last_reading_s: Some(3.0),
            load_end_s: 9.0,
            why: Why::FileEnds,
        }
    }

    #[test]
    fn series_verdicts_become_cant_tell_and_keep_what_they_saw() {
        let mut results = vec![
            CheckResult::new(8, Status::Fail, "the server never ran more than 1 at once"),
            CheckResult::new(9, Status::Pass, "fine"),
            CheckResult::new(14, Status::NotApplicable, "not on this engine"),
            CheckResult::new(1, Status::Pass, "no preemptions during the run"),
            CheckResult::new(1, Status::Fail, "paused").with("readings", 4),
            CheckResult::new(7, Status::Pass, "server alive"),
            CheckResult::new(9, Status::Unknown, "can't tell: no KV reading"),
        ];
        qualify(
            &mut results,
            &early(),
            Some("no space left on device while writing x"),
        );
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
            results[0].evidence("on_the_readings_recorded"),
            Some(&"the server never ran more than 1 at once".into())
        );
        // A check that already could not tell keeps its own reason.
        assert_eq!(results[6].message, "can't tell: no KV reading");
    }

    #[test]
    fn covered_readings_change_nothing() {
        let mut results = vec![CheckResult::new(8, Status::Pass, "ok")];
        qualify(&mut results, &Coverage::Covered, None);
        assert_eq!(results[0].status, Status::Pass);
        assert_eq!(results[0].message, "ok");
    }
}
