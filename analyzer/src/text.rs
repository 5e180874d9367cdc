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

/// Is `c` a line boundary for Python's `str.splitlines()`? (The rule the byte search of
/// `SplitLines` implements; the tests hold it to this.)
#[cfg(test)]
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

/// Bytes that can begin a line boundary in UTF-8: the ASCII breaks, and the lead bytes of
/// U+0085 (`C2 85`) and U+2028/U+2029 (`E2 80 A8`/`E2 80 A9`).
static MAY_BREAK: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(
            b as u8,
            b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1e | 0xc2 | 0xe2
        );
        b += 1;
    }
    t
};

/// The first byte at or after `from` that may begin a line boundary. Eight bytes at a
/// time: a word with no control byte (< 0x20) and no byte above 0x7f holds none, which is
/// nearly every word of a log; only the others are looked at byte by byte.
fn find_may_break(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // Any byte below 0x20 (exact as a yes/no, as in "hasless"), or any high byte.
        let suspect = (x.wrapping_sub(ONES * 0x20) & !x & HIGH) | (x & HIGH);
        if suspect != 0 {
            if let Some(k) = chunk.iter().position(|&c| MAY_BREAK[usize::from(c)]) {
                return Some(i + k);
            }
        }
        i += 8;
    }
    b.get(i..)?
        .iter()
        .position(|&c| MAY_BREAK[usize::from(c)])
        .map(|k| i + k)
}

impl<'a> Iterator for SplitLines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        // Byte search (far faster than decoding chars): a break character is either one
        // of the ASCII bytes or one of three fixed multi-byte sequences, and its first
        // byte is always a char boundary.
        let b = self.rest.as_bytes();
        let mut from = 0;
        let (at, end) = loop {
            let Some(j) = find_may_break(b, from) else {
                break (b.len(), b.len());
            };
            let len = match b[j] {
                b'\r' if b.get(j + 1) == Some(&b'\n') => 2,
                0xc2 if b.get(j + 1) == Some(&0x85) => 2,
                0xe2 if b.get(j + 1) == Some(&0x80)
                    && matches!(b.get(j + 2), Some(0xa8 | 0xa9)) =>
                {
                    3
                }
                0xc2 | 0xe2 => {
                    from = j + 1;
                    continue;
                }
                _ => 1,
            };
            break (j, j + len);
        };
        let line = &self.rest[..at];
        self.rest = &self.rest[end..];
        Some(line)
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

/// Whole lines out of a text that arrives in pieces (a file read a piece at a time): each
/// complete line, without its newline, is handed on as soon as its newline arrives; the
/// text after the last newline waits for the next piece.
#[derive(Debug, Default)]
pub struct PieceLines {
    partial: Vec<u8>,
}

impl PieceLines {
    /// Hands each line the piece completes to `line`.
    pub fn push(&mut self, piece: &[u8], mut line: impl FnMut(&[u8])) {
        let mut rest = piece;
        if !self.partial.is_empty() {
            let Some(end) = memchr::memchr(b'\n', rest) else {
                self.partial.extend_from_slice(rest);
                return;
            };
            let mut whole = std::mem::take(&mut self.partial);
            whole.extend_from_slice(&rest[..end]);
            line(&whole);
            // Keep the allocation for the next unfinished line.
            whole.clear();
            self.partial = whole;
            rest = &rest[end + 1..];
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', rest) {
            line(&rest[start..end]);
            start = end + 1;
        }
        self.partial.extend_from_slice(&rest[start..]);
    }

    /// Whether text after the last newline is waiting.
    pub fn has_rest(&self) -> bool {
        !self.partial.is_empty()
    }

    /// The text after the last newline (possibly empty), taken.
    pub fn take_rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.partial)
    }
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

    /// The definition: split at every is_break char, "\r\n" as one break.
    fn by_chars(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.char_indices().find(|&(_, c)| is_break(c)) {
                None => {
                    out.push(rest);
                    rest = "";
                }
                Some((i, c)) => {
                    out.push(&rest[..i]);
                    let mut end = i + c.len_utf8();
                    if c == '\r' && rest[end..].starts_with('\n') {
                        end += 1;
                    }
                    rest = &rest[end..];
                }
            }
        }
        out
    }

    #[test]
    fn byte_search_agrees_with_the_char_rule() {
        let pieces = [
            "a", "é", "\u{85}", "\u{2028}", "\u{2029}", "\u{2027}", "\u{202a}", "\u{a0}", "\u{c5}",
            "█", "\r", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\t", "",
        ];
        // Every sequence of up to three pieces.
        for x in pieces {
            for y in pieces {
                for z in pieces {
                    let t = format!("{x}{y}{z}");
                    assert_eq!(split_lines(&t).collect::<Vec<_>>(), by_chars(&t), "{t:?}");
                }
            }
        }
    }

    proptest::proptest! {
        /// Long texts, so the eight-bytes-at-a-time search meets breaks at every offset.
        #[test]
        fn word_search_agrees_on_long_texts(parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "abcdefgh", "x", "é", "\u{85}", "\u{2028}", "\u{2029}", "\u{2027}", "█",
                "\r", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f",
                "\t", "\x1b[0m", "0123456789012345",
            ]), 0..60)) {
            let t: String = parts.concat();
            proptest::prop_assert_eq!(split_lines(&t).collect::<Vec<_>>(), by_chars(&t));
        }
    }

    #[test]
    fn cutting() {
        assert_eq!(cut_chars("héllo", 2), "hé");
        assert_eq!(cut_chars("hi", 5), "hi");
        assert_eq!(base_name("/root/models/Qwen3-8B"), "Qwen3-8B");
        assert_eq!(base_name("C:\\m\\x\\"), "x");
    }
}
