//! Reading a series from its columns gives exactly the series its text gives: over the
//! recorded fixtures and over generated lines, plain, odd and hostile.

use super::*;
use crate::pack::columns;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// The series from `text`, read as text and read from its columns; they must be equal
/// (compared through `Debug`: NaN is not equal to itself).
fn same_both_ways(text: &[u8]) {
    let from_text = Series::read("run/run.series.jsonl", text);
    let cols = columns::encode(text);
    let from_columns = read_series("run/run.series.jsonl", &cols, text.len());
    assert_eq!(
        format!("{from_columns:?}"),
        format!("{from_text:?}"),
        "{}",
        String::from_utf8_lossy(text)
    );
}

fn series_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            series_files(&path, out);
        } else if path.to_string_lossy().ends_with(".series.jsonl") {
            out.push(path);
        }
    }
}

#[test]
fn every_fixture_series_reads_the_same_from_its_columns() {
    let mut files = Vec::new();
    series_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures"),
        &mut files,
    );
    let in_repo = files.len();
    assert!(in_repo > 0, "no series fixture found");
    // The reference runs, where this machine has them.
    series_files(Path::new("/work/shared/fixtures"), &mut files);
    for f in &files {
        let text = std::fs::read(f).unwrap();
        same_both_ways(&text);
        // The rows really come from the columns, not from text read again.
        let cols = columns::encode(&text);
        let lines = Lines::new(&cols, text.len()).unwrap();
        let plans: Vec<Plan> = lines.skeletons().map(plan_of).collect();
        assert!(
            plans.iter().any(|p| matches!(p, Plan::Row { .. })),
            "{}: no skeleton read as rows",
            f.display()
        );
    }
}

#[test]
fn odd_and_hostile_lines_read_the_same() {
    let text = concat!(
        "{\"schema\": \"inferlint.series/1\", \"url\": \"http://h\", \"interval_s\": 0.25, \"engine\": \"sglang\"}\n",
        "{\"t_wall\": 1790470252.238873, \"t_mono_ns\": 208651898175, \"running\": 0.0, \"waiting\": 3, \"kv_usage\": 0.5}\n",
        "{\"t_wall\": 1790470252.488873, \"t_mono_ns\": 208901898175, \"running\": 1.0, \"waiting\": 2, \"kv_usage\": 0.25}\n",
        // Implausible values: refused by the gate.
        "{\"t_wall\": 1790470252.738873, \"t_mono_ns\": 209151898175, \"running\": -4.0, \"kv_usage\": 7.5}\n",
        "{\"t_wall\": 1790470252.988873, \"t_mono_ns\": 9223372036854775807, \"preemptions\": 9007199254740993}\n",
        "{\"t_wall\": 0.5, \"t_mono_ns\": -5}\n",
        "{\"t_wall\": -1790470252.9, \"running\": 2}\n",
        // Non-numeric fields, missing fields, literal tokens.
        "{\"t_wall\": 3.0, \"running\": \"x\"}\n",
        "{\"t_wall\": 4.0, \"running\": true}\n",
        "{\"running\": 1}\n",
        "{\"t_wall\": null, \"running\": 1}\n",
        "{\"t_wall\": 5.0, \"t_mono_ns\": null, \"running\": null, \"kv_usage\": NaN, \"paused\": -Infinity}\n",
        "{\"t_wall\": 6.0, \"waiting\": Infinity}\n",
        // Values the columns keep raw, or that only the JSON reader reads.
        "{\"t_wall\": 7.0, \"running\": -0, \"waiting\": -0.0, \"kv_usage\": 007}\n",
        "{\"t_wall\": 8.0, \"running\": 0.1234567890123456789, \"waiting\": 12345678901234567890123}\n",
        "{\"t_wall\": 9.0, \"t_mono_ns\": 1.5e9, \"running\": 1e5, \"kv_usage\": 2.5E-3}\n",
        "{\"t_wall\": 10.0, \"t_mono_ns\": 1500000000.75}\n",
        "{\"t_wall\": 11.0, \"t_mono_ns\": 12345678901234567890}\n",
        // Unknown keys, repeated keys, nested values, the header's key in a row.
        "{\"t_wall\": 12.0, \"mystery\": 4, \"running\": 1, \"other\": 2.5}\n",
        "{\"t_wall\": 13.0, \"running\": 1, \"running\": 2}\n",
        "{\"t_wall\": 14.0, \"extra\": {\"a\": 1}, \"running\": [1, 2]}\n",
        "{\"schema\": \"x\", \"t_wall\": 15}\n",
        "{\"t_w\\u0061ll\": 16.0}\n",
        // Spacing, no spacing, carriage returns, blank lines, damage.
        "{\"t_wall\":17.0,\"running\":2,\"waiting\":3}\r\n",
        "   {\"t_wall\" : 18.0 , \"running\" : 2 }   \n",
        "\n",
        "   \n",
        "not json 19 20\n",
        "[1, 2, 3]\n",
        "{\"t_wall\": 21.0, \"running\": 1.} \n",
        "{\"t_wall\": 22.0} trailing 5\n",
        "{}\n",
        "{\"t_wall\": 23.0, \"runn",
    );
    same_both_ways(text.as_bytes());
    let mut bytes = text.as_bytes().to_vec();
    bytes.extend_from_slice(
        b"\n\xff\xe2\x82 {\"t_wall\": 24.0}\n{\"t_wall\": 25.0, \"k\xff\": 3}\n",
    );
    same_both_ways(&bytes);
}

#[test]
fn failed_readings_between_rows_are_carried_whole() {
    let mut text = String::from(
        "{\"schema\": \"inferlint.series/1\", \"url\": \"http://h\", \"interval_s\": 0.25, \"engine\": \"vllm\"}\n",
    );
    for k in 0..40u64 {
        let t = 1790470252.25 + k as f64 * 0.25;
        if k % 7 == 3 {
            text.push_str(&format!(
                "{{\"scrape_failed\": \"timed out after 2 s\", \"started_wall\": {t}, \"ended_wall\": {}, \"started_mono_ns\": {}, \"ended_mono_ns\": {}}}\n",
                t + 2.0,
                k * 250_000_000,
                k * 250_000_000 + 2_000_000_000
            ));
        } else {
            text.push_str(&format!(
                "{{\"t_wall\": {t}, \"t_mono_ns\": {}, \"running\": {}.0, \"kv_usage\": 0.5}}\n",
                k * 250_000_000,
                k % 5
            ));
        }
    }
    text.push_str("{\"scrape_failed\": \"HTTP 503 Service Unavailable at /metrics\", \"started_wall\": 1790470262.5, \"ended_wall\": 1790470262.51}\n");
    text.push_str("{\"scrape_failed\": 3, \"started_wall\": 1.0, \"ended_wall\": 2.0}\n");
    same_both_ways(text.as_bytes());
    // Lossless: the copy gives back the very bytes.
    let cols = columns::encode(text.as_bytes());
    let back = columns::decode(&cols, text.len(), text.len()).unwrap();
    assert_eq!(back, text.as_bytes());
    let s = read_series("run/run.series.jsonl", &cols, text.len()).unwrap();
    assert_eq!(s.failed.len(), 7);
    assert_eq!(s.rows.len(), 34);
    assert_eq!(s.skipped, 1);
}

#[test]
fn edge_texts_read_the_same() {
    for t in ["", "\n", "5", "{\"t_wall\": 1}", "\n\n{\"t_wall\": 1}\n\n"] {
        same_both_ways(t.as_bytes());
    }
}

#[test]
fn a_copy_whose_text_passes_the_limit_is_refused() {
    let text = b"{\"t_wall\": 1.5, \"running\": 2}\n{\"t_wall\": 2.5, \"running\": 3}";
    let cols = columns::encode(text);
    assert!(read_series("s", &cols, text.len()).is_ok());
    let e = read_series("s", &cols, text.len() - 1).unwrap_err();
    assert!(e.to_string().contains("embedded copy unreadable"), "{e}");
    assert!(read_series("s", b"nope", 100).is_err());
    for cut in 4..cols.len() {
        assert!(
            read_series("s", &cols[..cut], 1000).is_err(),
            "cut at {cut}"
        );
    }
}

/// A line of chosen keys and values, spaced one of three ways.
fn line_of(pairs: &[(&str, &str)], spacing: u8) -> String {
    let (colon, comma) = match spacing {
        0 => (": ", ", "),
        1 => (":", ","),
        _ => (" : ", " , "),
    };
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("\"{k}\"{colon}{v}"))
        .collect();
    format!("{{{}}}", body.join(comma))
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (any::<i32>(), 0u32..9).prop_map(|(m, d)| {
            let v = f64::from(m) / 10f64.powi(d as i32);
            format!("{v:.*}", d as usize)
        }),
        2 => any::<i64>().prop_map(|v| v.to_string()),
        1 => any::<f64>().prop_map(|v| format!("{v:?}")),
        1 => any::<f64>().prop_map(|v| format!("{v:e}")),
        3 => prop::sample::select(vec![
            "null", "NaN", "Infinity", "-Infinity", "\"s\"", "true", "-0", "-0.0", "007",
            "1.", "1e400", "12345678901234567890123", "0.000000000000000000001", "{}", "[1]",
            "9007199254740993", "1e-7",
        ])
        .prop_map(str::to_string),
    ]
}

proptest! {
    #[test]
    fn generated_series_read_the_same(
        lines in prop::collection::vec(
            (
                prop::collection::vec(
                    (prop::sample::select(vec![
                        "t_wall", "t_mono_ns", "latency_s", "running", "waiting", "kv_usage",
                        "preemptions", "generation_tokens", "prompt_tokens", "paused",
                        "prefix_cache_hits", "prefix_cache_queries", "x", "schema",
                    ]), value()),
                    0..8,
                ),
                0u8..3,
                0u8..12,
            ),
            1..40,
        ),
    ) {
        let mut text = String::new();
        for (pairs, spacing, shape) in &lines {
            let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            match shape {
                // Mostly sample lines in one of a few shapes, so skeletons repeat.
                0..=6 => {
                    let mut p = vec![("t_wall", pairs.first().map_or("1.5", |p| p.1))];
                    p.extend(pairs.iter().skip(1).take(2).map(|&(_, v)| ("running", v)).take(1));
                    p.extend(pairs.iter().skip(2).take(1).map(|&(_, v)| ("t_mono_ns", v)));
                    p.extend(pairs.iter().skip(3));
                    text.push_str(&line_of(&p, *spacing));
                }
                7 => text.push_str(&line_of(&pairs, *spacing)),
                8 => text.push_str("{\"schema\": \"inferlint.series/1\", \"interval_s\": 0.5}"),
                9 => text.push_str("  "),
                10 => text.push_str(&format!("{} 5 ]", line_of(&pairs, *spacing))),
                _ => text.push_str(&line_of(&pairs, *spacing).replace('}', "")),
            }
            text.push(if *spacing == 2 { '\r' } else { ' ' });
            text.push('\n');
        }
        same_both_ways(text.as_bytes());
    }

    #[test]
    fn plain_numbers_read_as_their_text_reads(m in any::<i64>(), d in 0u8..=18) {
        let v = Value::Number { mantissa: m, decimals: d };
        let mut text = Vec::new();
        v.write(&mut text);
        let parsed: f64 = std::str::from_utf8(&text).unwrap().parse().unwrap();
        prop_assert_eq!(Memo::default().value_f64(v).to_bits(), parsed.to_bits());
    }

    #[test]
    fn a_slot_remembering_its_last_value_reads_each_as_its_text(
        values in proptest::collection::vec((prop_oneof![Just(47_619_047_619_047_616i64), Just(-47_619_047_619_047_616), any::<i64>(), 0i64..4, (1i64 << 53) - 2..(1i64 << 53) + 3], 0u8..=2), 1..40)
    ) {
        let mut memo = Memo::default();
        for (mantissa, decimals) in values {
            let v = Value::Number { mantissa, decimals };
            prop_assert_eq!(memo.value_f64(v).to_bits(), Memo::default().value_f64(v).to_bits());
        }
    }
}
