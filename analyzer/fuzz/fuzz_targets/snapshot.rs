//! Fuzz target `snapshot`: see `analyzer_fuzz::snapshot` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::snapshot(data));
