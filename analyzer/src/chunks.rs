//! Long loops cut into calls. A browser runs a WebAssembly function in its baseline
//! compiler until that call returns, however long it loops; its optimized code serves
//! only later calls. A loop over a week's readings, run once, would stay in baseline code
//! throughout: run through [`each_chunk`], it is a function called once per chunk, and
//! the optimized code takes over after the first few. Natively it costs one indirect
//! call per chunk.

use std::ops::Range;

/// Indices in one call of the step.
pub const CHUNK: usize = 4096;

/// Calls `step` with `0..n` cut in order into ranges of at most [`CHUNK`] indices.
#[inline(never)]
pub fn each_chunk(n: usize, step: &mut dyn FnMut(Range<usize>)) {
    let mut start = 0;
    while start < n {
        let end = n.min(start + CHUNK);
        step(start..end);
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_index_once_in_order() {
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7] {
            let mut seen = Vec::new();
            let mut calls = 0;
            each_chunk(n, &mut |r| {
                assert!(!r.is_empty() && r.len() <= CHUNK);
                calls += 1;
                seen.extend(r);
            });
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
            assert_eq!(calls, n.div_ceil(CHUNK));
        }
    }
}
