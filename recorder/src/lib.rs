//! inferlint-recorder: the small native program that touches the world around a
//! benchmark run — it starts and stops the inference server, probes it, reads its metrics
//! and the card, runs the load, and writes a run folder. It judges nothing: verdicts come
//! from the analyzer, which it runs on the closed folder.

pub mod analyze;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod docs;
pub mod flags;
pub mod gpu;
pub mod gpu_sampler;
pub mod guard;
pub mod http;
pub mod load;
pub mod load_cpu;
pub mod load_leftovers;
pub mod probe;
pub mod procs;
pub mod progress;
pub mod prometheus;
pub mod reaper;
pub mod record;
pub mod scrape;
pub mod series;
pub mod signals;
pub mod teardown;
pub mod write_fault;

use std::sync::atomic::{AtomicBool, Ordering};

/// Progress lines go to stderr when stdout carries JSON.
static QUIET_STDOUT: AtomicBool = AtomicBool::new(false);

pub fn set_json(on: bool) {
    QUIET_STDOUT.store(on, Ordering::SeqCst);
}

/// Prints a progress line (`== ...`).
pub fn say(line: &str) {
    let line = analyzer::term::escape(line);
    if QUIET_STDOUT.load(Ordering::SeqCst) {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}
