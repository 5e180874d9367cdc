//! Reads the GPU samples (`docs::gpu`): the header and one row per card per sample, in
//! one pass. Like the series, a damaged line is skipped and counted, never fatal; a file
//! with neither a header nor a row is an input error naming the file.

use crate::docs::gpu::{GpuCard, GpuHeader, GpuRow};
use crate::docs::SCHEMA_KEY;
use crate::input::InputError;
use crate::text::decode_lossy;

/// A whole GPU samples file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuSamples {
    pub header: Option<GpuHeader>,
    pub rows: Vec<GpuRow>,
    /// Lines skipped as unreadable, and the 1-based line of the first.
    pub skipped: usize,
    pub first_skipped_line: Option<usize>,
}

impl GpuSamples {
    pub fn read(file: &str, bytes: &[u8]) -> Result<GpuSamples, InputError> {
        let text = decode_lossy(bytes);
        let mut out = GpuSamples::default();
        let schema_key = format!("\"{SCHEMA_KEY}\"");
        for (i, raw) in text.split('\n').enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let parsed = if line.contains(&schema_key) {
                crate::docs::read_text::<GpuHeader>(file, line)
                    .ok()
                    .map(|h| out.header = Some(h))
            } else {
                // Only the recorder writes this file: standard JSON, one object a line.
                serde_json::from_str::<GpuRow>(line)
                    .ok()
                    .filter(|r| r.t_wall.is_finite())
                    .map(|r| out.rows.push(r))
            };
            if parsed.is_none() {
                out.skipped += 1;
                out.first_skipped_line.get_or_insert(i + 1);
            }
        }
        if out.header.is_none() && out.rows.is_empty() {
            return Err(InputError::new(
                file,
                out.first_skipped_line,
                "not a GPU samples file: no header and no sample line could be read",
            ));
        }
        Ok(out)
    }

    /// The note for skipped lines, when any.
    pub fn skip_note(&self, file: &str) -> Option<String> {
        self.first_skipped_line
            .map(|l| format!("{file}:{l}: {} lines skipped", self.skipped))
    }

    /// The cards: the header's, then any card a row names that the header lacks.
    pub fn cards(&self) -> Vec<GpuCard> {
        let mut cards: Vec<GpuCard> = self
            .header
            .as_ref()
            .map(|h| h.gpus.clone())
            .unwrap_or_default();
        for r in &self.rows {
            if !cards.iter().any(|c| c.index == r.gpu) {
                cards.push(GpuCard {
                    index: r.gpu,
                    ..GpuCard::default()
                });
            }
        }
        cards
    }

    /// One card's rows, in file order.
    pub fn rows_of(&self, gpu: i64) -> impl Iterator<Item = &GpuRow> {
        self.rows.iter().filter(move |r| r.gpu == gpu)
    }

    /// Intended seconds between samples.
    pub fn interval_s(&self) -> Option<f64> {
        self.header
            .as_ref()
            .and_then(|h| h.interval_s)
            .filter(|x| x.is_finite() && *x > 0.0)
    }
}

/// Seconds of `row` after a zero point: by the monotonic clock when both have it, else
/// by the wall clock.
pub fn seconds_since(row: &GpuRow, zero_mono: Option<i64>, zero_wall: f64) -> f64 {
    match (row.t_mono_ns, zero_mono) {
        (Some(m), Some(z)) => (i128::from(m) - i128::from(z)) as f64 / 1e9,
        _ => row.t_wall - zero_wall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_header_rows_and_skips_damage() {
        let text = "{\"schema\": \"inferlint.gpu/1\", \"interval_s\": 0.25, \"gpus\": [{\"index\": 0, \"name\": \"A\", \"max_sm_clock_mhz\": 2000.0, \"power_limit_w\": 300.0}]}\n\
            {\"t_wall\": 1.0, \"t_mono_ns\": 10, \"gpu\": 0, \"sm_clock_mhz\": 1900.0, \"reasons\": []}\n\
            not json\n\
            {\"t_wall\": 1.25, \"gpu\": 1, \"sm_clock_mhz\": null}\n\
            {\"t_wall\": 1.5, \"gpu\": 0, \"sm_c";
        let g = GpuSamples::read("g", text.as_bytes()).unwrap();
        assert_eq!(g.rows.len(), 2);
        assert_eq!((g.skipped, g.first_skipped_line), (2, Some(3)));
        assert_eq!(g.interval_s(), Some(0.25));
        let cards: Vec<i64> = g.cards().iter().map(|c| c.index).collect();
        assert_eq!(cards, vec![0, 1]);
        assert_eq!(g.rows_of(0).count(), 1);
        assert_eq!(g.skip_note("g").unwrap(), "g:3: 2 lines skipped");
    }

    #[test]
    fn nothing_readable_is_an_input_error_naming_the_file() {
        let e = GpuSamples::read("run/gpu.samples.jsonl", b"\x00\x01").unwrap_err();
        assert!(e.to_string().starts_with("run/gpu.samples.jsonl"), "{e}");
        assert!(GpuSamples::read("g", b"").is_err());
    }
}
