//! Preparing one line for matching (docs/run-folder.md#boot-log): ANSI escapes removed,
//! the vLLM process prefix recognised, and the character classes the rules are written
//! in.

use std::borrow::Cow;

/// A word character as Python's `\w` sees it: letters and digits of any script, and `_`.
pub(crate) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The character just before byte `i` of `s` is a word character.
pub(crate) fn word_before(s: &str, i: usize) -> bool {
    s[..i].chars().next_back().is_some_and(is_word)
}

/// The character at byte `i` of `s` is a word character.
pub(crate) fn word_at(s: &str, i: usize) -> bool {
    s[i..].chars().next().is_some_and(is_word)
}

/// Removes every `ESC [ digits/;/? letter` sequence. Borrows when there is none.
pub(crate) fn strip_ansi(line: &str) -> Cow<'_, str> {
    let b = line.as_bytes();
    if !b.contains(&0x1b) {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let (mut last, mut i) = (0, 0);
    while i < b.len() {
        if b[i] == 0x1b && b.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b';' || b[j] == b'?') {
                j += 1;
            }
            if j < b.len() && b[j].is_ascii_alphabetic() {
                // ESC, '[' and the letter are ASCII, so these are char boundaries.
                out.push_str(&line[last..i]);
                i = j + 1;
                last = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&line[last..]);
    Cow::Owned(out)
}

/// A vLLM process tag at the start of a line: `(NAME pid=N)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tag<'a> {
    pub name: &'a str,
    pub pid: &'a str,
    /// The line after the whole prefix (tag, and the level unit when it fits).
    pub rest: &'a str,
}

/// Byte length of the run of `s` whose characters satisfy `f` (ASCII bytes are tested
/// without decoding: every line of a vLLM log starts with such runs).
fn run(s: &str, f: impl Fn(char) -> bool) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c < 0x80 {
            if !f(char::from(c)) {
                return i;
            }
            i += 1;
        } else {
            match s[i..].chars().next() {
                Some(ch) if f(ch) => i += ch.len_utf8(),
                _ => return i,
            }
        }
    }
    i
}

fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// Reads the vLLM prefix (`(EngineCore pid=164098) INFO 09-07 23:15:06 [x.py:1] `).
/// `None` when the line does not start with a process tag.
pub(crate) fn vllm_tag(line: &str) -> Option<Tag<'_>> {
    let s = line.strip_prefix('(')?;
    let first = s.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    // `-` too: vLLM 0.32's multiproc workers start as `(VllmWorker-0 pid=N)`.
    let name_len = 1 + run(&s[1..], |c| is_word(c) || c == ':' || c == '-');
    let name = &s[..name_len];
    let s = &s[name_len..];
    let ws = run(s, char::is_whitespace);
    if ws == 0 {
        return None;
    }
    let s = s[ws..].strip_prefix("pid=")?;
    let n = digits(s);
    if n == 0 {
        return None;
    }
    let pid = &s[..n];
    let s = s[n..].strip_prefix(')')?;
    let s = &s[run(s, char::is_whitespace)..];
    let rest = level_unit(s).unwrap_or(s);
    Some(Tag { name, pid, rest })
}

/// The optional `LEVEL MM-DD HH:MM:SS[.f] [location]` unit and at most one whitespace
/// character after it; returns the text after the unit.
fn level_unit(s: &str) -> Option<&str> {
    let level = match s.as_bytes().first()? {
        b'I' => "INFO",
        b'W' => "WARNING",
        b'E' => "ERROR",
        b'D' => "DEBUG",
        b'C' => "CRITICAL",
        _ => return None,
    };
    if !s.starts_with(level) {
        return None;
    }
    let s = &s[level.len()..];
    let ws = run(s, char::is_whitespace);
    if ws == 0 {
        return None;
    }
    let s = &s[ws..];
    let b = s.as_bytes();
    // MM-DD HH:MM:SS
    let shape = b"00-00 00:00:00";
    if b.len() < shape.len() {
        return None;
    }
    for (k, &want) in shape.iter().enumerate() {
        let ok = if want == b'0' {
            b[k].is_ascii_digit()
        } else {
            b[k] == want
        };
        if !ok {
            return None;
        }
    }
    let mut s = &s[shape.len()..];
    if let Some(frac) = s.strip_prefix('.') {
        let n = digits(frac);
        if n > 0 {
            s = &frac[n..];
        }
    }
    let ws = run(s, char::is_whitespace);
    if ws == 0 {
        return None;
    }
    let s = s[ws..].strip_prefix('[')?;
    let close = s.find(']')?;
    let s = &s[close + 1..];
    // At most one whitespace character.
    match s.chars().next() {
        Some(c) if c.is_whitespace() => Some(&s[c.len_utf8()..]),
        _ => Some(s),
    }
}

/// The line with the vLLM prefix removed (unchanged when it has none).
#[cfg(test)]
pub(crate) fn strip_prefix(line: &str) -> &str {
    vllm_tag(line).map_or(line, |t| t.rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_sequences_are_removed() {
        assert_eq!(
            strip_ansi("\x1b[33;20mrank 0 using MpiPoolSession"),
            "rank 0 using MpiPoolSession"
        );
        assert_eq!(
            strip_ansi("\x1b[0m[10/01/2026-01:43:04] x"),
            "[10/01/2026-01:43:04] x"
        );
        assert_eq!(strip_ansi("a\x1b[?25hb\x1b[2Kc"), "abc");
        // Incomplete sequences stay.
        assert_eq!(strip_ansi("a\x1b[12"), "a\x1b[12");
        assert_eq!(strip_ansi("a\x1bxb"), "a\x1bxb");
        assert!(matches!(strip_ansi("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn full_vllm_prefix() {
        let t = vllm_tag(
            "(EngineCore pid=164098) INFO 09-07 23:15:06 [gpu_worker.py:578] Available KV cache memory: 2.51 GiB",
        )
        .unwrap();
        assert_eq!(t.name, "EngineCore");
        assert_eq!(t.pid, "164098");
        assert_eq!(t.rest, "Available KV cache memory: 2.51 GiB");
    }

    #[test]
    fn uvicorn_lines_keep_their_level() {
        let line = "(APIServer pid=163874) INFO:     Application startup complete.";
        assert_eq!(
            strip_prefix(line),
            "INFO:     Application startup complete."
        );
    }

    #[test]
    fn one_whitespace_after_location_only() {
        let line = "(APIServer pid=5) ERROR 09-30 20:31:13 [serving.py:498]   File \"x\"";
        assert_eq!(strip_prefix(line), "  File \"x\"");
        let line = "(A pid=5) WARNING 09-30 20:31:13.123 [x.py:1] hi";
        assert_eq!(strip_prefix(line), "hi");
        assert_eq!(strip_prefix("(EngineCore pid=164098) "), "");
    }

    #[test]
    fn other_prefixes_are_left_alone() {
        for line in [
            "[2026-10-01 01:41:07] KV Cache is allocated.",
            "[10/01/2026-01:43:50] [TRT-LLM] [I] x",
            "INFO 01-01 00:00:00 [x.py:1] RuntimeError: x",
            "(pid=5) x",
            "(1abc pid=5) x",
            "(Name pid=) x",
            "(Namepid=5) x",
        ] {
            assert_eq!(strip_prefix(line), line);
        }
        let t = vllm_tag("(Worker_TP0:x pid=7)x").unwrap();
        assert_eq!((t.name, t.pid, t.rest), ("Worker_TP0:x", "7", "x"));
        assert_eq!(strip_prefix("(-x pid=5) x"), "(-x pid=5) x");
    }

    /// vLLM 0.32's multiproc worker prints its first lines under its spawn name.
    #[test]
    fn worker_spawn_name() {
        let t = vllm_tag("(VllmWorker-0 pid=16278) WARNING 11-30 10:50:42 [vllm.py:725] Model Runner V2 requires Triton; using the V1 model runner instead.").unwrap();
        assert_eq!((t.name, t.pid), ("VllmWorker-0", "16278"));
        assert_eq!(
            t.rest,
            "Model Runner V2 requires Triton; using the V1 model runner instead."
        );
    }

    #[test]
    fn word_helpers() {
        assert!(word_before("aé", 3));
        assert!(!word_before("a ", 2));
        assert!(!word_before("", 0));
        assert!(word_at("x_", 1));
    }
}
