//! Prometheus text exposition (format 0.0.4) as inference servers emit it
//! (docs/run-folder.md#prometheus).
//! Every sample is kept with all its labels; lookups select by exact name plus required
//! labels.

use crate::text::split_lines;

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    /// Sorted by label name, so label order in the file does not matter.
    pub labels: Vec<(String, String)>,
    pub value: f64,
    /// The 1-based line of the text it was read from (for messages about its value).
    pub line: usize,
}

impl Sample {
    /// Has every one of `required` among its labels.
    pub fn matches(&self, required: &[(&str, &str)]) -> bool {
        required
            .iter()
            .all(|(k, v)| self.labels.iter().any(|(lk, lv)| lk == k && lv == v))
    }

    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A parsed exposition: the samples in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    pub samples: Vec<Sample>,
}

/// Why a Prometheus text did not parse, with the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct PromError {
    pub line: usize,
    pub reason: String,
}

/// More than one series matched where exactly one was required.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{count} series named {name} where one was expected")]
pub struct Ambiguous {
    pub name: String,
    pub count: usize,
}

impl Exposition {
    /// Parses the whole text; any malformed sample line makes it invalid.
    pub fn parse(text: &str) -> Result<Exposition, PromError> {
        let mut samples = Vec::new();
        for (i, raw) in split_lines(text).enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let sample = parse_sample(line, i + 1).map_err(|reason| PromError {
                line: i + 1,
                reason: reason.to_string(),
            })?;
            samples.push(sample);
        }
        Ok(Exposition { samples })
    }

    pub fn has(&self, name: &str) -> bool {
        self.samples.iter().any(|s| s.name == name)
    }

    /// The distinct sample names, in first-seen order.
    pub fn names(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.samples
            .iter()
            .filter(|s| seen.insert(s.name.as_str()))
            .map(|s| s.name.as_str())
            .collect()
    }

    /// The sum of every matching sample; `None` when none matches.
    pub fn total(&self, name: &str, required: &[(&str, &str)]) -> Option<f64> {
        let mut sum = Kahan::default();
        let mut any = false;
        for s in self.select(name, required) {
            sum.add(s.value);
            any = true;
        }
        any.then(|| sum.value())
    }

    /// The value when exactly one sample matches; `None` when none; an error when more.
    pub fn single(&self, name: &str, required: &[(&str, &str)]) -> Result<Option<f64>, Ambiguous> {
        let mut it = self.select(name, required);
        let first = it.next();
        let more = it.count();
        match (first, more) {
            (None, _) => Ok(None),
            (Some(s), 0) => Ok(Some(s.value)),
            (Some(_), n) => Err(Ambiguous {
                name: name.to_string(),
                count: n + 1,
            }),
        }
    }

    /// The labels of the first matching sample (for `*_info` series).
    pub fn info(&self, name: &str, required: &[(&str, &str)]) -> Option<&[(String, String)]> {
        self.samples
            .iter()
            .find(|s| s.name == name && s.matches(required))
            .map(|s| s.labels.as_slice())
    }

    pub fn select<'a>(
        &'a self,
        name: &'a str,
        required: &'a [(&'a str, &'a str)],
    ) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples
            .iter()
            .filter(move |s| s.name == name && s.matches(required))
    }
}

/// Compensated (Neumaier) summation: counter values are integers in practice, but a sum
/// of many large floats should not drift.
#[derive(Default)]
struct Kahan {
    sum: f64,
    c: f64,
}

impl Kahan {
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.c += (self.sum - t) + x;
        } else {
            self.c += (x - t) + self.sum;
        }
        self.sum = t;
    }
    fn value(&self) -> f64 {
        let v = self.sum + self.c;
        if v.is_nan() && !self.sum.is_nan() {
            self.sum // inf + -inf compensation noise; keep the plain sum
        } else {
            v
        }
    }
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b':'
}
fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b':'
}

fn parse_sample(line: &str, number: usize) -> Result<Sample, &'static str> {
    let b = line.as_bytes();
    if !b.first().copied().is_some_and(is_name_start) {
        return Err("a sample line must start with a metric name");
    }
    let mut i = 1;
    while i < b.len() && is_name_char(b[i]) {
        i += 1;
    }
    let name = line[..i].to_string();
    let mut labels = Vec::new();
    let mut rest = &line[i..];
    if rest.starts_with('{') {
        let close = rest.rfind('}').ok_or("unclosed label set")?;
        labels = parse_labels(&rest[1..close])?;
        labels.sort_by(|a, b| a.0.cmp(&b.0));
        rest = &rest[close + 1..];
    }
    if !rest.starts_with([' ', '\t']) {
        return Err("expected whitespace before the value");
    }
    let mut parts = rest.split_ascii_whitespace();
    let value_text = parts.next().ok_or("missing value")?;
    let value = parse_value(value_text).ok_or("the value is not a number")?;
    if let Some(ts) = parts.next() {
        let digits = ts.strip_prefix('-').unwrap_or(ts);
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return Err("the timestamp is not an integer");
        }
    }
    if parts.next().is_some() {
        return Err("unexpected text after the value");
    }
    Ok(Sample {
        name,
        labels,
        value,
        line: number,
    })
}

/// A Prometheus value: a decimal float, or nan/inf/infinity with optional sign.
pub fn parse_value(t: &str) -> Option<f64> {
    let (sign, body) = match t.as_bytes().first() {
        Some(b'+') => (1.0, &t[1..]),
        Some(b'-') => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    let lower = body.to_ascii_lowercase();
    match lower.as_str() {
        "nan" => return Some(f64::NAN),
        "inf" | "infinity" => return Some(sign * f64::INFINITY),
        _ => {}
    }
    // Rust accepts "inf"/"nan" spellings too, handled above; require a digit so words
    // such as "e" or "." are refused.
    if !body.bytes().any(|c| c.is_ascii_digit())
        || !body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    body.parse::<f64>().ok().map(|v| sign * v)
}

fn parse_labels(inner: &str) -> Result<Vec<(String, String)>, &'static str> {
    let b = inner.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let skip_ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        if i >= b.len() {
            break;
        }
        // label name
        if !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
            return Err("malformed label set");
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let key = &inner[start..i];
        skip_ws(&mut i);
        if b.get(i) != Some(&b'=') {
            return Err("malformed label set");
        }
        i += 1;
        skip_ws(&mut i);
        if b.get(i) != Some(&b'"') {
            return Err("malformed label set");
        }
        i += 1;
        let mut value = String::new();
        let mut seg = i;
        loop {
            match b.get(i) {
                None => return Err("unterminated label value"),
                Some(b'"') => {
                    value.push_str(&inner[seg..i]);
                    i += 1;
                    break;
                }
                Some(b'\\') => {
                    value.push_str(&inner[seg..i]);
                    match b.get(i + 1) {
                        Some(b'\\') => value.push('\\'),
                        Some(b'"') => value.push('"'),
                        Some(b'n') => value.push('\n'),
                        Some(_) => {
                            // Any other sequence is kept as its two characters.
                            let ch_end = next_char_end(inner, i + 1);
                            value.push_str(&inner[i..ch_end]);
                            i = ch_end;
                            seg = i;
                            continue;
                        }
                        None => return Err("unterminated label value"),
                    }
                    i += 2;
                    seg = i;
                }
                Some(_) => i += 1,
            }
        }
        out.push((key.to_string(), value));
        skip_ws(&mut i);
        match b.get(i) {
            None => break,
            Some(b',') => i += 1,
            Some(_) => return Err("malformed label set"),
        }
    }
    Ok(out)
}

/// The byte index just past the character starting at `i`.
fn next_char_end(s: &str, i: usize) -> usize {
    s[i..].chars().next().map_or(i, |c| i + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_real_lines() {
        let t = "# HELP x\n# TYPE x counter\n\
            vllm:num_preemptions_total{engine=\"0\",model_name=\"qwen38\"} 22.0\n\
            vllm:num_preemptions_created{model_name=\"qwen38\",engine=\"0\"} 1.7908243272216985e+09\n\
            sglang:fwd_occupancy{tp_rank=\"0\"} NaN\n\
            h_bucket{le=\"+Inf\"} 3 1700000000000\n\
            empty{} 1\n";
        let e = Exposition::parse(t).unwrap();
        assert_eq!(e.samples.len(), 5);
        assert_eq!(e.total("vllm:num_preemptions_total", &[]), Some(22.0));
        assert_eq!(e.samples[1].labels[0].0, "engine");
        assert!(e.samples[2].value.is_nan());
        assert_eq!(e.samples[3].label("le"), Some("+Inf"));
        assert_eq!(e.total("missing", &[]), None);
    }

    #[test]
    fn label_escapes_and_commas() {
        let e = Exposition::parse(r#"m{a="x,\"y\"}\n\\",b = "=}" ,} 1"#).unwrap();
        assert_eq!(e.samples[0].label("a"), Some("x,\"y\"}\n\\"));
        assert_eq!(e.samples[0].label("b"), Some("=}"));
        let e = Exposition::parse(r#"m{a="\q"} 1"#).unwrap();
        assert_eq!(e.samples[0].label("a"), Some("\\q"));
    }

    #[test]
    fn bad_lines_name_their_line() {
        for bad in [
            "x 1\n1bad 2",
            "x 1\ny{a=1} 2",
            "x 1\ny notanumber",
            "x 1\ny 1 2 3",
            "x 1\ny{a=\"b\"}2",
        ] {
            let e = Exposition::parse(bad).unwrap_err();
            assert_eq!(e.line, 2, "{bad}");
        }
    }

    #[test]
    fn single_refuses_two() {
        let e = Exposition::parse("u{e=\"0\"} 0.5\nu{e=\"1\"} 0.25\n").unwrap();
        assert!(e.single("u", &[]).is_err());
        assert_eq!(e.single("u", &[("e", "1")]), Ok(Some(0.25)));
        assert_eq!(e.total("u", &[]), Some(0.75));
    }

    #[test]
    fn values() {
        assert_eq!(parse_value("+Inf"), Some(f64::INFINITY));
        assert_eq!(parse_value("-inf"), Some(f64::NEG_INFINITY));
        assert!(parse_value("NaN").unwrap().is_nan());
        assert_eq!(parse_value("1e3"), Some(1000.0));
        assert_eq!(parse_value("e"), None);
        assert_eq!(parse_value("0x10"), None);
    }
}
