//! The load command's CPU time (`load.cpu.jsonl`, `inferlint.loadcpu/1`), sampled by the
//! recorder from `/proc` beside the series while the load runs (T20: a load tool pinned
//! at a full core). JSON Lines like the series: a header, then one row per sample, each
//! flushed as written so a killed recorder leaves a readable file.
//!
//! ```text
//! {"schema": "inferlint.loadcpu/1", "interval_s": 0.25, "pid": 4242, "program": "vllm"}
//! {"t_wall": 1790000000.25, "t_mono_ns": 5250000000, "cpu_s": 1.42, "processes": 1}
//! ```
//!
//! `cpu_s` is the user and system time of every process of the load command's tree then
//! alive, with the time of the children each has waited for (`utime + stime + cutime +
//! cstime` of `/proc/PID/stat`), so it only grows while the tree lives. Its name matches
//! no other discovery pattern (docs/run-folder.md#discovery).

use serde::{Deserialize, Serialize};

use super::lenient;
use super::Document;

/// The keys of the numbers in this file, for naming a refused value (`load_cpu`).
pub mod key {
    pub const INTERVAL_S: &str = "interval_s";
    pub const T_WALL: &str = "t_wall";
    pub const T_MONO_NS: &str = "t_mono_ns";
    pub const CPU_S: &str = "cpu_s";
}

/// The first line: how often the tree was read, and which command it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadCpuHeader {
    /// Intended seconds between samples (the series' interval).
    #[serde(deserialize_with = "lenient::or_none")]
    pub interval_s: Option<f64>,
    /// The load command's process id.
    #[serde(deserialize_with = "lenient::or_none")]
    pub pid: Option<i64>,
    /// The load command's program (its first word).
    #[serde(deserialize_with = "lenient::or_none")]
    pub program: Option<String>,
}

impl Document for LoadCpuHeader {
    const SCHEMA: &'static str = "inferlint.loadcpu/1";
}

/// One sample of the tree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadCpuRow {
    /// Wall time of the sample, rounded to 6 decimals. Required.
    pub t_wall: f64,
    /// Monotonic time of the sample (truncated from a float, as in the series).
    #[serde(default, deserialize_with = "lenient::int_trunc")]
    pub t_mono_ns: Option<i64>,
    /// Seconds of CPU the tree has used so far; none when no process of it could be read.
    #[serde(default)]
    pub cpu_s: Option<f64>,
    /// Processes of the tree alive at the sample.
    #[serde(default)]
    pub processes: Option<i64>,
}

impl LoadCpuRow {
    /// The row as one line.
    pub fn line(&self) -> String {
        crate::json::to_compact(self)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{read_text, to_line};
    use super::*;

    #[test]
    fn header_and_rows_write_and_read() {
        let h = LoadCpuHeader {
            interval_s: Some(0.25),
            pid: Some(4242),
            program: Some("vllm".into()),
        };
        let line = to_line(&h);
        assert_eq!(
            line,
            "{\"schema\": \"inferlint.loadcpu/1\", \"interval_s\": 0.25, \"pid\": 4242, \
             \"program\": \"vllm\"}"
        );
        assert_eq!(read_text::<LoadCpuHeader>("c", &line).unwrap(), h);
        let row = LoadCpuRow {
            t_wall: 1.5,
            t_mono_ns: Some(7),
            cpu_s: Some(0.42),
            processes: Some(2),
        };
        assert_eq!(
            row.line(),
            "{\"t_wall\": 1.5, \"t_mono_ns\": 7, \"cpu_s\": 0.42, \"processes\": 2}"
        );
    }

    #[test]
    fn the_keys_are_the_field_names() {
        let row = serde_json::to_value(LoadCpuRow::default()).unwrap();
        for k in [key::T_WALL, key::T_MONO_NS, key::CPU_S] {
            assert!(row.get(k).is_some(), "{k}");
        }
        let header = serde_json::to_value(LoadCpuHeader::default()).unwrap();
        assert!(header.get(key::INTERVAL_S).is_some());
    }
}
