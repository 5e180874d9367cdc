//! Terminal rendering: one line per verdict, the limits, a count line. Colour only on a
//! terminal and never with NO_COLOR.

use std::io::IsTerminal;

use analyzer::report::Limit;
use analyzer::rules::verdict::{CheckResult, Status};

/// Whether stdout gets colour.
pub fn colour() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

pub(crate) fn paint(s: &str, status: Status, on: bool) -> String {
    if !on {
        return s.to_string();
    }
    let code = match status {
        Status::Fail => "1;31",
        Status::Warn => "33",
        Status::Unknown => "35",
        Status::Pass => "32",
        Status::NotApplicable => "2",
    };
    format!("\x1b[{code}m{s}\x1b[0m")
}

/// `[ T1] TRIPWIRE-FAILED  message`
pub fn result_line(r: &CheckResult, colour: bool) -> String {
    format!(
        "[{:>3}] {}  {}",
        r.id(),
        paint(r.status.terminal_label(), r.status, colour),
        analyzer::term::escape(&r.message)
    )
}

/// What broke in the run, before any verdict: `RUN BROKE  the server exited …`.
pub fn broke(report: &analyzer::Report, colour: bool) -> Vec<String> {
    report
        .banner
        .iter()
        .flat_map(|b| &b.what_broke)
        .map(|w| {
            format!(
                "{}  {}",
                paint("RUN BROKE", Status::Fail, colour),
                analyzer::term::escape(w)
            )
        })
        .collect()
}

/// A fleet's replica table (`render_replicas.rs`); nothing for a single server.
pub fn replicas(report: &analyzer::Report, colour: bool) -> Vec<String> {
    crate::render_replicas::table(&report.replicas, &|s, status| paint(s, status, colour))
}

/// "What limited this run:" and one line per finding.
pub fn limits(limits: &[Limit]) -> Vec<String> {
    if limits.is_empty() {
        return Vec::new();
    }
    let mut out = vec!["What limited this run:".to_string()];
    for l in limits {
        out.push(format!("  - {}. {}", l.title.trim_end_matches('.'), l.text));
    }
    out
}

/// "k checks (a pass, b warn, ...)" plus "; m does not apply".
pub fn count_line(results: &[CheckResult]) -> String {
    let n = |s: Status| results.iter().filter(|r| r.status == s).count();
    let parts: Vec<String> = [
        (Status::Pass, "pass"),
        (Status::Warn, "warn"),
        (Status::Fail, "tripwire-failed"),
        (Status::Unknown, "unknown"),
    ]
    .into_iter()
    .filter(|(s, _)| n(*s) > 0)
    .map(|(s, w)| format!("{} {w}", n(s)))
    .collect();
    let checked = results.len() - n(Status::NotApplicable);
    let mut line = format!(
        "{checked} check{} ({})",
        if checked == 1 { "" } else { "s" },
        parts.join(", ")
    );
    let na = n(Status::NotApplicable);
    if na > 0 {
        line.push_str(&format!(
            "; {na} {} not apply",
            if na == 1 { "does" } else { "do" }
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::rules::Tripwire;

    #[test]
    fn lines() {
        let r = CheckResult::new(Tripwire::SilentPreemption, Status::Fail, "22 preemptions");
        assert_eq!(
            result_line(&r, false),
            "[ T1] TRIPWIRE-FAILED  22 preemptions"
        );
        let r14 = CheckResult::new(Tripwire::NullBlock, Status::NotApplicable, "x");
        assert_eq!(
            count_line(&[
                r,
                r14,
                CheckResult::new(Tripwire::FallingCeiling, Status::Pass, "")
            ]),
            "2 checks (1 pass, 1 tripwire-failed); 1 does not apply"
        );
    }
}
