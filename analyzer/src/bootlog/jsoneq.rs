//! Comparing boot-log values (a repeated field's values, two starts' identities): objects
//! by their keys whatever the order, arrays in order, and integers, floats and booleans
//! never equal to each other.

use std::fmt::Write as _;

use crate::json::{write_float, Json};

/// Equality by value, key order irrelevant, types distinct.
pub(crate) fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Null, Json::Null) => true,
        (Json::Bool(x), Json::Bool(y)) => x == y,
        (Json::Int(x), Json::Int(y)) => x == y,
        (Json::Float(x), Json::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Json::Str(x), Json::Str(y)) => x == y,
        (Json::Arr(x), Json::Arr(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Json::Obj(x), Json::Obj(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
                && y.iter().all(|(k, _)| a.has(k))
        }
        _ => false,
    }
}

/// A text that is equal for two values exactly when [`same`] says they are equal, for
/// hashing many values at once.
pub(crate) fn canon(v: &Json) -> String {
    let mut out = String::new();
    write(&mut out, v);
    out
}

fn write(out: &mut String, v: &Json) {
    match v {
        Json::Null => out.push('n'),
        Json::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Json::Int(i) => {
            let _ = write!(out, "i{i};");
        }
        Json::Float(f) => {
            out.push('d');
            // -0.0 == 0.0
            write_float(out, if *f == 0.0 { 0.0 } else { *f });
            out.push(';');
        }
        Json::Str(s) => {
            let _ = write!(out, "s{}:{s}", s.len());
        }
        Json::Arr(items) => {
            let _ = write!(out, "a{}[", items.len());
            for i in items {
                write(out, i);
            }
            out.push(']');
        }
        Json::Obj(pairs) => {
            let mut sorted: Vec<&(String, Json)> = pairs.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            let _ = write!(out, "o{}{{", sorted.len());
            for (k, v) in sorted {
                let _ = write!(out, "{}:{k}", k.len());
                write(out, v);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::obj;

    #[test]
    fn types_are_distinct() {
        assert!(!same(&Json::Int(2), &Json::Float(2.0)));
        assert!(!same(&Json::Int(1), &Json::Bool(true)));
        assert_ne!(canon(&Json::Int(2)), canon(&Json::Float(2.0)));
        assert_ne!(canon(&Json::Int(1)), canon(&Json::Bool(true)));
    }

    #[test]
    fn key_order_does_not_matter() {
        let a = obj([
            ("x", Json::Int(1)),
            ("y", Json::Arr(vec![Json::Int(1), Json::Int(2)])),
        ]);
        let b = obj([
            ("y", Json::Arr(vec![Json::Int(1), Json::Int(2)])),
            ("x", Json::Int(1)),
        ]);
        let c = obj([
            ("y", Json::Arr(vec![Json::Int(2), Json::Int(1)])),
            ("x", Json::Int(1)),
        ]);
        assert!(same(&a, &b));
        assert!(!same(&a, &c));
        assert_eq!(canon(&a), canon(&b));
        assert_ne!(canon(&a), canon(&c));
        assert!(!same(&a, &obj([("x", Json::Int(1))])));
    }

    #[test]
    fn strings_cannot_forge_structure() {
        let a = Json::Arr(vec!["a".into(), "b".into()]);
        let b = Json::Arr(vec!["a\"b".into()]);
        assert_ne!(canon(&a), canon(&b));
    }
}
