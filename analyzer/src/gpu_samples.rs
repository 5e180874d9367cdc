//! Reads the GPU samples (`docs::gpu`): the header and one row per card per sample, in
//! the one pass of `samples.rs`. Every number goes through the plausibility gate
//! (`plausible`): a refused value is recorded with its line and left out (a row whose
//! `t_wall` is refused is dropped).

use crate::docs::gpu::{key, GpuCard, GpuHeader, GpuRow};
use crate::input::InputError;
use crate::plausible::{self, Implausible, Quantity};
use crate::samples::{self, Kind, Samples};

/// A whole GPU samples file.
pub type GpuSamples = Samples<GpuHeader, GpuRow>;

const GPU: Kind<GpuHeader, GpuRow> = Kind {
    what: "GPU samples",
    gate_header,
    gate_row,
};

/// The header through the gate: refused numbers become absent.
fn gate_header(
    mut h: GpuHeader,
    at: (&str, Option<usize>),
    out: &mut Vec<Implausible>,
) -> GpuHeader {
    h.interval_s = plausible::keep(Quantity::Seconds, h.interval_s, at, key::INTERVAL_S, out);
    for c in &mut h.gpus {
        c.max_sm_clock_mhz = plausible::keep(
            Quantity::ClockMhz,
            c.max_sm_clock_mhz,
            at,
            key::MAX_SM_CLOCK_MHZ,
            out,
        );
        c.power_limit_w = plausible::keep(
            Quantity::PowerW,
            c.power_limit_w,
            at,
            key::POWER_LIMIT_W,
            out,
        );
    }
    h
}

/// A row through the gate: refused values become absent; a refused `t_wall` (the one
/// required key) drops the row.
fn gate_row(
    mut r: GpuRow,
    at: (&str, Option<usize>),
    out: &mut Vec<Implausible>,
) -> Option<GpuRow> {
    r.t_mono_ns = plausible::gate_clocks(
        r.t_wall,
        r.t_mono_ns,
        at,
        (key::T_WALL, key::T_MONO_NS),
        out,
    )?;
    let mut keep = |q, v, field| plausible::keep(q, v, at, field, out);
    r.sm_clock_mhz = keep(Quantity::ClockMhz, r.sm_clock_mhz, key::SM_CLOCK_MHZ);
    r.power_w = keep(Quantity::PowerW, r.power_w, key::POWER_W);
    r.temp_c = keep(Quantity::TempC, r.temp_c, key::TEMP_C);
    r.util_pct = keep(Quantity::Percent, r.util_pct, key::UTIL_PCT);
    Some(r)
}

impl Samples<GpuHeader, GpuRow> {
    pub fn read(file: &str, bytes: &[u8]) -> Result<GpuSamples, InputError> {
        samples::read(file, bytes, &GPU)
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
    fn implausible_readings_are_refused_named_and_left_out() {
        let text = "{\"schema\": \"inferlint.gpu/1\", \"interval_s\": 0.25, \"gpus\": [{\"index\": 0, \"name\": \"A\", \"max_sm_clock_mhz\": 1e308, \"power_limit_w\": -1}]}\n\
            {\"t_wall\": 1.0, \"t_mono_ns\": 9223372036854775808, \"gpu\": 0, \"sm_clock_mhz\": 50000.0, \"power_w\": NaN, \"temp_c\": 400, \"util_pct\": 101}\n\
            {\"t_wall\": NaN, \"gpu\": 0, \"sm_clock_mhz\": 1900.0}\n\
            {\"t_wall\": 1.5, \"t_mono_ns\": 10, \"gpu\": 0, \"sm_clock_mhz\": 1900.0, \"power_w\": 300.0, \"temp_c\": 60, \"util_pct\": 97}\n";
        let g = GpuSamples::read("run/gpu.samples.jsonl", text.as_bytes()).unwrap();
        assert_eq!(g.skipped, 0);
        let card = &g.header.as_ref().unwrap().gpus[0];
        assert_eq!((card.max_sm_clock_mhz, card.power_limit_w), (None, None));
        // The NaN-stamped row is dropped; the first row keeps only its wall clock.
        assert_eq!(g.rows.len(), 2);
        let r = &g.rows[0];
        assert_eq!(
            (r.t_mono_ns, r.sm_clock_mhz, r.power_w, r.temp_c, r.util_pct),
            (None, None, None, None, None)
        );
        assert_eq!(g.rows[1].sm_clock_mhz, Some(1900.0));
        let shown: Vec<String> = g.implausible.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "run/gpu.samples.jsonl:1: max_sm_clock_mhz = 1e308 is above 10,000 MHz, faster than any GPU clock",
                "run/gpu.samples.jsonl:1: power_limit_w = -1 is negative where the quantity cannot be",
                "run/gpu.samples.jsonl:2: t_mono_ns = 9.223372036854776e18 is past any monotonic clock (146 years)",
                "run/gpu.samples.jsonl:2: sm_clock_mhz = 50000 is above 10,000 MHz, faster than any GPU clock",
                "run/gpu.samples.jsonl:2: power_w = NaN is not a number",
                "run/gpu.samples.jsonl:2: temp_c = 400 is not a temperature a working card has (-40 to 150 °C)",
                "run/gpu.samples.jsonl:2: util_pct = 101 is above 100%",
                "run/gpu.samples.jsonl:3: t_wall = NaN is not a number",
            ]
        );
    }

    #[test]
    fn nothing_readable_is_an_input_error_naming_the_file() {
        let e = GpuSamples::read("run/gpu.samples.jsonl", b"\x00\x01").unwrap_err();
        assert!(e.to_string().starts_with("run/gpu.samples.jsonl"), "{e}");
        assert!(GpuSamples::read("g", b"").is_err());
    }
}
