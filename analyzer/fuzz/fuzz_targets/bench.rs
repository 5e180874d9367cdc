//! Fuzz target `bench`: see `analyzer_fuzz::bench` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::bench(data));
