//! Fuzz target `bootlog_trtllm`: see `analyzer_fuzz::bootlog_trtllm` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::bootlog_trtllm(data));
