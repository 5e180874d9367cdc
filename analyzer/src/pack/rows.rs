//! A series carried as columns (`columns`), read straight into its rows: the same
//! [`Series`] as reading its text, without making the text or parsing JSON again.
//!
//! Every line of a columnar copy is a skeleton (keys, spaces, braces, `null`, `NaN`…) with
//! number values in its slots. Each skeleton is judged once, by reading two probe lines
//! (its slots filled with two sets of distinct markers) with the text reader's own fast
//! path (`series::plain_row`): when both read as rows and every column holds either a
//! slot's marker (in both probes) or the same constant, any line of that skeleton whose
//! values are plain numbers reads as that row with the slots' values in place of the
//! markers. Its row goes through the same plausibility gate as a text line
//! (`SeriesReader::push_row`). Every other line (the header, a raw value, a fractional
//! `t_mono_ns`, a skeleton the fast path is unsure of) is written back as its text and
//! read as text (`SeriesReader::push_line`), so the result is that of reading the text.

use super::columns::{ColumnsError, Lines, Value};
use crate::chunks::CHUNK;
use crate::input::InputError;
use crate::series::{plain_row, Row, Series, SeriesReader};

/// The series whose columnar copy (inflated) is `columns`, read as `file`; refused, as
/// an unreadable embedded copy, when damaged or when its text would pass `limit` bytes.
pub fn read_series(file: &str, columns: &[u8], limit: usize) -> Result<Series, InputError> {
    let damaged = |e: ColumnsError| unreadable(file, e);
    let lines = Lines::new(columns, limit).map_err(damaged)?;
    let slots = lines.skeletons().map(|s| s.len() - 1).max().unwrap_or(0);
    let mut read = Reading {
        plans: lines.skeletons().map(plan_of).collect(),
        memo: vec![Memo::default(); slots],
        text: Vec::new(),
        reader: SeriesReader::new(file),
        lines,
    };
    // Every line was counted when the copy was opened (so its count is within its size).
    read.reader.reserve(read.lines.len());
    // In batches, for the reason of `crate::chunks`: a day's series was read in 225 ms
    // instead of 365 (the same steps in WebAssembly under Node, first run).
    while read.batch(CHUNK).map_err(damaged)? {}
    read.reader.finish()
}

/// A series being read from its columns.
struct Reading<'a> {
    lines: Lines<'a>,
    plans: Vec<Plan>,
    memo: Vec<Memo>,
    /// The text of a line read as text.
    text: Vec<u8>,
    reader: SeriesReader,
}

impl Reading<'_> {
    /// Reads up to `n` more lines; false once every line has been read.
    #[inline(never)]
    fn batch(&mut self, n: usize) -> Result<bool, ColumnsError> {
        for _ in 0..n {
            let Some(id) = self.lines.next_line()? else {
                return Ok(false);
            };
            match self.plans[id].row(self.lines.values(), &mut self.memo) {
                Some(row) => self.reader.push_row(row),
                None => {
                    self.text.clear();
                    self.lines.write_line(id, &mut self.text);
                    self.reader.push_line(&self.text);
                }
            }
        }
        Ok(true)
    }
}

/// The error an unreadable carried copy gives, as when it is unpacked to text.
fn unreadable(file: &str, e: ColumnsError) -> InputError {
    InputError::new(file, None, format!("embedded copy unreadable: {e}"))
}

/// Where a row's column comes from in the lines of one skeleton.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source<T> {
    /// The value in this slot.
    Slot(usize),
    /// The same in every line (written in the skeleton, or absent).
    Fixed(Option<T>),
}

/// How the lines of one skeleton are read.
#[derive(Debug, Clone, PartialEq)]
enum Plan {
    /// As their text.
    Text,
    /// As a plain row whose columns come from these sources.
    Row {
        t_wall: Source<f64>,
        t_mono_ns: Source<i64>,
        numbers: [Source<f64>; Row::NUMBERS],
    },
}

/// The two sets of slot markers: integers (a `t_mono_ns` slot must hold one), below 2^53
/// (exact as doubles), and different in each probe.
const MARKERS: [i64; 2] = [1_000_000_007, 3_000_000_019];

/// The plan for lines of the skeleton `pieces` (one more than its slots).
fn plan_of(pieces: &[&[u8]]) -> Plan {
    // A slot must be cut from its neighbours as the encoder cuts a number, so that a
    // plain number in it reads as itself whatever its digits.
    let cut_before = |p: &[u8]| matches!(p.last(), Some(b':' | b' ' | b'[' | b','));
    let cut_after = |p: &[u8]| matches!(p.first(), Some(b',' | b'}' | b']' | b' ' | b'\r'));
    let slots = pieces.len() - 1;
    if (0..slots).any(|i| !cut_before(pieces[i]) || !cut_after(pieces[i + 1])) {
        return Plan::Text;
    }
    let probe = |base: i64| {
        let mut line = pieces[0].to_vec();
        for (i, piece) in pieces[1..].iter().enumerate() {
            line.extend_from_slice((base + i as i64).to_string().as_bytes());
            line.extend_from_slice(piece);
        }
        plain_row(&line)
    };
    let (Some(a), Some(b)) = (probe(MARKERS[0]), probe(MARKERS[1])) else {
        return Plan::Text;
    };
    // The slot whose markers a column holds in both probes.
    let slot_of = |va: f64, vb: f64| {
        let i = va - MARKERS[0] as f64;
        (i >= 0.0 && i < slots as f64 && i.fract() == 0.0)
            .then_some(i as usize)
            .filter(|&i| vb == (MARKERS[1] + i as i64) as f64)
    };
    let source = |va: Option<f64>, vb: Option<f64>| match (va, vb) {
        (Some(x), Some(y)) => match slot_of(x, y) {
            Some(i) => Some(Source::Slot(i)),
            None => (x.to_bits() == y.to_bits()).then_some(Source::Fixed(Some(x))),
        },
        (None, None) => Some(Source::Fixed(None)),
        _ => None,
    };
    let t_wall = match source(Some(a.t_wall), Some(b.t_wall)) {
        Some(s) => s,
        None => return Plan::Text,
    };
    let t_mono_ns = match (a.t_mono_ns, b.t_mono_ns) {
        (Some(x), Some(y)) => match slot_of(x as f64, y as f64) {
            Some(i) if x == MARKERS[0] + i as i64 => Source::Slot(i),
            _ if x == y => Source::Fixed(Some(x)),
            _ => return Plan::Text,
        },
        (None, None) => Source::Fixed(None),
        _ => return Plan::Text,
    };
    let (na, nb) = (Row::numbers(&a), Row::numbers(&b));
    let mut numbers = [Source::Fixed(None); Row::NUMBERS];
    for (slot, (va, vb)) in numbers.iter_mut().zip(na.into_iter().zip(nb)) {
        match source(va, vb) {
            Some(s) => *slot = s,
            None => return Plan::Text,
        }
    }
    Plan::Row {
        t_wall,
        t_mono_ns,
        numbers,
    }
}

impl Plan {
    /// The row a line of this plan's skeleton with `values` in its slots reads as; `None`
    /// when the line must be read as text (or its plan is text).
    fn row(&self, values: &[Value], memo: &mut [Memo]) -> Option<Row> {
        let Plan::Row {
            t_wall,
            t_mono_ns,
            numbers,
        } = self
        else {
            return None;
        };
        // A raw value may be anything the text reader has to judge.
        if values.iter().any(|v| matches!(v, Value::Raw(_))) {
            return None;
        }
        let mut number = |s: Source<f64>| match s {
            Source::Slot(i) => Some(memo[i].value_f64(values[i])),
            Source::Fixed(v) => v,
        };
        let t_mono_ns = match *t_mono_ns {
            // The text reader truncates a fractional clock through the JSON reader.
            Source::Slot(i) => match values[i] {
                Value::Number {
                    mantissa,
                    decimals: 0,
                } => Some(mantissa),
                _ => return None,
            },
            Source::Fixed(v) => v,
        };
        let t_wall = number(*t_wall)?;
        // A plain loop: the array's `map` and `from_fn` go through adapters costing
        // several times the conversion itself (callgrind).
        let mut values = [None; Row::NUMBERS];
        for (v, &source) in values.iter_mut().zip(numbers) {
            *v = number(source);
        }
        Some(Row::from_columns(t_wall, t_mono_ns, values))
    }
}

/// The last value a slot read the slow way (a gauge often reads the same from one line
/// to the next, and a 17-digit fraction such as 0.47619047619047616 is past the fast
/// path).
#[derive(Debug, Clone, Copy)]
struct Memo {
    mantissa: i64,
    /// Never a number's decimals until a value is kept.
    decimals: u8,
    value: f64,
}

impl Default for Memo {
    fn default() -> Memo {
        Memo {
            mantissa: 0,
            decimals: u8::MAX,
            value: f64::NAN,
        }
    }
}

impl Memo {
    /// A plain number's value, correctly rounded as the text reader reads its text: exact
    /// when it can be, else from its text, the last of which is remembered.
    fn value_f64(&mut self, v: Value) -> f64 {
        if let Some(x) = exact_f64(v) {
            return x;
        }
        if let Value::Number { mantissa, decimals } = v {
            if (mantissa, decimals) != (self.mantissa, self.decimals) {
                *self = Memo {
                    mantissa,
                    decimals,
                    value: text_f64(v),
                };
            }
            return self.value;
        }
        text_f64(v)
    }
}

/// A number whose mantissa and power of ten are both exact as doubles: one correctly
/// rounded division (Clinger's fast path); `None` for any other value.
fn exact_f64(v: Value) -> Option<f64> {
    const POW10: [f64; 19] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18,
    ];
    match v {
        Value::Number { mantissa, decimals } if mantissa.unsigned_abs() <= 1 << 53 => {
            Some(mantissa as f64 / POW10[usize::from(decimals)])
        }
        _ => None,
    }
}

/// A value read from its text, as the text reader reads it.
fn text_f64(v: Value) -> f64 {
    let mut buf = [0u8; 24];
    std::str::from_utf8(v.text(&mut buf))
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests;
