//! The run carried inside a one-file report (format `inferlint.pack/2`): every input file
//! of the run by role, compressed (raw deflate) and base64-encoded, plus the options the
//! analysis used, as one JSON object that is safe to place inside a `<script>` element.
//! The JSON Lines files (the series, the GPU samples) are carried as columns first
//! (`columns`, key `"c"`): lossless, and about a tenth of their deflated text.
//!
//! One module serves both writers and the reader: the `inferlint` command line embeds a
//! run (`cli/html.rs`), the browser viewer embeds a dropped folder and reads either back,
//! so the format cannot drift apart. Pure computation: it builds for wasm too.
//!
//! ```text
//! {"format": "inferlint.pack/1", "generated_ms": 1764480000000,
//!  "options": {"requested": "32", "engine": "vllm", "engine_by": "--engine", "title": "…"},
//!  "files": [{"role": "boot_log", "name": "run/boot.log", "size": 19825, "z": "<base64>"},
//!            {"role": "series", "name": "run/run.series.jsonl", "size": 77519034, "c": "<base64>"},
//!            {"role": "bench", "name": "run/bench.json", "evidence_path": "run/bench.json", "z": "…"},
//!            {"role": "before", "name": "run/before.snapshot.json", "error": "no such file"}]}
//! ```
//! Roles: `boot_log` (repeated, in order), `before`, `after`, `series`, `bench`,
//! `bench_more` (repeated, in order: the further runs' results), `bench_requests`
//! (repeated: their per-request exports), `load_log`, `manifest`, `gate`, `probe`, `teardown`, `gpu`, `aiperf_server`; a fleet's
//! `fleet`, `replica:<id>:before|after|series` and `router:before|after`.
//!
//! Reading never unpacks a file past its role's size limit (`sizes.rs`, as if read from
//! disk) nor a whole pack past [`MAX_UNPACKED`]: a hostile page cannot make the viewer
//! allocate more than a folder could. `inferlint.pack/1` pages (every file `"z"`) and the
//! older `inferlint.run/1` still read.
//!
//! A comparison page carries several runs as `inferlint.packs/1` ([`Packs`]): the same
//! run objects in a `runs` list, each with its column label. [`decode_any`] reads both.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

pub mod columns;
pub mod rows;

use crate::engine::Engine;
use crate::input::InputError;
use crate::inputs::{BenchInput, InputFile, NamedEngine, Options, RunInput};
use crate::json::{self, Json};
use crate::series::Series;
use crate::sizes::Role;

/// The format tag (distinct from the manifest's `inferlint.run/1`).
pub const FORMAT: &str = "inferlint.pack/2";
/// The tag of packs whose every file is deflated text; still read.
const FORMAT_1: &str = "inferlint.pack/1";
/// The tag pages made before the pack had its own carry; still read.
const FORMAT_BEFORE: &str = "inferlint.run/1";
/// The most bytes one pack unpacks to, all its files together: the largest series a
/// folder may hold (`sizes::Role::Series`).
pub const MAX_UNPACKED: u64 = 4 * 1024 * 1024 * 1024;
/// The deflate level: 9 is miniz's best ordinary level (measured in ARCHITECTURE.md's
/// pack line against 1 and 6).
const LEVEL: u8 = 9;
/// The roles carried as columns: JSON Lines whose lines repeat their keys.
const COLUMNAR_ROLES: [&str; 2] = ["series", "gpu"];

/// One input file: its role, the name the analysis shows, and its bytes (or why it could
/// not be read).
#[derive(Debug, Clone, PartialEq)]
pub struct PackedFile {
    pub role: String,
    pub name: String,
    /// The file's text, or its columnar copy (`form`).
    pub bytes: Result<Vec<u8>, String>,
    /// For the `bench` role: the path T15 records as `result_file`.
    pub evidence_path: Option<String>,
    pub form: Form,
}

/// What a packed file's `bytes` hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// The file's text.
    #[default]
    Text,
    /// Its columnar copy (`columns`, inflated), as [`decode_any_keeping_columns`] keeps a
    /// file carried so: its text, at most `limit` bytes, is made only when asked
    /// ([`PackedFile::text`]), and a series is read from it without text ([`input_reading_series`]).
    /// `size`: the text's size the pack stated (a hint, untrusted), written back when saved.
    Columns { limit: usize, size: usize },
}

impl PackedFile {
    /// The file's text, made from its columns when it holds them.
    pub fn text(&self) -> Result<std::borrow::Cow<'_, [u8]>, String> {
        let bytes = self.bytes.as_deref().map_err(Clone::clone)?;
        match self.form {
            Form::Text => Ok(bytes.into()),
            Form::Columns { limit, size } => columns::decode(bytes, limit, size)
                .map(Into::into)
                .map_err(|e| format!("embedded copy unreadable: {e}")),
        }
    }
}

/// A whole run: files, the analysis options as strings, and when the page was made.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pack {
    pub generated_ms: Option<f64>,
    pub options: Vec<(String, String)>,
    pub files: Vec<PackedFile>,
}

impl Pack {
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Standard base64 (RFC 4648 alphabet, `=` padding), as the browser's `atob` reads it.
pub fn base64_encode(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// Reads what [`base64_encode`] writes; any other text is refused with the reason.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    STANDARD
        .decode(text)
        .map_err(|e| format!("not base64: {e}"))
}

/// Raw deflate at [`LEVEL`].
pub fn compress(data: &[u8]) -> Vec<u8> {
    compress_at(data, LEVEL)
}

/// Raw deflate at miniz's `level` (0–10), to measure levels against each other.
pub fn compress_at(data: &[u8], level: u8) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec(data, level)
}

/// Inflates what [`compress`] wrote, refused past `limit` bytes.
pub fn decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    miniz_oxide::inflate::decompress_to_vec_with_limit(data, limit).map_err(|e| match e.status {
        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
            format!("the embedded file unpacks to more than {limit} bytes")
        }
        status => format!("the embedded file is damaged ({status:?})"),
    })
}

/// A file as the pack carries it: (key, base64 of the compressed bytes).
fn carry(role: &str, bytes: &[u8], form: Form) -> (&'static str, String) {
    if let Form::Columns { .. } = form {
        // Already columns: carried as they came.
        ("c", base64_encode(&compress(bytes)))
    } else if COLUMNAR_ROLES.contains(&role) {
        ("c", base64_encode(&compress(&columns::encode(bytes))))
    } else {
        ("z", base64_encode(&compress(bytes)))
    }
}

/// A JSON Lines file's carriage made ahead of its pack: the command line encodes the
/// series into columns as it streams from disk, and deflates them on its own thread while
/// the analysis runs. [`encode_with`] writes it exactly as [`encode`] would have written
/// the same bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Carriage {
    /// The file's size in bytes.
    size: usize,
    /// Base64 of the deflated columns.
    text: String,
}

impl Carriage {
    /// The carriage of a file of `size` bytes whose columns (`columns::encode`, or a
    /// `columns::Encoder` fed the file) are `columns`.
    pub fn columnar(size: usize, columns: &[u8]) -> Carriage {
        Carriage {
            size,
            text: base64_encode(&compress(columns)),
        }
    }
}

/// The most bytes a carried file of `role` may unpack to: its role's limit on disk.
fn limit_of(role: &str, name: &str) -> u64 {
    let role = match role {
        "series" => Role::Series,
        "boot_log" | "load_log" => Role::Log,
        "before" | "after" => Role::Snapshot,
        "manifest" | "gate" | "probe" | "teardown" => Role::Document,
        "bench" | "bench_more" | "bench_requests" => Role::LoadResult,
        _ => Role::of_name(name.rsplit('/').next().unwrap_or(name)),
    };
    role.max_bytes()
}

/// A carried file's bytes (`z`: deflated; `c`: columns, deflated), at most `limit` bytes,
/// and their form: a columnar copy is kept as columns when `keep_columns`, else its text.
fn uncarry(
    key: &str,
    text: &str,
    limit: u64,
    size_hint: usize,
    keep_columns: bool,
) -> Result<(Vec<u8>, Form), String> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let packed = base64_decode(text)?;
    let inflated = decompress(&packed, limit)?;
    if key == "z" {
        return Ok((inflated, Form::Text));
    }
    if keep_columns && columns::is_columnar(&inflated) {
        let size = size_hint;
        return Ok((inflated, Form::Columns { limit, size }));
    }
    columns::decode(&inflated, limit, size_hint)
        .map(|t| (t, Form::Text))
        .map_err(|e| e.to_string())
}

/// A JSON string literal that is also inert inside `<script>`: `<`, `>` and `&` are
/// written as `\u003c`, `\u003e`, `\u0026` (and the JavaScript line breaks U+2028/9 as
/// escapes), so no `</script>` or `<!--` can appear. In JSON text these characters can only
/// stand inside strings, where the escape means the same character.
pub fn json_string(s: &str) -> String {
    let plain = Json::from(s).to_compact();
    let mut out = String::with_capacity(plain.len() + 8);
    for c in plain.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The pack as JSON text, safe to embed in a `<script type="application/json">`.
pub fn encode(p: &Pack) -> String {
    encode_with(p, None)
}

/// As [`encode`], the first readable file of a columnar role named `ready.0` (its bytes
/// unused, possibly empty) carried as `ready.1`, made ahead from its bytes.
pub fn encode_with(p: &Pack, mut ready: Option<(&str, Carriage)>) -> String {
    let mut out = String::new();
    out.push_str("{\"format\":");
    out.push_str(&json_string(FORMAT));
    push_generated(&mut out, p.generated_ms);
    out.push(',');
    push_run(&mut out, p, &mut ready);
    out.push('}');
    out
}

fn push_generated(out: &mut String, generated_ms: Option<f64>) {
    if let Some(ms) = generated_ms.filter(|m| m.is_finite()) {
        out.push_str(&format!(",\"generated_ms\":{}", ms.trunc() as i64));
    }
}

fn push_options(out: &mut String, options: &[(String, String)]) {
    out.push_str("\"options\":{");
    for (i, (k, v)) in options.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&json_string(k));
        out.push(':');
        out.push_str(&json_string(v));
    }
    out.push('}');
}

/// A run's `"options":{…},"files":[…]`; a file of the role of `ready` takes its carriage.
fn push_run(out: &mut String, p: &Pack, ready: &mut Option<(&str, Carriage)>) {
    push_options(out, &p.options);
    out.push_str(",\"files\":[");
    for (i, f) in p.files.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("\n{\"role\":");
        out.push_str(&json_string(&f.role));
        out.push_str(",\"name\":");
        out.push_str(&json_string(&f.name));
        if let Some(e) = &f.evidence_path {
            out.push_str(",\"evidence_path\":");
            out.push_str(&json_string(e));
        }
        match &f.bytes {
            Ok(_)
                if ready
                    .as_ref()
                    .is_some_and(|(role, _)| *role == f.role && COLUMNAR_ROLES.contains(role)) =>
            {
                let (_, c) = ready.take().expect("just matched");
                out.push_str(&format!(",\"size\":{},\"c\":\"", c.size));
                out.push_str(&c.text);
                out.push('"');
            }
            Ok(b) => {
                let (key, text) = carry(&f.role, b, f.form);
                // The text's size, as written: a file kept as columns has the size it came with.
                let size = match f.form {
                    Form::Text => b.len(),
                    Form::Columns { size, .. } => size,
                };
                out.push_str(&format!(",\"size\":{size},\"{key}\":\"{text}\""));
            }
            Err(e) => {
                out.push_str(",\"error\":");
                out.push_str(&json_string(e));
            }
        }
        out.push('}');
    }
    out.push(']');
}

/// Reads a pack's JSON text (as `pack::encode` writes it).
pub fn decode(text: &str) -> Result<Pack, String> {
    one_of(&parse(text)?, false)
}

fn parse(text: &str) -> Result<Json, String> {
    json::parse(text).map_err(|e| format!("the embedded run is damaged: {e:?}"))
}

/// A single run's pack from its parsed JSON.
fn one_of(doc: &Json, keep_columns: bool) -> Result<Pack, String> {
    let format = doc.get("format").and_then(Json::as_str);
    if ![FORMAT, FORMAT_1, FORMAT_BEFORE].contains(&format.unwrap_or_default()) {
        return Err(format!("the embedded run is not in the {} format", FORMAT));
    }
    let generated_ms = doc.get("generated_ms").and_then(Json::as_f64);
    let mut budget = MAX_UNPACKED;
    Ok(run_of(doc, generated_ms, &mut budget, keep_columns))
}

/// A run's options and files from its JSON object; `budget` is what the page may still
/// unpack (shared by every run of a comparison). A file kept as columns is charged its
/// columns' size; its text is held to the budget left when it was unpacked.
fn run_of(doc: &Json, generated_ms: Option<f64>, budget: &mut u64, keep_columns: bool) -> Pack {
    let options = options_of(doc);
    let mut files = Vec::new();
    for f in doc.get("files").and_then(Json::as_array).unwrap_or(&[]) {
        let s = |k: &str| f.get(k).and_then(Json::as_str).map(str::to_string);
        let name = s("name").unwrap_or_default();
        let role = s("role").unwrap_or_default();
        let carried = ["z", "c"]
            .into_iter()
            .find_map(|k| f.get(k).and_then(Json::as_str).map(|t| (k, t)));
        let (bytes, form) = match (carried, s("error")) {
            (Some((key, text)), _) => {
                let limit = limit_of(&role, &name).min(*budget);
                let hint = f.get("size").and_then(Json::as_f64).unwrap_or(0.0) as usize;
                match uncarry(key, text, limit, hint, keep_columns) {
                    Ok((b, form)) => {
                        *budget -= b.len() as u64;
                        (Ok(b), form)
                    }
                    Err(e) => (Err(format!("embedded copy unreadable: {e}")), Form::Text),
                }
            }
            (None, Some(e)) => (Err(e), Form::Text),
            (None, None) => (Err("no content embedded".to_string()), Form::Text),
        };
        files.push(PackedFile {
            role,
            name,
            bytes,
            evidence_path: s("evidence_path"),
            form,
        });
    }
    Pack {
        generated_ms,
        options,
        files,
    }
}

fn options_of(doc: &Json) -> Vec<(String, String)> {
    doc.get("options")
        .and_then(Json::as_object)
        .unwrap_or(&[])
        .iter()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect()
}

/// The format tag of several runs carried together (a comparison page).
pub const FORMAT_MANY: &str = "inferlint.packs/1";

/// Several runs carried together: each with its column label, plus the comparison's own
/// options (`baseline`: the first run is the baseline of the second; `tolerance` in
/// percent).
///
/// ```text
/// {"format": "inferlint.packs/1", "generated_ms": 1764480000000,
///  "options": {"baseline": "1", "tolerance": "5"},
///  "runs": [{"label": "old", "options": {…}, "files": […]},
///           {"label": "new", "options": {…}, "files": […]}]}
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Packs {
    pub generated_ms: Option<f64>,
    pub options: Vec<(String, String)>,
    /// (label, run); each run's own `generated_ms` is not written.
    pub runs: Vec<(String, Pack)>,
}

impl Packs {
    pub fn option(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Several runs as JSON text, as inert inside `<script>` as [`encode`]'s.
pub fn encode_many(p: &Packs) -> String {
    let mut out = String::new();
    out.push_str("{\"format\":");
    out.push_str(&json_string(FORMAT_MANY));
    push_generated(&mut out, p.generated_ms);
    out.push(',');
    push_options(&mut out, &p.options);
    out.push_str(",\"runs\":[");
    for (i, (label, run)) in p.runs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("\n{\"label\":");
        out.push_str(&json_string(label));
        out.push(',');
        push_run(&mut out, run, &mut None);
        out.push('}');
    }
    out.push_str("]}");
    out
}

/// What a page carries: one run, or several to compare.
#[derive(Debug, Clone, PartialEq)]
pub enum Carried {
    One(Pack),
    Many(Packs),
}

/// Reads either form: a single run ([`encode`]) or several ([`encode_many`]).
pub fn decode_any(text: &str) -> Result<Carried, String> {
    decode_carried(text, false)
}

/// As [`decode_any`], with the files carried as columns kept as columns
/// ([`Form::Columns`]): a page shows a long recording without ever making its text.
pub fn decode_any_keeping_columns(text: &str) -> Result<Carried, String> {
    decode_carried(text, true)
}

fn decode_carried(text: &str, keep_columns: bool) -> Result<Carried, String> {
    let doc = parse(text)?;
    if doc.get("format").and_then(Json::as_str) != Some(FORMAT_MANY) {
        return one_of(&doc, keep_columns).map(Carried::One);
    }
    let generated_ms = doc.get("generated_ms").and_then(Json::as_f64);
    let mut budget = MAX_UNPACKED;
    let runs = doc
        .get("runs")
        .and_then(Json::as_array)
        .unwrap_or(&[])
        .iter()
        .map(|r| {
            let label = r.get("label").and_then(Json::as_str).unwrap_or("run");
            (
                label.to_string(),
                run_of(r, generated_ms, &mut budget, keep_columns),
            )
        })
        .collect();
    Ok(Carried::Many(Packs {
        generated_ms,
        options: options_of(&doc),
        runs,
    }))
}

/// The analyzer's inputs and options from a pack.
pub fn from_pack(p: &Pack) -> (RunInput, Options) {
    into_input(p.clone())
}

/// The analyzer's inputs and options from a pack, with its series already read (for
/// `analysis::analyze_with_series`): a series kept as columns is read straight into its
/// rows (`rows`), never as text, and its input file then only names it.
pub fn input_reading_series(p: &Pack) -> (RunInput, Options, Option<Result<Series, InputError>>) {
    // The run's series is the last file of its role, as `into_input` takes it.
    let series_at = p.files.iter().rposition(|f| f.role == "series");
    let mut series = None;
    let files = p
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| match (f.form, &f.bytes) {
            (Form::Columns { limit, .. }, Ok(cols)) if Some(i) == series_at => {
                series = Some(rows::read_series(&f.name, cols, limit));
                PackedFile {
                    role: f.role.clone(),
                    name: f.name.clone(),
                    bytes: Ok(Vec::new()),
                    evidence_path: f.evidence_path.clone(),
                    form: Form::Text,
                }
            }
            _ => f.clone(),
        })
        .collect();
    let (input, opts) = into_input(Pack {
        generated_ms: p.generated_ms,
        options: p.options.clone(),
        files,
    });
    let series = series.or_else(|| {
        let f = input.series.as_ref()?;
        Some(f.bytes().and_then(|b| Series::read(&f.name, b)))
    });
    (input, opts, series)
}

/// The analyzer's inputs and options from a pack, its files moved, not copied (a day's
/// series is tens of MB).
pub fn into_input(mut p: Pack) -> (RunInput, Options) {
    let mut input = RunInput::default();
    for f in std::mem::take(&mut p.files) {
        let bytes = match f.form {
            Form::Text => f.bytes,
            Form::Columns { .. } => f.text().map(std::borrow::Cow::into_owned),
        };
        let file = InputFile {
            name: f.name,
            bytes,
        };
        match f.role.as_str() {
            "boot_log" => input.boot_logs.push(file),
            "before" => input.before = Some(file),
            "after" => input.after = Some(file),
            "series" => input.series = Some(file),
            "bench" => {
                input.bench = Some(BenchInput {
                    evidence_path: f.evidence_path.unwrap_or_else(|| file.name.clone()),
                    file,
                })
            }
            "bench_more" => input.bench_more.push(BenchInput {
                evidence_path: f.evidence_path.unwrap_or_else(|| file.name.clone()),
                file,
            }),
            "bench_requests" => input.bench_requests.push(file),
            "load_log" => input.load_log = Some(file),
            "manifest" => input.manifest = Some(file),
            "gate" => input.gate = Some(file),
            "probe" => input.probe = Some(file),
            "teardown" => input.teardown = Some(file),
            "gpu" => input.gpu = Some(file),
            "fleet" => input.fleet = Some(file),
            "aiperf_server" => input.aiperf_server = Some(file),
            other => fleet_file(&mut input, other, file),
        }
    }
    input.replicas.sort_by(|a, b| a.id.cmp(&b.id));
    input.skipped = p
        .options
        .iter()
        .filter(|(k, _)| k == "skipped")
        .filter_map(|(_, v)| match json::parse(v).ok()? {
            Json::Arr(pair) => Some(crate::inputs::Skipped {
                name: pair.first()?.as_str()?.to_string(),
                reason: pair.get(1)?.as_str()?.to_string(),
            }),
            _ => None,
        })
        .collect();
    let engine = p
        .option("engine")
        .and_then(Engine::parse_name)
        .map(|engine| NamedEngine {
            engine,
            by: match p.option("engine_by") {
                Some("INFERLINT_ENGINE") => "INFERLINT_ENGINE",
                _ => "--engine",
            },
        });
    let opts = Options {
        engine,
        requested: p.option("requested").and_then(|r| r.parse().ok()),
        title: p.option("title").map(str::to_string),
        ..Options::default()
    };
    (input, opts)
}

/// A fleet's file by its role (`replica:<id>:before`, `router:after`); other roles are
/// ignored, as is a replica id that could leave its folder.
fn fleet_file(input: &mut RunInput, role: &str, file: InputFile) {
    let parts: Vec<&str> = role.split(':').collect();
    let slot = match parts.as_slice() {
        ["replica", id, part] if crate::docs::fleet::replica_id_is_valid(id) => {
            let i = match input.replicas.iter().position(|r| r.id == *id) {
                Some(i) => i,
                None => {
                    input.replicas.push(crate::inputs::ReplicaInput {
                        id: id.to_string(),
                        ..Default::default()
                    });
                    input.replicas.len() - 1
                }
            };
            let r = &mut input.replicas[i];
            match *part {
                "before" => &mut r.before,
                "after" => &mut r.after,
                "series" => &mut r.series,
                _ => return,
            }
        }
        ["router", part] => {
            let r = input.router.get_or_insert_with(Default::default);
            match *part {
                "before" => &mut r.before,
                "after" => &mut r.after,
                _ => return,
            }
        }
        _ => return,
    };
    *slot = Some(file);
}

/// A pack of the analyzer's inputs and options.
pub fn to_pack(input: &RunInput, opts: &Options, generated_ms: Option<f64>) -> Pack {
    into_pack(input.clone(), opts, generated_ms)
}

/// A pack of the analyzer's inputs, their files moved, not copied.
pub fn into_pack(input: RunInput, opts: &Options, generated_ms: Option<f64>) -> Pack {
    let mut files = Vec::new();
    let mut add = |role: &str, f: InputFile, evidence_path: Option<String>| {
        files.push(PackedFile {
            role: role.to_string(),
            name: f.name,
            bytes: f.bytes,
            evidence_path,
            form: Form::Text,
        })
    };
    let skipped = input.skipped;
    for f in input.boot_logs {
        add("boot_log", f, None);
    }
    for (role, f) in [
        ("before", input.before),
        ("after", input.after),
        ("series", input.series),
    ] {
        if let Some(f) = f {
            add(role, f, None);
        }
    }
    if let Some(b) = input.bench {
        add("bench", b.file, Some(b.evidence_path));
    }
    for b in input.bench_more {
        add("bench_more", b.file, Some(b.evidence_path));
    }
    for f in input.bench_requests {
        add("bench_requests", f, None);
    }
    for (role, f) in [
        ("load_log", input.load_log),
        ("manifest", input.manifest),
        ("gate", input.gate),
        ("probe", input.probe),
        ("teardown", input.teardown),
        ("gpu", input.gpu),
        ("fleet", input.fleet),
        ("aiperf_server", input.aiperf_server),
    ] {
        if let Some(f) = f {
            add(role, f, None);
        }
    }
    for r in input.replicas {
        for (part, f) in [
            ("before", r.before),
            ("after", r.after),
            ("series", r.series),
        ] {
            if let Some(f) = f {
                add(&format!("replica:{}:{part}", r.id), f, None);
            }
        }
    }
    if let Some(r) = input.router {
        for (part, f) in [("before", r.before), ("after", r.after)] {
            if let Some(f) = f {
                add(&format!("router:{part}"), f, None);
            }
        }
    }
    let mut options = Vec::new();
    if let Some(e) = opts.engine {
        options.push(("engine".to_string(), e.engine.key().to_string()));
        options.push(("engine_by".to_string(), e.by.to_string()));
    }
    if let Some(r) = opts.requested {
        options.push(("requested".to_string(), r.to_string()));
    }
    if let Some(t) = &opts.title {
        options.push(("title".to_string(), t.clone()));
    }
    // Entries of the folder left unread, one option each as `[name, reason]`.
    for s in &skipped {
        let pair = Json::Arr(vec![
            Json::from(s.name.as_str()),
            Json::from(s.reason.as_str()),
        ]);
        options.push(("skipped".to_string(), pair.to_compact()));
    }
    Pack {
        generated_ms,
        options,
        files,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        for n in 0..70u8 {
            let data: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
            assert_eq!(base64_decode(&base64_encode(&data)).unwrap(), data);
        }
        assert_eq!(base64_encode(b"Man"), "TWFu");
        assert_eq!(base64_encode(b"Ma"), "TWE=");
        assert_eq!(base64_encode(b"M"), "TQ==");
        assert!(base64_decode("TW!u").is_err());
        assert!(base64_decode("TWE").is_err(), "padding is required");
    }

    #[test]
    fn deflate_round_trip() {
        let data = b"vllm:num_requests_running 10\n".repeat(1000);
        let z = compress(&data);
        assert!(z.len() < data.len() / 20);
        assert_eq!(decompress(&z, data.len()).unwrap(), data);
        assert!(decompress(&z, data.len() - 1)
            .unwrap_err()
            .contains("more than"));
    }

    #[test]
    fn strings_are_inert_in_script() {
        let s = json_string("</script><!-- <img src=x onerror=alert(1)> & \u{2028}");
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert!(!s.contains('\u{2028}'));
    }

    fn small_run(name: &str) -> Pack {
        Pack {
            generated_ms: None,
            options: vec![("requested".to_string(), "32".to_string())],
            files: vec![PackedFile {
                role: "boot_log".to_string(),
                name: format!("{name}/boot.log"),
                bytes: Ok(b"INFO </script> & <!--\n".to_vec()),
                evidence_path: None,
                form: Form::Text,
            }],
        }
    }

    #[test]
    fn several_runs_round_trip_and_one_run_still_reads() {
        let many = Packs {
            generated_ms: Some(1_764_480_000_000.0),
            options: vec![("baseline".to_string(), "1".to_string())],
            runs: vec![
                ("old".to_string(), small_run("old")),
                ("new </script>".to_string(), small_run("new")),
            ],
        };
        let text = encode_many(&many);
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        let Carried::Many(back) = decode_any(&text).unwrap() else {
            panic!("read as one run");
        };
        assert_eq!(back.option("baseline"), Some("1"));
        assert_eq!(back.runs.len(), 2);
        assert_eq!(back.runs[1].0, "new </script>");
        // Each run takes the page's time of making.
        let mut want = small_run("new");
        want.generated_ms = many.generated_ms;
        assert_eq!(back.runs[1].1, want);
        let one = small_run("one");
        assert_eq!(
            decode_any(&encode(&one)).unwrap(),
            Carried::One(one.clone())
        );
        assert!(decode(&text).is_err(), "several runs are not one");
    }

    #[test]
    fn a_run_kept_as_columns_reads_and_saves_as_its_text() {
        let series = b"{\"schema\": \"inferlint.series/1\", \"interval_s\": 0.25}\n\
            {\"t_wall\": 1.25, \"t_mono_ns\": 5, \"running\": 2.0, \"kv_usage\": 7.5}\n\
            {\"t_wall\": 1.5, \"t_mono_ns\": 9, \"running\": \"x\"}\n"
            .to_vec();
        let gpu = b"{\"t_wall\": 1.25, \"gpu\": 0, \"sm_clock_mhz\": 1980}\n".to_vec();
        let input = RunInput {
            series: Some(InputFile::new("run/run.series.jsonl", series.clone())),
            gpu: Some(InputFile::new("run/gpu.samples.jsonl", gpu.clone())),
            ..RunInput::default()
        };
        let text = encode(&to_pack(&input, &Options::default(), None));
        let Ok(Carried::One(kept)) = decode_any_keeping_columns(&text) else {
            panic!("one run expected");
        };
        let series_file = kept.files.iter().find(|f| f.role == "series").unwrap();
        assert!(matches!(series_file.form, Form::Columns { .. }));
        assert_eq!(series_file.text().unwrap().as_ref(), series.as_slice());
        // The series is read from the columns, the other columnar file as its text.
        let (back, _, read) = input_reading_series(&kept);
        let want = Series::read("run/run.series.jsonl", &series);
        assert_eq!(format!("{read:?}"), format!("{:?}", Some(want)));
        assert_eq!(back.series.unwrap().name, "run/run.series.jsonl");
        assert_eq!(back.gpu.unwrap().bytes, Ok(gpu.clone()));
        // Saved again, the columns are carried as they came and read back as the text.
        let saved = decode(&encode(&kept)).unwrap();
        assert_eq!(saved, decode(&text).unwrap());
        let (all, _) = into_input(kept);
        assert_eq!(all.series.unwrap().bytes, Ok(series));
    }

    #[test]
    fn a_carriage_made_ahead_is_written_as_the_bytes_would_be() {
        let series = b"{\"t_wall\": 1.5, \"running\": 2.0}\n{\"t_wall\": 2.5, \"running\": 3.0}\n";
        let mut run = small_run("r");
        run.files.push(PackedFile {
            role: "series".to_string(),
            name: "r/run.series.jsonl".to_string(),
            bytes: Ok(series.to_vec()),
            evidence_path: None,
            form: Form::Text,
        });
        let whole = encode(&run);
        let ready = Carriage::columnar(series.len(), &columns::encode(series));
        run.files[1].bytes = Ok(Vec::new());
        assert_eq!(encode_with(&run, Some(("series", ready.clone()))), whole);
        // Only a columnar role takes it.
        run.files[1].role = "boot_log".to_string();
        assert!(!encode_with(&run, Some(("boot_log", ready))).contains("\"c\":"));
    }

    #[test]
    fn an_aiperf_scrape_keeps_its_role() {
        let input = RunInput {
            aiperf_server: Some(InputFile::new(
                "a/server_metrics_export.json",
                b"{}".to_vec(),
            )),
            ..RunInput::default()
        };
        let (back, _) = from_pack(&to_pack(&input, &Options::default(), None));
        let f = back.aiperf_server.expect("the scrape's role is carried");
        assert_eq!(f.name, "a/server_metrics_export.json");
        assert_eq!(f.bytes, Ok(b"{}".to_vec()));
    }

    #[test]
    fn damaged_packs_are_refused_with_a_reason() {
        assert!(decode("{").is_err());
        assert!(decode("{\"format\": \"other\"}").is_err());
        for tag in [FORMAT, FORMAT_BEFORE] {
            let p = decode(&format!(
                "{{\"format\":\"{tag}\",\"files\":[{{\"role\":\"series\",\"name\":\"s\",\"z\":\"AAAA\"}}]}}",
            ))
            .unwrap();
            assert!(p.files[0].bytes.as_ref().unwrap_err().contains("damaged"));
        }
    }
}
