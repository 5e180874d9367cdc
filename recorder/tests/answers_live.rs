//! T21 and T22 recorded end to end against the engine simulator at its real speed, each
//! verdict flipped by one change to the same run: answers asked without `--ignore-eos`
//! end on the model's end-of-sequence token (T21 warns) and with it run their full length
//! (T21 passes); prompts longer than `--max-model-len` are refused with HTTP 400 while the
//! load tool's figures count the rest (T22 fails), and under a context that fits nothing
//! fails (T22 passes).

mod common;
use common::*;

use analyzer::Status;

const MODEL: &str = "/root/models/Qwen3-8B";

/// `vllm bench serve` of 12 requests, 4 at once, of `input` prompt tokens and `output`
/// output tokens, then `extra` flags. A refused test request fails the load within 5 s.
fn load(base: &str, (input, output): (u32, u32), extra: &[&str]) -> Vec<String> {
    let (input, output) = (input.to_string(), output.to_string());
    let mut v: Vec<String> = [
        "vllm",
        "bench",
        "serve",
        "--model",
        MODEL,
        "--base-url",
        base,
        "--dataset-name",
        "random",
        "--random-input-len",
        &input,
        "--random-output-len",
        &output,
        "--ready-check-timeout-sec",
        "5",
        "--num-prompts",
        "12",
        "--max-concurrency",
        "4",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// Records one run at the simulator's real speed, the server started with `serve_extra`.
fn record(
    name: &str,
    serve_extra: &str,
    lens: (u32, u32),
    extra: &[&str],
) -> (World, analyzer::Report) {
    let w = World::new(name);
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let serve =
        format!("vllm serve {MODEL} --port {port} --max-num-seqs 32 --sim-speed 1 {serve_extra}");
    let mut c = w.recorder();
    c.args(["record", "-o", "run", "--serve", serve.trim(), "--"])
        .args(load(&base, lens, extra));
    let report = recorded_report(&w, c, 240);
    (w, report)
}

#[test]
fn t21_answers_ended_on_end_of_sequence_warn_and_full_ones_pass() {
    // The simulated model ends an answer on its own after 32 to 127 tokens: 256 asked.
    let (_w, full) = record("t21-full", "", (88, 256), &["--ignore-eos"]);
    let t21 = check_of(&full, "T21");
    assert_eq!(t21.status, Status::Pass, "{}", t21.message);
    let (_w, eos) = record("t21-eos", "", (88, 256), &[]);
    let t21 = check_of(&eos, "T21");
    assert_eq!(t21.status, Status::Warn, "{}", t21.message);
}

#[test]
fn t22_prompts_past_the_context_fail_and_prompts_that_fit_pass() {
    let spread = ["--ignore-eos", "--random-range-ratio", "0.5"];
    let (_w, fits) = record("t22-fits", "--max-model-len 1024", (150, 8), &spread);
    let t22 = check_of(&fits, "T22");
    assert_eq!(t22.status, Status::Pass, "{}", t22.message);
    // Prompts of 75 to 225 tokens under a context of 160: the longer ones are refused.
    let (_w, refused) = record("t22-refused", "--max-model-len 160", (150, 8), &spread);
    let t22 = check_of(&refused, "T22");
    assert_eq!(t22.status, Status::Fail, "{}", t22.message);
    assert!(t22.message.contains("Bad Request"), "{}", t22.message);
}
