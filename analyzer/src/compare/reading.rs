//! Whether a row's values differ, whether the difference matters, and the one line that
//! says what it means, every percentage computed from the values. Each other run is read
//! against the reference (the first run that has the value; the first column, or the
//! baseline).

use super::rows::{Kind, Spec};
use super::{Run, RATE_TOLERANCE};
use crate::num::{fixed, plural, thousands};
use crate::rules::verdict::Status;

/// The runs do not all show the same (a run that cannot tell counts as different).
pub(super) fn differs(spec: &Spec) -> bool {
    let first = &spec.cells[0];
    spec.cells.iter().any(|c| match spec.kind {
        Kind::Status => c.status != first.status || c.present() != first.present(),
        _ => c.text != first.text,
    })
}

/// The difference changes what a reader concludes: judged only between runs that have
/// the value (a run that cannot tell is shown, not read).
pub(super) fn matters(spec: &Spec) -> bool {
    let present: Vec<_> = spec.cells.iter().filter(|c| c.present()).collect();
    if present.len() < 2 {
        return false;
    }
    match spec.kind {
        Kind::Identity | Kind::Context => false,
        Kind::Setting => present.iter().any(|c| c.text != present[0].text),
        Kind::Pool | Kind::Count => present.iter().any(|c| c.value != present[0].value),
        Kind::Rate => {
            let values: Vec<f64> = present.iter().filter_map(|c| c.value).collect();
            values.first().is_some_and(|&a| {
                values
                    .iter()
                    .any(|&b| relative(a, b).abs() > RATE_TOLERANCE)
            })
        }
        // "Does not apply" follows from the engine: not a difference in how the run went.
        Kind::Status => {
            let applies: Vec<_> = present
                .iter()
                .filter(|c| c.status != Some(Status::NotApplicable))
                .collect();
            applies.iter().any(|c| c.status != applies[0].status)
        }
    }
}

/// `(b - a) / a`; infinite when `a` is zero and `b` is not.
pub(super) fn relative(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else if a == 0.0 {
        f64::INFINITY * b.signum()
    } else {
        (b - a) / a.abs()
    }
}

/// A percentage as a reading shows it: whole above 10%, one decimal below.
pub(crate) fn percent(fraction: f64) -> String {
    let p = fraction.abs() * 100.0;
    if p >= 10.0 {
        format!("{}%", fixed(p, 0))
    } else {
        format!("{}%", fixed(p, 1))
    }
}

/// The reading of a row whose difference matters.
pub(super) fn reading(spec: &Spec, runs: &[Run<'_>]) -> Option<String> {
    if spec.kind == Kind::Status {
        return Some(status_reading(spec, runs));
    }
    let reference = spec.cells.iter().position(|c| c.present())?;
    let a_label = runs[reference].label;
    let a = &spec.cells[reference];
    let clauses: Vec<String> = spec
        .cells
        .iter()
        .enumerate()
        .filter(|(i, c)| *i != reference && c.present())
        .filter_map(|(i, b)| {
            let b_label = runs[i].label;
            match spec.kind {
                Kind::Setting => (b.text != a.text)
                    .then(|| format!("{b_label} has {} where {a_label} has {}", b.text, a.text)),
                _ => {
                    let (x, y) = (a.value?, b.value?);
                    (x != y).then(|| number_clause(spec, runs, reference, i, x, y))
                }
            }
        })
        .collect();
    if clauses.is_empty() {
        return None;
    }
    let mut line = clauses.join("; ");
    if spec.kind == Kind::Setting {
        line.push_str(": the other rows are not like for like");
    }
    Some(line)
}

/// Run `i` against the reference run `r`, for a number that moved from `x` to `y`.
fn number_clause(spec: &Spec, runs: &[Run<'_>], r: usize, i: usize, x: f64, y: f64) -> String {
    let (a_label, b_label) = (runs[r].label, runs[i].label);
    let change = relative(x, y);
    let more = y > x;
    let by = if change.is_finite() {
        percent(change)
    } else {
        String::new()
    };
    match (spec.key.as_str(), spec.kind) {
        ("kv_pool_tokens" | "kv_pool_blocks", _) => {
            let same_engine = runs[r].report.engine == runs[i].report.engine;
            let flags = match (&runs[r].report.facts, &runs[i].report.facts) {
                (Some(fa), Some(fb)) if same_engine => match fa.same_flags(fb) {
                    Some(true) => ", from the same flags",
                    Some(false) => ", with other flags",
                    None => "",
                },
                _ => "",
            };
            let size = if more { "larger" } else { "smaller" };
            format!(
                "{b_label} got a {by} {size} pool than {a_label} ({} vs {} {}){flags}",
                thousands(y),
                thousands(x),
                spec.unit
            )
        }
        ("peak_running", _) => {
            let asked = runs[i]
                .report
                .requested
                .map(|n| format!(" of the {n} asked for"))
                .unwrap_or_default();
            format!(
                "{b_label} ran at most {}{asked} at once, {} {} than {a_label} ({})",
                thousands(y),
                thousands((y - x).abs()),
                if more { "more" } else { "fewer" },
                thousands(x)
            )
        }
        ("evictions", _) => {
            let word = |run: &Run<'_>| {
                run.report
                    .engine
                    .unwrap_or(crate::engine::Engine::Vllm)
                    .eviction_word()
            };
            format!(
                "{b_label}: {} against {} on {a_label}",
                plural(y, word(&runs[i])),
                plural(x, word(&runs[r]))
            )
        }
        (_, Kind::Rate) => {
            let what = if by.is_empty() {
                format!("{} {}", thousands(y), spec.unit)
            } else {
                format!("{by} {} {}", if more { "more" } else { "fewer" }, spec.unit)
            };
            format!(
                "{b_label} produced {what} than {a_label} ({} vs {})",
                thousands(y),
                thousands(x)
            )
        }
        _ => format!(
            "{} on {b_label} against {} on {a_label}",
            thousands(y),
            thousands(x)
        ),
    }
}

/// "Tripwire failed: B; Pass: A and C": the runs grouped by status, the worse first.
fn status_reading(spec: &Spec, runs: &[Run<'_>]) -> String {
    let mut groups: Vec<(Option<Status>, Vec<&str>)> = Vec::new();
    for (cell, run) in spec.cells.iter().zip(runs) {
        match groups.iter_mut().find(|(s, _)| *s == cell.status) {
            Some((_, labels)) => labels.push(run.label),
            None => groups.push((cell.status, vec![run.label])),
        }
    }
    // The worse statuses first: a failure is what the reader looks for.
    groups.sort_by_key(|(s, _)| s.map_or(u8::MAX, |s| s as u8));
    groups
        .iter()
        .map(|(s, labels)| {
            let what = match s {
                Some(s) => s.report_label().to_string(),
                None => "Not checked".to_string(),
            };
            format!("{what}: {}", and_list(labels))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_to_what_a_reader_needs() {
        assert_eq!(percent(relative(32336.0, 47888.0)), "48%");
        assert_eq!(percent(relative(1274.0, 1389.2)), "9.0%");
        assert_eq!(percent(relative(32336.0, 32096.0)), "0.7%");
        assert!(relative(0.0, 3.0).is_infinite());
        assert_eq!(relative(3.0, 3.0), 0.0);
    }
}
