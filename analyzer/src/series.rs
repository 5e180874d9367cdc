//! Gauge series files (`*.series.jsonl`, docs/run-folder.md#series): a header line, then
//! one sample per line. Read line by line in one pass; a damaged line is skipped and
//! counted. `SeriesReader` takes the file in pieces as they arrive (and joins two halves
//! read apart), so a front end can stream a week's recording from disk: only its rows are
//! kept, never its text as well. The lines are the documents `docs::SeriesHeader` and
//! `docs::Row`; the column names are the row's field names (`Row::COLUMNS`).
//!
//! Rows go through a one-pass fast path (`fast_row`) that finds keys by `Row::COLUMNS`;
//! whatever it is unsure of goes to the lenient JSON reader, so both accept exactly the
//! same lines (tested). It was kept against `serde_json::from_str::<Row>` per line with
//! the same fallback, measured on the 24-hour series of `cargo bench -p inferlint`
//! (345,600 rows, 77.5 MB, read by `examples/time_series`): 1.71 G instructions
//! (callgrind) against 2.17 G for serde_json, whose best wall time was also slower
//! (333 ms against 207 ms, best of 12 on a busy 2-core machine).

use crate::chunks::each_chunk;
use crate::docs::{SeriesHeader, SCHEMA_KEY};
use crate::engine::Engine;
use crate::input::InputError;
use crate::json::{self, Json};
use crate::plausible::{self, Implausible, Quantity, Why};
use crate::text::{decode_lossy, PieceLines};

pub use crate::docs::Row;
pub use rows::{present, Field, Rows};

pub mod align;
mod rows;

/// A whole series file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub url: Option<String>,
    pub interval_s: Option<f64>,
    /// The header's `engine` string when present (an unknown string reads as vLLM).
    pub engine_named: Option<Engine>,
    /// The readings, kept as columns.
    pub rows: Rows,
    /// Lines skipped as unreadable, and the 1-based line of the first.
    pub skipped: usize,
    pub first_skipped_line: Option<usize>,
    /// The 1-based line of each row, for messages about its values.
    pub row_lines: Vec<u32>,
    /// Values the plausibility gate refused (`plausible`), by column: each is absent
    /// from its row, and a row whose `t_wall` was refused is left out.
    pub implausible: Vec<Implausible>,
}

impl Series {
    /// The engine whose metric names the series used (vLLM when the header names none).
    pub fn engine(&self) -> Engine {
        self.engine_named.unwrap_or(Engine::Vllm)
    }

    /// Reads a series file. A file with neither a header nor a sample is an input error.
    pub fn read(file: &str, bytes: &[u8]) -> Result<Series, InputError> {
        let mut reader = SeriesReader::new(file);
        reader.push(bytes);
        reader.finish()
    }

    /// The first refused value among `fields` (column names).
    pub fn implausible_in(&self, fields: &[&str]) -> Option<&Implausible> {
        plausible::first(&self.implausible, fields)
    }

    /// Refuses `running` readings above the engine's own limit on running requests
    /// (from its boot log): a gauge past it is damage, not a reading.
    pub fn gate_running(&mut self, cap: u64, file: &str) {
        let (lines, refused) = (&self.row_lines, &mut self.implausible);
        self.rows
            .update(Field::Running, |k, running| match running {
                Some(v) if v > cap as f64 => {
                    let at = lines.get(k).map(|&line| line as usize);
                    let why = Why::AboveEngineLimit(cap);
                    refused.push(Implausible::new(file, at, column::RUNNING, v, why));
                    None
                }
                kept => kept,
            });
    }

    /// The note for skipped lines, when any: the file, the first one and how many.
    pub fn skip_note(&self, file: &str) -> Option<String> {
        self.first_skipped_line
            .map(|l| format!("{file}:{l}: {} lines skipped", self.skipped))
    }

    /// Seconds since the first sample, for every row: from `t_mono_ns` when every row has
    /// it, else from `t_wall`.
    pub fn times(&self) -> Vec<f64> {
        let stamps = self.rows.t_mono_ns_stored();
        let mut out = Vec::with_capacity(stamps.len());
        // Stored stamps are not negative, so differences fit an i64.
        if !stamps.is_empty() && stamps.iter().all(|&t| t >= 0) {
            let t0 = stamps[0];
            each_chunk(stamps.len(), &mut |k| {
                out.extend(stamps[k].iter().map(|&t| (t - t0) as f64 / 1e9));
            });
        } else {
            let walls = self.rows.t_wall();
            let t0 = walls.first().copied().unwrap_or(0.0);
            each_chunk(walls.len(), &mut |k| {
                out.extend(walls[k].iter().map(|&t| t - t0));
            });
        }
        out
    }

    /// The largest `running` reading (zeros count); none when no row has one.
    pub fn peak_running(&self) -> Option<f64> {
        max_of(self.rows.values(Field::Running).flatten())
    }

    /// The largest running + waiting over rows that have both.
    pub fn peak_in_flight(&self) -> Option<f64> {
        let waiting = self.rows.values(Field::Waiting);
        max_of(
            self.rows
                .values(Field::Running)
                .zip(waiting)
                .filter_map(|(r, w)| Some(r? + w?)),
        )
    }

    /// The (running, KV usage) readings of the rows with requests running and KV in use
    /// (T9).
    pub fn busy(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let usage = self.rows.values(Field::KvUsage);
        self.rows
            .values(Field::Running)
            .zip(usage)
            .filter_map(|(run, u)| Some((run?, u?)))
            .filter(|&(run, u)| run != 0.0 && u != 0.0)
    }

    /// Every present, non-zero KV reading.
    pub fn usage_readings(&self) -> impl Iterator<Item = f64> + '_ {
        self.rows
            .values(Field::KvUsage)
            .flatten()
            .filter(|&u| u != 0.0)
    }
}

/// Reads a series file piece by piece, as its bytes arrive: each line is parsed once it
/// is complete and only an unfinished line is kept between pieces, so a front end can
/// stream a long recording from disk and never hold its text and its rows together.
/// Pieces may split a line (or a character) anywhere; the result is the same as
/// [`Series::read`] on the whole file.
#[derive(Debug)]
pub struct SeriesReader {
    file: String,
    /// The layout of the last row read, to read the next by.
    shape: Shape,
    series: Series,
    saw_header: bool,
    /// Lines completed so far (the 1-based number of the last one).
    lines: usize,
    /// The start of a line whose end has not arrived yet.
    lines_of_pieces: PieceLines,
}

impl SeriesReader {
    pub fn new(file: &str) -> SeriesReader {
        SeriesReader {
            file: file.to_string(),
            shape: Shape::default(),
            series: Series::default(),
            saw_header: false,
            lines: 0,
            lines_of_pieces: PieceLines::default(),
        }
    }

    /// Room for `lines` more rows, when the caller knows how many lines follow.
    pub fn reserve(&mut self, lines: usize) {
        self.series.rows.reserve(lines);
        self.series.row_lines.reserve_exact(lines);
    }

    /// Reads the complete lines of the next piece of the file.
    pub fn push(&mut self, piece: &[u8]) {
        let mut lines = std::mem::take(&mut self.lines_of_pieces);
        lines.push(piece, |line| self.line(line));
        self.lines_of_pieces = lines;
    }

    /// Joins the reader of the bytes that follow this one's, read apart (a front end may
    /// read the two halves of a long file at once): the result is that of one reader
    /// given both. `later` must have started at the start of a line, which is where this
    /// one's bytes must end; an unfinished line here is read as a whole line.
    pub fn append(&mut self, later: SeriesReader) {
        if self.lines_of_pieces.has_rest() {
            let line = self.lines_of_pieces.take_rest();
            self.line(&line);
        }
        let offset = self.lines;
        let (s, mut l) = (&mut self.series, later.series);
        if later.saw_header {
            self.saw_header = true;
            (s.url, s.interval_s, s.engine_named) = (l.url, l.interval_s, l.engine_named);
        }
        s.rows.append(&mut l.rows);
        let shift = |n: u32| n.saturating_add(u32::try_from(offset).unwrap_or(u32::MAX));
        s.row_lines.extend(l.row_lines.iter().map(|&n| shift(n)));
        s.skipped += l.skipped;
        if s.first_skipped_line.is_none() {
            s.first_skipped_line = l.first_skipped_line.map(|n| n + offset);
        }
        s.implausible.extend(l.implausible.into_iter().map(|mut i| {
            i.line = i.line.map(|n| n + offset);
            i
        }));
        self.lines += later.lines;
        self.lines_of_pieces = later.lines_of_pieces;
    }

    /// The series, once the whole file has been pushed. A file with neither a header nor
    /// a sample is an input error.
    pub fn finish(mut self) -> Result<Series, InputError> {
        // The last line needs no newline.
        let last = self.lines_of_pieces.take_rest();
        self.line(&last);
        let mut s = self.series;
        if !self.saw_header && s.rows.is_empty() {
            return Err(InputError::new(
                &self.file,
                s.first_skipped_line,
                "not a series file: no header and no sample line could be read",
            ));
        }
        // Room reserved for lines that were not rows is given back, unless it is little
        // (giving it back may copy every column).
        if s.rows.len() < s.row_lines.capacity() - s.row_lines.capacity() / 8 {
            s.rows.shrink_to_fit();
            s.row_lines.shrink_to_fit();
        }
        Ok(s)
    }

    /// One line (without its newline). Decoding line by line reads as decoding the whole
    /// file would: a newline is never part of a multi-byte character.
    fn line(&mut self, raw: &[u8]) {
        self.lines += 1;
        let n = self.lines;
        let text = decode_lossy(raw);
        let line = text.trim();
        if line.is_empty() {
            return;
        }
        let s = &mut self.series;
        match read_line(line, &mut self.shape) {
            Some(Line::Header(h)) => {
                self.saw_header = true;
                s.url = h.url;
                s.interval_s = h.interval_s;
                s.engine_named = h.engine;
            }
            Some(Line::Row(r)) => self.keep_row(r, n),
            None => {
                s.skipped += 1;
                s.first_skipped_line.get_or_insert(n);
            }
        }
    }
}

/// Reading a series line by line when its lines come whole, some already read as rows
/// (the one-file report carries the series as columns: `pack::rows` gives each line's row
/// without making its text). The result is the same as pushing the text of every line.
impl SeriesReader {
    /// The next whole line, as its text (without its newline). Only between whole lines:
    /// after [`SeriesReader::push`] has left no unfinished line.
    pub fn push_line(&mut self, raw: &[u8]) {
        debug_assert!(
            !self.lines_of_pieces.has_rest(),
            "push_line after an unfinished line"
        );
        self.line(raw);
    }

    /// The next whole line, given as the row [`plain_row`] reads from its text: gated and
    /// kept as [`SeriesReader::push_line`] would keep it.
    pub fn push_row(&mut self, row: Row) {
        debug_assert!(
            !self.lines_of_pieces.has_rest(),
            "push_row after an unfinished line"
        );
        self.lines += 1;
        self.keep_row(row, self.lines);
    }

    /// A sample row of line `n` through the plausibility gate: kept unless its `t_wall`
    /// was refused.
    fn keep_row(&mut self, r: Row, n: usize) {
        let s = &mut self.series;
        if let Some(r) = gate_row(r, (&self.file, Some(n)), &mut s.implausible) {
            s.rows.push(r);
            s.row_lines.push(u32::try_from(n).unwrap_or(u32::MAX));
        }
    }
}

/// The row a whole line's text reads as when it is a plain sample line (a flat object of
/// numbers, `null` and non-finite tokens, as the fast path reads it), before the
/// plausibility gate; `None` for a header, a skipped line or anything the full JSON reader
/// would have to judge. Such a line's row is what [`SeriesReader::push_line`] keeps.
pub fn plain_row(raw: &[u8]) -> Option<Row> {
    match fast_row(decode_lossy(raw).trim(), &mut Shape::default()) {
        Fast::Row(r) => Some(r),
        Fast::Skip | Fast::Unsure => None,
    }
}

/// Python's `max` over floats: NaN never replaces a value and is kept only when first.
fn max_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut best: Option<f64> = None;
    for v in values {
        best = match best {
            None => Some(v),
            Some(b) if v > b => Some(v),
            keep => keep,
        };
    }
    best
}

/// The column names by position in [`Row::COLUMNS`] (the documents module spells them
/// once), for naming a refused value. A snapshot document's clock keys have the same
/// names as the series' clock columns.
pub mod column {
    use super::Row;

    pub const T_WALL: &str = Row::COLUMNS[Row::T_WALL];
    pub const T_MONO_NS: &str = Row::COLUMNS[Row::T_MONO_NS];
    pub const LATENCY_S: &str = Row::COLUMNS[2];
    pub const RUNNING: &str = Row::COLUMNS[3];
    pub const WAITING: &str = Row::COLUMNS[4];
    pub const KV_USAGE: &str = Row::COLUMNS[5];
    pub const PREEMPTIONS: &str = Row::COLUMNS[6];
    pub const GENERATION_TOKENS: &str = Row::COLUMNS[7];
    pub const PROMPT_TOKENS: &str = Row::COLUMNS[8];
    pub const PAUSED: &str = Row::COLUMNS[9];
    pub const PREFIX_CACHE_HITS: &str = Row::COLUMNS[10];
    pub const PREFIX_CACHE_QUERIES: &str = Row::COLUMNS[11];
}

/// A row through the plausibility gate: refused values become absent and are recorded;
/// a refused `t_wall` (the one required column) drops the row.
fn gate_row(mut r: Row, at: (&str, Option<usize>), out: &mut Vec<Implausible>) -> Option<Row> {
    use column as c;
    r.t_mono_ns =
        plausible::gate_clocks(r.t_wall, r.t_mono_ns, at, (c::T_WALL, c::T_MONO_NS), out)?;
    let mut keep = |q, v, field| plausible::keep(q, v, at, field, out);
    r.latency_s = keep(Quantity::Seconds, r.latency_s, c::LATENCY_S);
    r.running = keep(Quantity::Requests, r.running, c::RUNNING);
    r.waiting = keep(Quantity::Requests, r.waiting, c::WAITING);
    r.kv_usage = keep(Quantity::KvFraction, r.kv_usage, c::KV_USAGE);
    r.preemptions = keep(Quantity::Counter, r.preemptions, c::PREEMPTIONS);
    r.generation_tokens = keep(Quantity::Counter, r.generation_tokens, c::GENERATION_TOKENS);
    r.prompt_tokens = keep(Quantity::Counter, r.prompt_tokens, c::PROMPT_TOKENS);
    r.paused = keep(Quantity::Requests, r.paused, c::PAUSED);
    r.prefix_cache_hits = keep(Quantity::Counter, r.prefix_cache_hits, c::PREFIX_CACHE_HITS);
    r.prefix_cache_queries = keep(
        Quantity::Counter,
        r.prefix_cache_queries,
        c::PREFIX_CACHE_QUERIES,
    );
    Some(r)
}

#[derive(Debug, PartialEq)]
enum Line {
    Header(SeriesHeader),
    Row(Row),
}

fn read_line(line: &str, shape: &mut Shape) -> Option<Line> {
    match fast_row(line, shape) {
        Fast::Row(r) => return Some(Line::Row(r)),
        Fast::Skip => return None,
        Fast::Unsure => {}
    }
    generic_line(line)
}

/// The reference reading of one line, through the full JSON reader.
fn generic_line(line: &str) -> Option<Line> {
    let v = json::parse(line).ok()?;
    v.as_object()?;
    if v.has(SCHEMA_KEY) {
        // Every header field is optional and read only when usable: this cannot fail.
        return json::from_json(&v).ok().map(Line::Header);
    }
    let column = |i: usize| v.get(Row::COLUMNS[i]);
    let t_wall = column(Row::T_WALL)?.as_f64()?;
    let t_mono_ns = match column(Row::T_MONO_NS) {
        None | Some(Json::Null) => None,
        Some(x) => Some(x.as_i64_trunc()?),
    };
    // A present non-numeric value skips the row; null or missing is absent.
    let mut numbers = [None; Row::NUMBERS];
    for (slot, i) in numbers.iter_mut().zip(Row::T_MONO_NS + 1..) {
        *slot = match column(i) {
            None | Some(Json::Null) => None,
            Some(x) => Some(x.as_f64()?),
        };
    }
    Some(Line::Row(Row::from_columns(t_wall, t_mono_ns, numbers)))
}

enum Fast {
    Row(Row),
    /// A sample line that the generic reader would skip too.
    Skip,
    /// Not a plain flat object: let the generic reader decide.
    Unsure,
}

/// The common case in one pass without building a JSON tree: a flat object whose values
/// are numbers, `null` or Python's non-finite tokens. Anything else is left to the
/// generic reader, so both paths accept exactly the same lines. A line laid out as the
/// last row read (`shape`) is read by its layout; another is read key by key and, when
/// it is a row, becomes the layout.
fn fast_row(line: &str, shape: &mut Shape) -> Fast {
    if let Some(read) = shape.read(line) {
        return read;
    }
    let read = fast_row_by_keys(line, &mut shape.spans);
    if matches!(read, Fast::Row(_)) {
        shape.learn(line);
    }
    read
}

/// The columns of a line as they are read.
struct Fields {
    t_wall: Option<f64>,
    t_mono_ns: Option<i64>,
    bad_field: bool,
    seen: u16,
    /// The number columns after `t_mono_ns`, in column order.
    numbers: [Option<f64>; Row::NUMBERS],
}

impl Fields {
    fn new() -> Fields {
        Fields {
            t_wall: None,
            t_mono_ns: None,
            bad_field: false,
            seen: 0,
            numbers: [None; Row::NUMBERS],
        }
    }

    /// Takes a key's value (`integer`: the same value when written as an integer); `None`
    /// when the generic reader must judge the line.
    fn set(&mut self, key: Key, value: Option<f64>, integer: Option<i64>) -> Option<()> {
        let column = match key {
            Key::Schema => return None,
            Key::Unknown => return Some(()),
            Key::Column(column) => column,
        };
        // A repeated key: JSON readers keep the first or last; leave it to the generic
        // one.
        if self.seen & (1 << column) != 0 {
            return None;
        }
        self.seen |= 1 << column;
        match column {
            Row::T_WALL => match value {
                Some(v) => self.t_wall = Some(v),
                None => self.bad_field = true,
            },
            Row::T_MONO_NS => {
                if value.is_some() {
                    // A float is truncated by the generic path, and an integer past i64
                    // read by it: keep one rule for each.
                    self.t_mono_ns = Some(integer?);
                }
            }
            _ => self.numbers[column - Row::T_MONO_NS - 1] = value,
        }
        Some(())
    }

    fn row(self) -> Fast {
        match self.t_wall {
            Some(t_wall) if !self.bad_field => {
                Fast::Row(Row::from_columns(t_wall, self.t_mono_ns, self.numbers))
            }
            _ => Fast::Skip,
        }
    }
}

/// The value at `i` in `line` as the fast path reads it: the number (`None` for `null`),
/// the same as an integer when written as one, and where the value ends; `None` when the
/// generic reader must judge it.
#[inline]
fn fast_value(line: &str, i: usize) -> Option<(Option<f64>, Option<i64>, usize)> {
    let b = line.as_bytes();
    Some(match b.get(i)? {
        b'n' if b[i..].starts_with(b"null") => (None, None, i + 4),
        b'N' if b[i..].starts_with(b"NaN") => (Some(f64::NAN), None, i + 3),
        b'I' if b[i..].starts_with(b"Infinity") => (Some(f64::INFINITY), None, i + 8),
        b'-' if b[i..].starts_with(b"-Infinity") => (Some(f64::NEG_INFINITY), None, i + 9),
        b'-' | b'0'..=b'9' => {
            let n = scan(&b[i..])?;
            let v = match n.value {
                Some(v) => v,
                None => line[i..i + n.len].parse().ok()?,
            };
            (Some(v), n.integer, i + n.len)
        }
        // Strings, booleans, nested values: let the generic reader judge.
        _ => return None,
    })
}

/// A line read key by key; `spans` is left with where each value starts and ends, and
/// its key.
fn fast_row_by_keys(line: &str, spans: &mut Vec<(usize, usize, Key)>) -> Fast {
    spans.clear();
    let b = line.as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\r' | b'\n') {
            *i += 1;
        }
    };
    if b.first() != Some(&b'{') {
        return Fast::Unsure;
    }
    i += 1;
    let mut fields = Fields::new();
    ws(&mut i);
    if b.get(i) == Some(&b'}') {
        return Fast::Unsure;
    }
    loop {
        ws(&mut i);
        if b.get(i) != Some(&b'"') {
            return Fast::Unsure;
        }
        let ks = i + 1;
        let (key, klen) = match known_column(&b[ks..]) {
            Some((column, len)) => (Key::Column(column), len),
            None => {
                let Some(klen) = b[ks..].iter().position(|&c| c == b'"' || c == b'\\') else {
                    return Fast::Unsure;
                };
                if b[ks + klen] != b'"' {
                    return Fast::Unsure;
                }
                (Key::of(&line[ks..ks + klen]), klen)
            }
        };
        i = ks + klen + 1;
        ws(&mut i);
        if b.get(i) != Some(&b':') {
            return Fast::Unsure;
        }
        i += 1;
        ws(&mut i);
        let Some((value, integer, end)) = fast_value(line, i) else {
            return Fast::Unsure;
        };
        if fields.set(key, value, integer).is_none() {
            return Fast::Unsure;
        }
        spans.push((i, end, key));
        i = end;
        ws(&mut i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => {
                i += 1;
                ws(&mut i);
                if i != b.len() {
                    return Fast::Unsure;
                }
                break;
            }
            _ => return Fast::Unsure,
        }
    }
    fields.row()
}

/// The layout of the last line read as a row: the text before each value (the
/// separators, the key and its colon) with that key, and the text after the last. A
/// line whose text around its values is the same has the same keys in the same places,
/// so reading its values alone reads it as [`fast_row_by_keys`] would: the text between
/// the values is what the key-by-key reading accepted before, whatever the values.
#[derive(Debug, Default)]
struct Shape {
    /// The pieces of text, one after another.
    text: Vec<u8>,
    /// Per value: where its piece before it ends in `text`, and its key.
    values: Vec<(usize, Key)>,
    /// Scratch of the key-by-key reading: each value's start, end and key.
    spans: Vec<(usize, usize, Key)>,
}

impl Shape {
    /// Reads `line` by the layout; `None` when it is not laid out so (or there is none).
    fn read(&self, line: &str) -> Option<Fast> {
        if self.values.is_empty() {
            return None;
        }
        let b = line.as_bytes();
        let mut fields = Fields::new();
        let (mut at, mut from) = (0, 0);
        for &(to, key) in &self.values {
            let piece = &self.text[from..to];
            if !b
                .get(at..at + piece.len())
                .is_some_and(|t| same_bytes(t, piece))
            {
                return None;
            }
            let (value, integer, end) = fast_value(line, at + piece.len())?;
            fields.set(key, value, integer)?;
            (at, from) = (end, to);
        }
        same_bytes(&b[at..], &self.text[from..]).then(|| fields.row())
    }

    /// Takes the layout of `line`, just read as a row key by key (its values in `spans`).
    fn learn(&mut self, line: &str) {
        let b = line.as_bytes();
        self.text.clear();
        self.values.clear();
        let mut at = 0;
        for &(start, end, key) in &self.spans {
            self.text.extend_from_slice(&b[at..start]);
            self.values.push((self.text.len(), key));
            at = end;
        }
        self.text.extend_from_slice(&b[at..]);
    }
}

/// Reads a JSON number at the start of `s`: its value and its length, as the fast path
/// reads it ([`scan`], then the full parser when its value needs it).
#[cfg(test)]
fn scan_number(s: &str) -> Option<(f64, usize)> {
    let n = scan(s.as_bytes())?;
    let v = n.value.or_else(|| s[..n.len].parse().ok())?;
    Some((v, n.len))
}

/// A JSON number scanned at the start of some bytes.
struct Scanned {
    /// Its length in bytes.
    len: usize,
    /// Its value, when the fast path gives it; else the full parser must read the text.
    value: Option<f64>,
    /// Its value as an integer when it is an integer literal (no fraction, no exponent)
    /// of at most 18 digits, as `str::parse::<i64>` reads it.
    integer: Option<i64>,
}

/// Reads a JSON number at the start of `b` in one pass: its length, and its value when
/// Clinger's fast path gives it: decimals whose digits fit in 2^53 with at most 22
/// fraction digits (one correctly rounded division gives the same double as a full
/// parser); others are left to the full parser. Syntax as the generic JSON reader accepts
/// it. Eight digits at a time where there are eight.
fn scan(b: &[u8]) -> Option<Scanned> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let neg = b.first() == Some(&b'-');
    let int_start = usize::from(neg);
    let mut mant: u64 = 0;
    let mut i = digits(b, int_start, &mut mant);
    let int_digits = i - int_start;
    if int_digits == 0 || (b[int_start] == b'0' && int_digits > 1) {
        return None;
    }
    // Digits before the first non-zero one: a leading `0` and the fraction's zeros after it.
    let mut leading_zeros = usize::from(b[int_start] == b'0');
    let mut frac = 0usize;
    if b.get(i) == Some(&b'.') {
        let frac_start = i + 1;
        i = digits(b, frac_start, &mut mant);
        frac = i - frac_start;
        if frac == 0 {
            return None;
        }
        if leading_zeros == 1 {
            leading_zeros += b[frac_start..i].iter().take_while(|&&c| c == b'0').count();
        }
    }
    let mut exponent = false;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        exponent = true;
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    // Significant digits: mant is exact (no wrap) when there are at most 19.
    let sig = int_digits + frac - leading_zeros;
    let mut out = Scanned {
        len: i,
        value: None,
        integer: None,
    };
    if exponent || sig > 19 {
        return Some(out);
    }
    if frac == 0 && int_digits <= 18 {
        // Below 10^18: fits an i64 with its sign.
        let m = mant as i64;
        out.integer = Some(if neg { -m } else { m });
    }
    if mant <= (1u64 << 53) && frac <= 22 {
        let v = mant as f64 / POW10[frac];
        // An integer literal is read as an integer, so `-0` is 0, not -0.0.
        out.value = Some(if neg && !(frac == 0 && v == 0.0) {
            -v
        } else {
            v
        });
    }
    Some(out)
}

/// Reads the ASCII digits of `b` from `i` into `mant` (times ten each, wrapping); returns
/// where they end.
#[inline]
fn digits(b: &[u8], mut i: usize, mant: &mut u64) -> usize {
    while let Some(eight) = b.get(i..i + 8) {
        let word = u64::from_le_bytes(eight.try_into().expect("eight bytes"));
        if !eight_digits(word) {
            break;
        }
        *mant = mant
            .wrapping_mul(100_000_000)
            .wrapping_add(eight_digits_value(word));
        i += 8;
    }
    while i < b.len() && b[i].is_ascii_digit() {
        *mant = mant.wrapping_mul(10).wrapping_add(u64::from(b[i] - b'0'));
        i += 1;
    }
    i
}

/// Whether the eight bytes of `word` (little-endian) are all ASCII digits: each byte's
/// high nibble is 3, and still 3 once 6 is added (its low nibble is at most 9).
#[inline]
fn eight_digits(word: u64) -> bool {
    let high = word & 0xf0f0_f0f0_f0f0_f0f0;
    let carried = (word.wrapping_add(0x0606_0606_0606_0606) & 0xf0f0_f0f0_f0f0_f0f0) >> 4;
    high | carried == 0x3333_3333_3333_3333
}

/// The value of eight ASCII digits (little-endian `word`, the first digit the most
/// significant), by pairs, then fours, then all eight.
#[inline]
fn eight_digits_value(word: u64) -> u64 {
    let v = word.wrapping_sub(0x3030_3030_3030_3030);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let pairs = v & 0x0000_00ff_0000_00ff;
    let pairs_high = (v >> 16) & 0x0000_00ff_0000_00ff;
    pairs
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(pairs_high.wrapping_mul(1 + (10_000 << 32)))
        >> 32
}

/// For each first byte of a key, the columns whose name starts with it (bit i: column i).
const COLUMNS_BY_FIRST_BYTE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < Row::COLUMNS.len() {
        table[Row::COLUMNS[i].as_bytes()[0] as usize] |= 1 << i;
        i += 1;
    }
    table
};

/// A column's name and closing quote at the start of `b` (just after the opening quote):
/// the column's index and the name's length.
fn known_column(b: &[u8]) -> Option<(usize, usize)> {
    let mut candidates = COLUMNS_BY_FIRST_BYTE[usize::from(*b.first()?)];
    while candidates != 0 {
        let column = candidates.trailing_zeros() as usize;
        let name = Row::COLUMNS[column].as_bytes();
        if b.get(name.len()) == Some(&b'"') && same_bytes(&b[..name.len()], name) {
            return Some((column, name.len()));
        }
        candidates &= candidates - 1;
    }
    None
}

/// `a == b` for short slices (a column name, the text between two values) eight bytes
/// at a time, without a call to `memcmp` (whose call costs more than the comparison).
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().expect("eight bytes"));
    for (p, q) in x.by_ref().zip(y.by_ref()) {
        if word(p) != word(q) {
            return false;
        }
    }
    let (p, q) = (x.remainder(), y.remainder());
    p.iter().zip(q).fold(0u8, |d, (m, n)| d | (m ^ n)) == 0
}

/// What a key of a line is.
#[derive(Debug, Clone, Copy)]
enum Key {
    Column(usize),
    /// The header's marker.
    Schema,
    Unknown,
}

impl Key {
    fn of(key: &str) -> Key {
        if key == SCHEMA_KEY {
            return Key::Schema;
        }
        Row::COLUMNS
            .iter()
            .position(|c| *c == key)
            .map_or(Key::Unknown, Key::Column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_constants_are_the_field_names() {
        assert_eq!(
            [
                column::T_WALL,
                column::T_MONO_NS,
                column::LATENCY_S,
                column::RUNNING,
                column::WAITING,
                column::KV_USAGE,
                column::PREEMPTIONS,
                column::GENERATION_TOKENS,
                column::PROMPT_TOKENS,
                column::PAUSED,
                column::PREFIX_CACHE_HITS,
                column::PREFIX_CACHE_QUERIES,
            ],
            [
                "t_wall",
                "t_mono_ns",
                "latency_s",
                "running",
                "waiting",
                "kv_usage",
                "preemptions",
                "generation_tokens",
                "prompt_tokens",
                "paused",
                "prefix_cache_hits",
                "prefix_cache_queries",
            ]
        );
    }

    #[test]
    fn prefix_cache_columns_are_gated_as_counters() {
        let t = b"{\"t_wall\": 1.0, \"prefix_cache_hits\": NaN, \"prefix_cache_queries\": 100.0}\n\
            {\"t_wall\": 2.0, \"prefix_cache_hits\": 50.0, \"prefix_cache_queries\": 9223372036854775808}\n";
        let s = Series::read("run/run.series.jsonl", t).unwrap();
        assert_eq!(s.rows.len(), 2);
        assert_eq!(
            (
                s.rows.get(0).prefix_cache_hits,
                s.rows.get(0).prefix_cache_queries
            ),
            (None, Some(100.0))
        );
        assert_eq!(
            (
                s.rows.get(1).prefix_cache_hits,
                s.rows.get(1).prefix_cache_queries
            ),
            (Some(50.0), None)
        );
        let shown: Vec<String> = s.implausible.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "run/run.series.jsonl:1: prefix_cache_hits = NaN is not a number",
                "run/run.series.jsonl:2: prefix_cache_queries = 9.223372036854776e18 is past 2^53, beyond what inferlint can count exactly",
            ]
        );
    }

    #[test]
    fn reads_header_rows_and_skips_damage() {
        let t = b"{\"schema\": \"inferlint.series/1\", \"url\": \"http://h\", \"interval_s\": 0.25, \"engine\": \"sglang\"}\n\
            {\"t_wall\": 1.0, \"t_mono_ns\": 5, \"running\": 2.0, \"kv_usage\": NaN}\n\
            not json\n\
            {\"t_wall\": 2.0, \"running\": \"x\"}\n\
            [1]\n\
            {\"t_wall\": 3.0, \"t_mono_ns\": null, \"running\": null, \"waiting\": 4}\n\
            {\"t_wall\": 4.0, \"runn";
        let s = Series::read("s", t).unwrap();
        assert_eq!(s.engine(), Engine::Sglang);
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.skipped, 4);
        assert_eq!(s.first_skipped_line, Some(3));
        assert_eq!(s.rows.get(1).waiting, Some(4.0));
        assert_eq!(s.peak_running(), Some(2.0));
        assert_eq!(s.times(), vec![0.0, 2.0]);
        assert_eq!(s.skip_note("s").unwrap(), "s:3: 4 lines skipped");
    }

    #[test]
    fn pieces_of_any_size_read_as_the_whole_file() {
        let text = "{\"schema\": \"inferlint.series/1\", \"engine\": \"sglang\"}\r\n\
            {\"t_wall\": 1.0, \"t_mono_ns\": 5, \"running\": 2.0}\n\
            \n\
            caf\u{e9}\n\
            {\"t_wall\": 2.0, \"running\": NaN, \"waiting\": 4}\n\
            {\"t_wall\": 3.0, \"runn";
        let mut bytes = text.as_bytes().to_vec();
        // An invalid byte, and a character cut by every piece size below.
        bytes.extend_from_slice(b"\xff\xe2\x82\n{\"t_wall\": 4.0}");
        let whole = format!("{:?}", Series::read("s", &bytes));
        for size in 1..=bytes.len() {
            let mut reader = SeriesReader::new("s");
            for piece in bytes.chunks(size) {
                reader.push(piece);
            }
            assert_eq!(format!("{:?}", reader.finish()), whole, "pieces of {size}");
        }
        let s = Series::read("s", &bytes).unwrap();
        assert_eq!((s.rows.len(), s.row_lines.clone()), (3, vec![2, 5, 7]));
        assert_eq!((s.skipped, s.first_skipped_line), (2, Some(4)));
    }

    #[test]
    fn halves_read_apart_and_appended_read_as_the_whole_file() {
        let bytes = b"{\"t_wall\": 1.0, \"running\": 2.0}\n\
            oops\n\
            {\"schema\": \"inferlint.series/1\", \"engine\": \"vllm\"}\n\
            {\"t_wall\": 2.0, \"kv_usage\": NaN}\n\
            \n\
            {\"schema\": \"inferlint.series/1\", \"engine\": \"sglang\"}\n\
            [2]\n\
            {\"t_wall\": 3.0, \"kv_usage\": 2.5}\n\
            {\"t_wall\": 4.0, \"runn";
        let whole = format!("{:?}", Series::read("s", bytes));
        let starts = (0..bytes.len()).filter(|&i| i == 0 || bytes[i - 1] == b'\n');
        for cut in starts {
            let mut first = SeriesReader::new("s");
            first.push(&bytes[..cut]);
            let mut later = SeriesReader::new("s");
            later.push(&bytes[cut..]);
            first.append(later);
            assert_eq!(format!("{:?}", first.finish()), whole, "cut at {cut}");
        }
        let s = Series::read("s", bytes).unwrap();
        assert_eq!(s.engine(), Engine::Sglang);
        let lines: Vec<Option<usize>> = s.implausible.iter().map(|i| i.line).collect();
        assert_eq!(lines, [Some(4), Some(8)]);
    }

    /// The fast path reads every line exactly as the JSON reader does.
    fn same_as_generic(line: &str) {
        same_after(line, None);
    }

    /// The fast path reads `line`, after `model` when given (its layout then tried
    /// first), exactly as the JSON reader does.
    fn same_after(line: &str, model: Option<&str>) {
        let mut shape = Shape::default();
        if let Some(m) = model {
            read_line(m, &mut shape);
        }
        let fast = read_line(line, &mut shape);
        let slow = generic_line(line);
        match (&fast, &slow) {
            (Some(Line::Row(a)), Some(Line::Row(b))) => {
                // NaN != NaN: compare the bit patterns of the fields.
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{line}");
            }
            (Some(Line::Header(_)), Some(Line::Header(_))) | (None, None) => {}
            _ => panic!("{line}: fast {fast:?} vs generic {slow:?}"),
        }
    }

    proptest::proptest! {
        #[test]
        fn fast_decimal_matches_the_full_parser(int in 0u64..10_000_000_000, frac in 0u64..1_000_000_000, neg: bool, width in 0usize..10) {
            let text = format!("{}{int}.{frac:0width$}", if neg { "-" } else { "" });
            let (v, used) = scan_number(&text).unwrap();
            proptest::prop_assert_eq!(used, text.len());
            proptest::prop_assert_eq!(v.to_bits(), text.parse::<f64>().unwrap().to_bits(), "{}", text);
        }
    }

    proptest::proptest! {
        #[test]
        fn long_decimals_match_the_full_parser(int in 0u64..100, frac: u64, width in 0usize..25, neg: bool) {
            let text = format!("{}{int}.{frac:0width$}", if neg { "-" } else { "" });
            let (v, used) = scan_number(&text).unwrap();
            proptest::prop_assert_eq!(used, text.len());
            proptest::prop_assert_eq!(v.to_bits(), text.parse::<f64>().unwrap().to_bits(), "{}", text);
        }

        #[test]
        fn integers_read_as_the_standard_parsers_read_them(n: i64, tail in "[ ,}]{0,2}") {
            let text = format!("{n}{tail}");
            let s = scan(text.as_bytes()).unwrap();
            let digits = n.unsigned_abs().to_string().len();
            proptest::prop_assert_eq!(s.len, text.len() - tail.len());
            proptest::prop_assert_eq!(s.integer, (digits <= 18).then_some(n));
            let (v, _) = scan_number(&text).unwrap();
            proptest::prop_assert_eq!(v.to_bits(), (n as f64).to_bits());
        }
    }

    #[test]
    fn eight_digits_at_once_read_as_one_at_a_time() {
        for text in [
            "12345678",
            "00000000",
            "99999999",
            "1234567/",
            "123:5678",
            "0000000\u{7f}",
        ] {
            let word = u64::from_le_bytes(text.as_bytes()[..8].try_into().unwrap());
            let all = text.bytes().all(|c| c.is_ascii_digit());
            assert_eq!(eight_digits(word), all, "{text}");
            if all {
                assert_eq!(eight_digits_value(word), text.parse::<u64>().unwrap());
            }
        }
        for byte in 0..=255u8 {
            let word = u64::from_le_bytes([b'1', b'2', byte, b'4', b'5', b'6', b'7', b'8']);
            assert_eq!(eight_digits(word), byte.is_ascii_digit(), "{byte}");
        }
    }

    #[test]
    fn fast_path_agrees_with_the_json_reader() {
        let lines = [
            r#"{"t_wall": 1790470252.238873, "t_mono_ns": 208651898175, "running": 0.0, "waiting": 0.0, "kv_usage": 0.0, "preemptions": 0.0, "generation_tokens": 144.0, "prompt_tokens": 63.0}"#,
            r#"{"t_wall": 1.0, "t_mono_ns": null, "running": null, "kv_usage": NaN, "paused": -Infinity}"#,
            r#"{"t_wall": 1.0, "t_mono_ns": 1.5e9}"#,
            r#"{"t_wall": null, "running": 1}"#,
            r#"{"running": 1}"#,
            r#"{"t_wall": 1, "running": "x"}"#,
            r#"{"t_wall": 1, "running": true}"#,
            r#"{"t_wall": 1, "note": "a,b}"}"#,
            r#"{"t_wall": 1, "extra": {"a": 1}}"#,
            r#"{"t_wall": 1, "running": 1, "running": 2}"#,
            r#"{"t_wall": 1.}"#,
            r#"{"t_wall": +1}"#,
            r#"{"t_wall": 1} x"#,
            r#"{"t_wall": 01}"#,
            r#"{"schema": "x", "t_wall": 1}"#,
            r#"{"t_w\u0061ll": 1}"#,
            r#"{}"#,
            r#"{"t_wall":1,"running":2}"#,
            r#"{"t_wall": 01, "running": -0}"#,
            r#"{"t_wall": 1e5, "running": 1E+2, "kv_usage": 2.5e-3}"#,
            r#"{"t_wall": 1, "running": -}"#,
            r#"{"t_wall": 1, "running": 12345678901234567890123}"#,
            r#"{"t_wall": 1, "running": 0.47619047619047616}"#,
            r#"{"t_wall": 1, "t_mono_ns": -5, "pausedx": 3, "paus": 1}"#,
            r#"{"t_wall": 1, "running": nul}"#,
            r#"{"t_wall": 1, "running": NaNx}"#,
            r#"{"t_wall": 2, "running": NaN}"#,
            r#"{"t_wall": 1, "running": 1e}"#,
            r#"{"t_wall": 1, "running": 1 }"#,
            r#"{"t_wall": 1, "running": 1, "running": 2}"#,
            r#"{"t_wall": 7, "t_mono_ns": 12345678901234567890}"#,
            r#"{"t_wall": 7, "t_mono_ns": 2.5}"#,
        ];
        // Each alone, and each after each other (the layout of the one before tried first).
        for line in lines {
            same_as_generic(line);
            for model in lines {
                same_after(line, Some(model));
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn fast_path_agrees_on_generated_lines(
            keys in proptest::collection::vec(
                proptest::sample::select(vec!["t_wall", "t_mono_ns", "running", "kv_usage", "paused", "x"]), 0..6),
            values in proptest::collection::vec(
                proptest::sample::select(vec!["1", "-2.5e3", "null", "NaN", "Infinity", "\"s\"", "true", "1.", "0.25", "12345678901234"]), 6),
        ) {
            let body: Vec<String> = keys.iter().zip(&values).map(|(k, v)| format!("\"{k}\": {v}")).collect();
            let line = format!("{{{}}}", body.join(", "));
            same_as_generic(&line);
            // After a row of the same keys (same layout, other values).
            let model: Vec<String> = keys.iter().map(|k| format!("\"{k}\": 1")).collect();
            same_after(&line, Some(&format!("{{{}}}", model.join(", "))));
        }
    }

    #[test]
    fn binary_is_an_input_error() {
        assert!(Series::read("s", b"\x00\x01\x02").is_err());
        assert!(Series::read("s", b"").is_err());
    }

    #[test]
    fn unknown_engine_reads_as_vllm() {
        let s = Series::read("s", b"{\"schema\": 1, \"engine\": \"tgi\"}").unwrap();
        assert_eq!(s.engine(), Engine::Vllm);
        let s = Series::read("s", b"{\"schema\": 1}").unwrap();
        assert_eq!(s.engine_named, None);
    }
}
