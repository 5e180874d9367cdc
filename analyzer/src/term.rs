//! Text made safe for a terminal: a boot log or a file name can carry escape sequences
//! (a terminal title, a hyperlink, BEL, backspaces that hide text). Every message the two
//! commands print goes through [`escape`]; the colour codes they add themselves are added
//! after it.

use std::borrow::Cow;

/// Control characters other than line feed and tab shown as visible text (`\x1b`,
/// `\x07`, `\u{9b}`), and so are the bidirectional overrides that reorder what is shown.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if needs_escape(c) {
            let n = c as u32;
            if n < 0x80 {
                out.push_str(&format!("\\x{n:02x}"));
            } else {
                out.push_str(&format!("\\u{{{n:x}}}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible() {
        assert_eq!(escape("plain\ttext\n"), "plain\ttext\n");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape("a\x1b]0;pwned\x07b\x08c\r"),
            "a\\x1b]0;pwned\\x07b\\x08c\\x0d"
        );
        assert_eq!(escape("\u{9b}31m \u{202e}x"), "\\u{9b}31m \\u{202e}x");
        assert_eq!(escape("\x7f"), "\\x7f");
    }
}
