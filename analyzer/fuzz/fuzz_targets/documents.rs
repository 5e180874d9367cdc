//! Fuzz target `documents`: see `analyzer_fuzz::documents` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::documents(data));
