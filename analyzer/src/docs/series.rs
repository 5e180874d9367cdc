//! A series file's lines (`inferlint.series/1`, docs/run-folder.md#series): the header
//! and one sample row per reading. The row's field names are the column names, declared
//! once here and shared by the analyzer's reader (its fast path included) and the
//! recorder's writer.

use serde::{Deserialize, Serialize, Serializer};

use super::lenient;
use super::Document;
use crate::engine::Engine;

/// The first line: what was read, how often, and which engine's names the rows used.
/// Any object with a `schema` key is a header; its other keys are read only when they
/// have the expected type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesHeader {
    /// The server's base URL, without a path.
    #[serde(default, deserialize_with = "lenient::or_none")]
    pub url: Option<String>,
    /// Intended seconds between samples.
    #[serde(default, deserialize_with = "lenient::or_none")]
    pub interval_s: Option<f64>,
    /// Told from the first successful reading; missing in older recordings and when no
    /// reading succeeded.
    #[serde(
        default,
        deserialize_with = "header_engine",
        skip_serializing_if = "Option::is_none"
    )]
    pub engine: Option<Engine>,
}

impl Document for SeriesHeader {
    const SCHEMA: &'static str = "inferlint.series/1";
}

/// The header's engine: a string names one (an unknown one reads as vLLM); anything
/// else is as if the key were missing.
fn header_engine<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Engine>, D::Error> {
    Ok(match crate::json::Json::deserialize(d)? {
        crate::json::Json::Str(key) => Some(Engine::from_key(&key).unwrap_or(Engine::Vllm)),
        _ => None,
    })
}

/// Declares the row struct and [`Row::COLUMNS`] from one list of fields, so the column
/// names exist only as the field names.
macro_rules! row {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty ),+ $(,)? }
    ) => {
        $(#[$meta])*
        pub struct $name { $( $(#[$fmeta])* pub $field: $ty ),+ }

        impl $name {
            /// The column names, in the order written: the field names.
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($field)),+];
        }
    };
}

row! {
    /// One sample. `None` means absent from that scrape.
    #[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
    pub struct Row {
        /// Midpoint wall time of the scrape, rounded to 6 decimals. Required.
        pub t_wall: f64,
        /// Midpoint monotonic time.
        pub t_mono_ns: Option<i64>,
        /// Seconds the scrape took (written by inferlint-recorder only; never checked).
        pub latency_s: Option<f64>,
        pub running: Option<f64>,
        pub waiting: Option<f64>,
        pub kv_usage: Option<f64>,
        /// Cumulative evictions (no such counter on TensorRT-LLM).
        pub preemptions: Option<f64>,
        pub generation_tokens: Option<f64>,
        pub prompt_tokens: Option<f64>,
        /// Requests paused for recompute (TensorRT-LLM only).
        pub paused: Option<f64>,
        /// Cumulative prompt tokens served from the prefix cache (T17's counters,
        /// `Engine::prefix_cache`); absent in recordings made before they were read.
        pub prefix_cache_hits: Option<f64>,
        /// Cumulative prompt tokens looked up in the prefix cache.
        pub prefix_cache_queries: Option<f64>,
    }
}

impl Row {
    /// Index of `t_wall` in [`Row::COLUMNS`]: the one required column.
    pub const T_WALL: usize = 0;
    /// Index of `t_mono_ns`: the one integer column.
    pub const T_MONO_NS: usize = 1;
    /// How many number columns follow `t_mono_ns`.
    pub const NUMBERS: usize = 10;

    /// A row from its columns' values in [`Row::COLUMNS`] order: `t_wall`, `t_mono_ns`,
    /// then the number columns.
    pub fn from_columns(
        t_wall: f64,
        t_mono_ns: Option<i64>,
        numbers: [Option<f64>; Row::NUMBERS],
    ) -> Row {
        let [latency_s, running, waiting, kv_usage, preemptions, generation_tokens, prompt_tokens, paused, prefix_cache_hits, prefix_cache_queries] =
            numbers;
        Row {
            t_wall,
            t_mono_ns,
            latency_s,
            running,
            waiting,
            kv_usage,
            preemptions,
            generation_tokens,
            prompt_tokens,
            paused,
            prefix_cache_hits,
            prefix_cache_queries,
        }
    }

    /// The number columns after `t_mono_ns`, in [`Row::COLUMNS`] order.
    pub fn numbers(&self) -> [Option<f64>; Row::NUMBERS] {
        [
            self.latency_s,
            self.running,
            self.waiting,
            self.kv_usage,
            self.preemptions,
            self.generation_tokens,
            self.prompt_tokens,
            self.paused,
            self.prefix_cache_hits,
            self.prefix_cache_queries,
        ]
    }

    /// The row as `engine` writes it, one line.
    pub fn line(&self, engine: Engine) -> String {
        crate::json::to_compact(&EngineRow { row: self, engine })
    }
}

/// A row with the columns its engine has, in order: a key missing from a row means the
/// engine has no such series, `null` that it was absent from that scrape.
struct EngineRow<'a> {
    row: &'a Row,
    engine: Engine,
}

impl EngineRow<'_> {
    /// The columns the engine has, as a row holding a value in exactly those: only the
    /// eviction counter (none on TensorRT-LLM) and the paused gauge (TensorRT-LLM's
    /// only) depend on the engine. The prefix-cache columns are written for every engine.
    fn columns(&self) -> Row {
        let names = self.engine.metrics();
        let has = |name: Option<&str>| name.map(|_| 0.0);
        Row {
            preemptions: has(names.evictions),
            paused: has(names.paused),
            ..Row::from_columns(0.0, Some(0), [Some(0.0); Row::NUMBERS])
        }
    }
}

impl Serialize for EngineRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let has = serde_json::to_value(self.columns()).map_err(S::Error::custom)?;
        let values = serde_json::to_value(self.row).map_err(S::Error::custom)?;
        let mut map = s.serialize_map(None)?;
        for column in Row::COLUMNS {
            if !has[*column].is_null() {
                map.serialize_entry(column, &values[*column])?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{read_text, to_line};
    use super::*;

    #[test]
    fn columns_are_the_field_names_in_order() {
        assert_eq!(Row::COLUMNS[Row::T_WALL], "t_wall");
        assert_eq!(Row::COLUMNS[Row::T_MONO_NS], "t_mono_ns");
        assert_eq!(Row::COLUMNS.len(), Row::NUMBERS + 2);
        // from_columns puts the numbers in column order.
        let numbers = [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0].map(Some);
        let line = Row::from_columns(0.5, Some(1), numbers).line(Engine::Vllm);
        let keys: Vec<&str> = Row::COLUMNS
            .iter()
            .copied()
            .filter(|c| *c != "paused")
            .collect();
        let want: Vec<String> = keys
            .iter()
            .zip([
                "0.5", "1", "2.0", "3.0", "4.0", "5.0", "6.0", "7.0", "8.0", "10.0", "11.0",
            ])
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        assert_eq!(line, format!("{{{}}}", want.join(", ")));
    }

    #[test]
    fn rows_carry_the_engine_columns() {
        let row = Row {
            t_wall: 1790843148.846848,
            t_mono_ns: Some(3196572513156),
            latency_s: Some(0.002),
            running: Some(0.0),
            paused: Some(2.0),
            ..Row::default()
        };
        assert_eq!(
            row.line(Engine::Vllm),
            "{\"t_wall\": 1790843148.846848, \"t_mono_ns\": 3196572513156, \"latency_s\": 0.002, \
             \"running\": 0.0, \"waiting\": null, \"kv_usage\": null, \"preemptions\": null, \
             \"generation_tokens\": null, \"prompt_tokens\": null, \"prefix_cache_hits\": null, \
             \"prefix_cache_queries\": null}"
        );
        let trt = row.line(Engine::Trtllm);
        assert!(!trt.contains("preemptions"));
        assert!(
            trt.ends_with(
                "\"prompt_tokens\": null, \"paused\": 2.0, \"prefix_cache_hits\": null, \
                 \"prefix_cache_queries\": null}"
            ),
            "{trt}"
        );
        // A non-finite number is written as null: the file stays standard JSON.
        let nan = Row {
            kv_usage: Some(f64::NAN),
            ..row
        };
        assert!(nan.line(Engine::Sglang).contains("\"kv_usage\": null"));
    }

    #[test]
    fn headers_write_and_read_leniently() {
        let h = SeriesHeader {
            url: Some("http://h".into()),
            interval_s: Some(0.25),
            engine: Some(Engine::Sglang),
        };
        let line = to_line(&h);
        assert_eq!(
            line,
            "{\"schema\": \"inferlint.series/1\", \"url\": \"http://h\", \"interval_s\": 0.25, \"engine\": \"sglang\"}"
        );
        assert_eq!(read_text::<SeriesHeader>("s", &line).unwrap(), h);
        let none = SeriesHeader {
            engine: None,
            interval_s: Some(0.5),
            ..h
        };
        assert!(!to_line(&none).contains("engine"));
        let odd: SeriesHeader = crate::json::from_json(
            &crate::json::parse(
                r#"{"schema": 1, "url": 5, "interval_s": "x", "engine": "tgi", "note": "n"}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            (odd.url, odd.interval_s, odd.engine),
            (None, None, Some(Engine::Vllm))
        );
    }
}
