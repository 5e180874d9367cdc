//! Writes a synthetic 24-hour vLLM recording (345,600 readings at 4 Hz) into a folder, for
//! measuring the one-file report's size and opening time:
//!   cargo run --release -p viewer --example long_run -- DIR [SAMPLES]

#[allow(dead_code)]
#[path = "../../analyzer/cli/benches/long_run.rs"]
mod long_run;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: long_run DIR [SAMPLES]");
    let samples = args
        .next()
        .map_or(345_600, |s| s.parse().expect("SAMPLES: a number"));
    let size = long_run::write(std::path::Path::new(&dir), samples).expect("write the recording");
    println!("{dir}: {samples} readings, {size} bytes");
}
