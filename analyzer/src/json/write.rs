//! Writing JSON: serde_json with Python's spelling, so our files read like the reference's
//! (`{"a": 1, "b": 2.0}`, one-space indents, `1e-05`), and every output is standard JSON.
//!
//! A non-finite float is written as `null` (serde_json's rule): results.json, `--json` and
//! the recorder's documents stay readable by any JSON reader (jq, browsers, Python). The
//! analyzer's plausibility checks keep non-finite numbers out of verdicts, so `null` can
//! only stand for a value that was absent or unusable anyway.

use std::fmt::Write as _;
use std::io;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::ser::Formatter;

use super::Json;

/// Writes a float the way Python's `repr` does: shortest round-trip digits, always with a
/// decimal point or exponent, bare `NaN`/`Infinity` for non-finite values (used where a
/// float is spelled inside a text, e.g. a boot log's argument dict compared by content).
pub fn write_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let abs = f.abs();
        if abs != 0.0 && !(1e-4..1e16).contains(&abs) {
            // Python switches to exponent form outside [1e-4, 1e16).
            let s = format!("{f:e}");
            let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
            let exp: i32 = exp.parse().unwrap_or(0);
            let _ = write!(
                out,
                "{mant}e{}{:02}",
                if exp < 0 { '-' } else { '+' },
                exp.abs()
            );
        } else {
            let s = format!("{f}");
            out.push_str(&s);
            if !s.contains('.') {
                out.push_str(".0");
            }
        }
    }
}

/// serde_json's formatter with Python's `json.dumps` separators: `, ` and `: ` on one line,
/// or `indent` spaces per level with `: ` after keys; floats as Python's `repr`.
#[derive(Debug, Clone, Copy)]
pub struct PyFormatter {
    indent: Option<usize>,
    level: usize,
    has_value: bool,
}

impl PyFormatter {
    pub fn compact() -> Self {
        PyFormatter {
            indent: None,
            level: 0,
            has_value: false,
        }
    }

    pub fn pretty(indent: usize) -> Self {
        PyFormatter {
            indent: Some(indent),
            ..Self::compact()
        }
    }

    fn newline<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        if let Some(n) = self.indent {
            w.write_all(b"\n")?;
            for _ in 0..n * self.level {
                w.write_all(b" ")?;
            }
        }
        Ok(())
    }

    fn open<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.newline(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(if self.indent.is_some() { b"," } else { b", " })?;
        }
        self.newline(w)
    }
}

impl Formatter for PyFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        let mut s = String::new();
        write_float(&mut s, value);
        w.write_all(s.as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

fn write_with<T: Serialize + ?Sized>(value: &T, formatter: PyFormatter) -> String {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Serializing our own types into memory cannot fail: every map key is a string.
    if value.serialize(&mut ser).is_err() {
        return "null".into();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// One line, Python's separators: `{"a": 1, "b": [2.0, null]}`.
pub fn to_compact<T: Serialize + ?Sized>(value: &T) -> String {
    write_with(value, PyFormatter::compact())
}

/// Indented by `indent` spaces per level, as Python's `json.dumps(indent=n)`.
pub fn to_pretty<T: Serialize + ?Sized>(value: &T, indent: usize) -> String {
    write_with(value, PyFormatter::pretty(indent))
}

/// Writes key/value pairs as one object, in their order (evidence, counts, process
/// lists): `#[serde(serialize_with = "crate::json::ordered_map")]` on a `Vec<(K, V)>`.
pub fn ordered_map<K, V, S>(pairs: &[(K, V)], s: S) -> Result<S::Ok, S::Error>
where
    K: Serialize,
    V: Serialize,
    S: Serializer,
{
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Int(i) => s.serialize_i64(*i),
            Json::Float(f) => s.serialize_f64(*f),
            Json::Str(v) => s.serialize_str(v),
            Json::Arr(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Obj(pairs) => {
                let mut map = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_separators_and_indent() {
        let v = super::super::parse(r#"{"a": [1, 2.5, {}], "b": {"c": null, "d": []}}"#).unwrap();
        assert_eq!(
            to_compact(&v),
            r#"{"a": [1, 2.5, {}], "b": {"c": null, "d": []}}"#
        );
        assert_eq!(
            to_pretty(&v, 1),
            "{\n \"a\": [\n  1,\n  2.5,\n  {}\n ],\n \"b\": {\n  \"c\": null,\n  \"d\": []\n }\n}"
        );
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(
            to_compact(&Json::from("a\"b\\c\n\u{1}é")),
            r#""a\"b\\c\n\u0001é""#
        );
    }
}
