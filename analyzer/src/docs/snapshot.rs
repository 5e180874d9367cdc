//! A snapshot file's JSON form (`inferlint.snapshot/1`, docs/run-folder.md#snapshots):
//! one timed reading of a server's metrics, the Prometheus text kept as served. `schema`,
//! `url`, `t_wall` and `text` are required; the monotonic clock and the latency may be
//! missing or null (older recordings).

use serde::{Deserialize, Serialize};

use super::lenient;
use super::Document;

/// `before.snapshot.json`, `after.snapshot.json`, `snapshot -o FILE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SnapshotDoc {
    /// The full URL read, path included.
    pub url: String,
    /// Unix seconds, midpoint of the request.
    pub t_wall: f64,
    /// Host monotonic clock in nanoseconds, midpoint of the request.
    #[serde(default, deserialize_with = "lenient::int_trunc")]
    pub t_mono_ns: Option<i64>,
    /// Seconds the request took.
    #[serde(default)]
    pub latency_s: Option<f64>,
    /// The body exactly as served.
    pub text: String,
}

impl Document for SnapshotDoc {
    const SCHEMA: &'static str = "inferlint.snapshot/1";
}

#[cfg(test)]
mod tests {
    use super::super::{read, tests::fixture, to_bytes};
    use super::*;

    #[test]
    fn recorded_snapshots_round_trip_byte_for_byte() {
        for engine in ["vllm", "sglang", "trtllm"] {
            for name in ["before.snapshot.json", "after.snapshot.json"] {
                let bytes = fixture(engine, name);
                let s: SnapshotDoc = read(name, &bytes).unwrap();
                assert!(s.t_mono_ns.is_some() && s.latency_s.is_some());
                assert_eq!(
                    String::from_utf8(to_bytes(&s)).unwrap(),
                    String::from_utf8(bytes).unwrap(),
                    "{engine} {name}"
                );
            }
        }
    }

    #[test]
    fn required_keys_and_lenient_clocks() {
        let s: SnapshotDoc = read(
            "s.json",
            br#"{"schema": "inferlint.snapshot/1", "url": "u", "t_wall": 1, "t_mono_ns": 1.5e9, "text": "", "later": 1}"#,
        )
        .unwrap();
        assert_eq!(
            (s.t_wall, s.t_mono_ns, s.latency_s),
            (1.0, Some(1_500_000_000), None)
        );
        let e = read::<SnapshotDoc>(
            "s.json",
            br#"{"schema": "inferlint.snapshot/1", "url": "u", "t_wall": 1}"#,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "s.json: missing field `text`");
        let e = read::<SnapshotDoc>(
            "s.json",
            br#"{"schema": "inferlint.snapshot/1", "url": "u", "t_wall": 1, "t_mono_ns": "x", "text": ""}"#,
        )
        .unwrap_err();
        assert!(e.reason.starts_with("t_mono_ns: "), "{e}");
    }
}
