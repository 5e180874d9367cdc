//! Reads the load command's CPU samples (`docs::load_cpu`) in the one pass of
//! `samples.rs`, every number through the plausibility gate; from them, how much of a
//! stretch the load tool spent at a full core (T20).

use crate::docs::load_cpu::{key, LoadCpuHeader, LoadCpuRow};
use crate::input::InputError;
use crate::plausible::{self, Implausible, Quantity};
use crate::samples::{self, Kind, Samples};

/// Cores in use between two samples from which the tool counts as at a full core: a
/// single-threaded client can use no more than one, and sampling jitter takes a little.
pub const FULL_CORE: f64 = 0.9;
/// The share of a stretch at a full core from which the tool is named as the likely
/// cause of a shortfall.
pub const PINNED_SHARE: f64 = 0.5;

/// A whole CPU samples file.
pub type LoadCpu = Samples<LoadCpuHeader, LoadCpuRow>;

const CPU: Kind<LoadCpuHeader, LoadCpuRow> = Kind {
    what: "CPU samples",
    gate_header,
    gate_row,
};

fn gate_header(
    mut h: LoadCpuHeader,
    at: (&str, Option<usize>),
    out: &mut Vec<Implausible>,
) -> LoadCpuHeader {
    h.interval_s = plausible::keep(Quantity::Seconds, h.interval_s, at, key::INTERVAL_S, out);
    h
}

fn gate_row(
    mut r: LoadCpuRow,
    at: (&str, Option<usize>),
    out: &mut Vec<Implausible>,
) -> Option<LoadCpuRow> {
    r.t_mono_ns = plausible::gate_clocks(
        r.t_wall,
        r.t_mono_ns,
        at,
        (key::T_WALL, key::T_MONO_NS),
        out,
    )?;
    r.cpu_s = plausible::keep(Quantity::Seconds, r.cpu_s, at, key::CPU_S, out);
    Some(r)
}

impl Samples<LoadCpuHeader, LoadCpuRow> {
    pub fn read(file: &str, bytes: &[u8]) -> Result<LoadCpu, InputError> {
        samples::read(file, bytes, &CPU)
    }

    /// The share of `[from, to]` (unix seconds) covered by consecutive samples between
    /// which the tree used at least [`FULL_CORE`] cores; none when fewer than two samples
    /// with CPU times fall in it (a stretch shorter than the interval says nothing).
    pub fn full_core_share(&self, from: f64, to: f64) -> Option<f64> {
        let rows: Vec<&LoadCpuRow> = self
            .rows
            .iter()
            .filter(|r| r.cpu_s.is_some() && r.t_wall >= from && r.t_wall <= to)
            .collect();
        let (mut covered, mut full) = (0.0, 0.0);
        for w in rows.windows(2) {
            let dt = match (w[0].t_mono_ns, w[1].t_mono_ns) {
                (Some(a), Some(b)) => (b - a) as f64 / 1e9,
                _ => w[1].t_wall - w[0].t_wall,
            };
            let (Some(a), Some(b)) = (w[0].cpu_s, w[1].cpu_s) else {
                continue;
            };
            // A tree whose processes ended loses their time: not a sample of use.
            if dt <= 0.0 || b < a {
                continue;
            }
            covered += dt;
            if (b - a) / dt >= FULL_CORE {
                full += dt;
            }
        }
        (covered > 0.0).then(|| full / covered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: f64, cpu: f64) -> String {
        format!(
            "{{\"t_wall\": {t}, \"t_mono_ns\": {}, \"cpu_s\": {cpu}, \"processes\": 1}}",
            (t * 1e9) as i64
        )
    }

    #[test]
    fn the_share_at_a_full_core() {
        let text = [
            "{\"schema\": \"inferlint.loadcpu/1\", \"interval_s\": 1.0, \"pid\": 7}".to_string(),
            row(100.0, 0.0),
            row(101.0, 0.98),
            row(102.0, 1.97),
            "garbage".into(),
            row(103.0, 2.1),
            row(104.0, 2.2),
        ]
        .join("\n");
        let c = LoadCpu::read("load.cpu.jsonl", text.as_bytes()).unwrap();
        assert_eq!(
            (c.rows.len(), c.skipped, c.first_skipped_line),
            (5, 1, Some(5))
        );
        assert_eq!(c.full_core_share(100.0, 104.0), Some(0.5));
        assert_eq!(c.full_core_share(100.0, 102.0), Some(1.0));
        assert_eq!(c.full_core_share(100.5, 101.5), None, "one sample only");
    }

    #[test]
    fn refused_values_are_named_and_an_empty_file_is_an_error() {
        let text = format!("{}\n{{\"t_wall\": 2.0, \"cpu_s\": -1}}\n", row(1.0, 0.5));
        let c = LoadCpu::read("c", text.as_bytes()).unwrap();
        assert_eq!(c.rows[1].cpu_s, None);
        assert_eq!(c.implausible.len(), 1);
        assert!(c.implausible[0].to_string().starts_with("c:2: cpu_s"));
        let e = LoadCpu::read("c", b"nothing\n").unwrap_err();
        assert_eq!(e.line, Some(1));
    }
}
