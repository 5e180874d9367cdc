//! Writes a synthetic long recording of a vLLM server (shared by the benchmark and the
//! `long_run` test): a series at 4 Hz whose KV gauge moves in steps of 1/42, with
//! preemption bursts, plus before/after snapshots and a boot log line set.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::Path;

const BLOCKS: u64 = 42;

fn snapshot_text(gen: f64, prompt: f64, preempt: f64, done: f64) -> String {
    let mut t = String::new();
    let l = "engine=\"0\",model_name=\"m\"";
    let _ = writeln!(t, "# TYPE vllm:num_requests_running gauge");
    let _ = writeln!(t, "vllm:num_requests_running{{{l}}} 0.0");
    let _ = writeln!(t, "vllm:num_requests_waiting{{{l}}} 0.0");
    let _ = writeln!(t, "vllm:kv_cache_usage_perc{{{l}}} 0.0");
    for (name, v) in [
        ("vllm:num_preemptions", preempt),
        ("vllm:generation_tokens", gen),
        ("vllm:prompt_tokens", prompt),
    ] {
        let _ = writeln!(t, "{name}_total{{{l}}} {v:.1}");
        let _ = writeln!(t, "{name}_created{{{l}}} 1.79e+09");
    }
    for r in ["length", "stop", "repetition", "abort", "error"] {
        let v = if r == "length" { done } else { 0.0 };
        let _ = writeln!(t, "vllm:request_success_total{{engine=\"0\",finished_reason=\"{r}\",model_name=\"m\"}} {v:.1}");
    }
    let _ = writeln!(
        t,
        "vllm:cache_config_info{{block_size=\"784\",engine=\"0\",num_gpu_blocks=\"{}\"}} 1.0",
        BLOCKS + 1
    );
    t
}

fn snapshot_json(wall: f64, mono: i64, text: &str) -> String {
    let mut esc = String::new();
    for c in text.chars() {
        match c {
            '"' => esc.push_str("\\\""),
            '\\' => esc.push_str("\\\\"),
            '\n' => esc.push_str("\\n"),
            c => esc.push(c),
        }
    }
    format!(
        "{{\n \"schema\": \"inferlint.snapshot/1\",\n \"url\": \"http://127.0.0.1:8000/metrics\",\n \"t_wall\": {wall},\n \"t_mono_ns\": {mono},\n \"latency_s\": 0.004,\n \"text\": \"{esc}\"\n}}\n"
    )
}

/// Writes `samples` readings (4 per second) into `dir`. Returns the folder's total size.
pub fn write(dir: &Path, samples: usize) -> std::io::Result<u64> {
    std::fs::create_dir_all(dir)?;
    let (wall0, mono0) = (1_790_000_000.0_f64, 1_000_000_000_000_i64);
    // Written as it is made: a week's series is over 500 MB.
    let mut out = BufWriter::new(File::create(dir.join("run.series.jsonl"))?);
    let mut series = String::with_capacity(1 << 16);
    series.push_str("{\"schema\": \"inferlint.series/1\", \"url\": \"http://127.0.0.1:8000\", \"interval_s\": 0.25, \"engine\": \"vllm\"}\n");
    let (mut gen, mut prompt, mut preempt) = (0.0_f64, 0.0_f64, 0.0_f64);
    let mut done = 0.0_f64;
    for i in 0..samples {
        // A 90 s cycle: ten requests grow until the cache is full, some are preempted.
        let phase = i % 360;
        let running = if phase < 340 {
            10 - (phase / 120) as u64
        } else {
            0
        };
        let used = if running == 0 {
            0
        } else {
            (20 + phase as u64 / 16).min(BLOCKS)
        };
        let waiting = if phase < 340 {
            22 + (phase / 120) as u64
        } else {
            0
        };
        if phase == 120 || phase == 240 {
            preempt += 1.0;
        }
        if phase == 359 {
            done += 32.0;
        }
        gen += running as f64;
        prompt += if phase == 0 { 2816.0 } else { 0.0 };
        let t = i as f64 * 0.256;
        let _ = writeln!(
            series,
            "{{\"t_wall\": {:.6}, \"t_mono_ns\": {}, \"latency_s\": 0.004, \"running\": {:.1}, \"waiting\": {:.1}, \"kv_usage\": {}, \"preemptions\": {:.1}, \"generation_tokens\": {:.1}, \"prompt_tokens\": {:.1}}}",
            wall0 + t,
            mono0 + (t * 1e9) as i64,
            running as f64,
            waiting as f64,
            used as f64 / BLOCKS as f64,
            preempt,
            gen,
            prompt
        );
        if series.len() > 60_000 {
            out.write_all(series.as_bytes())?;
            series.clear();
        }
    }
    out.write_all(series.as_bytes())?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    let span = samples as f64 * 0.256;
    let before = snapshot_text(0.0, 0.0, 0.0, 0.0);
    let after = snapshot_text(gen, prompt, preempt, done);
    std::fs::write(
        dir.join("before.snapshot.json"),
        snapshot_json(wall0 - 0.1, mono0 - 100_000_000, &before),
    )?;
    std::fs::write(
        dir.join("after.snapshot.json"),
        snapshot_json(wall0 + span, mono0 + (span * 1e9) as i64, &after),
    )?;
    let mut total = 0;
    for e in std::fs::read_dir(dir)?.flatten() {
        total += e.metadata()?.len();
    }
    Ok(total)
}
