//! The GPU samples (`gpu.samples.jsonl`, `inferlint.gpu/1`): what the recorder's
//! `nvidia-smi -lms` child reported during the load, for T16 (a throttled GPU). JSON
//! Lines like the series: a header with the cards, then one row per card per sample,
//! each line flushed as written so a killed recorder leaves a readable file.
//!
//! ```text
//! {"schema": "inferlint.gpu/1", "interval_s": 0.25, "reasons_field": "clocks_event_reasons",
//!  "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "max_sm_clock_mhz": 3105.0, "power_limit_w": 450.0}]}
//! {"t_wall": 1790000000.25, "t_mono_ns": 5250000000, "gpu": 0, "sm_clock_mhz": 2730.0, "power_w": 441.2,
//!  "temp_c": 71.0, "util_pct": 97.0, "reasons": ["sw_power_cap"]}
//! ```
//!
//! The file name is chosen so that no other discovery pattern
//! (docs/run-folder.md#discovery) matches it: it is not a `*.series.jsonl`, and it is
//! never taken for a load-tool result.

use serde::{Deserialize, Serialize};

use super::lenient;
use super::Document;

/// The clock-limiting reasons the recorder asks `nvidia-smi` for, by the name after the
/// field family's dot (`clocks_event_reasons.sw_power_cap`). A row lists the active ones.
pub const REASONS: [&str; 6] = [
    "gpu_idle",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
];

/// The two spellings of the reason fields: drivers since 530 answer the first, older
/// ones only the second. The header records which one this file's reasons came from.
pub const REASON_FIELDS: [&str; 2] = ["clocks_event_reasons", "clocks_throttle_reasons"];

/// The keys of the numbers in this file, for naming a value the plausibility gate
/// refused (`gpu_samples`); each is the field name of [`GpuHeader`], [`GpuCard`] or
/// [`GpuRow`] (tested).
pub mod key {
    pub const INTERVAL_S: &str = "interval_s";
    pub const MAX_SM_CLOCK_MHZ: &str = "max_sm_clock_mhz";
    pub const POWER_LIMIT_W: &str = "power_limit_w";
    pub const T_WALL: &str = "t_wall";
    pub const T_MONO_NS: &str = "t_mono_ns";
    pub const SM_CLOCK_MHZ: &str = "sm_clock_mhz";
    pub const POWER_W: &str = "power_w";
    pub const TEMP_C: &str = "temp_c";
    pub const UTIL_PCT: &str = "util_pct";
}

/// One card as it was at the start of the sampling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuCard {
    pub index: i64,
    pub name: String,
    /// `clocks.max.sm`: the highest SM clock the card allows; none when not reported.
    #[serde(deserialize_with = "lenient::or_none")]
    pub max_sm_clock_mhz: Option<f64>,
    /// `power.limit`: the enforced power limit; none when not reported.
    #[serde(deserialize_with = "lenient::or_none")]
    pub power_limit_w: Option<f64>,
}

/// The first line: the cards, how often they were read, and which reason fields answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuHeader {
    /// Intended seconds between samples (the series' interval).
    #[serde(deserialize_with = "lenient::or_none")]
    pub interval_s: Option<f64>,
    /// One of [`REASON_FIELDS`]; none when the driver answered neither.
    #[serde(deserialize_with = "lenient::or_none")]
    pub reasons_field: Option<String>,
    pub gpus: Vec<GpuCard>,
}

impl Document for GpuHeader {
    const SCHEMA: &'static str = "inferlint.gpu/1";
}

/// One card at one sample. `None` means `nvidia-smi` reported no value (`[N/A]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuRow {
    /// Wall time when the line was read, rounded to 6 decimals. Required.
    pub t_wall: f64,
    /// Monotonic time when the line was read (a float is truncated, as in the series, so
    /// that a stamp too large for an integer reaches the plausibility gate saturated).
    #[serde(default, deserialize_with = "lenient::int_trunc")]
    pub t_mono_ns: Option<i64>,
    /// The card's `index`.
    pub gpu: i64,
    #[serde(default)]
    pub sm_clock_mhz: Option<f64>,
    #[serde(default)]
    pub power_w: Option<f64>,
    #[serde(default)]
    pub temp_c: Option<f64>,
    /// `utilization.gpu`, in percent.
    #[serde(default)]
    pub util_pct: Option<f64>,
    /// The active reasons among [`REASONS`]; none when the driver reported none of them.
    #[serde(default)]
    pub reasons: Option<Vec<String>>,
}

impl GpuRow {
    /// The row as one line.
    pub fn line(&self) -> String {
        crate::json::to_compact(self)
    }

    /// Whether a reason is active in this row.
    pub fn has_reason(&self, reason: &str) -> bool {
        self.reasons
            .as_ref()
            .is_some_and(|r| r.iter().any(|x| x == reason))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{read_text, to_line};
    use super::*;

    #[test]
    fn header_and_rows_write_and_read() {
        let h = GpuHeader {
            interval_s: Some(0.25),
            reasons_field: Some(REASON_FIELDS[0].into()),
            gpus: vec![GpuCard {
                index: 0,
                name: "NVIDIA GeForce RTX 4090".into(),
                max_sm_clock_mhz: Some(3105.0),
                power_limit_w: None,
            }],
        };
        let line = to_line(&h);
        assert_eq!(
            line,
            "{\"schema\": \"inferlint.gpu/1\", \"interval_s\": 0.25, \"reasons_field\": \
             \"clocks_event_reasons\", \"gpus\": [{\"index\": 0, \"name\": \"NVIDIA GeForce RTX \
             4090\", \"max_sm_clock_mhz\": 3105.0, \"power_limit_w\": null}]}"
        );
        assert_eq!(read_text::<GpuHeader>("g", &line).unwrap(), h);
        let row = GpuRow {
            t_wall: 1.5,
            t_mono_ns: Some(7),
            gpu: 0,
            sm_clock_mhz: Some(1395.0),
            power_w: Some(f64::NAN),
            temp_c: None,
            util_pct: Some(97.0),
            reasons: Some(vec!["sw_power_cap".into()]),
        };
        assert_eq!(
            row.line(),
            "{\"t_wall\": 1.5, \"t_mono_ns\": 7, \"gpu\": 0, \"sm_clock_mhz\": 1395.0, \
             \"power_w\": null, \"temp_c\": null, \"util_pct\": 97.0, \"reasons\": [\"sw_power_cap\"]}"
        );
        assert!(row.has_reason("sw_power_cap") && !row.has_reason("gpu_idle"));
    }

    #[test]
    fn the_keys_are_the_field_names() {
        let row = serde_json::to_value(GpuRow::default()).unwrap();
        for k in [
            key::T_WALL,
            key::T_MONO_NS,
            key::SM_CLOCK_MHZ,
            key::POWER_W,
            key::TEMP_C,
            key::UTIL_PCT,
        ] {
            assert!(row.get(k).is_some(), "{k}");
        }
        let header = serde_json::to_value(GpuHeader::default()).unwrap();
        assert!(header.get(key::INTERVAL_S).is_some());
        let card = serde_json::to_value(GpuCard::default()).unwrap();
        for k in [key::MAX_SM_CLOCK_MHZ, key::POWER_LIMIT_W] {
            assert!(card.get(k).is_some(), "{k}");
        }
    }

    #[test]
    fn a_header_reads_its_keys_leniently() {
        let h: GpuHeader = read_text(
            "g",
            r#"{"schema": "inferlint.gpu/1", "interval_s": "x", "gpus": [{"index": 1, "max_sm_clock_mhz": "[N/A]"}]}"#,
        )
        .unwrap();
        assert_eq!(h.interval_s, None);
        assert_eq!(h.gpus[0].index, 1);
        assert_eq!(h.gpus[0].max_sm_clock_mhz, None);
    }
}
