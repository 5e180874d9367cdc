//! The series carried as columns in a one-file report (`inferlint.pack/2`, a file's `"c"`):
//! a lossless transform of a JSON Lines file that deflate compresses far better than its
//! text. Decoding gives back the file's exact bytes, so the analyzer reads the carried run
//! exactly as it read the folder (same rows, same line numbers, same skipped lines).
//!
//! Each line is cut into its skeleton (the text around its number values: keys, spaces,
//! braces) and its number values. Skeletons are kept once in a dictionary and each line
//! names its own; the values are kept per column (skeleton, value index). A value written
//! `-?digits[.digits]` that an `i64` mantissa and a decimal count give back exactly is
//! kept as that count plus the mantissa's difference from its prediction (the previous
//! value, or the line through the two before: whichever is smaller for the column);
//! any other value (`-0.0`, leading zeros, more than 18 decimals) is kept as raw text.
//!
//! ```text
//! "ilc1"
//! skeletons: n, then each: values k, then k+1 pieces (length, bytes)
//! lines:     n, then each line's skeleton index
//! columns:   each: prediction (0 previous, 1 linear), mantissa bytes, raw bytes
//!            then each: its decimal counts (one byte a value, 255 raw), mantissa
//!            residuals (signed LEB128), raw values (length, bytes)
//! ```
//! Every count is unsigned LEB128. The decoder checks every length and count against the
//! bytes it has and never writes more than the limit it is given.

use crate::text::PieceLines;
use std::collections::HashMap;

const MAGIC: &[u8; 4] = b"ilc1";
/// The decimal count that marks a raw value.
const RAW: u8 = 0xff;
/// The most decimals a mantissa keeps (10^18 < 2^63).
const MAX_DECIMALS: usize = 18;
const PREVIOUS: u8 = 0;
const LINEAR: u8 = 1;

/// Why a columnar copy could not be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ColumnsError {
    #[error("not a columnar copy")]
    NotColumnar,
    #[error("the columnar copy is damaged ({0})")]
    Damaged(&'static str),
    #[error("the columnar copy unpacks to more than {0} bytes")]
    TooLarge(usize),
}

/// One column's values while encoding. The residuals are written as the values come,
/// under both predictions (the smaller is kept at the end), so a long series never holds
/// its mantissas as 8-byte integers: mostly one byte each instead.
#[derive(Default)]
struct Column {
    decimals: Vec<u8>,
    previous: Vec<u8>,
    linear: Vec<u8>,
    predictor: Predictor,
    raws: Vec<u8>,
}

impl Column {
    fn push_mantissa(&mut self, m: i64) {
        let p = self.predictor;
        push_i64(&mut self.previous, m.wrapping_sub(p.next(PREVIOUS)));
        push_i64(&mut self.linear, m.wrapping_sub(p.next(LINEAR)));
        self.predictor.push(m);
    }

    /// The residuals under the prediction that makes them smallest.
    fn residuals(&self) -> (u8, &[u8]) {
        if self.linear.len() < self.previous.len() {
            (LINEAR, &self.linear)
        } else {
            (PREVIOUS, &self.previous)
        }
    }
}

/// `text` as columns (not yet compressed).
pub fn encode(text: &[u8]) -> Vec<u8> {
    let mut encoder = Encoder::default();
    encoder.push(text);
    encoder.finish()
}

/// [`encode`] fed piece by piece, as a file streams from disk: each line is encoded once
/// it is complete and only an unfinished line is kept between pieces. Pieces may split a
/// line anywhere; [`Encoder::finish`] gives exactly what [`encode`] gives for the whole
/// text. (The command line encodes the series this way on its own thread while another
/// parses it, so the text is read once and never held whole.)
#[derive(Default)]
pub struct Encoder {
    skeletons: HashMap<Vec<u8>, u32>,
    /// Per skeleton: its first column, and its pieces (the text around its values).
    shapes: Vec<(usize, Vec<Box<[u8]>>)>,
    dictionary: Vec<u8>,
    columns: Vec<Column>,
    ids: Vec<u8>,
    lines: u64,
    /// The skeleton of the line before: consecutive lines nearly always share one.
    last: Option<u32>,
    /// Scratch: a line's number spans, their values as [`exact`] reads them, and its
    /// skeleton key.
    spans: Vec<(usize, usize)>,
    values: Vec<Option<(i64, u8)>>,
    key: Vec<u8>,
    /// The start of a line whose end has not arrived yet.
    lines_of_pieces: PieceLines,
}

impl Encoder {
    /// Encodes the complete lines of the next piece of the text.
    pub fn push(&mut self, piece: &[u8]) {
        let mut lines = std::mem::take(&mut self.lines_of_pieces);
        lines.push(piece, |line| self.line(line));
        self.lines_of_pieces = lines;
    }

    /// The columns of every piece pushed: the text after the last newline (possibly
    /// empty) is its last line, as `split` on the whole text gives it.
    pub fn finish(mut self) -> Vec<u8> {
        let last = self.lines_of_pieces.take_rest();
        self.line(&last);
        let (shapes, columns) = (&self.shapes, &self.columns);
        let residual_bytes: usize = columns.iter().map(|c| c.residuals().1.len()).sum();
        let mut out = Vec::with_capacity(
            MAGIC.len()
                + 16
                + self.dictionary.len()
                + self.ids.len()
                + 11 * columns.len()
                + residual_bytes
                + columns
                    .iter()
                    .map(|c| c.decimals.len() + c.raws.len())
                    .sum::<usize>(),
        );
        out.extend_from_slice(MAGIC);
        push_u64(&mut out, shapes.len() as u64);
        out.extend_from_slice(&self.dictionary);
        push_u64(&mut out, self.lines);
        out.extend_from_slice(&self.ids);
        for c in columns {
            let (mode, res) = c.residuals();
            out.push(mode);
            push_u64(&mut out, res.len() as u64);
            push_u64(&mut out, c.raws.len() as u64);
        }
        self.skeletons = HashMap::new();
        self.ids = Vec::new();
        // Each column freed once copied: the columns and their copy are never all held
        // at once (a week's are tens of megabytes).
        for c in std::mem::take(&mut self.columns) {
            out.extend_from_slice(&c.decimals);
            out.extend_from_slice(c.residuals().1);
            out.extend_from_slice(&c.raws);
        }
        out
    }

    /// One line (without its newline).
    fn line(&mut self, line: &[u8]) {
        self.lines += 1;
        let (spans, values) = (&mut self.spans, &mut self.values);
        let known = self
            .last
            .filter(|&id| same_skeleton(line, &self.shapes[id as usize].1, spans, values));
        let id = match known {
            Some(id) => id,
            None => {
                let id = self.skeleton_of(line);
                self.values.clear();
                let exacts = self.spans.iter().map(|&(a, b)| exact(&line[a..b]));
                self.values.extend(exacts);
                id
            }
        };
        self.last = Some(id);
        push_u64(&mut self.ids, u64::from(id));
        let first = self.shapes[id as usize].0;
        let values = self.spans.iter().zip(&self.values);
        for (column, (&(start, end), &read)) in self.columns[first..].iter_mut().zip(values) {
            match read {
                Some((mantissa, decimals)) => {
                    column.decimals.push(decimals);
                    column.push_mantissa(mantissa);
                }
                None => {
                    column.decimals.push(RAW);
                    push_bytes(&mut column.raws, &line[start..end]);
                }
            }
        }
    }

    /// The skeleton of a line found by its number spans (left in `spans`), added to the
    /// dictionary when new.
    fn skeleton_of(&mut self, line: &[u8]) -> u32 {
        number_spans(line, &mut self.spans);
        self.key.clear();
        let mut pieces = Vec::with_capacity(self.spans.len() + 1);
        let mut at = 0;
        for &(start, end) in &self.spans {
            push_bytes(&mut self.key, &line[at..start]);
            pieces.push(&line[at..start]);
            at = end;
        }
        push_bytes(&mut self.key, &line[at..]);
        pieces.push(&line[at..]);
        if let Some(&id) = self.skeletons.get(self.key.as_slice()) {
            return id;
        }
        let id = self.shapes.len() as u32;
        push_u64(&mut self.dictionary, self.spans.len() as u64);
        self.dictionary.extend_from_slice(&self.key);
        let pieces = pieces.into_iter().map(Box::from).collect();
        self.shapes.push((self.columns.len(), pieces));
        self.columns
            .extend((0..self.spans.len()).map(|_| Column::default()));
        self.skeletons.insert(self.key.clone(), id);
        id
    }
}

/// Whether `line` is `pieces` with a number (as [`number_spans`] finds them) between
/// each two; the numbers' spans are left in `spans` and their values (as [`exact`]
/// reads them) in `values`. When it is, `number_spans` would find exactly these spans:
/// the pieces come from a line it cut, so each piece before a number ends with a
/// separator and no position inside a piece starts a number (the bytes that decide it,
/// the piece's own and the digit before it, are the same as in that line).
fn same_skeleton(
    line: &[u8],
    pieces: &[Box<[u8]>],
    spans: &mut Vec<(usize, usize)>,
    values: &mut Vec<Option<(i64, u8)>>,
) -> bool {
    spans.clear();
    values.clear();
    let Some((first, rest)) = pieces.split_first() else {
        return false;
    };
    if !starts_with(line, first) {
        return false;
    }
    let mut at = first.len();
    for piece in rest {
        let starts_number = line
            .get(at)
            .is_some_and(|&c| c.is_ascii_digit() || c == b'-')
            && (at == 0 || matches!(line[at - 1], b':' | b' ' | b'[' | b','));
        if !starts_number {
            return false;
        }
        let Some((end, value)) = number_at(line, at) else {
            return false;
        };
        spans.push((at, end));
        values.push(value);
        if !starts_with(&line[end..], piece) {
            return false;
        }
        at = end + piece.len();
    }
    at == line.len()
}

/// `line.starts_with(piece)` without a call to `memcmp`, which costs more than comparing
/// the few bytes between two values.
#[inline]
fn starts_with(line: &[u8], piece: &[u8]) -> bool {
    line.len() >= piece.len() && crate::series::same_bytes(&line[..piece.len()], piece)
}

/// Where the number values of `line` are: a `-?digits[.digits]` after `:`, ` `, `[` or
/// `,` (or at the start) and before `,`, `}`, `]`, a space, `\r` (or at the end).
/// Anything else stays in the skeleton; which spans are chosen only changes the size.
fn number_spans(line: &[u8], spans: &mut Vec<(usize, usize)>) {
    spans.clear();
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        let after_separator = i == 0 || matches!(line[i - 1], b':' | b' ' | b'[' | b',');
        if (c.is_ascii_digit() || c == b'-') && after_separator {
            if let Some(end) = number_end(line, i) {
                spans.push((i, end));
                i = end;
                continue;
            }
        }
        i += 1;
    }
}

fn number_end(line: &[u8], start: usize) -> Option<usize> {
    let digits = |mut j: usize| {
        while j < line.len() && line[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let int_start = start + usize::from(line[start] == b'-');
    let mut end = digits(int_start);
    if end == int_start {
        return None;
    }
    if line.get(end) == Some(&b'.') {
        let frac_end = digits(end + 1);
        if frac_end == end + 1 {
            return None;
        }
        end = frac_end;
    }
    match line.get(end) {
        None | Some(b',' | b'}' | b']' | b' ' | b'\r') => Some(end),
        _ => None,
    }
}

/// [`number_end`] and [`exact`] of the number there in one pass: where the number
/// starting at `start` ends, and its value as `exact` reads it.
fn number_at(line: &[u8], start: usize) -> Option<(usize, Option<(i64, u8)>)> {
    let negative = line[start] == b'-';
    let int_start = start + usize::from(negative);
    // Wrapping: only kept when there are at most 18 digits, below 10^18.
    let mut m: u64 = 0;
    let mut digits = |mut j: usize| {
        while let Some(d) = line.get(j).filter(|d| d.is_ascii_digit()) {
            m = m.wrapping_mul(10).wrapping_add(u64::from(d - b'0'));
            j += 1;
        }
        j
    };
    let mut end = digits(int_start);
    let int_len = end - int_start;
    if int_len == 0 {
        return None;
    }
    let mut frac_len = 0;
    if line.get(end) == Some(&b'.') {
        let frac_end = digits(end + 1);
        frac_len = frac_end - (end + 1);
        if frac_len == 0 {
            return None;
        }
        end = frac_end;
    }
    if !matches!(
        line.get(end),
        None | Some(b',' | b'}' | b']' | b' ' | b'\r')
    ) {
        return None;
    }
    if int_len + frac_len > MAX_DECIMALS {
        return Some((end, exact(&line[start..end])));
    }
    // Leading zeros and `-0` are written back only as raw text.
    let leading_zero = int_len > 1 && line[int_start] == b'0';
    let negative_zero = negative && m == 0;
    let value = (!leading_zero && !negative_zero).then(|| {
        let m = m as i64;
        (if negative { -m } else { m }, frac_len as u8)
    });
    Some((end, value))
}

/// A value as (mantissa, decimals) when [`value_text`] writes it back byte for byte.
fn exact(value: &[u8]) -> Option<(i64, u8)> {
    let (negative, digits) = match value.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, value),
    };
    let (int, frac) = match digits.iter().position(|&b| b == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &digits[..0]),
    };
    if int.is_empty() || (int.len() > 1 && int[0] == b'0') || frac.len() > MAX_DECIMALS {
        return None;
    }
    let mut m: i64 = 0;
    if int.len() + frac.len() <= MAX_DECIMALS {
        // At most 18 digits: below 10^18, no overflow to check.
        for &d in int.iter().chain(frac) {
            m = m * 10 + i64::from(d - b'0');
        }
    } else {
        for &d in int.iter().chain(frac) {
            m = m.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
        }
    }
    if negative && m == 0 {
        return None;
    }
    Some((if negative { -m } else { m }, frac.len() as u8))
}

/// The last two mantissas of a column, and what they predict.
#[derive(Default, Clone, Copy)]
struct Predictor {
    last: i64,
    before: i64,
}

impl Predictor {
    fn next(&self, mode: u8) -> i64 {
        match mode {
            LINEAR => self.last.wrapping_add(self.last.wrapping_sub(self.before)),
            _ => self.last,
        }
    }

    fn push(&mut self, m: i64) {
        self.before = self.last;
        self.last = m;
    }
}

fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    // Written whole: one growth check, not one a byte.
    let mut buf = [0u8; 10];
    let mut n = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            buf[n] = byte;
            out.extend_from_slice(&buf[..=n]);
            return;
        }
        buf[n] = byte | 0x80;
        n += 1;
    }
}

/// Signed LEB128 through the zigzag map (small magnitudes of either sign are short).
fn push_i64(out: &mut Vec<u8>, v: i64) {
    push_u64(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn push_bytes(out: &mut Vec<u8>, b: &[u8]) {
    push_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A cursor over bytes that refuses to read past them.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn u64(&mut self) -> Result<u64, ColumnsError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self
                .data
                .get(self.at)
                .ok_or(ColumnsError::Damaged("a number runs past the end"))?;
            self.at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ColumnsError::Damaged("a number is too long"))
    }

    fn i64(&mut self) -> Result<i64, ColumnsError> {
        let z = self.u64()?;
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    /// A count that cannot exceed what is left of the data (each counted item takes at
    /// least `per` bytes).
    fn count(&mut self, per: usize) -> Result<usize, ColumnsError> {
        let n = self.u64()?;
        let left = (self.data.len() - self.at) as u64;
        if n.saturating_mul(per as u64) > left {
            return Err(ColumnsError::Damaged("a count is larger than the data"));
        }
        Ok(n as usize)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ColumnsError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or(ColumnsError::Damaged("a length runs past the end"))?;
        let b = &self.data[self.at..end];
        self.at = end;
        Ok(b)
    }

    fn bytes(&mut self) -> Result<&'a [u8], ColumnsError> {
        let n = self.u64()?;
        self.take(usize::try_from(n).map_err(|_| ColumnsError::Damaged("a length is too large"))?)
    }
}

/// One column while decoding: where its three streams are read from.
struct Cursor<'a> {
    mode: u8,
    decimals: Reader<'a>,
    mantissas: Reader<'a>,
    raws: Reader<'a>,
    predictor: Predictor,
}

impl<'a> Cursor<'a> {
    fn next(&mut self) -> Result<Value<'a>, ColumnsError> {
        let decimals = self.decimals.take(1)?[0];
        if decimals == RAW {
            return Ok(Value::Raw(self.raws.bytes()?));
        }
        if usize::from(decimals) > MAX_DECIMALS {
            return Err(ColumnsError::Damaged("too many decimals"));
        }
        let mantissa = self
            .predictor
            .next(self.mode)
            .wrapping_add(self.mantissas.i64()?);
        self.predictor.push(mantissa);
        Ok(Value::Number { mantissa, decimals })
    }
}

/// A number value of a line as the columns keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// `mantissa / 10^decimals`, written with exactly `decimals` decimals (at most 18).
    Number { mantissa: i64, decimals: u8 },
    /// A value kept as its text (`-0.0`, leading zeros, too many digits).
    Raw(&'a [u8]),
}

impl Value<'_> {
    /// The value's exact text.
    pub fn write(&self, out: &mut Vec<u8>) {
        let mut buf = [0u8; 24];
        out.extend_from_slice(self.text(&mut buf));
    }

    /// The value's exact text, a number's written in `buf`.
    pub fn text<'b>(&'b self, buf: &'b mut [u8; 24]) -> &'b [u8] {
        match *self {
            Value::Number { mantissa, decimals } => value_text(mantissa, decimals, buf),
            Value::Raw(raw) => raw,
        }
    }

    /// The length of the value's text.
    fn text_len(&self) -> usize {
        match *self {
            Value::Number { mantissa, decimals } => {
                let digits = digits(mantissa.unsigned_abs());
                let decimals = usize::from(decimals);
                // At least one digit before the point.
                let digits = digits.max(decimals + 1);
                digits + usize::from(decimals > 0) + usize::from(mantissa < 0)
            }
            Value::Raw(raw) => raw.len(),
        }
    }
}

/// The decimal digits of `v` (one for zero): from its bit length, then one comparison
/// (`ilog10` takes several branches a value, and every value of a day's series is
/// measured).
fn digits(v: u64) -> usize {
    const POW10: [u64; 20] = {
        let mut p = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            p[i] = p[i - 1] * 10;
            i += 1;
        }
        p
    };
    // 1233 / 4096 is just above log10(2): `guess` is ⌊log10(v)⌋ or one more.
    let bits = 64 - (v | 1).leading_zeros() as usize;
    let guess = (bits * 1233) >> 12;
    (guess + usize::from(v >= POW10[guess])).max(1)
}

/// True when `data` starts as [`encode`]'s output does.
pub fn is_columnar(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// The lines of a columnar copy one at a time, each as its skeleton and its values, never
/// as text: a reader can take each line's values where it wants them. Refuses a copy whose
/// text would pass the limit it is given, as [`decode`] does, when the line that passes it
/// is reached.
pub struct Lines<'a> {
    /// Per skeleton: its first column and its pieces (one more than its values).
    skeletons: Vec<(usize, Vec<&'a [u8]>)>,
    /// Per skeleton: the length of its pieces together.
    skeleton_lens: Vec<usize>,
    cursors: Vec<Cursor<'a>>,
    ids: Reader<'a>,
    lines: usize,
    /// Lines read so far.
    read: usize,
    /// Bytes of text the lines read so far make, newlines included.
    text_len: usize,
    limit: usize,
    values: Vec<Value<'a>>,
}

impl<'a> Lines<'a> {
    /// Reads the copy's dictionary and column table; refuses a copy damaged there.
    pub fn new(data: &'a [u8], limit: usize) -> Result<Lines<'a>, ColumnsError> {
        if !is_columnar(data) {
            return Err(ColumnsError::NotColumnar);
        }
        let mut r = Reader {
            data,
            at: MAGIC.len(),
        };
        // A skeleton takes at least two bytes (its count and one piece length).
        let n_skeletons = r.count(2)?;
        let mut skeletons = Vec::with_capacity(n_skeletons);
        let mut n_columns = 0usize;
        for _ in 0..n_skeletons {
            let values = r.count(1)?;
            let mut pieces = Vec::with_capacity(values + 1);
            for _ in 0..=values {
                pieces.push(r.bytes()?);
            }
            skeletons.push((n_columns, pieces));
            n_columns += values;
        }
        let lines = r.count(1)?;
        let ids_at = r.at;
        let mut per_skeleton = vec![0usize; n_skeletons];
        for _ in 0..lines {
            let id = r.u64()?;
            *usize::try_from(id)
                .ok()
                .and_then(|i| per_skeleton.get_mut(i))
                .ok_or(ColumnsError::Damaged("a line names no skeleton"))? += 1;
        }
        let mut table = Vec::with_capacity(n_columns.min(data.len()));
        for _ in 0..n_columns {
            let mode = *r.take(1)?.first().unwrap_or(&PREVIOUS);
            if mode != PREVIOUS && mode != LINEAR {
                return Err(ColumnsError::Damaged("an unknown prediction"));
            }
            let mantissa_len = r.count(1)?;
            let raw_len = r.count(1)?;
            table.push((mode, mantissa_len, raw_len));
        }
        let mut cursors = Vec::with_capacity(n_columns);
        for (id, (first, pieces)) in skeletons.iter().enumerate() {
            for &(mode, mantissa_len, raw_len) in &table[*first..first + pieces.len() - 1] {
                let decimals = r.take(per_skeleton[id])?;
                let mantissas = r.take(mantissa_len)?;
                let raws = r.take(raw_len)?;
                let reader = |data| Reader { data, at: 0 };
                cursors.push(Cursor {
                    mode,
                    decimals: reader(decimals),
                    mantissas: reader(mantissas),
                    raws: reader(raws),
                    predictor: Predictor::default(),
                });
            }
        }
        Ok(Lines {
            skeleton_lens: skeletons
                .iter()
                .map(|(_, pieces)| pieces.iter().map(|p| p.len()).sum())
                .collect(),
            skeletons,
            cursors,
            ids: Reader { data, at: ids_at },
            lines,
            read: 0,
            text_len: 0,
            limit,
            values: Vec::new(),
        })
    }

    /// How many lines the copy has (one more than its text's newlines).
    pub fn len(&self) -> usize {
        self.lines
    }

    /// True for a copy of no lines at all (never made by [`encode`]: empty text is a line).
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// Every skeleton by its index: the text around a line's values (one more piece than
    /// values).
    pub fn skeletons(&self) -> impl Iterator<Item = &[&'a [u8]]> {
        self.skeletons.iter().map(|(_, pieces)| pieces.as_slice())
    }

    /// The next line: its skeleton's index and its values (in [`Lines::values`]); `None`
    /// after the last.
    pub fn next_line(&mut self) -> Result<Option<usize>, ColumnsError> {
        if self.read == self.lines {
            return Ok(None);
        }
        let id = self.ids.u64()? as usize;
        let (first, pieces) = &self.skeletons[id];
        self.values.clear();
        let mut len = usize::from(self.read > 0) + self.skeleton_lens[id];
        for cursor in &mut self.cursors[*first..*first + pieces.len() - 1] {
            let value = cursor.next()?;
            len += value.text_len();
            self.values.push(value);
        }
        self.text_len = self.text_len.saturating_add(len);
        if self.text_len > self.limit {
            return Err(ColumnsError::TooLarge(self.limit));
        }
        self.read += 1;
        Ok(Some(id))
    }

    /// The values of the line [`Lines::next_line`] last gave.
    pub fn values(&self) -> &[Value<'a>] {
        &self.values
    }

    /// The text of the line [`Lines::next_line`] last gave, its skeleton `id`'s, appended
    /// to `out` (without a newline).
    pub fn write_line(&self, id: usize, out: &mut Vec<u8>) {
        let pieces = &self.skeletons[id].1;
        out.extend_from_slice(pieces[0]);
        for (value, piece) in self.values.iter().zip(&pieces[1..]) {
            value.write(out);
            out.extend_from_slice(piece);
        }
    }
}

/// The exact bytes [`encode`] was given, refused when they would pass `limit` bytes;
/// `size_hint` (the size the pack states, itself untrusted) only reserves memory.
pub fn decode(data: &[u8], limit: usize, size_hint: usize) -> Result<Vec<u8>, ColumnsError> {
    let mut lines = Lines::new(data, limit)?;
    let mut out = Vec::with_capacity(size_hint.min(limit));
    let mut first = true;
    while let Some(id) = lines.next_line()? {
        if !first {
            out.push(b'\n');
        }
        first = false;
        lines.write_line(id, &mut out);
    }
    Ok(out)
}

/// `mantissa / 10^decimals` written with exactly `decimals` decimals, in `buf`.
fn value_text(mantissa: i64, decimals: u8, buf: &mut [u8; 24]) -> &[u8] {
    let decimals = usize::from(decimals);
    let mut at = buf.len();
    let mut v = mantissa.unsigned_abs();
    let mut written = 0;
    // At least one digit before the point.
    while v > 0 || written <= decimals {
        if written == decimals && decimals > 0 {
            at -= 1;
            buf[at] = b'.';
        }
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
        written += 1;
    }
    if mantissa < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn digits_counts_as_the_text_does() {
        let mut edges = vec![0u64, 1, 9, u64::MAX];
        for p in 1..20u32 {
            let t = 10u64.pow(p);
            edges.extend([t - 1, t, t + 1]);
        }
        for b in 0..64 {
            edges.extend([(1u64 << b) - 1, 1u64 << b, (1u64 << b) + 1]);
        }
        for v in edges {
            assert_eq!(digits(v), v.to_string().len(), "{v}");
        }
    }

    fn round_trip(text: &[u8]) {
        let c = encode(text);
        assert_eq!(
            decode(&c, text.len(), text.len()).unwrap(),
            text,
            "{}",
            String::from_utf8_lossy(text)
        );
        if !text.is_empty() {
            assert!(matches!(
                decode(&c, text.len() - 1, 0),
                Err(ColumnsError::TooLarge(_))
            ));
        }
    }

    #[test]
    fn values_written_back_byte_for_byte() {
        for v in [
            "0",
            "0.0",
            "-0.5",
            "10",
            "1790824333.343284",
            "0.9361702127659575",
            "-12.000",
            "9223372036854775807",
            "0.000000000000000001",
        ] {
            let (m, d) = exact(v.as_bytes()).unwrap();
            let mut buf = [0u8; 24];
            assert_eq!(value_text(m, d, &mut buf), v.as_bytes());
        }
        for v in [
            "-0",
            "-0.0",
            "007",
            "00.5",
            "9223372036854775808",
            "0.1234567890123456789",
        ] {
            assert_eq!(exact(v.as_bytes()), None, "{v}");
        }
    }

    #[test]
    fn a_series_round_trips_and_shrinks() {
        let mut text = String::from(
            "{\"schema\": \"inferlint.series/1\", \"url\": \"http://127.0.0.1:8000\", \"interval_s\": 0.25}\n",
        );
        for i in 0..2000u64 {
            text.push_str(&format!(
                "{{\"t_wall\": {:.6}, \"t_mono_ns\": {}, \"running\": {:.1}, \"kv_usage\": {}, \"x\": 1e-05, \"y\": NaN, \"z\": null, \"w\": -0.0}}\n",
                1_790_000_000.0 + i as f64 * 0.256,
                1_000_000_000_000 + i * 256_000_123,
                (i % 7) as f64,
                (i % 47) as f64 / 47.0,
            ));
        }
        text.push_str("damaged {\"t_wall\": 1,\r\n\u{0}\u{ff} 12 -3 [4,5] \"a 6 b\"");
        round_trip(text.as_bytes());
        assert!(encode(text.as_bytes()).len() < text.len() / 3);
    }

    #[test]
    fn edge_texts_round_trip() {
        for t in [
            "",
            "\n",
            "\n\n",
            "1",
            "-",
            "1.",
            ".5",
            "1 2 3\n",
            "{}\r\n{}",
            "[1,-2,3.25]",
        ] {
            round_trip(t.as_bytes());
        }
    }

    #[test]
    fn damaged_copies_are_refused_not_panicked_on() {
        let c = encode(b"{\"a\": 1, \"b\": 2.5}\n{\"a\": 2, \"b\": 3.5}\n");
        assert_eq!(decode(b"nope", 100, 0), Err(ColumnsError::NotColumnar));
        for cut in 4..c.len() {
            assert!(decode(&c[..cut], 1000, 0).is_err(), "cut at {cut}");
        }
        for i in 4..c.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut d = c.clone();
                d[i] ^= flip;
                let _ = decode(&d, 1000, 1 << 40);
            }
        }
    }

    #[test]
    fn pieces_of_any_size_encode_as_the_whole_text() {
        let text = b"{\"t_wall\": 1.5, \"n\": 2}\n{\"t_wall\": 2.25, \"n\": -3}\r\n\n\
            {\"t_wall\": 3, \"n\": 1e5}\n12 x\n{\"t_wall\": 4.0, \"n\": 007}";
        let whole = encode(text);
        for size in 1..=text.len() {
            let mut e = Encoder::default();
            for piece in text.chunks(size) {
                e.push(piece);
            }
            assert_eq!(e.finish(), whole, "pieces of {size}");
        }
    }

    /// The spans of `line` when it has the skeleton `model` was cut into, by
    /// [`same_skeleton`]; `None` when it has not.
    fn spans_by_skeleton(model: &[u8], line: &[u8]) -> Option<Vec<(usize, usize)>> {
        let mut spans = Vec::new();
        number_spans(model, &mut spans);
        let mut pieces: Vec<Box<[u8]>> = Vec::new();
        let mut at = 0;
        for &(start, end) in &spans {
            pieces.push(model[at..start].into());
            at = end;
        }
        pieces.push(model[at..].into());
        let mut values = Vec::new();
        let same = same_skeleton(line, &pieces, &mut spans, &mut values);
        // Each value read as `exact` reads its text.
        let exacts: Vec<_> = spans.iter().map(|&(a, b)| exact(&line[a..b])).collect();
        assert!(
            !same || values == exacts,
            "{}",
            String::from_utf8_lossy(line)
        );
        same.then_some(spans)
    }

    #[test]
    fn a_line_of_the_same_skeleton_is_cut_as_number_spans_cuts_it() {
        let model = b"{\"a\": 1, \"b\": [2,-3.5], \"c\": 1e-05}";
        for (line, same) in [
            (&b"{\"a\": 17, \"b\": [0,-0.25], \"c\": 1e-05}"[..], true),
            (b"{\"a\": 17, \"b\": [0,-0.25], \"c\": 2e-05}", false),
            (b"{\"a\": 1., \"b\": [2,-3.5], \"c\": 1e-05}", false),
            (b"{\"a\": 1, \"b\": [2,-3.5], \"c\": 1e-05} ", false),
            (b"{\"a\": 1, \"b\": [2,--3.5], \"c\": 1e-05}", false),
        ] {
            let mut want = Vec::new();
            number_spans(line, &mut want);
            let got = spans_by_skeleton(model, line);
            assert_eq!(got.is_some(), same, "{}", String::from_utf8_lossy(line));
            if let Some(got) = got {
                assert_eq!(got, want);
            }
        }
    }

    proptest! {
        #[test]
        fn any_text_round_trips(text in proptest::collection::vec(
            prop_oneof![
                Just(b'\n'), Just(b' '), Just(b','), Just(b':'), Just(b'-'), Just(b'.'),
                Just(b'0'), Just(b'['), Just(b'}'), b'0'..=b'9', any::<u8>()
            ],
            0..300,
        )) {
            let c = encode(&text);
            prop_assert_eq!(decode(&c, text.len(), 0).unwrap(), text);
        }

        #[test]
        fn a_shared_skeleton_means_the_same_number_spans(
            a in proptest::collection::vec(
                prop_oneof![Just(b' '), Just(b','), Just(b':'), Just(b'-'), Just(b'.'),
                    Just(b'['), Just(b'}'), Just(b'e'), b'0'..=b'9'], 0..40),
            b in proptest::collection::vec(
                prop_oneof![Just(b' '), Just(b','), Just(b':'), Just(b'-'), Just(b'.'),
                    Just(b'['), Just(b'}'), Just(b'e'), b'0'..=b'9'], 0..40),
        ) {
            let mut want = Vec::new();
            number_spans(&b, &mut want);
            if let Some(got) = spans_by_skeleton(&a, &b) {
                prop_assert_eq!(&got, &want);
            }
            // A line always has its own skeleton.
            prop_assert_eq!(spans_by_skeleton(&b, &b), Some(want));
            // `a` with other values in its numbers' places: mostly the same skeleton.
            let mut spans = Vec::new();
            number_spans(&a, &mut spans);
            let mut c = Vec::new();
            let mut at = 0;
            for (k, &(start, end)) in spans.iter().enumerate() {
                c.extend_from_slice(&a[at..start]);
                let value = &b[..(k * 3 % 7).min(b.len())];
                c.extend_from_slice(if k % 2 == 0 { b"-12.5" } else { value });
                at = end;
            }
            c.extend_from_slice(&a[at..]);
            let mut want = Vec::new();
            number_spans(&c, &mut want);
            if let Some(got) = spans_by_skeleton(&a, &c) {
                prop_assert_eq!(got, want);
            }
        }

        #[test]
        fn series_lines_round_trip(rows in proptest::collection::vec(
            (any::<f64>(), any::<i64>(), proptest::option::of(-1e6f64..1e6), 0u8..20),
            1..60,
        )) {
            let mut text = String::new();
            for (wall, mono, v, d) in rows {
                let v = v.map_or("null".to_string(), |v| format!("{v:.*}", usize::from(d)));
                text.push_str(&format!("{{\"t_wall\": {wall}, \"t_mono_ns\": {mono}, \"v\": {v}, \"e\": {wall:e}}}\n"));
            }
            let c = encode(text.as_bytes());
            prop_assert_eq!(decode(&c, text.len(), 0).unwrap(), text.as_bytes());
        }
    }
}
