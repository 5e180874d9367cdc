//! The replica table of a fleet's terminal report: one row per replica with its instance,
//! each of its checks' icon, and its peak running, preemptions and requests served (the
//! router's count beside it when the router was read). Nothing for a single server.

use analyzer::report::ReplicaReport;
use analyzer::rules::registry::{self, Scope};
use analyzer::rules::verdict::Status;

/// A figure, or "?" when it is not known.
fn figure(v: Option<f64>) -> String {
    v.map_or("?".into(), analyzer::num::shortest)
}

/// The table's lines (empty without replicas). `paint` colours an icon by its status.
pub fn table(replicas: &[ReplicaReport], paint: &dyn Fn(&str, Status) -> String) -> Vec<String> {
    if replicas.is_empty() {
        return Vec::new();
    }
    let mut header: Vec<String> = vec!["replica".into(), "instance".into()];
    header.extend(registry::judged_in(Scope::Replica).map(|t| t.id()));
    header.extend(["peak running", "preemptions", "served"].map(String::from));
    let with_router = replicas.iter().any(|r| r.router_served.is_some());
    if with_router {
        header.push("router sent".into());
    }
    // Each cell: its text and, for an icon, the status that colours it.
    let rows: Vec<Vec<(String, Option<Status>)>> = replicas
        .iter()
        .map(|r| {
            let mut row = vec![
                (analyzer::term::escape(&r.id).into_owned(), None),
                (
                    analyzer::term::escape(r.instance.as_deref().unwrap_or("?")).into_owned(),
                    None,
                ),
            ];
            for t in registry::judged_in(Scope::Replica) {
                let status = r.checks.iter().find(|c| c.tripwire == t).map(|c| c.status);
                row.push(match status {
                    Some(s) => (s.icon().to_string(), Some(s)),
                    None => (" ".into(), None),
                });
            }
            row.push((figure(r.peak_running), None));
            row.push((figure(r.preemptions), None));
            row.push((figure(r.served), None));
            if with_router {
                row.push((figure(r.router_served), None));
            }
            row
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].0.chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w - s.chars().count()));
    let line = |cells: Vec<String>| format!("  {}", cells.join("  ").trim_end());
    let mut out = vec!["Replicas:".to_string()];
    out.push(line(
        header
            .iter()
            .zip(&widths)
            .map(|(h, w)| pad(h, *w))
            .collect(),
    ));
    for row in rows {
        out.push(line(
            row.iter()
                .zip(&widths)
                .map(|((text, status), w)| match status {
                    Some(s) => format!("{}{}", paint(text, *s), " ".repeat(w - 1)),
                    None => pad(text, *w),
                })
                .collect(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::rules::Tripwire;
    use analyzer::CheckResult;

    #[test]
    fn one_row_per_replica_with_icons_and_figures() {
        let r = ReplicaReport {
            id: "a".into(),
            instance: Some("10.0.0.1:8000\x1b[2J".into()),
            labels: Default::default(),
            scrape_interval_s: Some(1.0),
            engine: Some("vllm"),
            checks: vec![
                CheckResult::new(Tripwire::SilentPreemption, Status::Fail, ""),
                CheckResult::new(Tripwire::ConcurrencyNotReached, Status::Unknown, ""),
            ],
            peak_running: Some(10.0),
            preemptions: Some(6.0),
            served: None,
            router_served: None,
        };
        let lines = table(&[r], &|s, _| s.to_string());
        assert_eq!(lines[0], "Replicas:");
        assert!(lines[1].starts_with("  replica  instance "), "{}", lines[1]);
        assert!(
            lines[1].ends_with("  T1  T8  T9  T10  T14  peak running  preemptions  served"),
            "{}",
            lines[1]
        );
        assert!(!lines[2].contains('\x1b'), "{:?}", lines[2]);
        assert!(
            lines[2].starts_with("  a        10.0.0.1:8000"),
            "{}",
            lines[2]
        );
        assert!(lines[2].contains("✖   ?"), "{}", lines[2]);
        assert!(
            lines[2].ends_with("10            6            ?"),
            "{}",
            lines[2]
        );
        assert!(table(&[], &|s, _| s.to_string()).is_empty());
    }
}
