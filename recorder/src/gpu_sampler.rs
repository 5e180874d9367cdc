//! The GPU samples for T16 (`gpu.samples.jsonl`, `analyzer::docs::gpu`): one
//! `nvidia-smi --query-gpu=... -lms N` child kept running from just before the load until
//! it ends — never one process per sample — and a thread that stamps each line it prints
//! with both clocks and appends it as a row, flushed, so a kill leaves a readable file.
//!
//! Before it starts, two one-off queries: the cards (maximum SM clock, power limit) for
//! the header, and which reason fields the driver answers (`clocks_event_reasons.*`, else
//! the older `clocks_throttle_reasons.*`, asked once). Without `nvidia-smi` nothing is
//! written and T16 says "can't tell".

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use analyzer::docs::gpu::{GpuCard, GpuHeader, GpuRow, REASONS, REASON_FIELDS};
use analyzer::docs::GPU_SAMPLES;
use analyzer::num::round_dp;

use crate::clock;
use crate::gpu::{self, value};
use crate::write_fault::WriteFault;

/// The per-sample fields, before the reasons.
const SAMPLE: &str = "index,clocks.sm,power.draw,temperature.gpu,utilization.gpu";
const CSV: &str = "--format=csv,noheader,nounits";

fn number(s: &str) -> Option<f64> {
    value(s)?.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// The header's cards from `index,name,clocks.max.sm,power.limit` lines; the fixed fields
/// are at the end, so a comma inside a name survives.
pub fn parse_cards(out: &str) -> Vec<GpuCard> {
    out.lines()
        .filter_map(|line| {
            let parts: Vec<&str> = line.split(',').collect();
            if parts.len() < 4 {
                return None;
            }
            let n = parts.len();
            Some(GpuCard {
                index: parts[0].trim().parse().ok()?,
                name: parts[1..n - 2].join(",").trim().to_string(),
                max_sm_clock_mhz: number(parts[n - 2]),
                power_limit_w: number(parts[n - 1]),
            })
        })
        .collect()
}

/// One sample line (`SAMPLE` then one `Active`/`Not Active` per reason asked); none for a
/// line that is not one. The times are filled in by the caller.
pub fn parse_sample(line: &str, reasons: bool) -> Option<GpuRow> {
    let parts: Vec<&str> = line.split(',').map(str::trim).collect();
    let want = 5 + if reasons { REASONS.len() } else { 0 };
    if parts.len() != want {
        return None;
    }
    let active = reasons.then(|| {
        REASONS
            .iter()
            .zip(&parts[5..])
            .filter(|(_, v)| v.eq_ignore_ascii_case("active"))
            .map(|(r, _)| r.to_string())
            .collect()
    });
    Some(GpuRow {
        t_wall: 0.0,
        t_mono_ns: None,
        gpu: parts[0].parse().ok()?,
        sm_clock_mhz: number(parts[1]),
        power_w: number(parts[2]),
        temp_c: number(parts[3]),
        util_pct: number(parts[4]),
        reasons: active,
    })
}

/// The reason fields the driver answers, asked once: the newer spelling, else the older.
fn reasons_field() -> Option<&'static str> {
    REASON_FIELDS.into_iter().find(|family| {
        let q = format!("--query-gpu={family}.{}", REASONS[0]);
        gpu::run(&[&q, CSV], Duration::from_secs(30)).is_some()
    })
}

/// The `--query-gpu` list of the running sampler.
fn sample_query(family: Option<&str>) -> String {
    let mut q = SAMPLE.to_string();
    if let Some(f) = family {
        for r in REASONS {
            q.push_str(&format!(",{f}.{r}"));
        }
    }
    q
}

/// A running sampler.
pub struct Sampler {
    child: Child,
    reader: JoinHandle<Written>,
}

/// What the reader thread wrote.
#[derive(Debug, Default)]
pub struct Written {
    pub rows: usize,
    pub skipped: usize,
    pub error: Option<String>,
}

impl Sampler {
    /// Starts sampling every `interval` into `path`; `Err` says why not.
    pub fn start(path: &Path, interval: Duration, fault: WriteFault) -> Result<Sampler, String> {
        let exe = gpu::executable().ok_or("nvidia-smi is missing")?;
        let cards = gpu::run(
            &["--query-gpu=index,name,clocks.max.sm,power.limit", CSV],
            Duration::from_secs(30),
        )
        .map(|out| parse_cards(&out))
        .ok_or("nvidia-smi failed to list the cards")?;
        let family = reasons_field();
        let header = GpuHeader {
            interval_s: Some(interval.as_secs_f64()),
            reasons_field: family.map(str::to_string),
            gpus: cards,
        };
        let file = File::create(path)
            .and_then(|mut f| writeln!(f, "{}", analyzer::docs::to_line(&header)).map(|()| f))
            .map_err(|e| fault.report(&e, GPU_SAMPLES))?;
        let ms = interval.as_millis().max(1).to_string();
        let mut cmd = Command::new(exe);
        cmd.args([
            &format!("--query-gpu={}", sample_query(family)),
            CSV,
            "-lms",
            &ms,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        let mut child = crate::reaper::spawn(&mut cmd).map_err(|e| e.to_string())?;
        let out = child.stdout.take().ok_or("no output from nvidia-smi")?;
        let reasons = family.is_some();
        // Named, so its cost can be read apart in /proc/PID/task/*/comm.
        let reader = std::thread::Builder::new()
            .name("gpu-samples".into())
            .spawn(move || copy_rows(BufReader::new(out), file, reasons, &fault))
            .map_err(|e| e.to_string())?;
        Ok(Sampler { child, reader })
    }

    /// Stops `nvidia-smi` and waits for the last row (at most `wait`).
    pub fn finish(mut self, wait: Duration) -> Option<Written> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let end = std::time::Instant::now() + wait;
        while !self.reader.is_finished() {
            if std::time::Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.reader.join().ok()
    }
}

/// Appends a row per sample line, stamped when read, each flushed; a failed write ends
/// the sampling and is the run's write fault.
fn copy_rows(out: impl BufRead, mut file: File, reasons: bool, fault: &WriteFault) -> Written {
    let mut w = Written::default();
    for line in out.lines() {
        let Ok(line) = line else { break };
        let Some(mut row) = parse_sample(&line, reasons) else {
            w.skipped += 1;
            continue;
        };
        let now = clock::Stamp::now();
        row.t_wall = round_dp(now.wall, 6);
        row.t_mono_ns = Some(now.mono_ns);
        let mut text = row.line();
        text.push('\n');
        if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
            w.error = Some(fault.report(&e, GPU_SAMPLES));
            break;
        }
        w.rows += 1;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_and_samples_parse_as_the_driver_prints_them() {
        let cards =
            parse_cards("0, NVIDIA GeForce RTX 4090, 3105, 450.00\n1, Acme, X, [N/A], [N/A]\n");
        assert_eq!(cards.len(), 2);
        assert_eq!(cards[0].max_sm_clock_mhz, Some(3105.0));
        assert_eq!(cards[0].power_limit_w, Some(450.0));
        assert_eq!(cards[1].name, "Acme, X");
        assert_eq!(cards[1].max_sm_clock_mhz, None);
        let row = parse_sample(
            "0, 1395, 449.60, 88, 99, Not Active, Active, Not Active, Active, Not Active, Active",
            true,
        )
        .unwrap();
        assert_eq!(row.sm_clock_mhz, Some(1395.0));
        assert_eq!(
            row.reasons.as_deref(),
            Some(
                &[
                    "sw_power_cap".to_string(),
                    "hw_thermal_slowdown".into(),
                    "sw_thermal_slowdown".into()
                ][..]
            )
        );
        let row = parse_sample("1, [N/A], [N/A], 40, 0", false).unwrap();
        assert_eq!((row.gpu, row.sm_clock_mhz, row.reasons), (1, None, None));
        // Not a sample: too few fields, or an index that is no number.
        assert!(parse_sample("0, 1395", false).is_none());
        assert!(parse_sample("x, 1, 2, 3, 4", false).is_none());
    }

    #[test]
    fn the_query_names_each_reason_in_the_answering_family() {
        assert_eq!(sample_query(None), SAMPLE);
        let q = sample_query(Some("clocks_throttle_reasons"));
        assert!(
            q.ends_with(",clocks_throttle_reasons.sw_thermal_slowdown"),
            "{q}"
        );
        assert_eq!(q.matches(',').count(), 4 + REASONS.len());
    }
}
