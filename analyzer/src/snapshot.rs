//! Metric snapshots: the JSON form (`*.snapshot.json`) and bare Prometheus text
//! (formats.md §2).

use crate::input::{decode_strict, InputError};
use crate::json::{self, Json};
use crate::prom::Exposition;

pub const SCHEMA: &str = "inferlint.snapshot/1";

/// One timed reading of a server's metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub url: String,
    /// Unix seconds, midpoint of the request; NaN for bare text (no clock).
    pub t_wall: f64,
    pub t_mono_ns: Option<i64>,
    pub latency_s: Option<f64>,
    pub metrics: Exposition,
}

impl Snapshot {
    /// Reads either form: JSON when the text, after leading whitespace, starts with `{`.
    /// `file` names the file in errors and in a bare snapshot's `file:` URL.
    pub fn read(file: &str, bytes: &[u8]) -> Result<Snapshot, InputError> {
        let text = decode_strict(file, bytes)?;
        if text.trim_start().starts_with('{') {
            Self::read_json(file, text)
        } else {
            let metrics = Exposition::parse(text)
                .map_err(|e| InputError::new(file, Some(e.line), e.reason))?;
            Ok(Snapshot {
                url: format!("file:{}", crate::text::base_name(file)),
                t_wall: f64::NAN,
                t_mono_ns: None,
                latency_s: None,
                metrics,
            })
        }
    }

    fn read_json(file: &str, text: &str) -> Result<Snapshot, InputError> {
        let doc = json::parse(text).map_err(|e| InputError::new(file, Some(e.line), e.reason))?;
        if doc.as_object().is_none() {
            return Err(InputError::new(
                file,
                None,
                "a snapshot must be a JSON object",
            ));
        }
        let missing = |k: &str| InputError::new(file, None, format!("the snapshot has no `{k}`"));
        match doc.get("schema") {
            Some(Json::Str(s)) if s == SCHEMA => {}
            Some(other) => {
                return Err(InputError::new(
                    file,
                    None,
                    format!("schema is {}, expected \"{SCHEMA}\"", other.to_compact()),
                ))
            }
            None => return Err(missing("schema")),
        }
        let url = doc
            .get("url")
            .ok_or_else(|| missing("url"))?
            .as_str()
            .ok_or_else(|| InputError::new(file, None, "`url` is not a string"))?
            .to_string();
        let t_wall = doc
            .get("t_wall")
            .ok_or_else(|| missing("t_wall"))?
            .as_f64()
            .ok_or_else(|| InputError::new(file, None, "`t_wall` is not a number"))?;
        let t_mono_ns = match doc.get("t_mono_ns") {
            None | Some(Json::Null) => None,
            Some(v) => Some(
                v.as_i64_trunc()
                    .ok_or_else(|| InputError::new(file, None, "`t_mono_ns` is not an integer"))?,
            ),
        };
        let latency_s = match doc.get("latency_s") {
            None | Some(Json::Null) => None,
            Some(v) => Some(
                v.as_f64()
                    .ok_or_else(|| InputError::new(file, None, "`latency_s` is not a number"))?,
            ),
        };
        let body = doc
            .get("text")
            .ok_or_else(|| missing("text"))?
            .as_str()
            .ok_or_else(|| InputError::new(file, None, "`text` is not a string"))?;
        let metrics = Exposition::parse(body).map_err(|e| {
            InputError::new(
                file,
                Some(e.line),
                format!(
                    "{} (line {} of the Prometheus text in `text`)",
                    e.reason, e.line
                ),
            )
        })?;
        Ok(Snapshot {
            url,
            t_wall,
            t_mono_ns,
            latency_s,
            metrics,
        })
    }

    /// The JSON form, keys in the written order (formats.md §2.1).
    pub fn to_json(&self, text: &str) -> Json {
        json::obj([
            ("schema", Json::from(SCHEMA)),
            ("url", Json::from(self.url.as_str())),
            ("t_wall", Json::Float(self.t_wall)),
            ("t_mono_ns", Json::from(self.t_mono_ns)),
            ("latency_s", Json::from(self.latency_s)),
            ("text", Json::from(text)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_text_has_no_clock() {
        let s = Snapshot::read("dir/a.prom", b"x 1\n").unwrap();
        assert_eq!(s.url, "file:a.prom");
        assert!(s.t_wall.is_nan());
    }

    #[test]
    fn json_form_and_errors() {
        let ok = br#"{"schema": "inferlint.snapshot/1", "url": "u", "t_wall": 1.5, "t_mono_ns": null, "latency_s": 0.01, "text": "x 1\n"}"#;
        let s = Snapshot::read("s.json", ok).unwrap();
        assert_eq!(s.t_wall, 1.5);
        assert_eq!(s.latency_s, Some(0.01));
        let wrong = br#"{"schema": "other/1", "url": "u", "t_wall": 1, "text": ""}"#;
        assert!(Snapshot::read("s.json", wrong)
            .unwrap_err()
            .reason
            .contains("schema"));
        let bad_text =
            br#"{"schema": "inferlint.snapshot/1", "url": "u", "t_wall": 1, "text": "x 1\ny z"}"#;
        let e = Snapshot::read("s.json", bad_text).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.reason.contains("Prometheus text"));
        let e = Snapshot::read("s.json", b"{\"schema\": ").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(Snapshot::read("s.json", b"\xff\xfe").is_err());
    }
}
