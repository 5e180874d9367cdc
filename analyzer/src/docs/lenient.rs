//! Field readers for the places documents are read leniently
//! (`#[serde(deserialize_with)]`): a clock written as a float, a series header field of
//! the wrong type.

use serde::de::{DeserializeOwned, Error};
use serde::{Deserialize, Deserializer};

use crate::json::{self, Json};

/// An integer or null; a float is truncated (a snapshot's or a series row's `t_mono_ns`).
pub fn int_trunc<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Json::deserialize(d)? {
        Json::Null => Ok(None),
        v => v.as_i64_trunc().map(Some).ok_or_else(|| {
            D::Error::custom(format!("expected an integer, found {}", v.to_compact()))
        }),
    }
}

/// The value when it has the expected type, else none: a series header is whatever
/// object carries `schema`, and its other keys are read only when usable.
pub fn or_none<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let v = Json::deserialize(d)?;
    Ok(json::from_json::<T>(&v).ok())
}
