//! Metric snapshots: the JSON form (`*.snapshot.json`, the document `docs::SnapshotDoc`)
//! and bare Prometheus text (formats.md §2).

use crate::docs::{self, SnapshotDoc};
use crate::input::{decode_strict, InputError};
use crate::prom::Exposition;

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
        let doc: SnapshotDoc = docs::read_text(file, text)?;
        let metrics = Exposition::parse(&doc.text).map_err(|e| {
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
            url: doc.url,
            t_wall: doc.t_wall,
            t_mono_ns: doc.t_mono_ns,
            latency_s: doc.latency_s,
            metrics,
        })
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
