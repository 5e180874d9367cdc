//! The report model on every recorded run folder: what limited the run,
//! the account, the facts, and the data behind the charts checked against the inputs.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::Path;

use analyzer::analysis::{analyze, Options};
use analyzer::json::Json;
use analyzer::report::Report;

fn report_of(root: &Path, rel: &str, requested: Option<i64>) -> Report {
    let input = inferlint::disk::load_run_folder_as(&root.join(rel), rel).unwrap();
    let opts = Options {
        requested,
        utc_offset_min: -7 * 60,
        ..Options::default()
    };
    analyze(&input, &opts).unwrap().report
}

/// (key, tone, fragments the text or title must contain)
type Want<'a> = &'a [(&'a str, &'a str, &'a [&'a str])];

#[test]
fn what_limited_each_run() {
    let Some(root) = common::recorded() else {
        return;
    };
    let cases: [(&str, Option<i64>, Want<'_>); 11] = [
        (
            "vllm-0.28/live",
            Some(32),
            &[
                (
                    "concurrency",
                    "limit",
                    &["at most 10 at once", "preempted 22 running requests"],
                ),
                ("waiting", "limit", &["29.3 seconds"]),
                (
                    "pace",
                    "limit",
                    &["8.0 running", "343 output tokens/s", "On average 8 of 32"],
                ),
            ],
        ),
        (
            "vllm-0.30/live",
            None,
            &[
                ("concurrency", "limit", &["at most 11", "preempted 22"]),
                ("waiting", "limit", &["28.4 s", "68.6 s", "queue"]),
                ("pace", "limit", &["8.4 running", "316 output tokens/s"]),
            ],
        ),
        (
            "vllm-0.30/capped",
            None,
            &[
                (
                    "concurrency",
                    "limit",
                    &[
                        "kept 32 requests open (16 of them rejected by admission control)",
                        "at most 11",
                        "preempted 11",
                    ],
                ),
                ("waiting", "limit", &["673 ms", "28.2 s", "queued"]),
                (
                    "pace",
                    "limit",
                    &[
                        "8.1 running",
                        "On average 8 of 32",
                        "16 of them rejected",
                        "310 output tokens/s",
                    ],
                ),
            ],
        ),
        (
            "vllm-0.30/qwen3-8b-start1",
            None,
            &[
                (
                    "cache",
                    "limit",
                    &[
                        "32,336",
                        "32 requests of 1,088 tokens",
                        "34,816",
                        "29 fit",
                        "preempted 3",
                    ],
                ),
                ("waiting", "ok", &["639 ms", "641 ms"]),
                ("pace", "ok", &["29.6 running", "1,274"]),
            ],
        ),
        (
            "sglang-0.5/capped",
            None,
            &[
                (
                    "concurrency",
                    "limit",
                    &[
                        "at most 1 at once",
                        "lowered its running limit to 1 because of the mamba state cache",
                        "--max-running-requests 32",
                    ],
                ),
                ("waiting", "limit", &["285.2 s", "564.5 s", "queue"]),
                (
                    "pace",
                    "limit",
                    &["1.0 running", "On average 1 of 32", "54 output"],
                ),
            ],
        ),
        (
            "sglang-0.5/live",
            None,
            &[
                (
                    "cache",
                    "limit",
                    &[
                        "5,930",
                        "about 1,093 tokens",
                        "35,008",
                        "5 fit",
                        "ran at most 5 at once and queued the rest",
                    ],
                ),
                ("waiting", "limit", &["62.0 s", "123.3 s"]),
                (
                    "pace",
                    "limit",
                    &["4.6 running", "On average 5 of 32", "223"],
                ),
            ],
        ),
        (
            "sglang-0.5/qwen3-8b",
            None,
            &[
                (
                    "cache",
                    "limit",
                    &["32,096", "34,816", "29 fit", "ran at most 29"],
                ),
                ("waiting", "limit", &["641 ms", "22.1 s", "queued"]),
                (
                    "pace",
                    "limit",
                    &["16.8 running", "On average 17 of 32", "799"],
                ),
            ],
        ),
        (
            "sglang-0.5/qwen3-8b-own-client",
            None,
            &[
                (
                    "cache",
                    "limit",
                    &["32,096", "about 1,064", "34,048", "30 fit", "retracted 3"],
                ),
                ("waiting", "ok", &["304 ms", "380 ms"]),
                ("pace", "ok", &["29.5 running", "1,342"]),
            ],
        ),
        (
            "trtllm-1.3/no-iter-stats",
            None,
            &[
                ("cache", "ok", &["36,192", "about 1,094", "35,840", "99%"]),
                ("waiting", "ok", &["335 ms", "337 ms"]),
                ("pace", "ok", &["1,412 × 0.0223 s", "31.5 of the 32"]),
            ],
        ),
        (
            "trtllm-1.3/pauses",
            None,
            &[
                (
                    "cache",
                    "limit",
                    &["20,960", "34,816", "19 fit", "paused 13"],
                ),
                ("waiting", "ok", &["636 ms", "640 ms"]),
                (
                    "pace",
                    "limit",
                    &["1,006 × 0.0243 s", "24.4 of the 32", "On average 24 of 32"],
                ),
            ],
        ),
        (
            "trtllm-1.3/qwen3-8b",
            None,
            &[
                ("cache", "ok", &["37,760", "34,816", "92%"]),
                ("waiting", "ok", &["596 ms", "599 ms"]),
                ("pace", "ok", &["1,389 × 0.0224 s", "31.2 of the 32"]),
            ],
        ),
    ];
    let mut problems = Vec::new();
    for (rel, requested, want) in cases {
        let r = report_of(&root, rel, requested);
        let keys: Vec<&str> = r.limits.iter().map(|l| l.key.as_str()).collect();
        let want_keys: Vec<&str> = want.iter().map(|w| w.0).collect();
        if keys != want_keys {
            problems.push(format!("{rel}: limits {keys:?}, expected {want_keys:?}"));
            continue;
        }
        for (l, (key, tone, frags)) in r.limits.iter().zip(want) {
            if l.tone != *tone {
                problems.push(format!("{rel} {key}: tone {}, expected {tone}", l.tone));
            }
            let all = format!("{} {}", l.title, l.text);
            for f in *frags {
                if !all.contains(f) {
                    problems.push(format!("{rel} {key}: no \"{f}\" in: {all}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn account_and_facts_of_the_headline_run() {
    let Some(root) = common::recorded() else {
        return;
    };
    let r = report_of(&root, "vllm-0.28/live", Some(32));
    let account = r.account.as_deref().unwrap();
    for f in [
        "kept 32 requests open for 1 min 34 s",
        "finished 32 requests with no errors",
        "32,000 output tokens",
        "never worked on more than 10 at once",
        "29 s on average",
        "preempted a running request 22 times",
        "does not mention it",
    ] {
        assert!(account.contains(f), "no \"{f}\" in: {account}");
    }
    let fact = |facts: &[analyzer::report::Fact], label: &str| {
        facts
            .iter()
            .find(|f| f.label == label)
            .unwrap_or_else(|| panic!("no {label}"))
            .value
            .clone()
    };
    assert_eq!(
        fact(&r.test, "Clock time"),
        "2026-09-26 17:50:52 to 17:52:25 (UTC-7)"
    );
    assert_eq!(
        fact(&r.test, "Server start-up"),
        "2 min 4 s, before the test (from the boot log)"
    );
    assert_eq!(
        fact(&r.test, "Output tokens generated"),
        "32,000 (1,000 per request)"
    );
    assert_eq!(
        fact(&r.test, "Prompt tokens read"),
        "2,819 (88 per request)"
    );
    assert_eq!(
        fact(&r.test, "Average wait for the first token"),
        "29.6 s, 29.3 s of it waiting in the queue"
    );
    let checked = fact(&r.setup, "Tripwires checked");
    // T15, T20, T22 and T23 are here as "can't tell" (no load-tool result), never left
    // out; T16 and T18 need captures only the recorder makes, which the reference's folder
    // lacks, T21 the load command it keeps and T24 its marks of the load.
    assert!(checked.starts_with("13 of 23"), "{checked}");
    for f in [
        "T2 and T3",
        "T4 and T11",
        "T7 needs a live server",
        "T13 is a rule",
        "T16 needs GPU samples, which inferlint-recorder record takes",
        "T18 needs per-request times",
        "T21 needs the output length the load asked for",
        "T24 needs a recording and the recorder's marks of the load's start and end",
    ] {
        assert!(checked.contains(f), "no \"{f}\" in {checked}");
    }
    assert!(!checked.contains("T15"), "{checked}");
    assert_eq!(
        fact(&r.setup, "Recording"),
        "the server read every 0.25 s, 365 readings"
    );
    let tiles: Vec<(&str, &str)> = r
        .tiles
        .iter()
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    assert_eq!(
        tiles,
        [
            ("ran_at_once", "10 of 32"),
            ("preemptions", "22"),
            ("tokens_per_s", "341.4"),
            ("usable_blocks", "42")
        ]
    );
    assert!(r.tiles[2].sub.contains("+0.77%"));
    assert!(r
        .status_note
        .as_deref()
        .unwrap()
        .contains("32 requests with no errors"));
    let load = fact(&r.server, "Model load");
    assert!(
        load.starts_with("17.71 GiB in ") && load.ends_with(" s"),
        "{load}"
    );
    assert_eq!(fact(&r.server, "Attention block"), "784 tokens");
    assert_eq!(fact(&r.server, "CUDA graphs"), "on, 0.18 GiB");
}

#[test]
fn tripwires_checked_elsewhere() {
    let Some(root) = common::recorded() else {
        return;
    };
    let checked = |rel: &str| {
        report_of(&root, rel, None)
            .setup
            .iter()
            .find(|f| f.label == "Tripwires checked")
            .unwrap()
            .value
            .clone()
    };
    let p = checked("trtllm-1.3/pauses");
    assert!(
        p.starts_with("11 of 23") && p.contains("T14 does not apply to TensorRT-LLM"),
        "{p}"
    );
    let c = checked("vllm-0.30/capped");
    assert!(c.starts_with("13 of 23"), "{c}");
}

/// Chart series have one value per reading and their values come from the inputs.
#[test]
fn chart_data_matches_the_inputs() {
    let Some(root) = common::recorded() else {
        return;
    };
    let r = report_of(&root, "vllm-0.28/live", Some(32));
    let series_text = common::read(&root, "vllm-0.28/live/run.series.jsonl");
    let rows = series_text.lines().filter(|l| l.contains("t_wall")).count();
    let req = r.charts.requests.as_ref().unwrap();
    assert_eq!(req.t.len(), rows);
    for l in &req.lines {
        assert_eq!(l.values.len(), rows, "{}", l.key);
    }
    assert_eq!(req.lines[0].values[1], Some(10.0));
    assert_eq!(req.lines[1].values[1], Some(22.0));
    assert_eq!(req.markers.len(), 14);
    assert_eq!(req.markers.iter().map(|m| m.count).sum::<f64>(), 22.0);
    assert_eq!(req.markers[0].label, "4 preemptions at 16.2 s");
    assert_eq!(req.reference.as_ref().unwrap().1, "asked for 32");
    let fit = &req.lines[2].values;
    assert_eq!(
        fit.iter().filter(|v| v.is_some()).count(),
        246,
        "the saturated samples of T9"
    );
    let kv = r.charts.kv.as_ref().unwrap();
    assert!((kv.lines[0].values[1].unwrap() - 40.0 / 42.0 * 100.0).abs() < 1e-9);
    let tok = r.charts.tokens.as_ref().unwrap();
    let vals: Vec<f64> = tok.lines[0].values.iter().flatten().copied().collect();
    assert_eq!(vals.len(), 364);
    assert_eq!(
        format!("{:.1}", vals.iter().copied().fold(0.0, f64::max)),
        "442.9"
    );
    let levels = r.charts.levels.as_ref().unwrap();
    let bars: Vec<(String, String)> = levels
        .bars
        .iter()
        .map(|(l, v)| (l.clone(), format!("{v:.2}")))
        .collect();
    assert_eq!(bars[0], ("10".to_string(), "33.64".to_string()));
    assert_eq!(bars[1], ("9".to_string(), "28.24".to_string()));
    assert!(bars.contains(&("7".to_string(), "13.85".to_string())));
    assert!(bars.contains(&("3".to_string(), "12.82".to_string())));
    assert!(
        r.charts.cache.is_none(),
        "hybrid model: no cache arithmetic"
    );
    let mem = r.charts.memory.as_ref().unwrap();
    assert_eq!(mem.bars[0], ("Model weights".to_string(), 17.71));

    // Engines whose token counter moves at completion: no tokens chart, a note instead.
    let s = report_of(&root, "sglang-0.5/live", None);
    assert!(s.charts.tokens.is_none());
    assert!(s.charts.note.as_deref().unwrap().contains("left out"));
    let cache = s.charts.cache.as_ref().unwrap();
    assert_eq!(cache.bars[1].1, 35_008.0);
    assert!(
        cache
            .caption
            .contains("about 1,093 tokens at the end, 1,094 in whole 1-token blocks"),
        "{}",
        cache.caption
    );
    assert!(cache.caption.contains("5 of them fit"), "{}", cache.caption);

    let t = report_of(&root, "trtllm-1.3/no-iter-stats", None);
    let req = t.charts.requests.as_ref().unwrap();
    assert!(
        req.lines
            .iter()
            .all(|l| l.values.iter().all(Option::is_none)),
        "gauges absent: empty plots"
    );
    let cache = t.charts.cache.as_ref().unwrap();
    assert!(
        cache.caption.contains("1,120 in whole 32-token blocks"),
        "{}",
        cache.caption
    );
    assert!(
        cache.caption.contains("352 tokens to spare"),
        "{}",
        cache.caption
    );
}

/// Every report's JSON carries each section, keys in the documented order
/// (docs/run-folder.md#results-json), every result as a result object is shaped, and
/// nothing in it is NaN by accident.
#[test]
fn every_folder_has_a_complete_json_report() {
    let Some(root) = common::recorded() else {
        return;
    };
    for rel in [
        "vllm-0.28/live",
        "vllm-0.30/live",
        "vllm-0.30/capped",
        "vllm-0.30/qwen3-8b-start1",
        "sglang-0.5/capped",
        "sglang-0.5/live",
        "sglang-0.5/qwen3-8b",
        "sglang-0.5/qwen3-8b-own-client",
        "trtllm-1.3/no-iter-stats",
        "trtllm-1.3/pauses",
        "trtllm-1.3/qwen3-8b",
    ] {
        let report = report_of(&root, rel, Some(32));
        let text = analyzer::json::to_compact(&report);
        let doc = analyzer::json::parse(&text).expect("the Report is JSON");
        // The replay comes last, present exactly when the folder holds a recording.
        let recorded = root.join(rel).join("run.series.jsonl").is_file();
        assert_eq!(report.replay.is_some(), recorded, "{rel}");
        let mut want = vec![
            "schema",
            "engine",
            "title",
            "facts",
            "checks",
            "limits",
            "meta",
            "version_note",
            "banner",
            "account",
            "tiles",
            "test",
            "setup",
            "summary",
            "counts",
            "status_note",
            "charts",
            "server",
            "glossary",
            "guide",
            "made_from",
            "skipped",
        ];
        if recorded {
            want.push("replay");
        }
        assert_eq!(keys(&doc), want, "{rel}");
        assert_eq!(
            doc.get("schema").and_then(Json::as_str),
            Some("inferlint.report/1")
        );
        let checks = doc.get("checks").unwrap().as_array().unwrap();
        assert_eq!(checks.len(), report.checks.len(), "{rel}");
        for (c, r) in checks.iter().zip(&report.checks) {
            let mut want = vec!["id", "name", "status", "message", "evidence"];
            if r.source.is_some() {
                want.push("source");
            }
            assert_eq!(keys(c), want, "{rel}: {c:?}");
            assert_eq!(c.get("id").and_then(Json::as_str), Some(r.id().as_str()));
            assert_eq!(c.get("name").and_then(Json::as_str), Some(r.name()));
            assert_eq!(
                c.get("status").and_then(Json::as_str),
                Some(r.status.as_str())
            );
            assert_eq!(
                c.get("message").and_then(Json::as_str),
                Some(r.message.as_str())
            );
            let evidence = c.get("evidence").and_then(Json::as_object).unwrap();
            assert_eq!(
                evidence,
                r.evidence().as_slice(),
                "{rel}: evidence in order"
            );
        }
        let counts = doc.get("counts").unwrap();
        assert_eq!(
            keys(counts),
            ["fail", "warn", "unknown", "pass", "not_applicable"]
        );
        let counted: i64 = counts
            .as_object()
            .unwrap()
            .iter()
            .filter_map(|(_, n)| n.as_i64_trunc())
            .sum();
        assert_eq!(counted as usize, report.checks.len(), "{rel}");
        assert_eq!(
            doc.get("guide").unwrap().as_array().unwrap().len(),
            analyzer::rules::registry::single_server().count()
        );
        assert!(!text.contains("NaN"), "{rel}: NaN in the report");
        assert!(
            matches!(
                doc.get("charts").unwrap().get("requests"),
                Some(Json::Obj(_))
            ),
            "{rel}"
        );
    }
}

/// An object's keys, in order.
fn keys(doc: &Json) -> Vec<&str> {
    doc.as_object()
        .unwrap_or_default()
        .iter()
        .map(|(k, _)| k.as_str())
        .collect()
}

/// The report's own prose (not the inputs it quotes) never holds a run of spaces: a
/// wrapped string literal once carried eighteen into the "Requests sent by" fact.
#[test]
fn report_prose_has_no_runs_of_spaces() {
    let repo = common::workspace_root().join("fixtures");
    let mut folders: Vec<std::path::PathBuf> =
        ["recorded/vllm", "recorded/sglang", "recorded/trtllm"]
            .iter()
            .map(|rel| repo.join(rel))
            .collect();
    if let Some(root) = common::recorded() {
        folders.extend(
            ["vllm-0.30/live", "sglang-0.5/capped", "trtllm-1.3/pauses"]
                .iter()
                .map(|rel| root.join(rel)),
        );
    }
    for dir in folders {
        let input = inferlint::disk::load_run_folder_as(&dir, "run").unwrap();
        let opts = Options {
            requested: Some(32),
            ..Options::default()
        };
        let report = analyze(&input, &opts).unwrap().report;
        let text = analyzer::json::to_compact(&report);
        let doc = analyzer::json::parse(&text).unwrap();
        // Everything but the facts record and the evidence, which quote the inputs.
        for key in [
            "title",
            "checks",
            "limits",
            "meta",
            "version_note",
            "banner",
            "account",
            "tiles",
            "test",
            "setup",
            "status_note",
            "charts",
            "server",
            "glossary",
            "guide",
        ] {
            let mut strings = Vec::new();
            prose(doc.get(key).unwrap(), &mut strings);
            for s in strings {
                assert!(!s.contains("  "), "{}: {key}: {s:?}", dir.display());
            }
        }
    }
}

/// Every string under `v`, leaving out check evidence.
fn prose<'a>(v: &'a Json, out: &mut Vec<&'a str>) {
    match v {
        Json::Str(s) => out.push(s),
        Json::Arr(items) => items.iter().for_each(|x| prose(x, out)),
        Json::Obj(pairs) => pairs
            .iter()
            .filter(|(k, _)| k != "evidence")
            .for_each(|(_, x)| prose(x, out)),
        _ => {}
    }
}
