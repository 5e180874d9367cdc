//! The one pass both sample files are read in (the GPU samples, `gpu_samples.rs`, and the
//! load command's CPU samples, `load_cpu.rs`): a header line (it names the schema) and one
//! JSON row per line. A damaged line is skipped and counted, never fatal; every number
//! goes through the caller's plausibility gate; a file with neither a header nor a row is
//! an input error naming the file.

use serde::de::DeserializeOwned;

use crate::docs::{Document, SCHEMA_KEY};
use crate::input::InputError;
use crate::json;
use crate::plausible::Implausible;
use crate::text::decode_lossy;

/// Where a value was read: the file and its 1-based line.
pub type At<'a> = (&'a str, Option<usize>);

/// A whole samples file.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples<H, R> {
    pub header: Option<H>,
    pub rows: Vec<R>,
    /// Lines skipped as unreadable, and the 1-based line of the first.
    pub skipped: usize,
    pub first_skipped_line: Option<usize>,
    /// Values the plausibility gate refused, each absent from its header or row.
    pub implausible: Vec<Implausible>,
}

impl<H, R> Default for Samples<H, R> {
    fn default() -> Self {
        Samples {
            header: None,
            rows: Vec::new(),
            skipped: 0,
            first_skipped_line: None,
            implausible: Vec::new(),
        }
    }
}

/// How one kind of samples file is read: its name in messages ("GPU samples") and the
/// gate of its header and rows (a row the gate refuses whole is dropped).
pub struct Kind<H, R> {
    pub what: &'static str,
    pub gate_header: fn(H, At<'_>, &mut Vec<Implausible>) -> H,
    pub gate_row: fn(R, At<'_>, &mut Vec<Implausible>) -> Option<R>,
}

/// One row: serde_json first (the recorder writes standard JSON), else the lenient
/// reader, so a hand-edited `NaN` or a stamp past i64 reaches the gate and is named
/// rather than skipped.
fn read_row<R: DeserializeOwned>(line: &str) -> Option<R> {
    serde_json::from_str::<R>(line)
        .ok()
        .or_else(|| json::from_json(&json::parse(line).ok()?).ok())
}

/// Reads `bytes` (the file `file`) in one pass.
pub fn read<H: Document, R: DeserializeOwned>(
    file: &str,
    bytes: &[u8],
    kind: &Kind<H, R>,
) -> Result<Samples<H, R>, InputError> {
    let text = decode_lossy(bytes);
    let mut out = Samples::default();
    let schema_key = format!("\"{SCHEMA_KEY}\"");
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let at = (file, Some(i + 1));
        let parsed = if line.contains(&schema_key) {
            crate::docs::read_text::<H>(file, line)
                .ok()
                .map(|h| out.header = Some((kind.gate_header)(h, at, &mut out.implausible)))
        } else {
            read_row::<R>(line).map(|r| {
                out.rows
                    .extend((kind.gate_row)(r, at, &mut out.implausible))
            })
        };
        if parsed.is_none() {
            out.skipped += 1;
            out.first_skipped_line.get_or_insert(i + 1);
        }
    }
    if out.header.is_none() && out.rows.is_empty() {
        return Err(InputError::new(
            file,
            out.first_skipped_line,
            format!(
                "not a {} file: no header and no sample line could be read",
                kind.what
            ),
        ));
    }
    Ok(out)
}
