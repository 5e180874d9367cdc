//! Fuzz target `aiperf_records`: see `analyzer_fuzz::aiperf_records` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::aiperf_records(data));
