//! Text helpers shared by the parsers: lossy decoding and Python-compatible line splits.

use std::borrow::Cow;

/// UTF-8 with invalid bytes replaced by U+FFFD (boot logs, series, load.log).
pub fn decode_lossy(bytes: &[u8]) -> Cow<'_, str> {
    // The strict check is much faster and nearly every file passes it.
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Is `c` a line boundary for Python's `str.splitlines()`?
fn is_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\x0b'
            | '\x0c'
            | '\x1c'
            | '\x1d'
            | '\x1e'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Splits like Python's `str.splitlines()`: `\r\n` is one break, a break at the very end
/// adds no empty line. Line numbers (index + 1) then match the reference's.
pub fn split_lines(text: &str) -> SplitLines<'_> {
    SplitLines { rest: text }
}

pub struct SplitLines<'a> {
    rest: &'a str,
}

impl<'a> Iterator for SplitLines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        // Fast path: find the first break character; most are '\n'.
        match self.rest.char_indices().find(|&(_, c)| is_break(c)) {
            None => {
                let line = self.rest;
                self.rest = "";
                Some(line)
            }
            Some((i, c)) => {
                let line = &self.rest[..i];
                let mut end = i + c.len_utf8();
                if c == '\r' && self.rest[end..].starts_with('\n') {
                    end += 1;
                }
                self.rest = &self.rest[end..];
                Some(line)
            }
        }
    }
}

/// Cuts `s` to at most `n` characters.
pub fn cut_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The last path component of a path written with `/` or `\`.
pub fn base_name(path: &str) -> &str {
    let trimmed = path.trim_end_matches(['/', '\\']);
    trimmed.rsplit(['/', '\\']).next().unwrap_or(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_splitlines() {
        let v: Vec<_> = split_lines("a\nb\r\nc\rd\x0be\u{2028}f\n").collect();
        assert_eq!(v, ["a", "b", "c", "d", "e", "f"]);
        let v: Vec<_> = split_lines("a\n\nb").collect();
        assert_eq!(v, ["a", "", "b"]);
        assert_eq!(split_lines("").count(), 0);
        assert_eq!(split_lines("\n").collect::<Vec<_>>(), [""]);
    }

    #[test]
    fn cutting() {
        assert_eq!(cut_chars("héllo", 2), "hé");
        assert_eq!(cut_chars("hi", 5), "hi");
        assert_eq!(base_name("/root/models/Qwen3-8B"), "Qwen3-8B");
        assert_eq!(base_name("C:\\m\\x\\"), "x");
    }
}
