//! A reader for Python literals: the `repr` of the argument dicts that
//! vLLM and SGLang print at start-up.
//!
//! Accepted: dicts, lists, tuples, sets, strings in single or double quotes with backslash
//! escapes (adjacent strings concatenate), integers, floats, `True`, `False`, `None`, and a
//! sign before a number. Anything else (a call, an enum repr, a bare name) is refused, and
//! so is nesting deeper than [`MAX_DEPTH`]. dict → object (keys as their JSON text), list,
//! tuple and set → array, and integers, floats and booleans stay distinct.

use std::collections::{HashMap, HashSet};

use crate::json::Json;

/// Deeper nesting is refused rather than risking the stack on hostile input.
const MAX_DEPTH: usize = 100;

/// Reads `text` as exactly one Python literal (whitespace around it allowed).
pub(crate) fn parse(text: &str) -> Option<Json> {
    let mut r = Reader {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
    };
    let v = r.value()?;
    r.ws();
    (r.pos == r.bytes.len()).then_some(v)
}

struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    /// The next byte to read.
    pos: usize,
    depth: usize,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\x0c')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Json> {
        self.ws();
        match self.peek()? {
            b'{' => self.nested(Self::brace),
            b'[' => self.nested(Self::list),
            b'(' => self.nested(Self::paren),
            b'\'' | b'"' => self.strings(),
            b'-' | b'+' => {
                let neg = self.peek() == Some(b'-');
                self.pos += 1;
                self.ws();
                self.number(neg)
            }
            b'0'..=b'9' | b'.' => self.number(false),
            b if is_ident_byte(b) => self.name(),
            _ => None,
        }
    }

    fn nested(&mut self, f: fn(&mut Self) -> Option<Json>) -> Option<Json> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        self.pos += 1; // the opening bracket
        let v = f(self);
        self.depth -= 1;
        v
    }

    /// Items separated by commas up to `close`, a trailing comma allowed. Returns the
    /// items and whether a comma was seen.
    fn items(&mut self, close: u8) -> Option<(Vec<Json>, bool)> {
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            if self.eat(close) {
                return Some((items, comma));
            }
            if !items.is_empty() && !comma {
                return None;
            }
            items.push(self.value()?);
            comma = self.eat(b',');
            if !comma {
                self.ws();
                if self.peek() != Some(close) {
                    return None;
                }
            }
        }
    }

    fn list(&mut self) -> Option<Json> {
        Some(Json::Arr(self.items(b']')?.0))
    }

    fn paren(&mut self) -> Option<Json> {
        let (mut items, comma) = self.items(b')')?;
        if items.len() == 1 && !comma {
            items.pop() // a parenthesised value, not a tuple
        } else {
            Some(Json::Arr(items))
        }
    }

    /// A value that can be a dict key or a set item: not a list, dict or set.
    fn hashable(&mut self) -> Option<Json> {
        self.ws();
        if matches!(self.peek(), Some(b'[' | b'{')) {
            return None;
        }
        self.value()
    }

    /// A dict, or a set when the first item is not followed by `:`.
    fn brace(&mut self) -> Option<Json> {
        if self.eat(b'}') {
            return Some(Json::Obj(Vec::new()));
        }
        let first = self.hashable()?;
        if self.eat(b':') {
            let mut pairs: Vec<(String, Json)> = Vec::new();
            let mut index: HashMap<String, usize> = HashMap::new();
            let mut key = first;
            loop {
                let v = self.value()?;
                let k = key_text(&key)?;
                // A repeated key keeps its first place and takes the last value.
                match index.get(&k) {
                    Some(&at) => pairs[at].1 = v,
                    None => {
                        index.insert(k.clone(), pairs.len());
                        pairs.push((k, v));
                    }
                }
                if !self.eat(b',') {
                    return self.eat(b'}').then_some(Json::Obj(pairs));
                }
                if self.eat(b'}') {
                    return Some(Json::Obj(pairs));
                }
                key = self.hashable()?;
                if !self.eat(b':') {
                    return None;
                }
            }
        }
        let mut seen = HashSet::new();
        let mut set = Vec::new();
        let mut item = first;
        loop {
            if seen.insert(item.to_compact()) {
                set.push(item);
            }
            if !self.eat(b',') {
                return self.eat(b'}').then_some(Json::Arr(set));
            }
            if self.eat(b'}') {
                return Some(Json::Arr(set));
            }
            item = self.hashable()?;
        }
    }

    fn name(&mut self) -> Option<Json> {
        let start = self.pos;
        while self.peek().is_some_and(is_ident_byte) {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        match word {
            "True" => Some(Json::Bool(true)),
            "False" => Some(Json::Bool(false)),
            "None" => Some(Json::Null),
            // String prefixes that keep a str: u'..', r'..'.
            "u" | "U" | "r" | "R" if matches!(self.peek(), Some(b'\'' | b'"')) => {
                self.pos = start;
                self.strings()
            }
            _ => None,
        }
    }

    /// One or more adjacent string literals, concatenated.
    fn strings(&mut self) -> Option<Json> {
        let mut out = String::new();
        loop {
            self.ws();
            let raw = match self.peek() {
                Some(b'r' | b'R') => {
                    self.pos += 1;
                    true
                }
                Some(b'u' | b'U') => {
                    self.pos += 1;
                    false
                }
                Some(b'\'' | b'"') => false,
                _ => break,
            };
            if !matches!(self.peek(), Some(b'\'' | b'"')) {
                return None;
            }
            self.string(raw, &mut out)?;
        }
        Some(Json::Str(out))
    }

    fn string(&mut self, raw: bool, out: &mut String) -> Option<()> {
        let quote = self.peek()?;
        self.pos += 1;
        loop {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if b == quote || b == b'\\' {
                    break;
                }
                self.pos += 1;
            }
            // Stopped at an ASCII byte or the end, so this is a char boundary.
            out.push_str(&self.text[start..self.pos]);
            match self.peek()? {
                b'\\' => {
                    self.pos += 1;
                    if raw {
                        out.push('\\');
                        let c = self.text[self.pos..].chars().next()?;
                        out.push(c);
                        self.pos += c.len_utf8();
                    } else {
                        self.escape(out)?;
                    }
                }
                _ => {
                    self.pos += 1; // closing quote
                    return Some(());
                }
            }
        }
    }

    fn hex(&mut self, n: usize) -> Option<u32> {
        let t = self.text.get(self.pos..self.pos + n)?;
        if !t.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.pos += n;
        u32::from_str_radix(t, 16).ok()
    }

    fn escape(&mut self, out: &mut String) -> Option<()> {
        let c = self.text[self.pos..].chars().next()?;
        self.pos += c.len_utf8();
        let simple = match c {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            return Some(());
        }
        let code = match c {
            'x' => self.hex(2)?,
            'u' => self.hex(4)?,
            'U' => self.hex(8)?,
            '0'..='7' => {
                let mut v = c as u32 - '0' as u32;
                for _ in 0..2 {
                    match self.peek() {
                        Some(b @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(b - b'0');
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                v
            }
            'N' => return None, // named characters are not supported
            other => {
                // Python keeps an unknown escape as written.
                out.push('\\');
                out.push(other);
                return Some(());
            }
        };
        if code > 0x10FFFF {
            return None;
        }
        out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
        Some(())
    }

    /// A number, negated when `neg` (the sign is part of the text converted, so that
    /// `-9223372036854775808` stays an integer).
    fn number(&mut self, neg: bool) -> Option<Json> {
        let start = self.pos;
        // 0x / 0o / 0b integers.
        if self.peek() == Some(b'0') {
            let radix = match self.bytes.get(self.pos + 1) {
                Some(b'x' | b'X') => 16,
                Some(b'o' | b'O') => 8,
                Some(b'b' | b'B') => 2,
                _ => 0,
            };
            if radix != 0 {
                self.pos += 2;
                let d0 = self.pos;
                while self
                    .peek()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    self.pos += 1;
                }
                let digits: String = (if neg { "-" } else { "" })
                    .chars()
                    .chain(self.text[d0..self.pos].chars().filter(|&c| c != '_'))
                    .collect();
                return i64::from_str_radix(&digits, radix).ok().map(Json::Int);
            }
        }
        let mut text = String::from(if neg { "-" } else { "" });
        let mut is_float = false;
        let digits = |r: &mut Self, text: &mut String| {
            let mut n = 0;
            while let Some(b) = r.peek() {
                if b.is_ascii_digit() {
                    text.push(b as char);
                    n += 1;
                } else if b == b'_'
                    && n > 0
                    && r.bytes.get(r.pos + 1).is_some_and(u8::is_ascii_digit)
                {
                    // 1_000
                } else {
                    break;
                }
                r.pos += 1;
            }
            n
        };
        let int_digits = digits(self, &mut text);
        let mut frac_digits = 0;
        if self.peek() == Some(b'.') {
            is_float = true;
            self.pos += 1;
            text.push('.');
            frac_digits = digits(self, &mut text);
        }
        if int_digits == 0 && frac_digits == 0 {
            return None;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            is_float = true;
            self.pos += 1;
            text.push('e');
            if let Some(b @ (b'+' | b'-')) = self.peek() {
                text.push(b as char);
                self.pos += 1;
            }
            if digits(self, &mut text) == 0 {
                return None;
            }
        }
        // `1j`, `1abc`: not a plain number.
        if self.peek().is_some_and(is_ident_byte) {
            return None;
        }
        if !is_float {
            let t = &self.text[start..self.pos];
            // Python refuses leading zeros in a non-zero integer (`007`).
            if t.len() > 1 && t.starts_with('0') && t.bytes().any(|b| b != b'0' && b != b'_') {
                return None;
            }
            return Some(match text.parse::<i64>() {
                Ok(n) => Json::Int(n),
                // Larger than i64: keep the magnitude.
                Err(_) => Json::Float(text.parse::<f64>().ok()?),
            });
        }
        text.parse::<f64>().ok().map(Json::Float)
    }
}

/// A dict key as an object key: strings as they are, other keys as JSON text (as Python's
/// `json.dumps` writes `1`, `true`, `null`).
fn key_text(k: &Json) -> Option<String> {
    match k {
        Json::Str(s) => Some(s.clone()),
        Json::Arr(a) if a.iter().any(|v| matches!(v, Json::Arr(_) | Json::Obj(_))) => None,
        Json::Obj(_) => None,
        other => Some(other.to_compact()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::obj;

    fn p(s: &str) -> Option<Json> {
        parse(s)
    }

    #[test]
    fn vllm_arguments() {
        let v = p(
            "{'model_tag': '/m', 'enforce_eager': True, 'served_model_name': ['qwen38'], \
                   'gpu_memory_utilization': 0.93, 'max_num_seqs': 32, 'x': None, \
                   'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}}",
        )
        .unwrap();
        assert_eq!(v.get("model_tag"), Some(&Json::Str("/m".into())));
        assert_eq!(v.get("enforce_eager"), Some(&Json::Bool(true)));
        assert_eq!(
            v.get("served_model_name"),
            Some(&Json::Arr(vec!["qwen38".into()]))
        );
        assert_eq!(v.get("gpu_memory_utilization"), Some(&Json::Float(0.93)));
        assert_eq!(v.get("max_num_seqs"), Some(&Json::Int(32)));
        assert_eq!(v.get("x"), Some(&Json::Null));
        assert_eq!(
            v.get("speculative_config")
                .unwrap()
                .get("num_speculative_tokens"),
            Some(&Json::Int(3))
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(p("-1"), Some(Json::Int(-1)));
        assert_eq!(p("-9223372036854775808"), Some(Json::Int(i64::MIN)));
        assert_eq!(p("-0x10"), Some(Json::Int(-16)));
        assert_eq!(p("-1.5e3"), Some(Json::Float(-1500.0)));
        assert_eq!(p("+ 2"), Some(Json::Int(2)));
        assert_eq!(p("1e-05"), Some(Json::Float(1e-5)));
        assert_eq!(p("2.0"), Some(Json::Float(2.0)));
        assert_eq!(p(".5"), Some(Json::Float(0.5)));
        assert_eq!(p("5."), Some(Json::Float(5.0)));
        assert_eq!(p("1_000"), Some(Json::Int(1000)));
        assert_eq!(p("0x10"), Some(Json::Int(16)));
        assert_eq!(p("0"), Some(Json::Int(0)));
        assert_eq!(p("99999999999999999999"), Some(Json::Float(1e20)));
        assert_eq!(p("007"), None);
        assert_eq!(p("1j"), None);
        assert_eq!(p("."), None);
        assert_eq!(p("1e"), None);
        assert_eq!(p("inf"), None);
    }

    #[test]
    fn strings() {
        assert_eq!(p(r#"'it\'s'"#), Some(Json::Str("it's".into())));
        assert_eq!(p(r#""a'b""#), Some(Json::Str("a'b".into())));
        assert_eq!(p(r#"'a' "b" 'c'"#), Some(Json::Str("abc".into())));
        assert_eq!(
            p(r"'\n\t\\\x41\u00e9\101'"),
            Some(Json::Str("\n\t\\AéA".into()))
        );
        assert_eq!(p(r"'\d'"), Some(Json::Str("\\d".into())));
        assert_eq!(p(r"r'\d'"), Some(Json::Str("\\d".into())));
        assert_eq!(p("'héllo'"), Some(Json::Str("héllo".into())));
        assert_eq!(p("'open"), None);
        assert_eq!(p(r"'\x4'"), None);
        assert_eq!(p("b'x'"), None);
    }

    #[test]
    fn containers() {
        assert_eq!(p("()"), Some(Json::Arr(vec![])));
        assert_eq!(p("(1,)"), Some(Json::Arr(vec![Json::Int(1)])));
        assert_eq!(p("(1)"), Some(Json::Int(1)));
        assert_eq!(
            p("(1, 2)"),
            Some(Json::Arr(vec![Json::Int(1), Json::Int(2)]))
        );
        assert_eq!(p("[1, [2, ()], ]"), p("[1, [2, []]]"));
        assert_eq!(
            p("{1, 2, 1}"),
            Some(Json::Arr(vec![Json::Int(1), Json::Int(2)]))
        );
        assert_eq!(p("{}"), Some(obj::<&str>([])));
        assert_eq!(
            p("{1: 'a', True: None, 'k': 1, 'k': 2}"),
            Some(obj([
                ("1", "a".into()),
                ("true", Json::Null),
                ("k", Json::Int(2))
            ]))
        );
        assert_eq!(p("{[1]: 2}"), None);
        assert_eq!(p("{[1], 2}"), None);
        assert_eq!(p("[1 2]"), None);
        assert_eq!(p("[,]"), None);
        assert_eq!(p("{'a': 1,, 'b': 2}"), None);
        assert_eq!(p("{'a' 1}"), None);
    }

    #[test]
    fn refusals() {
        assert_eq!(p("{'p': PosixPath('/x')}"), None);
        assert_eq!(p("{'e': <Enum.A: 1>}"), None);
        assert_eq!(p("{'a': name}"), None);
        assert_eq!(p("{'a': 1"), None);
        assert_eq!(p("{'a': 1}}"), None);
        assert_eq!(p("{'a': 1} x"), None);
        assert_eq!(p(""), None);
        assert_eq!(p("Truex"), None);
    }

    use proptest::prelude::*;

    /// A Python `repr` of `v` (arrays as lists or tuples).
    fn repr(v: &Json, tuple: bool) -> String {
        match v {
            Json::Null => "None".into(),
            Json::Bool(b) => if *b { "True" } else { "False" }.into(),
            Json::Int(i) => i.to_string(),
            Json::Float(f) => format!("{f:?}"),
            Json::Str(s) => {
                let mut out = String::from("'");
                for c in s.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '\'' => out.push_str("\\'"),
                        '\n' => out.push_str("\\n"),
                        c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
                        c => out.push(c),
                    }
                }
                out.push('\'');
                out
            }
            Json::Arr(a) => {
                let items: Vec<String> = a.iter().map(|x| repr(x, !tuple)).collect();
                if tuple {
                    let comma = if a.len() == 1 { "," } else { "" };
                    format!("({}{comma})", items.join(", "))
                } else {
                    format!("[{}]", items.join(", "))
                }
            }
            Json::Obj(o) => format!(
                "{{{}}}",
                o.iter()
                    .map(|(k, v)| format!(
                        "{}: {}",
                        repr(&Json::Str(k.clone()), false),
                        repr(v, tuple)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    fn value() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::Int),
            (-1e300f64..1e300).prop_map(Json::Float),
            "\\PC{0,8}".prop_map(Json::Str),
            "[\\x00-\\x7f]{0,4}".prop_map(Json::Str),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Arr),
                prop::collection::btree_map("[a-z_]{1,6}", inner, 0..5)
                    .prop_map(|m| Json::Obj(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn reads_back_what_python_would_print(v in value(), tuple in any::<bool>()) {
            let text = repr(&v, tuple);
            prop_assert_eq!(parse(&text), Some(v), "{}", text);
        }

        #[test]
        fn never_panics(text in "\\PC{0,64}", bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse(&text);
            let _ = parse(&String::from_utf8_lossy(&bytes));
            let _ = parse(&format!("{{'a': {text}}}"));
        }
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(p(&deep), None);
        let ok = "[".repeat(50) + &"]".repeat(50);
        assert!(p(&ok).is_some());
        let dicts = "{'a': ".repeat(10_000);
        assert_eq!(p(&dicts), None);
    }
}
