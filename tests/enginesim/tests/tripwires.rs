//! What the simulator gives the newer tripwires: a fake `nvidia-smi` whose clocks, power,
//! temperature and throttle reasons follow the engine (idle, busy, throttled by the
//! `--sim-gpu-throttle` fault) and that loops with `-lms`; prefix-cache counters that
//! count repeated prompt blocks; and the one-time warm-up cost with its log lines.

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const QUERY: &str = "--query-gpu=index,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,utilization.gpu,clocks_event_reasons.gpu_idle,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_thermal_slowdown";

fn smi(s: &Sim, args: &[&str]) -> std::process::Output {
    Command::new(s.dir.join("bin/nvidia-smi"))
        .args(args)
        .env("INFERLINT_SIM_GPU_STATE", s.dir.join("gpu"))
        .output()
        .unwrap()
}

fn sample(s: &Sim) -> Vec<String> {
    let o = smi(s, &[QUERY, "--format=csv,noheader,nounits"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .trim()
        .split(", ")
        .map(str::to_string)
        .collect()
}

fn completion(port: u16, prompt: &str, max_tokens: u32) {
    let body = format!(
        r#"{{"model":"m","prompt":"{prompt}","max_tokens":{max_tokens},"ignore_eos":true}}"#
    );
    let (st, text) = post(port, "/v1/completions", &body).unwrap();
    assert_eq!(st, 200, "{text}");
}

#[test]
fn the_card_idles_works_and_throttles_with_the_engine() {
    let port = free_port();
    let p = port.to_string();
    // Throttled after 2 simulated seconds of work; 50 × speed.
    let mut s = Sim::start(
        "smi-throttle",
        "vllm",
        &[
            "serve",
            "m",
            "--port",
            &p,
            "--sim-speed",
            "50",
            "--sim-gpu-throttle",
            "2",
        ],
        port,
    );
    s.wait_ready("/health");
    let idle = sample(&s);
    assert_eq!(idle[1], "210", "{idle:?}");
    assert_eq!((idle[2].as_str(), idle[4].as_str()), ("3105", "450.00"));
    assert_eq!(idle[7], "Active", "gpu_idle: {idle:?}");
    // Long requests in the background; the card reads busy, then throttled.
    let worker = std::thread::spawn(move || {
        for _ in 0..4 {
            completion(port, "a b c d", 400);
        }
    });
    let mut seen_busy = false;
    let mut seen_throttled = false;
    let end = Instant::now() + Duration::from_secs(20);
    while Instant::now() < end && !(seen_busy && seen_throttled) {
        let r = sample(&s);
        seen_busy |= r[1] == "2730" && r[8] == "Active" && r[9] == "Not Active";
        seen_throttled |= r[1] == "1395" && r[9] == "Active" && r[5] == "88";
        std::thread::sleep(Duration::from_millis(20));
    }
    worker.join().unwrap();
    assert!(
        seen_busy && seen_throttled,
        "busy {seen_busy}, throttled {seen_throttled}"
    );
    assert!(wait_until(5, || sample(&s)[1] == "210"), "idle again");
}

#[test]
fn nvidia_smi_loops_with_lms_and_old_drivers_answer_throttle_reasons() {
    let dir = tmpdir("smi-loop");
    let bin = bin_dir(&dir);
    let mut child = Command::new(bin.join("nvidia-smi"))
        .args([QUERY, "--format=csv,noheader,nounits", "-lms", "50"])
        .env("INFERLINT_SIM_GPU_STATE", dir.join("gpu"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let t0 = Instant::now();
    for _ in 0..4 {
        let l = lines.next().unwrap().unwrap();
        assert!(l.starts_with("0, 210, 3105, "), "{l}");
    }
    assert!(t0.elapsed() >= Duration::from_millis(140), "paced by -lms");
    let _ = child.kill();
    let _ = child.wait();
    // An old driver refuses the newer field names and answers the older ones.
    let old = |q: &str| {
        Command::new(bin.join("nvidia-smi"))
            .args([q, "--format=csv,noheader,nounits"])
            .env("INFERLINT_SIM_GPU_STATE", dir.join("gpu"))
            .env("INFERLINT_SIM_GPU_OLD_DRIVER", "1")
            .output()
            .unwrap()
    };
    assert!(!old("--query-gpu=clocks_event_reasons.sw_power_cap")
        .status
        .success());
    let o = old("--query-gpu=clocks_throttle_reasons.sw_power_cap");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "Not Active");
    let _ = std::fs::remove_dir_all(&dir);
}

fn counter(port: u16, name: &str) -> f64 {
    total(&metrics(port, "/metrics"), name)
}

#[test]
fn repeated_prompt_blocks_are_counted_as_prefix_cache_hits() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "prefix",
        "vllm",
        &[
            "serve",
            "m",
            "--port",
            &p,
            "--sim-speed",
            "50",
            "--block-size",
            "4",
        ],
        port,
    );
    s.wait_ready("/health");
    // 10 words: two full blocks of 4; the repeat finds both (8 tokens).
    let words = "a b c d e f g h i j";
    completion(port, words, 2);
    assert_eq!(counter(port, "vllm:prefix_cache_hits_total"), 0.0);
    completion(port, words, 2);
    assert_eq!(counter(port, "vllm:prefix_cache_hits_total"), 8.0);
    assert_eq!(counter(port, "vllm:prefix_cache_queries_total"), 20.0);
    // A shared first block only.
    completion(port, "a b c d x y z w v u", 2);
    assert_eq!(counter(port, "vllm:prefix_cache_hits_total"), 12.0);
    drop(s);

    // With prefix caching off, nothing is looked up.
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "prefix-off",
        "vllm",
        &[
            "serve",
            "m",
            "--port",
            &p,
            "--sim-speed",
            "50",
            "--no-enable-prefix-caching",
        ],
        port,
    );
    s.wait_ready("/health");
    completion(port, words, 2);
    completion(port, words, 2);
    assert_eq!(counter(port, "vllm:prefix_cache_queries_total"), 0.0);
}

#[test]
fn sglang_counts_its_cache_hits_by_prefill_mode() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "prefix-sglang",
        "sglang",
        &[
            "serve",
            "--model-path",
            "m",
            "--port",
            &p,
            "--enable-metrics",
            "--sim-speed",
            "50",
        ],
        port,
    );
    s.wait_ready("/health");
    let words = "a b c d e f g h i j k l m n o p q r s t";
    for _ in 0..2 {
        completion(port, words, 2);
    }
    let m = metrics(port, "/metrics");
    let mode = |k: &str| m.total("sglang:prefill_effective_tokens_total", &[("mode", k)]);
    assert!(
        mode("device_hit").unwrap() > 0.0,
        "{:?}",
        mode("device_hit")
    );
    assert!(mode("input").unwrap() > 0.0);
    assert!(s.log_text().contains("#cached-token: "));
}

#[test]
fn warm_up_costs_once_per_larger_batch_and_is_logged() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Sim::start(
        "warmup",
        "vllm",
        &[
            "serve",
            "m",
            "--port",
            &p,
            "--sim-speed",
            "10",
            "--sim-warmup-cost",
            "5",
        ],
        port,
    );
    s.wait_ready("/health");
    let timed = || {
        let t = Instant::now();
        completion(port, "a b c", 2);
        t.elapsed()
    };
    // 5 simulated seconds at 10× speed: half a second, once.
    let first = timed();
    let second = timed();
    assert!(first >= Duration::from_millis(450), "{first:?}");
    assert!(second < Duration::from_millis(300), "{second:?}");
    let log = s.log_text();
    assert_eq!(
        log.matches("Compiling a graph for compile range (1, 1) takes 5.00 s")
            .count(),
        1,
        "{log}"
    );
}
