//! Fuzz target `python_literal`: see `analyzer_fuzz::python_literal` for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| analyzer_fuzz::python_literal(data));
