//! Fuzz target `lenient_json`: see `analyzer_fuzz::lenient_json` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::lenient_json(data));
