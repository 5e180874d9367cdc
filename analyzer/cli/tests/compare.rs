//! `inferlint compare` and the CI formats, run as a user runs them: the landing page's
//! three-engine table from the recorded runs, `--baseline` exit statuses, JUnit XML
//! checked against the element and attribute rules of Jenkins' junit-10.xsd (which GitLab
//! and the GitHub test-report actions read too), and GitHub workflow commands.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use analyzer::json::{self, Json};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .env_remove("INFERLINT_ENGINE")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("run inferlint")
}

/// `inferlint compare --baseline OLD NEW` and more arguments.
fn baseline(old: &Path, new: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "compare",
        "--baseline",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
    ];
    args.extend(extra);
    run(&args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("compare-{}-{name}", std::process::id()))
}

/// A writable copy of a run folder's files.
fn copy_dir(src: &Path, tag: &str) -> PathBuf {
    common::fresh_copy(src, &format!("compare-{tag}"))
}

const LANDING: [&str; 3] = [
    "vllm-0.30/qwen3-8b-start1",
    "sglang-0.5/qwen3-8b",
    "trtllm-1.3/qwen3-8b",
];

fn landing_runs(root: &Path) -> Vec<String> {
    LANDING
        .iter()
        .map(|r| root.join(r).display().to_string())
        .collect()
}

/// The cells of one row of `compare --json`: (text, value).
fn row(doc: &Json, key: &str) -> Vec<(String, Option<f64>)> {
    let row = doc
        .get("rows")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .find(|r| r.get("key").and_then(Json::as_str) == Some(key))
        .unwrap_or_else(|| panic!("no row {key}"));
    row.get("cells")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .map(|c| {
            (
                c.get("text").and_then(Json::as_str).unwrap().to_string(),
                c.get("value").and_then(Json::as_f64),
            )
        })
        .collect()
}

fn texts(cells: &[(String, Option<f64>)]) -> Vec<&str> {
    cells.iter().map(|(t, _)| t.as_str()).collect()
}

fn values(cells: &[(String, Option<f64>)]) -> Vec<Option<f64>> {
    cells.iter().map(|(_, v)| *v).collect()
}

#[test]
fn the_landing_page_table_from_the_three_recorded_runs() {
    let Some(root) = common::recorded() else {
        return;
    };
    let runs = landing_runs(&root);
    let mut args = vec!["compare"];
    args.extend(runs.iter().map(String::as_str));
    args.push("--json");
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = json::parse(&stdout(&o)).expect("compare --json is JSON");
    assert_eq!(
        doc.get("schema").and_then(Json::as_str),
        Some("inferlint.compare/1")
    );
    let columns: Vec<&str> = doc
        .get("columns")
        .and_then(Json::as_array)
        .unwrap()
        .iter()
        .map(|c| c.get("label").and_then(Json::as_str).unwrap())
        .collect();
    assert_eq!(columns, LANDING);

    // The landing page's rows, as it prints them.
    let pool = row(&doc, "kv_pool_tokens");
    assert_eq!(
        texts(&pool),
        ["32,336 tokens", "32,096 tokens", "37,760 tokens"]
    );
    assert_eq!(values(&pool), [Some(32336.0), Some(32096.0), Some(37760.0)]);
    let peak = row(&doc, "peak_running");
    assert_eq!(texts(&peak), ["32", "29", "32"]);
    let ev = row(&doc, "evictions");
    assert_eq!(
        texts(&ev),
        [
            "3 preemptions, no log line",
            "0 retractions",
            "0 pauses in its log"
        ]
    );
    let client = row(&doc, "output_tokens_per_s_client");
    assert_eq!(texts(&client), ["1,274", "799", "1,389"]);
    // Beside it, the server's own counter over the whole recording (idle time included).
    let server = row(&doc, "output_tokens_per_s_server");
    assert_eq!(
        texts(&server),
        [
            "509.7 over 62.8 s",
            "642.1 over 49.8 s",
            "994.9 over 32.2 s"
        ]
    );
    assert_eq!(texts(&row(&doc, "client_server")), ["agree"; 3]);
    // The other rows the issue names.
    assert_eq!(
        texts(&row(&doc, "block_size")),
        ["16 tokens", "1 token", "32 tokens"]
    );
    assert_eq!(
        texts(&row(&doc, "kv_pool_blocks")),
        ["2,021", "32,096", "1,180"]
    );
    assert_eq!(texts(&row(&doc, "requested")), ["32"; 3]);
    assert_eq!(texts(&row(&doc, "finished")), ["32"; 3]);
    assert_eq!(texts(&row(&doc, "failed")), ["0"; 3]);
    assert_eq!(
        texts(&row(&doc, "engine")),
        ["vLLM 0.30.0", "SGLang", "TensorRT-LLM 1.3.0rc29"]
    );
    assert_eq!(texts(&row(&doc, "T8")), ["Pass", "Tripwire failed", "Pass"]);

    // Differences that matter are flagged and read, with percentages from the values.
    let flag = |key: &str, field: &str| {
        doc.get("rows")
            .and_then(Json::as_array)
            .unwrap()
            .iter()
            .find(|r| r.get("key").and_then(Json::as_str) == Some(key))
            .and_then(|r| r.get(field).cloned())
            .unwrap()
    };
    assert_eq!(flag("kv_pool_tokens", "matters"), Json::Bool(true));
    assert_eq!(flag("model", "differs"), Json::Bool(false));
    assert_eq!(
        flag("output_tokens_per_s_server", "matters"),
        Json::Bool(false)
    );
    let reading = flag("output_tokens_per_s_client", "reading");
    let reading = reading.as_str().unwrap();
    // 799 / 1274.0 = 0.627: 37% fewer; 1389.2 / 1274.0 = 1.090: 9.0% more.
    assert!(reading.contains("37% fewer"), "{reading}");
    assert!(reading.contains("9.0% more"), "{reading}");

    // The terminal shows the same values, one column per run.
    let o = run(&args[..args.len() - 1]);
    let out = stdout(&o);
    let line = |label: &str| {
        out.lines()
            .find(|l| l[2..].starts_with(label))
            .unwrap_or_else(|| panic!("no {label} row in\n{out}"))
            .to_string()
    };
    for (label, want) in [
        (
            "KV pool ",
            ["32,336 tokens", "32,096 tokens", "37,760 tokens"],
        ),
        ("Most running at once", ["32", "29", "32"]),
        ("Output tokens/s, load tool", ["1,274", "799", "1,389"]),
        (
            "Client and server counts agree",
            ["agree", "agree", "agree"],
        ),
    ] {
        let l = line(label);
        let mut at = 0;
        for w in want {
            let i = l[at..].find(w).unwrap_or_else(|| panic!("{w} in {l}"));
            at += i + w.len();
        }
        assert!(l.starts_with('!') || label.starts_with("Client"), "{l}");
    }
    assert!(out.contains("0 retractions") && out.contains("0 pauses in its log"));
}

#[test]
fn baseline_exits_1_when_t8_went_from_pass_to_fail_and_0_on_identical_runs() {
    let Some(root) = common::recorded() else {
        return;
    };
    // SGLang's own client ran all 32 at once (T8 passes); `vllm bench serve` got 29.
    let old = root.join("sglang-0.5/qwen3-8b-own-client");
    let new = root.join("sglang-0.5/qwen3-8b");
    let o = baseline(&old, &new, &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    let regression = out
        .lines()
        .find(|l| l.starts_with("REGRESSION") && l.contains("T8 concurrency-not-reached"))
        .unwrap_or_else(|| panic!("T8 named in\n{out}"));
    assert!(regression.contains("pass on") && regression.contains("tripwire failed on"));
    assert!(
        out.contains("Most running at once fell 9.4% from 32 to 29"),
        "{out}"
    );

    // The same pair the other way round is no regression on T8 (a failure that passes).
    let o = baseline(&new, &old, &["--json"]);
    let doc = json::parse(&stdout(&o)).unwrap();
    let regressions = doc
        .get("baseline")
        .and_then(|b| b.get("regressions"))
        .and_then(Json::as_array)
        .unwrap();
    assert!(regressions
        .iter()
        .all(|r| r.get("key").and_then(Json::as_str) != Some("T8")));

    // Two identical runs.
    let a = copy_dir(&root.join("vllm-0.30/qwen3-8b-start1"), "same-a");
    let b = copy_dir(&root.join("vllm-0.30/qwen3-8b-start1"), "same-b");
    let o = baseline(&a, &b, &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("No regression"));
}

#[test]
fn baseline_tolerance_decides_a_throughput_drop() {
    let Some(root) = common::recorded() else {
        return;
    };
    // vLLM 0.30 against the same model on TensorRT-LLM: 1,389 then 1,274 output tokens/s,
    // 8.3% fewer; T1 failed only on the new run.
    let old = root.join("trtllm-1.3/qwen3-8b");
    let new = root.join("vllm-0.30/qwen3-8b-start1");
    let json_of = |tol: &str| {
        let o = baseline(&old, &new, &["--tolerance", tol, "--json"]);
        (o.status.code(), json::parse(&stdout(&o)).unwrap())
    };
    let keys = |doc: &Json| -> Vec<String> {
        doc.get("baseline")
            .and_then(|b| b.get("regressions"))
            .and_then(Json::as_array)
            .unwrap()
            .iter()
            .map(|r| r.get("key").and_then(Json::as_str).unwrap().to_string())
            .collect()
    };
    let (code, doc) = json_of("5%");
    assert_eq!(code, Some(1));
    assert_eq!(keys(&doc), ["T1", "output_tokens_per_s"]);
    let (_, doc) = json_of("10");
    assert_eq!(keys(&doc), ["T1"]);
    let o = run(&["compare", "--baseline", "a", "b", "--tolerance", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--tolerance lots"));
}

#[test]
fn an_unusable_run_exits_2_and_a_named_engine_refuses_mismatches() {
    let Some(root) = common::recorded() else {
        return;
    };
    let empty = tmp("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let vllm = root.join("vllm-0.30/qwen3-8b-start1");
    let sglang = root.join("sglang-0.5/qwen3-8b");
    let o = run(&["compare", vllm.to_str().unwrap(), empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no run files"), "{}", stderr(&o));

    let o = run(&[
        "compare",
        vllm.to_str().unwrap(),
        sglang.to_str().unwrap(),
        "--engine",
        "vllm",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("refusing to mix engines"),
        "{}",
        stderr(&o)
    );

    // A run with a damaged file is still compared; the status says an input was unusable.
    let broken = copy_dir(&vllm, "broken");
    std::fs::write(broken.join("after.snapshot.json"), "{ not json\n").unwrap();
    let o = run(&["compare", vllm.to_str().unwrap(), broken.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("after.snapshot.json"));
    assert!(stdout(&o).contains("KV pool"));
    let o = run(&["compare", "--baseline", vllm.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "one folder is not a comparison");
}

// ---- JUnit XML ------------------------------------------------------------------------

/// Jenkins' junit-10.xsd as rules: for each element, its required and optional
/// attributes and the elements it may hold.
fn xsd_rule(
    name: &str,
) -> Option<(
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
)> {
    Some(match name {
        "testsuites" => (
            &[],
            &["name", "time", "tests", "failures", "errors"],
            &["testsuite"],
        ),
        "testsuite" => (
            &["name", "tests", "failures", "errors"],
            &[
                "group",
                "time",
                "skipped",
                "timestamp",
                "hostname",
                "id",
                "package",
                "file",
                "log",
                "url",
            ],
            &[
                "testsuite",
                "properties",
                "testcase",
                "system-out",
                "system-err",
            ],
        ),
        "properties" => (&[], &[], &["property"]),
        "property" => (&["name", "value"], &[], &[]),
        "testcase" => (
            &["name"],
            &["time", "classname", "group"],
            &[
                "skipped",
                "error",
                "failure",
                "rerunFailure",
                "rerunError",
                "flakyFailure",
                "flakyError",
                "system-out",
                "system-err",
            ],
        ),
        "failure" | "error" | "skipped" => (&[], &["type", "message"], &[]),
        "system-out" | "system-err" => (&[], &[], &[]),
        _ => return None,
    })
}

/// SUREFIRE_TIME: `(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?`, for the plain
/// numbers written here: digits, then optionally a dot and digits.
fn surefire_time(s: &str) -> bool {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    int.chars().all(|c| c.is_ascii_digit()) && frac.chars().all(|c| c.is_ascii_digit())
}

fn check_node(n: roxmltree::Node<'_, '_>) {
    let name = n.tag_name().name();
    let (required, optional, children) =
        xsd_rule(name).unwrap_or_else(|| panic!("<{name}> is not in the schema"));
    for a in n.attributes() {
        assert!(
            required.contains(&a.name()) || optional.contains(&a.name()),
            "<{name} {}> is not in the schema",
            a.name()
        );
    }
    for r in required {
        assert!(n.attribute(*r).is_some(), "<{name}> needs {r}");
    }
    if let Some(t) = n.attribute("time") {
        assert!(surefire_time(t), "time={t}");
    }
    for c in n.children() {
        if c.is_element() {
            assert!(
                children.contains(&c.tag_name().name()),
                "<{}> inside <{name}>",
                c.tag_name().name()
            );
            check_node(c);
        } else if c.is_text() && !children.is_empty() {
            assert!(
                c.text().unwrap_or("").trim().is_empty(),
                "text inside <{name}>"
            );
        }
    }
    if name == "testcase" {
        let outcomes = n
            .children()
            .filter(|c| ["failure", "error", "skipped"].contains(&c.tag_name().name()))
            .count();
        assert!(outcomes <= 1, "one outcome per testcase");
    }
    if name == "testsuite" {
        let count = |tag: &str| {
            n.children()
                .filter(|c| c.tag_name().name() == "testcase")
                .filter(|c| tag.is_empty() || c.children().any(|o| o.tag_name().name() == tag))
                .count()
                .to_string()
        };
        assert_eq!(n.attribute("tests").unwrap(), count(""));
        assert_eq!(n.attribute("failures").unwrap(), count("failure"));
        assert_eq!(n.attribute("errors").unwrap(), count("error"));
        assert_eq!(n.attribute("skipped").unwrap(), count("skipped"));
    }
}

fn testcases<'a>(suite: roxmltree::Node<'a, 'a>) -> Vec<(String, Option<String>)> {
    suite
        .children()
        .filter(|c| c.tag_name().name() == "testcase")
        .map(|c| {
            let outcome = c
                .children()
                .find(|o| o.is_element() && o.tag_name().name() != "system-out")
                .map(|o| o.tag_name().name().to_string());
            (c.attribute("name").unwrap().to_string(), outcome)
        })
        .collect()
}

#[test]
fn junit_output_is_valid_and_has_one_testcase_per_tripwire_result() {
    let Some(root) = common::recorded() else {
        return;
    };
    let dir = copy_dir(&root.join("sglang-0.5/qwen3-8b"), "junit");
    let report = run(&["analyze", dir.to_str().unwrap(), "--json"]);
    let report = json::parse(&stdout(&report)).unwrap();
    let checks = report.get("checks").and_then(Json::as_array).unwrap();

    let xml_path = tmp("analyze.xml");
    let o = run(&[
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "junit",
        "--output",
        xml_path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "T8 fails: {}", stderr(&o));
    assert!(
        stdout(&o).contains("TRIPWIRE-FAILED"),
        "the text still goes to the terminal"
    );
    let xml = std::fs::read_to_string(&xml_path).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    check_node(doc.root_element());
    assert_eq!(doc.root_element().tag_name().name(), "testsuites");
    let suites: Vec<_> = doc
        .root_element()
        .children()
        .filter(|c| c.is_element())
        .collect();
    assert_eq!(suites.len(), 1);
    let cases = testcases(suites[0]);
    assert_eq!(cases.len(), checks.len(), "{cases:?}");
    for c in checks {
        let id = c.get("id").and_then(Json::as_str).unwrap();
        let name = format!("{id} {}", c.get("name").and_then(Json::as_str).unwrap());
        let want = match c.get("status").and_then(Json::as_str).unwrap() {
            "fail" => Some("failure"),
            "unknown" | "not_applicable" => Some("skipped"),
            _ => None,
        };
        let got = cases
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(got.1.as_deref(), want, "{name}");
    }
    // The failure carries the message and the evidence.
    let t8 = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("T8 concurrency-not-reached"))
        .unwrap();
    let failure = t8
        .children()
        .find(|c| c.tag_name().name() == "failure")
        .unwrap();
    assert_eq!(failure.attribute("type"), Some("tripwire-failed"));
    assert!(failure
        .attribute("message")
        .unwrap()
        .contains("never ran more than 29"));
    assert!(failure.text().unwrap().contains("peak_running: 29"));
    // The warning passes, with the warning in its output; under --strict it fails.
    let t9 = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("T9 falling-ceiling"))
        .unwrap();
    assert!(t9.children().any(|c| c.tag_name().name() == "system-out"));
    let o = run(&[
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "junit",
        "--strict",
    ]);
    let strict = stdout(&o);
    let doc = roxmltree::Document::parse(&strict).expect("junit on stdout alone");
    check_node(doc.root_element());
    let t9 = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("T9 falling-ceiling"))
        .unwrap();
    let failure = t9
        .children()
        .find(|c| c.tag_name().name() == "failure")
        .unwrap();
    assert_eq!(failure.attribute("type"), Some("warning"));
}

#[test]
fn junit_of_a_baseline_comparison_fails_exactly_the_regressions() {
    let Some(root) = common::recorded() else {
        return;
    };
    let old = root.join("sglang-0.5/qwen3-8b-own-client");
    let new = root.join("sglang-0.5/qwen3-8b");
    let o = baseline(&old, &new, &["--format", "junit"]);
    assert_eq!(o.status.code(), Some(1));
    let xml = stdout(&o);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    check_node(doc.root_element());
    let suites: Vec<_> = doc
        .root_element()
        .children()
        .filter(|c| c.is_element())
        .collect();
    let names: Vec<&str> = suites
        .iter()
        .map(|s| s.attribute("name").unwrap())
        .collect();
    assert_eq!(names, ["baseline: qwen3-8b against qwen3-8b-own-client"]);
    let baseline = testcases(suites[0]);
    let failed: Vec<&str> = baseline
        .iter()
        .filter(|(_, o)| o.as_deref() == Some("failure"))
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        failed,
        [
            "T8 concurrency-not-reached not worse",
            "output tokens/s within 5%",
            "most running at once within 5%"
        ]
    );
    // T1 failed on the old run only: not a regression, so it passes here.
    assert!(baseline.contains(&("T1 silent-preemption not worse".to_string(), None)));

    // Without --baseline, one suite per run, each with its own tripwires.
    let o = run(&[
        "compare",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
        "--format",
        "junit",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let xml = stdout(&o);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    check_node(doc.root_element());
    let names: Vec<&str> = doc
        .root_element()
        .children()
        .filter(|c| c.is_element())
        .map(|s| s.attribute("name").unwrap())
        .collect();
    assert_eq!(names, ["qwen3-8b-own-client", "qwen3-8b"]);
}

#[test]
fn a_hostile_title_and_control_characters_stay_well_formed_xml() {
    let Some(root) = common::recorded() else {
        return;
    };
    let dir = copy_dir(&root.join("vllm-0.30/qwen3-8b-start1"), "hostile");
    let title = "</testsuite><x a=\"1\"> & \u{1} \u{7}";
    let o = run(&[
        "analyze",
        dir.to_str().unwrap(),
        "--title",
        title,
        "--format",
        "junit",
    ]);
    let xml = stdout(&o);
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    check_node(doc.root_element());
    let property = doc
        .descendants()
        .find(|n| n.attribute("name") == Some("title"))
        .unwrap();
    assert_eq!(
        property.attribute("value"),
        Some("</testsuite><x a=\"1\"> & \u{FFFD} \u{FFFD}")
    );
}

// ---- GitHub annotations -------------------------------------------------------------------

#[test]
fn github_format_annotates_failures_warnings_and_cant_tell() {
    let Some(root) = common::recorded() else {
        return;
    };
    let dir = copy_dir(&root.join("sglang-0.5/qwen3-8b"), "github");
    // Without the load tool's result T15 and T22 can't tell (notices); T8 is asked for
    // by flag.
    std::fs::remove_file(dir.join("bench.json")).unwrap();
    let o = run(&[
        "analyze",
        dir.to_str().unwrap(),
        "--format",
        "github",
        "--requested",
        "32",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let commands: Vec<&str> = out.lines().filter(|l| l.starts_with("::")).collect();
    let series = format!("{}/run.series.jsonl", dir.display());
    assert!(commands.contains(
        &format!(
            "::error title=T8 concurrency-not-reached,file={series}::32 requested, but the server never ran more than 29 at once"
        )
        .as_str()
    ));
    // The runner reads %25 as %.
    assert!(commands.iter().any(|c| c.contains("3.1%25 to 3.3%25")));
    assert!(commands
        .iter()
        .any(|c| c.starts_with("::warning title=T9 falling-ceiling")));
    // Can't tell is a notice. (Not recorded by inferlint-recorder: no T16 or T18 at all.)
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("::notice title=T15 client-server-mismatch::Can't tell")),
        "{out}"
    );
    assert!(commands
        .iter()
        .any(|c| c.starts_with("::notice title=T22 failures-hidden::Can't tell")));
    // The client's timeline and latencies need the load tool's result too, said once.
    for t in ["T20 load-generator-bound", "T23 latency-mismatch"] {
        let notice =
            format!("::notice title={t}::Can't tell: the folder holds no load-tool result");
        assert!(commands.iter().any(|c| c.starts_with(&notice)), "{out}");
    }
    assert!(!out.contains("T16") && !out.contains("T18"), "{out}");
    assert_eq!(commands.len(), 6, "{out}");
    // The text follows for the log.
    assert!(out.contains("[ T8] TRIPWIRE-FAILED"));
}

#[test]
fn json_and_a_stdout_format_together_are_refused() {
    let o = run(&["analyze", ".", "--json", "--format", "junit"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--output"));
}

#[test]
fn outputs_never_overwrite_an_input_nor_follow_a_link() {
    let Some(root) = common::recorded() else {
        return;
    };
    let a = copy_dir(&root.join("vllm-0.30/qwen3-8b-start1"), "out-a");
    let b = copy_dir(&root.join("vllm-0.30/live"), "out-b");
    let boot = std::fs::read_dir(&a)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .expect("a boot log in the copy");
    let before = std::fs::read(&boot).unwrap();
    for flag in ["--html", "--output"] {
        let mut args = vec!["compare", a.to_str().unwrap(), b.to_str().unwrap(), flag];
        args.push(boot.to_str().unwrap());
        if flag == "--output" {
            args.extend(["--format", "json"]);
        }
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("an input of this comparison"),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read(&boot).unwrap(),
            before,
            "{flag} left the input alone"
        );
    }

    // A link at the output is refused and its target untouched.
    let victim = tmp("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let link = tmp("link.xml");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let o = run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "junit",
        "--output",
        link.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

/// Two starts of one engine whose boot logs differ in settings that change speed or
/// capacity: a `!` row for each, naming the flag and both values.
#[test]
fn engine_settings_that_differ_are_flagged_and_named() {
    let Some(root) = common::recorded() else {
        return;
    };
    let a = copy_dir(&root.join("vllm-0.30/qwen3-8b-start1"), "settings-a");
    let b = copy_dir(&root.join("vllm-0.30/qwen3-8b-start1"), "settings-b");
    let log = b.join("boot.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let before = "'gpu_memory_utilization': 0.93, 'max_num_seqs': 32}";
    assert!(
        text.contains(before),
        "the fixture's non-default args changed"
    );
    let changed = text.replace(
        before,
        "'gpu_memory_utilization': 0.93, 'max_num_seqs': 8, 'kv_cache_dtype': 'fp8', \
         'enforce_eager': True, 'tensor_parallel_size': 2}",
    );
    std::fs::write(&log, changed).unwrap();
    let (sa, sb) = (a.display().to_string(), b.display().to_string());
    let o = run(&["compare", &sa, &sb, "--json"]);
    let doc = json::parse(&stdout(&o)).expect("compare --json is JSON");
    for (key, want) in [
        ("setting_kv_cache_dtype", ["default", "kv_cache_dtype=fp8"]),
        (
            "setting_running_limit",
            ["max_num_seqs=32", "max_num_seqs=8"],
        ),
        ("setting_eager", ["default", "enforce_eager=true"]),
        (
            "setting_tensor_parallel",
            ["default", "tensor_parallel_size=2"],
        ),
    ] {
        assert_eq!(texts(&row(&doc, key)), want, "{key}");
    }
    // Settings both runs share get no row.
    let rows = doc.get("rows").and_then(Json::as_array).unwrap();
    assert!(!rows
        .iter()
        .any(|r| r.get("key").and_then(Json::as_str) == Some("setting_quantization")));
    // The terminal marks each with `!` and says what it means.
    let o = run(&["compare", &sa, &sb]);
    let out = stdout(&o);
    for line in [
        "! KV cache dtype",
        "! Running limit",
        "! Eager mode (no CUDA graphs)",
        "! Tensor parallel size",
    ] {
        assert!(out.lines().any(|l| l.starts_with(line)), "{line}\n{out}");
    }
    let reading = out
        .lines()
        .find(|l| l.trim_start().starts_with("- Running limit: "))
        .unwrap_or_else(|| panic!("no reading of the running limit\n{out}"));
    assert!(
        reading.contains("has max_num_seqs=8 where")
            && reading.ends_with("has max_num_seqs=32: the other rows are not like for like"),
        "{reading}"
    );
}
