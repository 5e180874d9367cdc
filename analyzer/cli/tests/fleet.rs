//! Fleet folders (issue 17): replicas composed from real single-server recordings
//! (`fixtures/recorded/vllm`, `fixtures/real/fits`), judged per replica and as a fleet.
//! The composer here also wrote `fixtures/fleet/composed-*` (their README says how); a test
//! checks the committed folders are still what it writes.
//! `INFERLINT_COMPOSE_FIXTURES=1` rewrites them.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use analyzer::docs::fleet::{Fleet, FleetSource, Replica};
use analyzer::json::{self, Json};
use analyzer::{CheckResult, Status};

/// One replica to compose: its id, where its recording is, its instance label.
struct Source {
    id: &'static str,
    dir: &'static str,
    instance: &'static str,
}

/// A composed fleet: the replicas, and the recording whose probe and load log stand for
/// the load sent through the router.
struct Composition {
    title: &'static str,
    replicas: &'static [Source],
    load_from: &'static str,
    scrape_interval_s: f64,
}

const BALANCED: Composition = Composition {
    title: "Two replicas (composed): the real run fixtures/real/fits twice",
    replicas: &[
        Source {
            id: "a",
            dir: "fixtures/real/fits",
            instance: "10.0.0.1:8000",
        },
        Source {
            id: "b",
            dir: "fixtures/real/fits",
            instance: "10.0.0.2:8000",
        },
    ],
    load_from: "fixtures/real/fits",
    scrape_interval_s: 0.25,
};

const UNBALANCED: Composition = Composition {
    title: "Two replicas (composed): one preempting (fixtures/recorded/vllm), one running few \
            (fixtures/real/fits)",
    replicas: &[
        Source {
            id: "a",
            dir: "fixtures/recorded/vllm",
            instance: "10.0.0.1:8000",
        },
        Source {
            id: "b",
            dir: "fixtures/real/fits",
            instance: "10.0.0.2:8000",
        },
    ],
    load_from: "fixtures/recorded/vllm",
    scrape_interval_s: 0.25,
};

fn root() -> PathBuf {
    common::workspace_root()
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// When the recording first shows a request running: where its load really began (a real
/// server may take a while to answer the first requests).
fn busy_start(dir: &str) -> f64 {
    let text = String::from_utf8(read(&root().join(dir).join("run.series.jsonl"))).unwrap();
    text.lines()
        .skip(1)
        .map(|l| json::parse(l).unwrap())
        .find(|row| row.get("running").and_then(Json::as_f64).unwrap_or(0.0) > 0.0)
        .and_then(|row| row.get("t_wall").and_then(Json::as_f64))
        .expect("a reading with a request running")
}

/// Every `"t_wall": X` in the text moved by `by` seconds (a series line, a snapshot).
fn shift_t_wall(text: &str, by: f64) -> String {
    const KEY: &str = "\"t_wall\": ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(KEY) {
        let start = i + KEY.len();
        out.push_str(&rest[..start]);
        let len = rest[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
            .unwrap();
        let v: f64 = rest[start..start + len].parse().unwrap();
        out.push_str(&format!("{:.6}", v + by));
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    out
}

/// The load tool's figures summed over the replicas' own results (counts only: the
/// per-request lists are left out).
fn summed_bench(c: &Composition) -> Vec<u8> {
    let keys = [
        "completed",
        "failed",
        "num_prompts",
        "max_concurrency",
        "total_input_tokens",
        "total_output_tokens",
    ];
    let mut sums = [0i64; 6];
    let mut duration: f64 = 0.0;
    for r in c.replicas {
        let doc =
            json::parse(&String::from_utf8(read(&root().join(r.dir).join("bench.json"))).unwrap())
                .unwrap();
        for (k, s) in keys.iter().zip(sums.iter_mut()) {
            *s += doc.get(k).and_then(Json::as_f64).unwrap() as i64;
        }
        duration = duration.max(doc.get("duration").and_then(Json::as_f64).unwrap());
    }
    let mut pairs: Vec<(String, Json)> = vec![
        ("backend".into(), Json::from("openai")),
        ("duration".into(), Json::Float(duration)),
    ];
    pairs.extend(
        keys.iter()
            .zip(sums)
            .map(|(k, s)| (k.to_string(), Json::Int(s))),
    );
    let mut text = Json::Obj(pairs).to_compact();
    text.push('\n');
    text.into_bytes()
}

/// The manifest of the load through the router: the concurrency asked for is the sum.
fn manifest(c: &Composition) -> Vec<u8> {
    let requested: i64 = c
        .replicas
        .iter()
        .map(|r| {
            let doc = json::parse(
                &String::from_utf8(read(&root().join(r.dir).join("bench.json"))).unwrap(),
            )
            .unwrap();
            doc.get("max_concurrency").and_then(Json::as_f64).unwrap() as i64
        })
        .sum();
    format!(
        "{{\n \"schema\": \"inferlint.run/1\",\n \"title\": {},\n \"load\": {{\n  \"argv_given\": [\"vllm\", \"bench\", \"serve\", \"--max-concurrency\", \"{requested}\"],\n  \"client\": \"vllm\"\n }},\n \"requested\": {{\n  \"flag\": null,\n  \"from_load\": {requested}\n }},\n \"outcome\": {{\n  \"state\": \"completed\",\n  \"stage\": null,\n  \"problem\": null\n }}\n}}\n",
        Json::from(c.title).to_compact()
    )
    .into_bytes()
}

/// Writes the fleet folder `c` describes into `dst` (emptied first).
fn compose(c: &Composition, dst: &Path) {
    let _ = std::fs::remove_dir_all(dst);
    std::fs::create_dir_all(dst.join("replicas")).unwrap();
    // Every replica's clock moved so their first running requests coincide, as one load
    // through a router would have them.
    let start = busy_start(c.replicas[0].dir);
    for r in c.replicas {
        let to = dst.join("replicas").join(r.id);
        std::fs::create_dir_all(&to).unwrap();
        let by = start - busy_start(r.dir);
        for name in [
            "before.snapshot.json",
            "after.snapshot.json",
            "run.series.jsonl",
        ] {
            let text = String::from_utf8(read(&root().join(r.dir).join(name))).unwrap();
            std::fs::write(to.join(name), shift_t_wall(&text, by)).unwrap();
        }
    }
    let load = root().join(c.load_from);
    for name in ["probe.json", "load.log"] {
        std::fs::write(dst.join(name), read(&load.join(name))).unwrap();
    }
    std::fs::write(dst.join("bench.json"), summed_bench(c)).unwrap();
    std::fs::write(dst.join("manifest.json"), manifest(c)).unwrap();
    let fleet = Fleet {
        source: Some(FleetSource::Prometheus),
        prometheus_url: Some("http://10.0.0.9:9090".into()),
        selector: Some(r#"{job="vllm"}"#.into()),
        router_url: Some("http://10.0.0.9:8000".into()),
        step_s: Some(c.scrape_interval_s),
        scrape_interval_s: Some(c.scrape_interval_s),
        replicas: c
            .replicas
            .iter()
            .map(|r| Replica {
                id: r.id.into(),
                instance: r.instance.into(),
                labels: [
                    ("instance".to_string(), r.instance.to_string()),
                    ("job".to_string(), "vllm".to_string()),
                ]
                .into(),
                scrape_interval_s: Some(c.scrape_interval_s),
            })
            .collect(),
    };
    std::fs::write(dst.join("fleet.json"), analyzer::docs::to_bytes(&fleet)).unwrap();
}

/// A scratch copy of composition `c`.
fn scratch(c: &Composition, tag: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fleet-{tag}-{}", std::process::id()));
    compose(c, &dir);
    dir
}

fn analyze(dir: &Path) -> analyzer::Analysis {
    let input = inferlint::disk::load_run_folder(dir).unwrap();
    analyzer::analyze(&input, &analyzer::Options::default()).unwrap()
}

fn check(checks: &[CheckResult], t: u8) -> &CheckResult {
    checks
        .iter()
        .find(|c| c.tripwire.number() == t)
        .unwrap_or_else(|| panic!("no T{t} in {checks:#?}"))
}

fn replica<'a>(a: &'a analyzer::Analysis, id: &str) -> &'a analyzer::report::ReplicaReport {
    a.report.replicas.iter().find(|r| r.id == id).unwrap()
}

/// Every file of a folder, by relative path, with its bytes.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !matches!(
                p.file_name().and_then(|n| n.to_str()),
                Some("results.json" | "report.html" | "README.md")
            ) {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, read(&p)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_committed_composed_fixtures_are_what_the_composer_writes() {
    for (c, name) in [
        (&BALANCED, "composed-balanced"),
        (&UNBALANCED, "composed-unbalanced"),
    ] {
        let committed = root().join("fixtures/fleet").join(name);
        if std::env::var("INFERLINT_COMPOSE_FIXTURES").as_deref() == Ok("1") {
            let readme = std::fs::read(committed.join("README.md")).ok();
            compose(c, &committed);
            if let Some(r) = readme {
                std::fs::write(committed.join("README.md"), r).unwrap();
            }
        }
        let fresh = scratch(c, name);
        let (a, b) = (tree(&committed), tree(&fresh));
        let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b), "{name}");
        for ((n, x), (_, y)) in a.iter().zip(&b) {
            assert!(x == y, "{name}/{n} differs from what the composer writes");
        }
        let _ = std::fs::remove_dir_all(fresh);
    }
}

#[test]
fn a_balanced_fleet_passes() {
    let a = analyze(&root().join("fixtures/fleet/composed-balanced"));
    let c = &a.report.checks;
    for t in [1, 8, 15, 19] {
        assert_eq!(
            check(c, t).status,
            Status::Pass,
            "T{t}: {}",
            check(c, t).message
        );
    }
    assert!(
        check(c, 8).message.contains("ran up to 8 requests at once"),
        "{}",
        check(c, 8).message
    );
    assert_eq!(a.report.replicas.len(), 2);
    for r in &a.report.replicas {
        assert_eq!(check(&r.checks, 1).status, Status::Pass);
        assert_eq!(
            check(&r.checks, 8).status,
            Status::Pass,
            "{}",
            check(&r.checks, 8).message
        );
        assert_eq!(
            (r.peak_running, r.preemptions, r.served),
            (Some(4.0), Some(0.0), Some(16.0))
        );
    }
    assert_eq!(a.exit_status(false), 0, "{:#?}", a.report.all_checks());
}

#[test]
fn one_replica_preempting_fails_t1_for_it_alone_and_the_load_is_unbalanced() {
    let a = analyze(&root().join("fixtures/fleet/composed-unbalanced"));
    assert_eq!(check(&replica(&a, "a").checks, 1).status, Status::Fail);
    assert_eq!(check(&replica(&a, "b").checks, 1).status, Status::Pass);
    assert_eq!(replica(&a, "a").preemptions, Some(6.0));
    let c = &a.report.checks;
    let t1 = check(c, 1);
    assert_eq!(t1.status, Status::Fail);
    assert!(
        t1.message
            .contains("1 of 2 replicas preempted during the run: a (6)"),
        "{}",
        t1.message
    );
    let t19 = check(c, 19);
    assert_eq!(t19.status, Status::Fail, "{}", t19.message);
    assert!(t19.message.starts_with("replica a ran at its ceiling (6 preemptions, up to 10 running) while replica b never ran more than 4"), "{}", t19.message);
    assert_eq!(t19.name(), "load-unbalanced");
    // 36 asked for through the router; the two ran 10 and 4 at most.
    let t8 = check(c, 8);
    assert_eq!(t8.status, Status::Fail, "{}", t8.message);
    assert!(
        t8.message.contains("Prometheus scraped every 0.25 s"),
        "{}",
        t8.message
    );
    assert_eq!(
        check(c, 15).status,
        Status::Pass,
        "{}",
        check(c, 15).message
    );
    assert_eq!(a.exit_status(false), 1);
}

#[test]
fn a_replica_without_its_recording_cannot_tell() {
    let dir = scratch(&BALANCED, "no-series");
    std::fs::remove_file(dir.join("replicas/b/run.series.jsonl")).unwrap();
    let a = analyze(&dir);
    let b = replica(&a, "b");
    for t in [14, 9, 8] {
        let r = check(&b.checks, t);
        assert_eq!(r.status, Status::Unknown, "T{t}: {}", r.message);
        assert!(
            r.message.contains("replicas/b/ has no run.series.jsonl"),
            "{}",
            r.message
        );
    }
    assert_eq!(b.peak_running, None);
    // T1 still reads its counters; the fleet's sum and balance can't be told.
    assert_eq!(check(&b.checks, 1).status, Status::Pass);
    assert_eq!(check(&a.report.checks, 8).status, Status::Unknown);
    assert_eq!(check(&a.report.checks, 19).status, Status::Unknown);
    assert_eq!(a.exit_status(false), 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn links_in_replicas_are_skipped_not_followed() {
    let dir = scratch(&BALANCED, "links");
    let outside = dir.with_extension("outside");
    compose(&UNBALANCED, &outside);
    symlink(outside.join("replicas/a"), dir.join("replicas/c")).unwrap();
    std::fs::remove_file(dir.join("replicas/b/after.snapshot.json")).unwrap();
    symlink(
        outside.join("replicas/a/after.snapshot.json"),
        dir.join("replicas/b/after.snapshot.json"),
    )
    .unwrap();
    std::fs::write(dir.join("replicas/stray.json"), b"{}").unwrap();
    std::fs::create_dir(dir.join("replicas/..bad id")).unwrap();
    let a = analyze(&dir);
    let ids: Vec<&str> = a.report.replicas.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    let skipped = |name: &str| {
        a.report
            .skipped
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name} not skipped: {:#?}", a.report.skipped))
            .reason
            .clone()
    };
    assert!(skipped("replicas/c").contains("symbolic link"));
    assert!(skipped("replicas/b/after.snapshot.json").contains("symbolic link"));
    assert!(skipped("replicas/stray.json").contains("not a replica's folder"));
    assert!(skipped("replicas/..bad id").contains("not a replica id"));
    // The linked reading is not read: b's T1 can't tell, with the reason.
    let t1 = check(&replica(&a, "b").checks, 1);
    assert_eq!(t1.status, Status::Unknown);
    assert!(t1.message.contains("symbolic link"), "{}", t1.message);
    // The replicas folder itself is read, not listed as skipped.
    assert!(a.report.skipped.iter().all(|s| s.name != "replicas"));
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(outside);
}

#[test]
fn a_hostile_fleet_json_never_panics_and_never_passes_on_a_refused_value() {
    let dir = scratch(&BALANCED, "hostile");
    for text in [
        "not json",
        "{\"schema\": \"inferlint.fleet/1\", \"replicas\": 7}",
        "{\"schema\": \"inferlint.fleet/1\", \"step_s\": -1, \"scrape_interval_s\": NaN, \"replicas\": [{\"id\": \"../../etc\"}, {\"id\": \"z\", \"scrape_interval_s\": 1e308}]}",
        "{\"schema\": \"inferlint.other/1\"}",
        "[]",
    ] {
        std::fs::write(dir.join("fleet.json"), text).unwrap();
        let a = analyze(&dir);
        // The replicas are still judged from their own folders.
        assert!(a.report.replicas.iter().any(|r| r.id == "a"), "{text}");
        assert!(a.report.replicas.iter().all(|r| r.id != "../../etc"));
    }
    // A refused step is left out: the recordings' own interval aligns them instead.
    let a = analyze(&dir);
    assert!(!a.errors.is_empty());
    std::fs::write(
        dir.join("fleet.json"),
        "{\"schema\": \"inferlint.fleet/1\", \"step_s\": -1, \"replicas\": [{\"id\": \"z\"}]}",
    )
    .unwrap();
    let a = analyze(&dir);
    assert!(
        a.notes.iter().any(|n| n.contains("step_s = -1")),
        "{:?}",
        a.notes
    );
    // z is listed but has no folder: every check of it can't tell.
    let z = replica(&a, "z");
    assert!(z.checks.iter().all(|c| c.status == Status::Unknown));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_terminal_shows_one_row_per_replica() {
    let dir = scratch(&UNBALANCED, "terminal");
    let o = Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .env("NO_COLOR", "1")
        .args(["analyze".as_ref(), dir.as_os_str()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    println!("{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  a ") || l.starts_with("  b "))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows[0].contains("10.0.0.1:8000") && rows[0].contains('✖'),
        "{}",
        rows[0]
    );
    assert_eq!(o.status.code(), Some(1));
    let results = std::fs::read_to_string(dir.join("results.json")).unwrap();
    assert!(results.contains("\"replicas\": ["));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_single_server_report_has_no_replicas_key() {
    let input = inferlint::disk::load_run_folder(&root().join("fixtures/recorded/vllm")).unwrap();
    let a = analyzer::analyze(&input, &analyzer::Options::default()).unwrap();
    let text = analyzer::json::to_pretty(&a.report, 1);
    assert!(!text.contains("\"replicas\""));
    assert!(input.fleet.is_none() && input.replicas.is_empty());
}

#[test]
fn a_fleet_survives_the_one_file_pack() {
    use analyzer::pack::{decode, encode, from_pack, to_pack};
    let dir = root().join("fixtures/fleet/composed-unbalanced");
    let input = inferlint::disk::load_run_folder_as(&dir, "composed-unbalanced").unwrap();
    let opts = analyzer::Options::default();
    let (back, opts2) = from_pack(&decode(&encode(&to_pack(&input, &opts, None))).unwrap());
    assert_eq!(back.replicas.len(), 2);
    let a = analyzer::analyze(&input, &opts).unwrap();
    let b = analyzer::analyze(&back, &opts2).unwrap();
    assert_eq!(
        analyzer::json::to_compact(&a.report),
        analyzer::json::to_compact(&b.report)
    );
    assert!(!a.report.replicas.is_empty());
}

#[test]
fn the_router_count_per_worker_sits_beside_each_replica() {
    let dir = scratch(&BALANCED, "router");
    std::fs::create_dir(dir.join("router")).unwrap();
    let snapshot = |a: u32, b: u32| {
        let text = format!(
            "# TYPE vllm_router_processed_requests_total counter\n\
             vllm_router_processed_requests_total{{worker=\"http://10.0.0.1:8000\"}} {a}\n\
             vllm_router_processed_requests_total{{worker=\"http://10.0.0.2:8000\"}} {b}\n"
        );
        format!(
            "{{\"schema\": \"inferlint.snapshot/1\", \"url\": \"http://10.0.0.9:8000/metrics\", \
             \"t_wall\": 1796045100.0, \"text\": {}}}\n",
            Json::from(text.as_str()).to_compact()
        )
    };
    std::fs::write(dir.join("router/before.snapshot.json"), snapshot(5, 0)).unwrap();
    std::fs::write(dir.join("router/after.snapshot.json"), snapshot(21, 15)).unwrap();
    let a = analyze(&dir);
    assert_eq!(replica(&a, "a").router_served, Some(16.0));
    assert_eq!(replica(&a, "b").router_served, Some(15.0));
    assert!(a.report.skipped.iter().all(|s| s.name != "router"));
    let _ = std::fs::remove_dir_all(dir);
}

/// The fleet the recorder wrote through Prometheus and a real vllm-router
/// (`fixtures/fleet/tiny-pool`): round robin sent each replica the same count, so the
/// tiny pool preempted while the other two never came near their caches.
#[test]
fn the_recorded_tiny_pool_fails_t1_on_that_replica_only_and_shows_the_imbalance() {
    let a = analyze(&root().join("fixtures/fleet/tiny-pool"));
    let ids = ["127.0.0.1-18241", "127.0.0.1-18242", "127.0.0.1-18243"];
    let t1: Vec<Status> = ids
        .iter()
        .map(|id| check(&replica(&a, id).checks, 1).status)
        .collect();
    assert_eq!(t1, [Status::Pass, Status::Pass, Status::Fail]);
    assert_eq!(replica(&a, ids[2]).preemptions, Some(8.0));
    // The router's own count per worker agrees with what each replica served.
    for id in ids {
        let r = replica(&a, id);
        assert!(r.router_served.is_some(), "{id}");
        assert_eq!(r.router_served, r.served, "{id}");
    }
    let c = &a.report.checks;
    assert!(check(c, 1).message.contains("127.0.0.1-18243 (8)"));
    assert_eq!(
        check(c, 15).status,
        Status::Pass,
        "{}",
        check(c, 15).message
    );
    let t19 = check(c, 19);
    assert_eq!(t19.status, Status::Fail, "{}", t19.message);
    assert!(
        t19.message.starts_with(
            "replica 127.0.0.1-18243 ran at its ceiling (8 preemptions, up to 3 running)"
        ) && t19.message.contains("% of its KV cache"),
        "{}",
        t19.message
    );
    assert!(t19.evidence_value("few_peak_kv_usage").is_some());
    assert_eq!(a.exit_status(false), 1);
}
