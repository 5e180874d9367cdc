//! The value rules' patterns: regular expressions compiled once, and the
//! conversions of what they capture.
//!
//! A rule is searched for anywhere in the line and the leftmost match wins, as the
//! reference reads them. A run in a pattern is never followed by a character of its own
//! class, so a match always takes the whole run. Converting the
//! captures comes after a match: a capture that does not convert (`1.2.3`) makes the line
//! unparsed rather than trying further on.
//!
//! The character classes are the ones the rest of `bootlog` uses: a word character is
//! [`super::lines::is_word`] (Rust's alphanumeric, or `_`), whitespace is Unicode's
//! `White_Space` (`char::is_whitespace`), digits are ASCII.
//!
//! The `regex` crate rather than `regex-lite`: regex-lite has no Unicode classes (its `\w`
//! and `\s` are ASCII only), and it is slow where speed counts: the served-request rule
//! runs twice on each of the 111,125 request lines of the 200 MB benchmark log (facts and
//! classifier), and those 222,250 searches took 1.8–3.7 s with regex-lite against
//! 0.11–0.18 s with `regex` (same loaded machine, a stand-alone timing).

use regex::Regex;

use super::pylit;
use super::value::FieldValue;
use crate::json::Json;

/// A word character, as [`super::lines::is_word`] sees it.
macro_rules! word {
    () => {
        r"[\p{Alphabetic}\p{N}_]"
    };
}
pub(crate) use word;

/// A character that is not a word character.
macro_rules! not_word {
    () => {
        r"[^\p{Alphabetic}\p{N}_]"
    };
}
pub(crate) use not_word;

/// A decimal: a run of digits and dots.
macro_rules! decimal {
    () => {
        r"([0-9.]+)"
    };
}
pub(crate) use decimal;

/// A count: a run of digits.
macro_rules! count {
    () => {
        r"([0-9]+)"
    };
}
pub(crate) use count;

/// A static regular expression built on first use: `rule!(NAME = "pattern" ...)`, the
/// pattern pieces joined with `concat!`.
macro_rules! rule {
    ($(#[$doc:meta])* $name:ident = $($piece:expr),+ $(,)?) => {
        $(#[$doc])*
        static $name: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| $crate::bootlog::pat::compile(concat!($($piece),+)));
    };
}
pub(crate) use rule;

/// Compiles one of the rules' fixed patterns (each is compiled by a unit test, so a typo
/// fails the tests rather than a user's run).
pub(crate) fn compile(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(re) => re,
        Err(e) => panic!("bad boot-log pattern {pattern:?}: {e}"),
    }
}

/// The capture groups of the leftmost match of `re`, all of which take part in it.
pub(crate) fn groups<'a, const N: usize>(re: &Regex, line: &'a str) -> Option<[&'a str; N]> {
    Some(re.captures(line)?.extract().1)
}

/// A decimal as Python's `float()` reads a run of digits and dots (`1.2.3` fails).
pub(crate) fn to_f64(t: &str) -> Option<f64> {
    t.parse::<f64>().ok()
}

/// A count as an integer (too large for i64: fails).
pub(crate) fn to_i64(t: &str) -> Option<i64> {
    t.parse::<i64>().ok()
}

/// A count written with thousands commas (a comma alone fails).
pub(crate) fn grouped_to_i64(t: &str) -> Option<i64> {
    let digits: String = t.chars().filter(|&c| c != ',').collect();
    to_i64(&digits)
}

/// The one decimal `re` captures, as a float value.
pub(crate) fn decimal_value(re: &Regex, line: &str) -> Option<FieldValue> {
    let [x] = groups(re, line)?;
    to_f64(x).map(FieldValue::Float)
}

/// The dict literal `re` captures (a `{`…`}` reaching the end of the line), read with the
/// Python literal reader.
pub(crate) fn dict_value(re: &Regex, line: &str) -> Option<FieldValue> {
    let [text] = groups(re, line)?;
    match pylit::parse(text)? {
        d @ Json::Obj(_) => Some(FieldValue::Dict(d)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    rule!(KV = "size: ", r"([0-9,]+)", " tokens");

    #[test]
    fn conversions() {
        assert_eq!(to_f64("1.93"), Some(1.93));
        assert_eq!(to_f64("1.2.3"), None);
        assert_eq!(grouped_to_i64("31,554"), Some(31554));
        assert_eq!(grouped_to_i64(","), None);
        assert_eq!(to_i64("99999999999999999999"), None);
    }

    #[test]
    fn leftmost_match_that_fits() {
        assert_eq!(
            groups(&KV, "size: x tokens, size: 1,2 tokens"),
            Some(["1,2"])
        );
        assert_eq!(groups::<1>(&KV, "size: tokens"), None);
    }

    #[test]
    fn word_class_is_is_word() {
        let re = compile(concat!("^", word!(), "$"));
        for c in [
            'a', 'é', '1', '²', '_', 'Ⅻ', '٣', ' ', '-', '.', '\u{301}', '‿',
        ] {
            let mut buf = [0; 4];
            assert_eq!(
                re.is_match(c.encode_utf8(&mut buf)),
                super::super::lines::is_word(c),
                "{c:?}"
            );
        }
    }
}
