//! `watch URL -o FILE`: the series recorder until a signal or
//! `--duration`; with `--prometheus`, one series per replica (`replicas.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::checked_reading;
use crate::cli::{named_engine, WatchArgs};
use crate::series::{self, SeriesWriter};
use crate::signals;

pub fn watch(args: WatchArgs) -> Result<i32> {
    let engine = named_engine(&args.engine).map_err(anyhow::Error::msg)?;
    if !(args.interval > 0.0 && args.interval.is_finite()) {
        bail!("--interval must be a positive number of seconds");
    }
    if let Some((url, selector)) = args.source.source().map_err(anyhow::Error::msg)? {
        let out = &args.out;
        return super::replicas::watch(&url, selector, engine, out, args.interval, args.duration);
    }
    let url = args.url.as_deref().unwrap_or_default();
    let (scraper, _) = match checked_reading(url, engine) {
        Ok(x) => x,
        Err(status) => return Ok(status),
    };
    signals::install();
    if let Some(p) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(p)?;
    }
    let mut writer = SeriesWriter::create(&args.out, &scraper.base, args.interval)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    let stop = Arc::new(AtomicBool::new(false));
    let stop_setter = stop.clone();
    let duration = args.duration;
    std::thread::spawn(move || {
        let t0 = Instant::now();
        while !signals::interrupted() && duration.is_none_or(|d| t0.elapsed().as_secs_f64() < d) {
            std::thread::sleep(Duration::from_millis(10));
        }
        stop_setter.store(true, Ordering::SeqCst);
    });
    let latest = Arc::new(std::sync::Mutex::new(None));
    let summary = series::record_until(
        &scraper,
        &mut writer,
        Duration::from_secs_f64(args.interval),
        &stop,
        &latest,
        true,
    );
    if let Some(e) = summary.write_error {
        eprintln!(
            "inferlint-recorder: writing {} failed: {e}",
            args.out.display()
        );
    }
    println!("{} samples -> {}", summary.rows, args.out.display());
    if let Some(n) = summary.note {
        eprintln!("{n}");
    }
    Ok(0)
}
