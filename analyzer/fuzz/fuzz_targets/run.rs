//! Fuzz target `run`: see `analyzer_fuzz::run` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::run(data));
