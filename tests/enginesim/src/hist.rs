//! Cumulative histograms as prometheus_client keeps them.

#[derive(Debug, Clone)]
pub struct Hist {
    pub bounds: &'static [f64],
    pub counts: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

impl Hist {
    pub fn new(bounds: &'static [f64]) -> Hist {
        Hist {
            bounds,
            counts: vec![0; bounds.len()],
            sum: 0.0,
            count: 0,
        }
    }

    pub fn observe(&mut self, v: f64) {
        for (i, b) in self.bounds.iter().enumerate() {
            if v <= *b {
                self.counts[i] += 1;
            }
        }
        self.sum += v;
        self.count += 1;
    }
}

pub const TTFT: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];
pub const LATENCY: &[f64] = &[
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
    480.0, 960.0, 1920.0, 7680.0,
];
pub const ITL: &[f64] = &[
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
    40.0, 80.0,
];
pub const TOKENS: &[f64] = &[
    1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0,
];
pub const ITER_TOKENS: &[f64] = &[
    1.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0,
];
pub const COUNT: &[f64] = &[0.0, 1.0, 2.0, 5.0, 10.0, 20.0];

/// Prometheus float text (`0.0`, `1.5`, `1.7908243272216985e+09`).
pub fn fmt(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.1}");
    }
    if v.abs() >= 1e9 {
        let s = format!("{v:e}");
        // Rust writes 1.79e9; Python writes 1.79e+09.
        if let Some((m, e)) = s.split_once('e') {
            let e: i32 = e.parse().unwrap_or(0);
            return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
        }
    }
    format!("{v}")
}

/// Render one histogram family's samples. `labels` is the label text without braces
/// (e.g. `engine="0",model_name="m"`), placed before `le`.
pub fn render(out: &mut String, name: &str, labels: &str, h: &Hist, with_buckets: bool) {
    use std::fmt::Write;
    let sep = if labels.is_empty() { "" } else { "," };
    if with_buckets {
        for (i, b) in h.bounds.iter().enumerate() {
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{}\"}} {}",
                fmt(*b),
                fmt(h.counts[i] as f64)
            );
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            fmt(h.count as f64)
        );
    }
    let open = |o: &mut String, suffix: &str, v: f64| {
        if labels.is_empty() {
            let _ = writeln!(o, "{name}_{suffix} {}", fmt(v));
        } else {
            let _ = writeln!(o, "{name}_{suffix}{{{labels}}} {}", fmt(v));
        }
    };
    open(out, "count", h.count as f64);
    open(out, "sum", h.sum);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt(22.0), "22.0");
        assert_eq!(fmt(0.25), "0.25");
        assert_eq!(fmt(1790824327.2216985), "1.7908243272216985e+09");
    }
}
