//! Plain string matching in the shape of the spec's value rules: literal text, runs of
//! digits, decimals and word characters. A rule that starts with literal text is tried at
//! each occurrence of it, left to right, and the first that matches wins, which is how a
//! regular-expression search would behave; converting the captured text comes after, so a
//! capture that does not convert makes the line unparsed rather than trying further on.

use super::lines::is_word;

/// A position in a line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cur<'a> {
    pub s: &'a str,
    pub i: usize,
}

impl<'a> Cur<'a> {
    #[cfg(test)]
    pub(crate) fn new(s: &'a str) -> Self {
        Cur { s, i: 0 }
    }

    pub(crate) fn rest(&self) -> &'a str {
        &self.s[self.i..]
    }

    /// Consumes `t` when the text continues with it.
    pub(crate) fn lit(&mut self, t: &str) -> bool {
        if self.rest().starts_with(t) {
            self.i += t.len();
            true
        } else {
            false
        }
    }

    /// Consumes the longest run of characters satisfying `f`.
    pub(crate) fn run(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let r = self.rest();
        let n = r
            .char_indices()
            .find(|&(_, c)| !f(c))
            .map_or(r.len(), |(k, _)| k);
        self.i += n;
        &r[..n]
    }

    /// A non-empty run of characters satisfying `f`.
    pub(crate) fn run1(&mut self, f: impl Fn(char) -> bool) -> Option<&'a str> {
        let t = self.run(f);
        (!t.is_empty()).then_some(t)
    }

    /// A non-empty run of ASCII digits (a "count").
    pub(crate) fn count(&mut self) -> Option<&'a str> {
        self.run1(|c| c.is_ascii_digit())
    }

    /// A non-empty run of digits and dots (a "decimal").
    pub(crate) fn decimal(&mut self) -> Option<&'a str> {
        self.run1(|c| c.is_ascii_digit() || c == '.')
    }

    /// A non-empty run of digits and thousands commas.
    pub(crate) fn grouped(&mut self) -> Option<&'a str> {
        self.run1(|c| c.is_ascii_digit() || c == ',')
    }

    /// A non-empty run of word characters.
    pub(crate) fn word(&mut self) -> Option<&'a str> {
        self.run1(is_word)
    }

    /// Zero or more whitespace characters.
    pub(crate) fn ws(&mut self) {
        self.run(char::is_whitespace);
    }

    /// Only whitespace is left.
    pub(crate) fn at_end(&self) -> bool {
        self.rest().trim_end().is_empty()
    }
}

/// Tries `f` just after each occurrence of `lead` in `line`, left to right; the first
/// `Some` wins.
pub(crate) fn after_each<'a, T>(
    line: &'a str,
    lead: &str,
    mut f: impl FnMut(Cur<'a>) -> Option<T>,
) -> Option<T> {
    line.match_indices(lead).find_map(|(i, m)| {
        f(Cur {
            s: line,
            i: i + m.len(),
        })
    })
}

/// What one attempt of [`each_until`] found.
pub(crate) enum Step<T> {
    /// No match here; try the next occurrence.
    Next,
    /// No match here, nor at any later occurrence (whatever the rule searches for ahead
    /// is absent from the rest of the line).
    Stop,
    Hit(T),
}

/// [`after_each`] for rules that search ahead of the lead: stopping as soon as the
/// ahead-search fails keeps them linear in the line's length.
pub(crate) fn each_until<'a, T>(
    line: &'a str,
    lead: &str,
    mut f: impl FnMut(Cur<'a>) -> Step<T>,
) -> Option<T> {
    for (i, m) in line.match_indices(lead) {
        match f(Cur {
            s: line,
            i: i + m.len(),
        }) {
            Step::Next => {}
            Step::Stop => return None,
            Step::Hit(t) => return Some(t),
        }
    }
    None
}

/// The first position at or after `from` where `find` finds something, remembered so that
/// calls with increasing `from` cost linear time in all.
pub(crate) struct Ahead {
    /// (searched from, found at).
    last: Option<(usize, Option<usize>)>,
}

impl Ahead {
    pub(crate) fn new() -> Self {
        Ahead { last: None }
    }

    pub(crate) fn at(
        &mut self,
        s: &str,
        from: usize,
        find: impl Fn(&str) -> Option<usize>,
    ) -> Option<usize> {
        if let Some((searched, found)) = self.last {
            if searched <= from && found.is_none_or(|f| f >= from) {
                return found;
            }
        }
        let found = find(&s[from..]).map(|k| from + k);
        self.last = Some((from, found));
        found
    }
}

/// The run of word characters that ends at byte `end` of `s` (possibly empty).
pub(crate) fn word_ending_at(s: &str, end: usize) -> &str {
    let head = &s[..end];
    let start = head
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_word(c))
        .last()
        .map_or(end, |(k, _)| k);
    &head[start..]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_runs() {
        let mut c = Cur::new("31,554 tokens");
        assert_eq!(c.grouped(), Some("31,554"));
        assert!(c.lit(" tokens"));
        assert!(c.at_end());
        let mut c = Cur::new("x");
        assert_eq!(c.count(), None);
        assert_eq!(c.i, 0);
    }

    #[test]
    fn conversions() {
        assert_eq!(to_f64("1.93"), Some(1.93));
        assert_eq!(to_f64("1.2.3"), None);
        assert_eq!(grouped_to_i64("31,554"), Some(31554));
        assert_eq!(grouped_to_i64(","), None);
        assert_eq!(to_i64("99999999999999999999"), None);
    }

    #[test]
    fn first_occurrence_that_fits() {
        let line = "to x tokens, to 12 tokens";
        let got = after_each(line, "to ", |mut c| {
            let n = c.count()?;
            c.lit(" tokens").then_some(n)
        });
        assert_eq!(got, Some("12"));
    }

    #[test]
    fn words_before() {
        assert_eq!(
            word_ending_at("CUDAGraphMode.FULL_AND_PIECEWISE is", 32),
            "FULL_AND_PIECEWISE"
        );
        assert_eq!(word_ending_at(" x", 0), "");
        assert_eq!(word_ending_at("é1 ", 3), "é1");
    }
}
