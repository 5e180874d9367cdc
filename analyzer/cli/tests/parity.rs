//! Every case of the recorded GPU runs' `expected-verdicts.json` (the reference
//! implementation's verdicts, with our deliberate departures applied): the same status
//! for every tripwire and every expected evidence value, computed through the library.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::Path;

use analyzer::analysis::{analyze, Options};
use analyzer::bootlog;
use analyzer::counters::Pair;
use analyzer::json::{self, Json};
use analyzer::rules;
use analyzer::rules::verdict::{exit_status, CheckResult};
use analyzer::series::Series;
use analyzer::snapshot::Snapshot;

fn read_bytes(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Loads a fixture run folder the way `inferlint analyze DIR` does.
fn load_folder(dir: &Path) -> analyzer::RunInput {
    inferlint::disk::load_run_folder(dir).unwrap()
}

/// The results and exit status our library gives for one case key.
fn run_case(root: &Path, key: &str) -> Option<(Vec<CheckResult>, i32)> {
    let parts: Vec<&str> = key.split(' ').collect();
    match parts[0] {
        "report" => {
            let dir = root.join(parts[1]);
            let input = load_folder(&dir);
            let requested = input.bench.is_none().then_some(32);
            let opts = Options {
                requested,
                ..Options::default()
            };
            let a = analyze(&input, &opts).expect("analyze");
            // Every result counts: on the reference's folders T16 and T18 are not checked
            // (no recorder's captures), so the status is what the exit rule gives
            // (docs/tripwires.md#exit-status).
            let code = exit_status(&a.report.checks, false, !a.errors.is_empty());
            Some((a.report.checks, code))
        }
        "check-log" => {
            let logs: Vec<(String, String)> = parts[1..]
                .iter()
                .map(|p| {
                    let path = root.join(p);
                    let text = String::from_utf8_lossy(&read_bytes(&path)).into_owned();
                    (path.display().to_string(), text)
                })
                .collect();
            let read = bootlog::read_logs(&logs, None);
            let results = rules::runner::check_logs(&read, true);
            let code = exit_status(&results, false, false);
            Some((results, code))
        }
        "preemption" => {
            let b = root.join(format!("{}_before.prom", parts[1]));
            let a = root.join(format!("{}_after.prom", parts[1]));
            let before = Snapshot::read(&b.display().to_string(), &read_bytes(&b)).unwrap();
            let after = Snapshot::read(&a.display().to_string(), &read_bytes(&a)).unwrap();
            let engine = analyzer::analysis::snapshots_engine(&[&before, &after])
                .unwrap_or(analyzer::Engine::Vllm);
            let pair = Pair::new(&before, &after);
            let results = vec![rules::t01_silent_preemption::check(
                engine, &pair, None, None,
            )];
            let code = exit_status(&results, false, false);
            Some((results, code))
        }
        "series" => {
            let s = root.join(format!("{}.series.jsonl", parts[1]));
            let p = root.join(format!("{}_snapshot.prom", parts[1]));
            let requested: i64 = parts
                .iter()
                .position(|&w| w == "--requested")
                .map_or(32, |i| parts[i + 1].parse().unwrap());
            let series = Series::read("s", &read_bytes(&s)).unwrap();
            let snap = Snapshot::read("p", &read_bytes(&p)).unwrap();
            let steps = analyzer::blocks::GaugeSteps::read(&series, &snap);
            let results = vec![
                rules::t14_null_block::judge(&steps),
                rules::t09_falling_ceiling::check(&series, steps.usable_blocks()),
                rules::t08_concurrency_not_reached::check(&series, requested, None),
            ];
            let code = exit_status(&results, false, false);
            Some((results, code))
        }
        _ => None,
    }
}

/// Numbers compare with a relative tolerance; everything else structurally.
fn same(expected: &Json, got: &Json) -> bool {
    match (expected, got) {
        (e, g) if e.as_f64().is_some() && g.as_f64().is_some() => {
            let (e, g) = (e.as_f64().unwrap(), g.as_f64().unwrap());
            e == g || (e - g).abs() <= 1e-9 * e.abs().max(1.0)
        }
        (Json::Arr(e), Json::Arr(g)) => {
            e.len() == g.len() && e.iter().zip(g).all(|(a, b)| same(a, b))
        }
        (Json::Obj(e), Json::Obj(g)) => {
            e.len() == g.len()
                && e.iter()
                    .all(|(k, v)| g.iter().any(|(gk, gv)| gk == k && same(v, gv)))
        }
        (e, g) => e == g,
    }
}

#[test]
fn every_recorded_case_agrees() {
    let Some(root) = common::recorded() else {
        return;
    };
    let expected = json::parse(&common::read(&root, "expected-verdicts.json")).unwrap();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (key, case) in expected.as_object().unwrap() {
        let Some((results, code)) = run_case(&root, key) else {
            problems.push(format!("{key}: case kind not handled"));
            continue;
        };
        // Name repeated ids T5, T5+, T5++ in order, as the case keys do.
        let mut named: Vec<(String, &CheckResult)> = Vec::new();
        for r in &results {
            let mut id = r.id();
            while named.iter().any(|(k, _)| *k == id) {
                id.push('+');
            }
            named.push((id, r));
        }
        for (id, want) in case.get("verdicts").unwrap().as_object().unwrap() {
            checked += 1;
            let Some((_, got)) = named.iter().find(|(k, _)| k == id) else {
                problems.push(format!("{key} {id}: missing"));
                continue;
            };
            let status = want.get("status").unwrap().as_str().unwrap();
            if got.status.as_str() != status {
                problems.push(format!(
                    "{key} {id}: {}, expected {status} ({})",
                    got.status.as_str(),
                    got.message
                ));
                continue;
            }
            for (k, v) in want.get("evidence").unwrap().as_object().unwrap() {
                if k == "result_file" {
                    continue; // a path as given; not compared literally
                }
                match got.evidence_value(k) {
                    Some(g) if same(v, &g) => {}
                    other => problems.push(format!(
                        "{key} {id}: evidence {k} = {}, expected {}",
                        other.as_ref().map_or("missing".into(), Json::to_compact),
                        v.to_compact()
                    )),
                }
            }
        }
        let want_exit = case.get("exit").and_then(Json::as_i64_trunc).unwrap();
        if i64::from(code) != want_exit {
            problems.push(format!("{key}: exit {code}, expected {want_exit}"));
        }
    }
    assert!(checked > 200, "only {checked} verdicts checked");
    assert!(
        problems.is_empty(),
        "{} disagreements:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// On the reference's folders the new tripwires never pass by default: T16 and T18 are
/// not checked (the folders hold no recorder's captures: no GPU samples, no per-request
/// times, no boot-log marks; listed as not checked, like T2), and T17 reads the real
/// prefix-cache counters, where the engine exports them.
#[test]
fn new_tripwires_on_the_reference_folders() {
    let Some(root) = common::recorded() else {
        return;
    };
    let expected = json::parse(&common::read(&root, "expected-verdicts.json")).unwrap();
    let mut seen = 0;
    for (key, _) in expected.as_object().unwrap() {
        if !key.starts_with("report ") {
            continue;
        }
        let (results, _) = run_case(&root, key).unwrap();
        let status = |t: u8| {
            results
                .iter()
                .find(|c| c.tripwire.number() == t)
                .map(|c| c.status)
        };
        assert_eq!(status(16), None, "{key}");
        assert_eq!(status(18), None, "{key}");
        if let Some(s) = status(17) {
            assert!(
                matches!(
                    s,
                    analyzer::Status::Pass
                        | analyzer::Status::NotApplicable
                        | analyzer::Status::Unknown
                ),
                "{key}: T17 {s:?}"
            );
        }
        seen += 1;
    }
    assert!(seen > 5, "only {seen} report cases");
}
