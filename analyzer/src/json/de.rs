//! Typed reading: serde deserializes our document types from a leniently parsed [`Json`],
//! so Python's `NaN`/`Infinity` reach a float field as themselves instead of failing the
//! whole file, and an error names the key path that was wrong (`load.exit: invalid type`).

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;

use super::Json;

/// Why a document did not have the expected shape: where, and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", if path.is_empty() || path == "." { String::new() } else { format!("{path}: ") })]
pub struct DocError {
    /// The key path, e.g. `load.exit` or `gpus[0].memory_used_mib`.
    pub path: String,
    pub reason: String,
}

/// Deserializes a typed document from a parsed value.
pub fn from_json<T: DeserializeOwned>(value: &Json) -> Result<T, DocError> {
    serde_path_to_error::deserialize(value).map_err(|e| DocError {
        path: e.path().to_string(),
        reason: e.into_inner().to_string(),
    })
}

type Error = de::value::Error;

impl<'de> IntoDeserializer<'de, Error> for &'de Json {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> de::Deserializer<'de> for &'de Json {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Json::Null => visitor.visit_unit(),
            Json::Bool(b) => visitor.visit_bool(*b),
            Json::Int(i) => visitor.visit_i64(*i),
            Json::Float(f) => visitor.visit_f64(*f),
            Json::Str(s) => visitor.visit_borrowed_str(s),
            Json::Arr(items) => visitor.visit_seq(SeqDeserializer::new(items.iter())),
            Json::Obj(pairs) => visitor.visit_map(MapDeserializer::new(
                pairs.iter().map(|(k, v)| (k.as_str(), v)),
            )),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self {
            Json::Null => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    /// Unit variants are strings (`"serve"`); others are one-key objects.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self {
            Json::Str(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Json::Obj(pairs) if pairs.len() == 1 => {
                visitor.visit_enum(de::value::MapAccessDeserializer::new(MapDeserializer::new(
                    pairs.iter().map(|(k, v)| (k.as_str(), v)),
                )))
            }
            _ => Err(de::Error::custom("expected a string or a one-key object")),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct identifier
        ignored_any
    }
}

/// Reading a [`Json`] itself from a typed document (a field kept as free-form JSON).
impl<'de> serde::Deserialize<'de> for Json {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_none<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
                <Json as serde::Deserialize>::deserialize(d)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, i: i64) -> Result<Json, E> {
                Ok(Json::Int(i))
            }
            fn visit_u64<E: de::Error>(self, u: u64) -> Result<Json, E> {
                // Beyond i64 a count is kept as a float rather than wrapped.
                Ok(i64::try_from(u).map_or(Json::Float(u as f64), Json::Int))
            }
            fn visit_f64<E>(self, f: f64) -> Result<Json, E> {
                Ok(Json::Float(f))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::Str(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Json, E> {
                Ok(Json::Str(s))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = a.next_element()? {
                    items.push(v);
                }
                Ok(Json::Arr(items))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut pairs = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Json>()? {
                    pairs.push((k, v));
                }
                Ok(Json::Obj(pairs))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Serve,
        Attach,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Load {
        exit: Option<i32>,
        wall: f64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Doc {
        mode: Mode,
        load: Load,
        #[serde(default)]
        notes: Vec<String>,
        extra: Option<Json>,
    }

    #[test]
    fn typed_read_keeps_python_non_finite_numbers() {
        let v = super::super::parse(
            r#"{"mode": "serve", "load": {"exit": null, "wall": NaN}, "extra": {"k": [1, 2.0]}, "unknown": 1}"#,
        )
        .unwrap();
        let d: Doc = from_json(&v).unwrap();
        assert_eq!(d.mode, Mode::Serve);
        assert!(d.load.wall.is_nan());
        assert_eq!(d.load.exit, None);
        assert!(d.notes.is_empty());
        assert_eq!(d.extra.unwrap().to_compact(), r#"{"k": [1, 2.0]}"#);
    }

    #[test]
    fn errors_name_the_key_path() {
        let v =
            super::super::parse(r#"{"mode": "attach", "load": {"exit": "x", "wall": 1}}"#).unwrap();
        let e = from_json::<Doc>(&v).unwrap_err();
        assert_eq!(e.path, "load.exit");
        assert!(e.to_string().starts_with("load.exit: invalid type"), "{e}");
        let v = super::super::parse(r#"{"mode": "other", "load": {"wall": 1}}"#).unwrap();
        assert_eq!(from_json::<Doc>(&v).unwrap_err().path, "mode");
    }
}
