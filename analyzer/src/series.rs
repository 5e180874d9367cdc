//! Gauge series files (`*.series.jsonl`, formats.md §3): a header line, then one sample
//! per line. Read line by line in one pass; a damaged line is skipped and counted.

use crate::engine::Engine;
use crate::input::InputError;
use crate::json::{self, Json};
use crate::text::decode_lossy;

pub const SCHEMA: &str = "inferlint.series/1";

/// One reading of the gauges. `None` means absent from that scrape.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Row {
    pub t_wall: f64,
    pub t_mono_ns: Option<i64>,
    pub latency_s: Option<f64>,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    pub preemptions: Option<f64>,
    pub generation_tokens: Option<f64>,
    pub prompt_tokens: Option<f64>,
    pub paused: Option<f64>,
}

/// A whole series file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub url: Option<String>,
    pub interval_s: Option<f64>,
    /// The header's `engine` string when present (an unknown string reads as vLLM).
    pub engine_named: Option<Engine>,
    pub rows: Vec<Row>,
    /// Lines skipped as unreadable, and the 1-based line of the first.
    pub skipped: usize,
    pub first_skipped_line: Option<usize>,
}

impl Series {
    /// The engine whose metric names the series used (vLLM when the header names none).
    pub fn engine(&self) -> Engine {
        self.engine_named.unwrap_or(Engine::Vllm)
    }

    /// Reads a series file. A file with neither a header nor a sample is an input error.
    pub fn read(file: &str, bytes: &[u8]) -> Result<Series, InputError> {
        let text = decode_lossy(bytes);
        let mut s = Series::default();
        let mut saw_header = false;
        for (i, raw) in text.split('\n').enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            match read_line(line) {
                Some(Line::Header(h)) => {
                    saw_header = true;
                    s.url = h.get("url").and_then(Json::as_str).map(str::to_string);
                    s.interval_s = h.get("interval_s").and_then(Json::as_f64);
                    s.engine_named = match h.get("engine") {
                        Some(Json::Str(e)) => Some(Engine::from_key(e).unwrap_or(Engine::Vllm)),
                        _ => None,
                    };
                }
                Some(Line::Row(r)) => s.rows.push(r),
                None => {
                    s.skipped += 1;
                    s.first_skipped_line.get_or_insert(i + 1);
                }
            }
        }
        if !saw_header && s.rows.is_empty() {
            let line = s.first_skipped_line;
            return Err(InputError::new(
                file,
                line,
                "not a series file: no header and no sample line could be read",
            ));
        }
        Ok(s)
    }

    /// The note for skipped lines, when any (formats.md §3.3).
    pub fn skip_note(&self, file: &str) -> Option<String> {
        self.first_skipped_line
            .map(|l| format!("{file}:{l}: {} lines skipped", self.skipped))
    }

    /// Seconds since the first sample, for every row: from `t_mono_ns` when every row has
    /// it, else from `t_wall`.
    pub fn times(&self) -> Vec<f64> {
        let mono = !self.rows.is_empty() && self.rows.iter().all(|r| r.t_mono_ns.is_some());
        if mono {
            let t0 = self.rows[0].t_mono_ns.unwrap_or(0);
            self.rows
                .iter()
                .map(|r| (i128::from(r.t_mono_ns.unwrap_or(0)) - i128::from(t0)) as f64 / 1e9)
                .collect()
        } else {
            let t0 = self.rows.first().map_or(0.0, |r| r.t_wall);
            self.rows.iter().map(|r| r.t_wall - t0).collect()
        }
    }

    /// The largest `running` reading (zeros count); none when no row has one.
    pub fn peak_running(&self) -> Option<f64> {
        max_of(self.rows.iter().filter_map(|r| r.running))
    }

    /// The largest running + waiting over rows that have both.
    pub fn peak_in_flight(&self) -> Option<f64> {
        max_of(
            self.rows
                .iter()
                .filter_map(|r| Some(r.running? + r.waiting?)),
        )
    }

    /// Rows with requests running and KV in use (T9).
    pub fn busy(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(
            |r| matches!((r.running, r.kv_usage), (Some(run), Some(u)) if run != 0.0 && u != 0.0),
        )
    }

    /// Every present, non-zero KV reading.
    pub fn usage_readings(&self) -> impl Iterator<Item = f64> + '_ {
        self.rows
            .iter()
            .filter_map(|r| r.kv_usage)
            .filter(|&u| u != 0.0)
    }
}

/// Python's `max` over floats: NaN never replaces a value and is kept only when first.
fn max_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut best: Option<f64> = None;
    for v in values {
        best = match best {
            None => Some(v),
            Some(b) if v > b => Some(v),
            keep => keep,
        };
    }
    best
}

enum Line {
    Header(Json),
    Row(Row),
}

fn read_line(line: &str) -> Option<Line> {
    let v = json::parse(line).ok()?;
    v.as_object()?;
    if v.has("schema") {
        return Some(Line::Header(v));
    }
    let t_wall = v.get("t_wall")?.as_f64()?;
    let t_mono_ns = match v.get("t_mono_ns") {
        None | Some(Json::Null) => None,
        Some(x) => Some(x.as_i64_trunc()?),
    };
    // A present non-numeric value skips the row; null or missing is absent.
    let field = |k: &str| -> Result<Option<f64>, ()> {
        match v.get(k) {
            None | Some(Json::Null) => Ok(None),
            Some(x) => x.as_f64().map(Some).ok_or(()),
        }
    };
    let row = (|| -> Result<Row, ()> {
        Ok(Row {
            t_wall,
            t_mono_ns,
            latency_s: field("latency_s")?,
            running: field("running")?,
            waiting: field("waiting")?,
            kv_usage: field("kv_usage")?,
            preemptions: field("preemptions")?,
            generation_tokens: field("generation_tokens")?,
            prompt_tokens: field("prompt_tokens")?,
            paused: field("paused")?,
        })
    })()
    .ok()?;
    Some(Line::Row(row))
}

/// Writes the header line the recorder writes.
pub fn header_line(url: &str, interval_s: f64, engine: Option<Engine>) -> String {
    let mut pairs = vec![
        ("schema".to_string(), Json::from(SCHEMA)),
        ("url".to_string(), Json::from(url)),
        ("interval_s".to_string(), Json::Float(interval_s)),
    ];
    if let Some(e) = engine {
        pairs.push(("engine".to_string(), Json::from(e.key())));
    }
    Json::Obj(pairs).to_compact()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_header_rows_and_skips_damage() {
        let t = b"{\"schema\": \"inferlint.series/1\", \"url\": \"http://h\", \"interval_s\": 0.25, \"engine\": \"sglang\"}\n\
            {\"t_wall\": 1.0, \"t_mono_ns\": 5, \"running\": 2.0, \"kv_usage\": NaN}\n\
            not json\n\
            {\"t_wall\": 2.0, \"running\": \"x\"}\n\
            [1]\n\
            {\"t_wall\": 3.0, \"t_mono_ns\": null, \"running\": null, \"waiting\": 4}\n\
            {\"t_wall\": 4.0, \"runn";
        let s = Series::read("s", t).unwrap();
        assert_eq!(s.engine(), Engine::Sglang);
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.skipped, 4);
        assert_eq!(s.first_skipped_line, Some(3));
        assert_eq!(s.rows[1].waiting, Some(4.0));
        assert_eq!(s.peak_running(), Some(2.0));
        assert_eq!(s.times(), vec![0.0, 2.0]);
        assert_eq!(s.skip_note("s").unwrap(), "s:3: 4 lines skipped");
    }

    #[test]
    fn binary_is_an_input_error() {
        assert!(Series::read("s", b"\x00\x01\x02").is_err());
        assert!(Series::read("s", b"").is_err());
    }

    #[test]
    fn unknown_engine_reads_as_vllm() {
        let s = Series::read("s", b"{\"schema\": 1, \"engine\": \"tgi\"}").unwrap();
        assert_eq!(s.engine(), Engine::Vllm);
        let s = Series::read("s", b"{\"schema\": 1}").unwrap();
        assert_eq!(s.engine_named, None);
    }
}
