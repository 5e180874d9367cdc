//! The terminal's phase table for a sweep: one row per phase (what it asked for, what the
//! server ran, each tripwire's icon, its worst status), then one line per phase check
//! that is not a pass, so the reason is on screen. Nothing for a single benchmark.

use analyzer::phases::PhaseVerdict;
use analyzer::rules::verdict::Status;

use crate::render::paint;

/// The table's lines; empty when there are no phases.
pub fn table(phases: &[PhaseVerdict], colour: bool) -> Vec<String> {
    let Some(first) = phases.first() else {
        return Vec::new();
    };
    let ids: Vec<String> = first.checks.iter().map(|c| c.id()).collect();
    let asked: Vec<String> = phases
        .iter()
        .map(|p| format!("asked for {}", p.asked))
        .collect();
    let ran: Vec<String> = phases
        .iter()
        .map(|p| match p.ran {
            Some(r) => format!("ran {}", analyzer::num::shortest(r)),
            None => "ran ?".to_string(),
        })
        .collect();
    let w_asked = asked.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let w_ran = ran.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let mut out = vec![format!(
        "The load in {} phases, each judged on its own window:",
        phases.len()
    )];
    let head: Vec<String> = ids.iter().map(|id| format!("{id:<4}")).collect();
    out.push(format!(
        "  {:>2}  {:<w_load$}  {}  worst",
        "#",
        "load",
        head.join(""),
        w_load = w_asked + 3 + w_ran
    ));
    for ((p, a), r) in phases.iter().zip(&asked).zip(&ran) {
        let icons: String = ids
            .iter()
            .map(|id| {
                let s = p.checks.iter().find(|c| &c.id() == id).map(|c| c.status);
                let icon = s.map_or(" ", Status::icon);
                let cell = format!("{icon:<4}");
                s.map_or(cell.clone(), |s| paint(&cell, s, colour))
            })
            .collect();
        out.push(format!(
            "  {:>2}  {a:<w_asked$} / {r:<w_ran$}  {icons}  {}",
            p.index,
            paint(p.status.terminal_label(), p.status, colour)
        ));
    }
    for p in phases {
        for c in p.checks.iter().filter(|c| c.status.shown_in_full()) {
            out.push(format!(
                "  phase {} [{}] {}  {}",
                p.index,
                c.id(),
                paint(c.status.terminal_label(), c.status, colour),
                analyzer::term::escape(&c.message)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::rules::verdict::CheckResult;
    use analyzer::rules::Tripwire;

    fn phase(index: usize, asked: i64, ran: f64, t8: Status) -> PhaseVerdict {
        let checks = vec![
            CheckResult::new(Tripwire::SilentPreemption, Status::Pass, "no preemptions"),
            CheckResult::new(
                Tripwire::ConcurrencyNotReached,
                t8,
                format!("{asked} requested"),
            ),
        ];
        PhaseVerdict {
            index,
            asked: format!("{asked} at once"),
            concurrency: Some(asked),
            rate: None,
            ran: Some(ran),
            start_s: None,
            end_s: None,
            completed: None,
            failed: None,
            output_tokens: None,
            status: analyzer::phases::worst(&checks),
            checks,
        }
    }

    #[test]
    fn one_row_per_phase_and_the_reasons_below() {
        assert!(table(&[], false).is_empty());
        let t = table(
            &[
                phase(1, 2, 2.0, Status::Pass),
                phase(2, 16, 10.0, Status::Fail),
            ],
            false,
        );
        assert_eq!(
            t,
            [
                "The load in 2 phases, each judged on its own window:",
                "   #  load                           T1  T8    worst",
                "   1  asked for 2 at once  / ran 2   ✔   ✔     PASS",
                "   2  asked for 16 at once / ran 10  ✔   ✖     TRIPWIRE-FAILED",
                "  phase 2 [T8] TRIPWIRE-FAILED  16 requested",
            ]
        );
    }
}
