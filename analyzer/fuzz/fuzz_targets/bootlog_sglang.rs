//! Fuzz target `bootlog_sglang`: see `analyzer_fuzz::bootlog_sglang` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::bootlog_sglang(data));
