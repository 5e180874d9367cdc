//! Why requests failed, as the load tool wrote it: its error texts grouped, so a run
//! where 16 prompts were refused for the same reason says so once, with the count
//! (T22). Texts that differ only in their numbers (a prompt's length, a request's id)
//! are one group, shown by the first of them.

use serde::Serialize;

use crate::text::cut_chars;

/// The longest text shown for a group, in characters.
const SHOWN_CHARS: usize = 240;

/// One reason requests failed, and how many failed for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorGroup {
    /// The first text of the group, cut to a readable length.
    pub text: String,
    pub count: i64,
}

/// A text with every run of digits replaced, so lengths and ids do not split a group.
fn shape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// Groups texts (blank ones are not errors), most frequent first, ties in the order met.
pub fn group<'a>(texts: impl IntoIterator<Item = (&'a str, i64)>) -> Vec<ErrorGroup> {
    let mut groups: Vec<(String, ErrorGroup)> = Vec::new();
    for (text, n) in texts {
        let text = text.trim();
        if text.is_empty() || n <= 0 {
            continue;
        }
        let key = shape(text);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.count += n,
            None => {
                let shown = cut_chars(text, SHOWN_CHARS);
                let ellipsis = if shown.len() < text.len() { "…" } else { "" };
                groups.push((
                    key,
                    ErrorGroup {
                        text: format!("{shown}{ellipsis}"),
                        count: n,
                    },
                ));
            }
        }
    }
    let mut out: Vec<ErrorGroup> = groups.into_iter().map(|(_, g)| g).collect();
    out.sort_by_key(|g| std::cmp::Reverse(g.count));
    out
}

/// The texts a traceback ends with are its reason: the last non-blank line.
pub fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_that_differ_in_numbers_are_one_group() {
        let g = group([
            ("Bad Request", 1),
            ("", 1),
            ("prompt of 177 tokens is too long for 128", 1),
            ("prompt of 170 tokens is too long for 128", 2),
            ("Bad Request", 1),
            ("timeout", 0),
        ]);
        assert_eq!(
            g,
            [
                ErrorGroup {
                    text: "prompt of 177 tokens is too long for 128".into(),
                    count: 3
                },
                ErrorGroup {
                    text: "Bad Request".into(),
                    count: 2
                },
            ]
        );
        let long = "x".repeat(300);
        assert!(group([(long.as_str(), 1)])[0].text.ends_with('…'));
        assert_eq!(
            last_line("Traceback:\n  a\nValueError: boom\n\n"),
            "ValueError: boom"
        );
    }
}
