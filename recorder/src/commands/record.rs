//! `record`: the options checked, then the run of `record::record`.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::cli::{named_engine, RecordArgs};
use crate::record::{self, FleetOptions, Options};

/// `record-YYYYMMDD-HHMMSS` in local time.
fn default_folder() -> PathBuf {
    let now = nix::libc::time_t::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
    .unwrap_or(0);
    // SAFETY: localtime_r writes into the zeroed struct we own.
    let mut tm: nix::libc::tm = unsafe { std::mem::zeroed() };
    unsafe { nix::libc::localtime_r(&now, &mut tm) };
    PathBuf::from(format!(
        "record-{:04}{:02}{:02}-{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    ))
}

pub fn record(args: RecordArgs, argv: Vec<String>) -> Result<i32> {
    let engine = named_engine(&args.engine).map_err(anyhow::Error::msg)?;
    if !(args.interval > 0.0 && args.interval.is_finite()) {
        bail!("--interval must be a positive number of seconds");
    }
    if !(args.ready_timeout > 0.0 && args.ready_timeout.is_finite()) {
        bail!("--ready-timeout must be a positive number of seconds");
    }
    if !(args.stop_card_timeout >= 0.0 && args.stop_card_timeout.is_finite()) {
        bail!("--stop-card-timeout must be a number of seconds");
    }
    let fleet = match args.source.source().map_err(anyhow::Error::msg)? {
        Some(_) if args.serve.is_some() => {
            bail!("--prometheus reads replicas that are already running: use --url (the router), not --serve")
        }
        Some((prometheus, selector)) => Some(FleetOptions {
            prometheus,
            selector,
            router_metrics: args.router_metrics,
        }),
        None => None,
    };
    crate::set_json(args.common.json);
    let mut load = args.load;
    if load.first().is_some_and(|x| x == "--") {
        load.remove(0);
    }
    Ok(record::record(Options {
        dir: args.out.unwrap_or_else(default_folder),
        serve: args.serve,
        url: args.url,
        boot_log: args.boot_log,
        requested: args.requested,
        bench_result: args.bench_result,
        interval: args.interval,
        ready_timeout: args.ready_timeout,
        stop_card_timeout: args.stop_card_timeout,
        require_gpu_check: args.require_gpu_check,
        no_probe: args.no_probe,
        title: args.title,
        no_analyze: args.no_analyze,
        json: args.common.json,
        strict: args.common.strict,
        engine,
        load,
        argv,
        fleet,
    }))
}
