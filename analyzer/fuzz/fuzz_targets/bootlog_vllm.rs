//! Fuzz target `bootlog_vllm`: see `analyzer_fuzz::bootlog_vllm` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::bootlog_vllm(data));
