//! T12: a start that failed, classified from its log. The failure classifier
//! (`bootlog::classify`) finds the line that explains it; a failure during start-up is
//! T12's, one after the server said it was ready is T7's. `check-log` also reports
//! recognised lines in an unknown format as "can't tell" (a newer engine release).

use super::absent::Judged;
use super::failure::{failure_result, plural};
use super::scope::BootLogScope;
use crate::json::Json;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T12: Tripwire = Tripwire::UnexplainedFailure;

/// One start's log: a pass when no error line explains a failure, a fail naming the cause
/// of one during start-up.
pub fn boot_log(cx: &BootLogScope<'_>) -> Judged {
    let log = cx.log.need()?;
    let (c, f) = (&log.classification, &log.facts);
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
            Ok(CheckResult::new(T12, Status::Pass, msg))
        }
        Some(fail) if fail.phase == "serving" => Err(super::absent::Absent::NotGiven),
        Some(fail) => Ok(failure_result(fail, c.rejections)),
    }
}

/// `check-log`'s "can't tell" for recognised lines in an unknown format.
pub fn unparsed_lines(cx: &BootLogScope<'_>) -> Judged {
    let log = cx.log.present().filter(|_| cx.with_unparsed);
    log.and_then(|l| unparsed(&l.facts))
        .ok_or(super::absent::Absent::NotGiven)
}

/// check-log's T12 `unknown` for recognised lines in an unknown format.
fn unparsed(f: &crate::bootlog::BootFacts) -> Option<CheckResult> {
    let first = f.unparsed.first()?;
    let n = f.unparsed.len();
    let list: Vec<Json> = f
        .unparsed
        .iter()
        .map(crate::bootlog::Unparsed::to_json)
        .collect();
    Some(
        CheckResult::new(
            T12,
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
