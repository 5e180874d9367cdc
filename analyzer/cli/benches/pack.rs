//! How a long series is carried in the one-file report (`analyzer::pack`): the 24-hour
//! recording of `long_run` (or `PACK_BENCH_SAMPLES` readings; or, with
//! `PACK_BENCH_REPEAT=FILE`, a real series' rows repeated with shifted clocks to as many) as deflated text
//! (`inferlint.pack/1`) and as deflated columns (`inferlint.pack/2`), at deflate levels 1,
//! 6 and 9: the bytes the page carries (base64), the time to pack and to unpack, and the
//! time the analyzer's series reader then takes. Prints a table; asserts only that every
//! carriage gives back the same bytes.
//!
//!   cargo bench -p inferlint --bench pack

#[allow(dead_code)]
#[path = "long_run.rs"]
mod long_run;

use std::time::{Duration, Instant};

use analyzer::pack::{self, columns};
use analyzer::series::Series;

/// The best of `n` timings of `f`, and its last result.
fn best<T>(n: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = None;
    let mut fastest = Duration::MAX;
    for _ in 0..n {
        let t = Instant::now();
        let v = f();
        fastest = fastest.min(t.elapsed());
        out = Some(v);
    }
    (fastest, out.expect("n > 0"))
}

/// A real series' header and rows, the rows repeated with their clocks shifted by the
/// recording's span until there are `samples`.
fn repeated(series: &str, samples: usize) -> Vec<u8> {
    let mut lines = series.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().expect("a header");
    let rows: Vec<&str> = lines.collect();
    // Where a clock's value is in a row.
    let clock = |row: &str, key: &str| -> (usize, usize) {
        let start = row.find(key).expect("a clock") + key.len();
        let end = start + row[start..].find([',', '}']).expect("a value");
        (start, end)
    };
    let value = |row: &str, key: &str| -> f64 {
        let (a, b) = clock(row, key);
        row[a..b].trim().parse().expect("a number")
    };
    let (wall, mono) = ("\"t_wall\":", "\"t_mono_ns\":");
    let step = rows.len() as f64 / (rows.len() - 1) as f64;
    let span = (value(rows[rows.len() - 1], wall) - value(rows[0], wall)) * step;
    let mut out = format!("{header}\n");
    for i in 0..samples {
        let (k, row) = (i / rows.len(), rows[i % rows.len()]);
        let shift = span * k as f64;
        let (wa, wb) = clock(row, wall);
        let (ma, mb) = clock(row, mono);
        assert!(wb < ma, "t_wall comes before t_mono_ns");
        let w = value(row, wall) + shift;
        let m = value(row, mono) as i64 + (shift * 1e9) as i64;
        out.push_str(&format!(
            "{} {w:.6}{} {m}{}\n",
            &row[..wa],
            &row[wb..ma],
            &row[mb..]
        ));
    }
    out.into_bytes()
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let samples = std::env::var("PACK_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(345_600);
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/pack-bench")
        .join(samples.to_string());
    let text = match std::env::var_os("PACK_BENCH_REPEAT") {
        Some(file) => repeated(&std::fs::read_to_string(file).expect("read FILE"), samples),
        None => {
            long_run::write(&dir, samples).expect("write the recording");
            let text = std::fs::read(dir.join("run.series.jsonl")).expect("read the series");
            std::fs::remove_dir_all(&dir).expect("remove the recording");
            text
        }
    };
    let mb = |n: usize| format!("{:.2} MB", n as f64 / 1e6);
    println!("series: {samples} readings, {} of text", mb(text.len()));
    let (read, _) = best(3, || {
        Series::read("run.series.jsonl", &text).expect("a series")
    });
    println!("the analyzer's series reader on the text: {}", ms(read));
    let (split, cols) = best(3, || columns::encode(&text));
    println!(
        "columns (ilc1) before deflate: {}, made in {}",
        mb(cols.len()),
        ms(split)
    );
    println!("carriage             level  carried (base64)  pack       unpack");
    for level in [1u8, 6, 9] {
        for (name, data) in [("text (pack/1)", &text), ("columns (pack/2)", &cols)] {
            let (packing, z) = best(1, || pack::compress_at(data, level));
            let carried = pack::base64_encode(&z).len();
            let (unpacking, back) = best(3, || {
                let inflated = pack::decompress(&z, usize::MAX).expect("inflate");
                if columns::is_columnar(&inflated) {
                    columns::decode(&inflated, usize::MAX, text.len()).expect("columns")
                } else {
                    inflated
                }
            });
            assert!(
                back == text,
                "{name} at level {level} did not give the text back"
            );
            println!(
                "{name:<20} {level:>5}  {:>16}  {:>9}  {:>7}",
                mb(carried),
                ms(packing),
                ms(unpacking)
            );
        }
    }
}
