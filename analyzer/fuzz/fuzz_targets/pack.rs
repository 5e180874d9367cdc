//! Fuzz target `pack`: see `analyzer_fuzz::pack_target` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::pack_target(data));
