//! Fuzz target `series`: see `analyzer_fuzz::series` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::series(data));
