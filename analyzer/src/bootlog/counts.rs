//! Counts read from the raw text of a TensorRT-LLM log (bootlog.md §2.7 step 2): answered
//! requests (`"POST /PATH HTTP/VER" 200`) and pauses (`request ID N -> pause`).

use super::lines::word_at;
use super::pat::{after_each, Cur};

/// One `"POST /PATH HTTP/VER" 200` at the cursor (just after `"POST /`).
fn served_at(mut c: Cur<'_>) -> Option<()> {
    c.run1(|ch| !ch.is_whitespace())?;
    if !c.lit(" HTTP/") {
        return None;
    }
    c.run1(|ch| ch.is_ascii_digit() || ch == '.')?;
    if !c.lit("\" 200") || word_at(c.s, c.i) {
        return None;
    }
    Some(())
}

/// The line holds an answered request.
pub(crate) fn is_served(line: &str) -> bool {
    after_each(line, "\"POST /", served_at).is_some()
}

/// Answered requests on the line.
pub(crate) fn served(line: &str) -> i64 {
    line.match_indices("\"POST /")
        .filter(|&(i, m)| {
            served_at(Cur {
                s: line,
                i: i + m.len(),
            })
            .is_some()
        })
        .count() as i64
}

/// Pauses on the line: `request ID N -> pause`, `pause` a whole word.
pub(crate) fn pauses(line: &str) -> i64 {
    line.match_indices("request ID ")
        .filter(|&(i, m)| {
            let mut c = Cur {
                s: line,
                i: i + m.len(),
            };
            c.count().is_some() && c.lit(" -> pause") && !word_at(line, c.i)
        })
        .count() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_requests() {
        let l = "INFO:     127.0.0.1:37951 - \"POST /v1/completions HTTP/1.1\" 200 OK";
        assert_eq!(served(l), 1);
        assert!(is_served(l));
        assert_eq!(
            served("\"POST /v1/completions HTTP/1.1\" 503 Service Unavailable"),
            0
        );
        assert_eq!(served("\"POST /x HTTP/1.1\" 2000"), 0);
        assert_eq!(served("\"POST / HTTP/1.1\" 200"), 0);
        assert_eq!(served("\"GET /metrics HTTP/1.1\" 200 OK"), 0);
        assert_eq!(served("\"POST /a HTTP/1\" 200 \"POST /b HTTP/2\" 200"), 2);
    }

    #[test]
    fn pause_lines() {
        let l = "[TRT-LLM] [I] [batchmgr][RANK 0] MaxUtilizationScheduler: request ID 72 -> pause";
        assert_eq!(pauses(l), 1);
        assert_eq!(pauses("request ID 72 -> paused"), 0);
        assert_eq!(pauses("request ID x -> pause"), 0);
    }
}
