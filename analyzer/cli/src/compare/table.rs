//! The comparison in the terminal: one column per run, a mark before each row that
//! differs (`!` where it matters, `~` where it only differs), the readings under the
//! table, then the baseline's verdict.

use analyzer::compare::{Comparison, Row};

const BOLD: &str = "\x1b[1m";
const YELLOW: &str = "\x1b[33m";
const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

fn width(s: &str) -> usize {
    s.chars().count()
}

fn pad(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(width(s))))
}

fn mark(r: &Row) -> char {
    if r.matters {
        '!'
    } else if r.differs {
        '~'
    } else {
        ' '
    }
}

/// The lines to print.
pub fn lines(c: &Comparison, colour: bool) -> Vec<String> {
    let label_w = c.rows.iter().map(|r| width(&r.label)).max().unwrap_or(0);
    let col_w: Vec<usize> = c
        .columns
        .iter()
        .enumerate()
        .map(|(i, col)| {
            c.rows
                .iter()
                .map(|r| width(&r.cells[i].text))
                .chain([width(&col.label)])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = Vec::new();
    let head: Vec<String> = c
        .columns
        .iter()
        .zip(&col_w)
        .map(|(col, &w)| pad(&col.label, w))
        .collect();
    let head = format!("  {}  {}", pad("", label_w), head.join("  "));
    out.push(if colour {
        format!("{BOLD}{}{RESET}", head.trim_end())
    } else {
        head.trim_end().to_string()
    });
    for r in &c.rows {
        let cells: Vec<String> = r
            .cells
            .iter()
            .zip(&col_w)
            .map(|(cell, &w)| pad(&cell.text, w))
            .collect();
        let line = format!(
            "{} {}  {}",
            mark(r),
            pad(&r.label, label_w),
            cells.join("  ")
        );
        let line = line.trim_end().to_string();
        out.push(match (colour, r.matters) {
            (true, true) => format!("{YELLOW}{line}{RESET}"),
            _ => line,
        });
    }
    let readings: Vec<&Row> = c.rows.iter().filter(|r| r.reading.is_some()).collect();
    if !readings.is_empty() {
        out.push(String::new());
        out.push("What differs:".to_string());
        for r in readings {
            out.push(format!(
                "  - {}: {}",
                r.label,
                r.reading.as_deref().unwrap_or_default()
            ));
        }
    }
    if let Some(b) = &c.baseline {
        out.push(String::new());
        for r in &b.regressions {
            let label = "REGRESSION";
            out.push(if colour {
                format!("{RED}{label}{RESET}  {}", r.reason)
            } else {
                format!("{label}  {}", r.reason)
            });
        }
        for n in &b.not_compared {
            out.push(format!("not compared: {n}"));
        }
        out.push(b.summary());
    }
    out
}
