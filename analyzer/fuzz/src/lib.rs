//! What each fuzz target checks, one function per parser: no panic, and an invariant
//! beyond it. A parse of valid input round-trips through the writer where one exists
//! (Prometheus samples, lenient JSON, series rows, documents, the pack); no value the
//! plausibility gate refuses survives a parse; and on a whole run, no check a refused
//! value feeds passes. The targets in `fuzz_targets/` call these; the analyzer's test
//! `fuzz_regressions` replays every saved finding (`regressions/<target>/`) through them.

use std::borrow::Cow;

use analyzer::analysis::{self, analyze, Options};
use analyzer::bench::{key, BenchResult};
use analyzer::docs::{self, Document};
use analyzer::engine::Engine;
use analyzer::folder;
use analyzer::json;
use analyzer::pack;
use analyzer::plausible::{self, Implausible, Quantity};
use analyzer::prom::Exposition;
use analyzer::rules::verdict::Status;
use analyzer::series::{column, Series};
use analyzer::snapshot::{self, Snapshot};

/// Separates the files of a whole run in one fuzz input: `name\n bytes` per file
/// (`cargo xtask fuzz` writes its seeds the same way).
pub const FILE_SEPARATOR: &[u8] = b"\n\x00--inferlint-fuzz-file--\x00\n";

/// What a target runs on one input.
pub type Check = fn(&[u8]);

/// The targets, by name, with the function each runs.
pub const TARGETS: &[(&str, Check)] = &[
    ("prom", prom),
    ("snapshot", snapshot),
    ("lenient_json", lenient_json),
    ("series", series),
    ("bench", bench),
    ("aiperf_records", aiperf_records),
    ("python_literal", python_literal),
    ("bootlog_vllm", bootlog_vllm),
    ("bootlog_sglang", bootlog_sglang),
    ("bootlog_trtllm", bootlog_trtllm),
    ("pack", pack_target),
    ("documents", documents),
    ("run", run),
];

fn text(data: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Same value, NaN equal to NaN and -0 apart from 0.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Prometheus text: every sample written back as a line reads back the same.
pub fn prom(data: &[u8]) {
    let Ok(e) = Exposition::parse(&text(data)) else {
        return;
    };
    let written: String = e.samples.iter().map(|s| sample_line(s) + "\n").collect();
    let back = Exposition::parse(&written)
        .unwrap_or_else(|err| panic!("written samples do not parse: {err}\n{written}"));
    assert_eq!(back.samples.len(), e.samples.len(), "{written}");
    for (a, b) in e.samples.iter().zip(&back.samples) {
        assert_eq!((&a.name, &a.labels), (&b.name, &b.labels), "{written}");
        assert!(same(a.value, b.value), "{} != {}", a.value, b.value);
    }
}

fn sample_line(s: &analyzer::prom::Sample) -> String {
    let mut out = s.name.clone();
    if !s.labels.is_empty() {
        let labels: Vec<String> = s
            .labels
            .iter()
            .map(|(k, v)| {
                let v = v
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n");
                format!("{k}=\"{v}\"")
            })
            .collect();
        out.push('{');
        out.push_str(&labels.join(","));
        out.push('}');
    }
    out.push_str(&format!(" {:?}", s.value));
    out
}

/// Snapshots: no sample a check reads keeps a value the gate refuses, nor does a clock.
pub fn snapshot(data: &[u8]) {
    let Ok(s) = Snapshot::read("f", data) else {
        return;
    };
    for sample in &s.metrics.samples {
        if let Some(q) = snapshot::quantity_of(&sample.name) {
            assert!(
                plausible::check(q, sample.value).is_ok(),
                "{} = {} kept",
                sample.name,
                sample.value
            );
        }
    }
    assert!(s.t_wall.is_nan() || plausible::check(Quantity::WallClock, s.t_wall).is_ok());
    assert!(s
        .latency_s
        .is_none_or(|l| plausible::check(Quantity::Seconds, l).is_ok()));
    for i in &s.implausible {
        assert!(!i.to_string().is_empty());
    }
}

/// The lenient JSON reader: what the writer writes of a parsed value parses to the same.
pub fn lenient_json(data: &[u8]) {
    let Ok(t) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(v) = json::parse(t) else {
        return;
    };
    let once = v.to_compact();
    let back =
        json::parse(&once).unwrap_or_else(|e| panic!("written JSON does not parse: {e:?}\n{once}"));
    assert_eq!(back.to_compact(), once);
    let pretty = v.to_pretty(1);
    let back = json::parse(&pretty)
        .unwrap_or_else(|e| panic!("pretty JSON does not parse: {e:?}\n{pretty}"));
    assert_eq!(back.to_compact(), once);
}

/// Series: every kept value passes the gate, and each row written as its engine writes it
/// reads back as the same line.
pub fn series(data: &[u8]) {
    let Ok(s) = Series::read("f", data) else {
        return;
    };
    assert_eq!(s.rows.len(), s.row_lines.len());
    let engine = s.engine();
    for r in &s.rows {
        let gauges = [
            (Quantity::Requests, r.running),
            (Quantity::Requests, r.waiting),
            (Quantity::Requests, r.paused),
            (Quantity::KvFraction, r.kv_usage),
            (Quantity::Counter, r.preemptions),
            (Quantity::Counter, r.generation_tokens),
            (Quantity::Counter, r.prompt_tokens),
            (Quantity::Counter, r.prefix_cache_hits),
            (Quantity::Counter, r.prefix_cache_queries),
            (Quantity::Seconds, r.latency_s),
            (Quantity::WallClock, Some(r.t_wall)),
        ];
        for (q, v) in gauges {
            if let Some(v) = v {
                assert!(plausible::check(q, v).is_ok(), "{q:?} {v} kept in {r:?}");
            }
        }
        let line = r.line(engine);
        let back = Series::read("f", line.as_bytes())
            .unwrap_or_else(|e| panic!("a written row does not read back: {e}\n{line}"));
        assert_eq!(back.rows.len(), 1, "{line}");
        assert_eq!(back.rows.get(0).line(engine), line);
    }
}

/// Load-tool results (every client's shape): no refused count is kept, and a kept count
/// is the truncation of what was written.
pub fn bench(data: &[u8]) {
    let Ok(r) = BenchResult::read("f", data) else {
        return;
    };
    let counts = [
        r.completed,
        r.failed,
        r.total_output_tokens,
        r.total_input_tokens,
        r.max_concurrency,
        r.num_prompts,
        r.untimed,
    ];
    for c in counts.into_iter().flatten() {
        assert!((0..=1i64 << 53).contains(&c), "count {c} kept");
    }
    for f in [
        r.duration,
        r.output_throughput,
        r.mean_ttft_ms,
        r.median_ttft_ms,
    ]
    .into_iter()
    .flatten()
    {
        assert!(f.is_finite() && f >= 0.0, "{f} kept");
    }
    // Per-request times (T18): every kept time to first token is a plausible duration;
    // starts and latencies are finite (a failed request's are kept ungated, never read).
    if let Some(q) = &r.requests {
        for t in q.ttft_s.iter().flatten() {
            assert!(
                plausible::check(Quantity::Seconds, *t).is_ok(),
                "ttft {t} kept"
            );
        }
        let others = [&q.start_s, &q.latency_s];
        for v in others.into_iter().flatten().flatten().flatten() {
            assert!(v.is_finite(), "{v} kept");
        }
    }
}

/// AIPerf's per-request export: every kept time passed the gate, and a step's window never
/// ends before it starts.
pub fn aiperf_records(data: &[u8]) {
    let Ok(r) = analyzer::bench::aiperf_records::read("f", data) else {
        return;
    };
    for w in [r.start_wall, r.end_wall].into_iter().flatten() {
        assert!(
            plausible::check(Quantity::WallClock, w).is_ok(),
            "wall time {w} kept"
        );
    }
    let q = &r.requests;
    let durations = [
        q.latency_s.iter().flatten().flatten(),
        q.start_s.iter().flatten().flatten(),
    ];
    for t in q.ttft_s.iter().flatten().chain(durations[0].clone()) {
        assert!(
            plausible::check(Quantity::Seconds, *t).is_ok(),
            "request time {t} kept"
        );
    }
    for s in durations[1].clone() {
        assert!(s.is_finite(), "start {s} kept");
    }
    assert_eq!(q.ttft_s.len(), q.start_s.as_ref().map_or(0, Vec::len));
}

/// Python literals (the boot logs' argument dicts): what they read as is JSON that the
/// lenient reader takes back.
pub fn python_literal(data: &[u8]) {
    if let Some(v) = analyzer::fuzzing::python_literal(&text(data)) {
        let once = v.to_compact();
        assert!(json::parse(&once).is_ok(), "{once}");
    }
}

fn bootlog(data: &[u8], engine: Engine) {
    let t = text(data);
    let facts = analyzer::bootlog::read_facts(&t, Some(engine));
    let written = json::to_compact(&facts);
    assert!(json::parse(&written).is_ok(), "{written}");
    let logs = analyzer::bootlog::read_logs(&[("a".into(), t.clone().into_owned())], None);
    let _ = analyzer::rules::runner::check_logs(&logs, true);
}

pub fn bootlog_vllm(data: &[u8]) {
    bootlog(data, Engine::Vllm);
}

pub fn bootlog_sglang(data: &[u8]) {
    bootlog(data, Engine::Sglang);
}

pub fn bootlog_trtllm(data: &[u8]) {
    bootlog(data, Engine::Trtllm);
}

/// The pack: a decoded pack encodes to text that decodes to the same; a run packed from
/// files unpacks to the same files.
pub fn pack_target(data: &[u8]) {
    if let Ok(p) = pack::decode(&text(data)) {
        let once = pack::encode(&p);
        let back =
            pack::decode(&once).unwrap_or_else(|e| panic!("an encoded pack does not decode: {e}"));
        assert_eq!(pack::encode(&back), once);
    }
    let files = split_files(data);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let read = |n: &str| find(&files, n);
    let input = folder::load("run", &names, &read);
    let opts = Options {
        requested: Some(32),
        ..Options::default()
    };
    let p = pack::to_pack(&input, &opts, Some(1.0));
    let back = pack::decode(&pack::encode(&p)).expect("a packed run decodes");
    assert_eq!(back, p);
}

/// The recorder's documents: a document read is written so that it reads back, and
/// writes the same again.
pub fn documents(data: &[u8]) {
    round_trip::<docs::Gate>(data);
    round_trip::<docs::Probe>(data);
    round_trip::<docs::Teardown>(data);
    round_trip::<docs::Manifest>(data);
    round_trip::<docs::Processes>(data);
    round_trip::<docs::Fleet>(data);
    round_trip::<docs::SnapshotDoc>(data);
    round_trip::<docs::SeriesHeader>(data);
}

fn round_trip<T: Document>(data: &[u8]) {
    let Ok(d) = docs::read::<T>("f", data) else {
        return;
    };
    let once = docs::to_bytes(&d);
    let back: T = docs::read("f", &once).unwrap_or_else(|e| {
        panic!(
            "{}: a written document does not read back: {e}\n{}",
            T::SCHEMA,
            String::from_utf8_lossy(&once)
        )
    });
    assert_eq!(docs::to_bytes(&back), once, "{}", T::SCHEMA);
}

/// A whole run: no check passes when a value it reads was refused.
pub fn run(data: &[u8]) {
    let files = split_files(data);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let read = |n: &str| find(&files, n);
    let input = folder::load("run", &names, &read);
    let opts = Options {
        requested: Some(32),
        ..Options::default()
    };
    let Ok(a) = analyze(&input, &opts) else {
        return;
    };
    let snaps: Vec<Snapshot> = [&input.before, &input.after]
        .into_iter()
        .flatten()
        .filter_map(|f| Snapshot::read(&f.name, f.bytes.as_ref().ok()?).ok())
        .collect();
    let refs: Vec<&Snapshot> = snaps.iter().collect();
    let snap_engine = analysis::snapshots_engine(&refs).unwrap_or(Engine::Vllm);
    for i in &a.implausible {
        for t in readers(i, snap_engine) {
            for r in a.report.checks.iter().filter(|r| r.tripwire.number() == *t) {
                assert_ne!(
                    r.status,
                    Status::Pass,
                    "T{t} passed with a refused value: {i}; {}",
                    r.message
                );
            }
        }
    }
}

/// The tripwires that read the field of a refused value.
pub fn readers(i: &Implausible, snap_engine: Engine) -> &'static [u8] {
    if i.file.ends_with(docs::GPU_SAMPLES) {
        // T16 reads every number of the GPU samples.
        return &[16];
    }
    if i.file.ends_with(docs::AIPERF_SERVER_METRICS) {
        // AIPerf's scrape: fields are `metrics["NAME"].series[i].stats.STAT`, NAME a
        // family name (a counter's without `_total`).
        let m = snap_engine.metrics();
        let named = |n: &str| {
            let family = n.strip_suffix("_total").unwrap_or(n);
            i.field.starts_with(&format!("metrics[{family:?}]"))
        };
        return if m.evictions.is_some_and(named) {
            &[1]
        } else if named(m.running) {
            &[8]
        } else if named(m.requests_finished) || named(m.generation_tokens) {
            &[15]
        } else {
            &[]
        };
    }
    if i.file.ends_with(".series.jsonl") {
        return match i.field.as_str() {
            column::RUNNING => &[8, 9],
            column::WAITING => &[8],
            column::KV_USAGE => &[9, 14],
            column::PAUSED => &[1],
            _ => &[],
        };
    }
    if i.file.ends_with(docs::BENCH_JSON) || i.file.ends_with(docs::BENCH_JSONL) {
        // Per-request times are named `ttfts[3]` (GuideLLM's
        // `benchmarks[0].requests.successful[3].…`): T18 reads them, T15 does not.
        let array = i.field.split('[').next().unwrap_or_default();
        let per_request = [key::TTFTS, key::START_TIMES, key::LATENCIES];
        let guidellm_request = i.field.contains("].requests.");
        return if guidellm_request || (i.field.contains('[') && per_request.contains(&array)) {
            &[18]
        } else {
            &[15]
        };
    }
    let m = snap_engine.metrics();
    let f = i.field.as_str();
    let prefix = snap_engine.prefix_cache();
    if prefix
        .hits
        .iter()
        .chain(prefix.queries)
        .any(|(n, _)| *n == f)
    {
        return &[17];
    }
    if Some(f) == m.evictions {
        &[1]
    } else if f == m.generation_tokens {
        &[10, 15]
    } else if f == m.requests_finished {
        &[15]
    } else if [column::T_WALL, column::T_MONO_NS, column::LATENCY_S].contains(&f) {
        &[10]
    } else {
        &[]
    }
}

/// The files of one fuzz input: `name\nbytes` blocks between [`FILE_SEPARATOR`]s.
pub fn split_files(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = data;
    loop {
        let (block, next) = match find_bytes(rest, FILE_SEPARATOR) {
            Some(i) => (&rest[..i], Some(&rest[i + FILE_SEPARATOR.len()..])),
            None => (rest, None),
        };
        if let Some(nl) = block.iter().position(|&b| b == b'\n') {
            let name = String::from_utf8_lossy(&block[..nl]).into_owned();
            if !name.is_empty() && !name.contains('/') {
                out.push((name, block[nl + 1..].to_vec()));
            }
        }
        match next {
            Some(n) => rest = n,
            None => return out,
        }
    }
}

fn find(files: &[(String, Vec<u8>)], name: &str) -> Result<Vec<u8>, String> {
    files
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, b)| b.clone())
        .ok_or_else(|| "no such file".to_string())
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
