//! Python `repr` of JSON-like values: the engines print their arguments as Python dicts,
//! and the analyzer reads them back with a Python-literal reader (`bootlog/pylit.rs`).

use serde_json::Value;

pub fn float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f.fract() == 0.0 && f.abs() < 1e16 {
        return format!("{f:.1}");
    }
    let s = format!("{f}");
    if f.abs() < 1e-4 {
        format!("{f:e}").replace("e-", "e-0")
    } else {
        s
    }
}

pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

pub fn repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => string(s),
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(repr).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(o) => {
            let parts: Vec<String> = o
                .iter()
                .map(|(k, v)| format!("{}: {}", string(k), repr(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// A command-line value typed the way argparse would have typed it for a flag we do not
/// know: integer, float, boolean word, else string.
pub fn guess(v: &str) -> Value {
    if let Ok(i) = v.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(f) = v.parse::<f64>() {
        if f.is_finite() {
            return Value::from(f);
        }
    }
    match v {
        "true" | "True" => Value::Bool(true),
        "false" | "False" => Value::Bool(false),
        _ => Value::String(v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reprs() {
        let v = json!({"a": 0.93, "b": 1.0, "c": ["x'y"], "d": null, "e": true, "f": 32});
        assert_eq!(
            repr(&v),
            "{'a': 0.93, 'b': 1.0, 'c': ['x\\'y'], 'd': None, 'e': True, 'f': 32}"
        );
    }
}
