//! Fuzz target `prom`: see `analyzer_fuzz::prom` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::prom(data));
