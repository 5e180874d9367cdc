//! A small JSON value type with a lenient reader and an ordered writer.
//!
//! Why a reader of our own: the files we read are written by Python's `json`, which emits
//! the bare tokens `NaN`, `Infinity` and `-Infinity` (docs/run-folder.md#reading);
//! serde_json refuses them. Typed documents are read by parsing leniently into [`Json`]
//! and deserializing from it with serde ([`from_json`]); everything we write goes through
//! serde_json with Python's separators and float spelling ([`PyFormatter`]). Objects keep
//! their key order.

mod de;
mod write;

pub use de::{from_json, DocError};
pub use write::{ordered_map, to_compact, to_pretty, write_float, PyFormatter};

/// A JSON value. Numbers remember whether they were written as integers, because the
/// files distinguish `2` from `2.0` in places (start identity, evidence types).
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

/// A count written as the integer or the float it was computed as (a count from a log
/// is an integer, a counter's increase a float), so evidence keeps its spelling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(n) => n as f64,
            Number::Float(x) => x,
        }
    }
}

impl serde::Serialize for Number {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Number::Int(n) => s.serialize_i64(n),
            Number::Float(x) => s.serialize_f64(x),
        }
    }
}

/// Where and why a JSON text did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct JsonError {
    /// 1-based line in the text.
    pub line: usize,
    pub reason: String,
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// True for an object that has `key`, whatever its value.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A JSON number (not a boolean) as f64.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Int(i) => Some(*i as f64),
            Json::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// A JSON number truncated toward zero (how a load tool's counts are read).
    /// Non-finite floats give none.
    pub fn as_i64_trunc(&self) -> Option<i64> {
        match self {
            Json::Int(i) => Some(*i),
            Json::Float(f) if f.is_finite() => Some(f.trunc() as i64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Arr(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Obj(o) => Some(o),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// Compact single-line form, with Python's separators (`, ` and `: `).
    pub fn to_compact(&self) -> String {
        to_compact(self)
    }

    /// Indented form (`indent` spaces per level), as Python's `json.dumps(indent=n)`.
    pub fn to_pretty(&self, indent: usize) -> String {
        to_pretty(self, indent)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Self {
        Json::Str(s.to_string())
    }
}
impl From<String> for Json {
    fn from(s: String) -> Self {
        Json::Str(s)
    }
}
impl From<f64> for Json {
    fn from(f: f64) -> Self {
        Json::Float(f)
    }
}
impl From<i64> for Json {
    fn from(i: i64) -> Self {
        Json::Int(i)
    }
}
impl From<u64> for Json {
    fn from(i: u64) -> Self {
        Json::Int(i as i64)
    }
}
impl From<usize> for Json {
    fn from(i: usize) -> Self {
        Json::Int(i as i64)
    }
}
impl From<i32> for Json {
    fn from(i: i32) -> Self {
        Json::Int(i as i64)
    }
}
impl From<bool> for Json {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}
impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(o: Option<T>) -> Self {
        o.map_or(Json::Null, Into::into)
    }
}
impl<T: Into<Json>> From<Vec<T>> for Json {
    fn from(v: Vec<T>) -> Self {
        Json::Arr(v.into_iter().map(Into::into).collect())
    }
}

/// Builds an ordered object: `obj([("a", 1.into())])`.
pub fn obj<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Json)>) -> Json {
    Json::Obj(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
}

/// Parses one JSON value; the whole text must be that value plus whitespace.
pub fn parse(text: &str) -> Result<Json, JsonError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("unexpected text after the JSON value"));
    }
    Ok(v)
}

/// Nesting deeper than this is refused rather than risking the stack on hostile input.
const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, reason: &str) -> JsonError {
        let upto = self.i.min(self.s.len());
        let line = 1 + self.s[..upto].iter().filter(|&&b| b == b'\n').count();
        JsonError {
            line,
            reason: reason.to_string(),
        }
    }

    fn ws(&mut self) {
        while let Some(&b) = self.s.get(self.i) {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Json, JsonError> {
        match self.s.get(self.i) {
            None => Err(self.err("unexpected end of JSON")),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') if self.eat("true") => Ok(Json::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(Json::Bool(false)),
            Some(b'n') if self.eat("null") => Ok(Json::Null),
            Some(b'N') if self.eat("NaN") => Ok(Json::Float(f64::NAN)),
            Some(b'I') if self.eat("Infinity") => Ok(Json::Float(f64::INFINITY)),
            Some(b'-') if self.eat("-Infinity") => Ok(Json::Float(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("not a JSON value")),
        }
    }

    fn enter(&mut self) -> Result<(), JsonError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("JSON nested too deeply"));
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Json, JsonError> {
        self.enter()?;
        self.i += 1;
        let mut pairs = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Json::Obj(pairs));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(self.err("expected a quoted key"));
            }
            let k = self.string()?;
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return Err(self.err("expected ':' after a key"));
            }
            self.i += 1;
            self.ws();
            let v = self.value()?;
            pairs.push((k, v));
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(self.err("expected ',' or '}' in an object")),
            }
        }
        self.depth -= 1;
        Ok(Json::Obj(pairs))
    }

    fn array(&mut self) -> Result<Json, JsonError> {
        self.enter()?;
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value()?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    break;
                }
                _ => return Err(self.err("expected ',' or ']' in an array")),
            }
        }
        self.depth -= 1;
        Ok(Json::Arr(items))
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let h = self
            .s
            .get(self.i..self.i + 4)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|t| u32::from_str_radix(t, 16).ok())
            .ok_or_else(|| self.err("bad \\u escape"))?;
        self.i += 4;
        Ok(h)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.i += 1; // opening quote
        let mut out = String::new();
        loop {
            // Copy the run of plain bytes at once.
            let start = self.i;
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The input is a &str and we stop only at ASCII bytes, so this is valid UTF-8.
            out.push_str(std::str::from_utf8(&self.s[start..self.i]).unwrap_or_default());
            match self.s.get(self.i) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = *self
                        .s
                        .get(self.i)
                        .ok_or_else(|| self.err("unterminated string"))?;
                    self.i += 1;
                    match c {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) && self.eat("\\u") {
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    0xFFFD
                                }
                            } else {
                                hi
                            };
                            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                        }
                        _ => return Err(self.err("bad escape in a string")),
                    }
                }
                Some(_) => return Err(self.err("control character in a string")),
            }
        }
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.i;
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.i;
            while matches!(p.s.get(p.i), Some(b'0'..=b'9')) {
                p.i += 1;
            }
            p.i - s
        };
        let int_start = self.i;
        if digits(self) == 0 {
            return Err(self.err("bad number"));
        }
        // JSON (and Python's reader) refuses leading zeros such as 01.
        if self.s[int_start] == b'0' && self.i - int_start > 1 {
            return Err(self.err("bad number"));
        }
        let mut is_int = true;
        if self.s.get(self.i) == Some(&b'.') {
            is_int = false;
            self.i += 1;
            if digits(self) == 0 {
                return Err(self.err("bad number"));
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            is_int = false;
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return Err(self.err("bad number"));
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if is_int {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Json::Int(i));
            }
        }
        text.parse::<f64>()
            .map(Json::Float)
            .map_err(|_| self.err("bad number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_python_non_finite_tokens() {
        let v = parse(r#"{"a": NaN, "b": Infinity, "c": -Infinity, "d": [1, 2.5e3]}"#).unwrap();
        assert!(v.get("a").unwrap().as_f64().unwrap().is_nan());
        assert_eq!(v.get("b").unwrap().as_f64(), Some(f64::INFINITY));
        assert_eq!(v.get("c").unwrap().as_f64(), Some(f64::NEG_INFINITY));
        assert_eq!(
            v.get("d").unwrap().as_array().unwrap()[1],
            Json::Float(2500.0)
        );
    }

    #[test]
    fn keeps_key_order_and_int_float_apart() {
        let v = parse(r#"{"z": 2, "a": 2.0}"#).unwrap();
        assert_eq!(v.to_compact(), r#"{"z": 2, "a": 2.0}"#);
    }

    #[test]
    fn error_names_the_line() {
        let e = parse("{\n\"a\": 1,\n\"b\" 2}").unwrap_err();
        assert_eq!(e.line, 3);
    }

    #[test]
    fn writes_floats_like_python() {
        let mut s = String::new();
        for f in [22.0, 0.1, 1.7908243272216985e9, 1e-5, 1e16, f64::NAN, -0.5] {
            write_float(&mut s, f);
            s.push(' ');
        }
        assert_eq!(s, "22.0 0.1 1790824327.2216985 1e-05 1e+16 NaN -0.5 ");
        assert_eq!(
            Json::Arr(vec![
                Json::Float(f64::NAN),
                Json::Float(1e16),
                Json::Int(-3)
            ])
            .to_compact(),
            "[null, 1e+16, -3]",
            "non-finite numbers are written as null: our outputs are standard JSON"
        );
    }

    #[test]
    fn refuses_deep_nesting_without_overflow() {
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn unicode_escapes_and_surrogates() {
        let v = parse(r#""a\u00e9\ud83d\ude00""#).unwrap();
        assert_eq!(v.as_str(), Some("aé😀"));
    }
}
