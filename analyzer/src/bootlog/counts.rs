//! Counts read from the raw text of a TensorRT-LLM log (for the derived facts): answered
//! requests (`"POST /PATH HTTP/VER" 200`) and pauses (`request ID N -> pause`).

use regex::{Match, Regex};

use super::lines::word_at;
use super::pat::{count, rule};

rule!(
    /// `"POST /PATH HTTP/VER" 200`; the status must not run on into a word (checked after
    /// the match, so that the next request's quote is not used up by this one).
    SERVED = r#""POST /\P{White_Space}+ HTTP/[0-9.]+" 200"#
);

rule!(
    /// `request ID N -> pause`; `pause` must be a whole word (checked after the match).
    PAUSE = "request ID ",
    count!(),
    " -> pause"
);

/// Matches of `re` on `line` not followed by a word character.
fn whole_matches<'a>(re: &'a Regex, line: &'a str) -> impl Iterator<Item = Match<'a>> + 'a {
    re.find_iter(line).filter(|m| !word_at(line, m.end()))
}

/// The line holds an answered request.
pub(crate) fn is_served(line: &str) -> bool {
    whole_matches(&SERVED, line).next().is_some()
}

/// Answered requests on the line.
pub(crate) fn served(line: &str) -> i64 {
    whole_matches(&SERVED, line).count() as i64
}

/// Pauses on the line: `request ID N -> pause`, `pause` a whole word.
pub(crate) fn pauses(line: &str) -> i64 {
    whole_matches(&PAUSE, line).count() as i64
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
