//! The `vllm bench serve` personality: a real streaming load client that prints what the
//! real one prints (including `Initial test run completed.`) and saves vLLM's result JSON
//! (with `--save-detailed`, the per-request lists too).
//!
//! Prompts are as `--dataset-name random` makes them: each request's own random tokens
//! (here: words, one token each), after `--random-prefix-len` tokens shared by every
//! request. The initial test request and the `--num-warmups` requests repeat the first
//! prompt, at most `--max-concurrency` at once, as the real client does.
//!
//! `--request-rate R` sends on a Poisson schedule of R a second (vLLM's default
//! burstiness of 1), seeded by `--seed`. Faults of a client, for T20 and T23 (flags the
//! real client does not have, each affecting only the measured requests):
//! - `--sim-client-cpu-ms D`: before each request goes out, the client spends D ms of CPU
//!   (one core for all requests, as one Python event loop does), so it sends late;
//! - `--sim-client-queue-ms D`: each request waits D ms inside the client after its timer
//!   started (a client-side queue, or a proxy holding it): its first token and latency
//!   include time the server never saw;
//! - `--sim-ttft-at-headers`: the first token is timed when the reply's headers arrive,
//!   before the server produced any token.
//!
//! `--random-range-ratio` (a number, or `{"input": r, "output": r}`) spreads
//! each request's lengths over `len·(1±r)`. Requests ask the server to ignore
//! end-of-sequence only with `--ignore-eos` (as the real client did before it made that
//! the default for random prompts); a failed request's error is the HTTP reason alone,
//! as the real client keeps it. The initial test request and the `--num-warmups`
//! requests repeat the first prompt, at most `--max-concurrency` at once, as the real
//! client does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use crate::args::Args;

#[derive(Debug, Default, Clone)]
struct Outcome {
    ok: bool,
    /// The monotonic clock at this request's start, in seconds (`monotonic_s`).
    start: f64,
    ttft: f64,
    latency: f64,
    itls: Vec<f64>,
    output_tokens: usize,
    token_times: Vec<f64>,
    error: String,
}

/// The client faults asked for (see the module's comment).
#[derive(Debug, Clone, Copy, Default)]
struct Faults {
    cpu: Option<Duration>,
    queue: Option<Duration>,
    ttft_at_headers: bool,
}

impl Faults {
    fn read(a: &Args) -> anyhow::Result<Faults> {
        let ms = |k: &str| -> anyhow::Result<Option<Duration>> {
            Ok(a.num::<f64>(k)?
                .filter(|x| *x > 0.0)
                .map(|x| Duration::from_secs_f64(x / 1000.0)))
        };
        Ok(Faults {
            cpu: ms("sim-client-cpu-ms")?,
            queue: ms("sim-client-queue-ms")?,
            ttft_at_headers: a.has("sim-ttft-at-headers"),
        })
    }
}

/// One core's worth of client CPU: requests take turns spending it.
static CLIENT_CORE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Spends `d` of CPU on the shared core, off the async workers.
async fn spend_cpu(d: Duration) {
    let _ = tokio::task::spawn_blocking(move || {
        let _core = CLIENT_CORE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let until = Instant::now() + d;
        let mut x = 0u64;
        while Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    })
    .await;
}

/// Seconds after the first send at which each of `n` requests is due, on a Poisson
/// schedule of `rate` a second (exponential gaps), from `seed`.
fn schedule(n: usize, rate: f64, seed: u64) -> Vec<f64> {
    let mut state = seed ^ 0x5EED_5EED;
    let mut at = 0.0;
    (0..n)
        .map(|i| {
            if i > 0 {
                let u = ((splitmix(&mut state) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
                at += -u.ln() / rate;
            }
            at
        })
        .collect()
}

struct Target {
    host: String,
    port: u16,
    path: String,
}

fn target(a: &Args) -> anyhow::Result<Target> {
    let endpoint = a.get("endpoint").unwrap_or("/v1/completions").to_string();
    if let Some(u) = a.get("base-url") {
        let rest = u
            .strip_prefix("http://")
            .ok_or_else(|| anyhow::anyhow!("--base-url: only http:// is simulated"))?;
        let hostport = rest.split('/').next().unwrap_or(rest);
        let (h, p) = hostport
            .rsplit_once(':')
            .map(|(h, p)| (h.to_string(), p.parse().unwrap_or(80)))
            .unwrap_or((hostport.to_string(), 80));
        return Ok(Target {
            host: h,
            port: p,
            path: endpoint,
        });
    }
    Ok(Target {
        host: a.get("host").unwrap_or("127.0.0.1").to_string(),
        port: a.num("port")?.unwrap_or(8000),
        path: endpoint,
    })
}

/// One step of splitmix64: the random numbers behind the prompts.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `n` random words from stream `stream` of `seed`: the simulated servers count one token
/// per word, so the prompt has exactly `n` tokens.
fn random_words(n: usize, seed: u64, stream: u64) -> Vec<String> {
    const W: &[&str] = &[
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    let mut state = seed ^ stream.wrapping_mul(0xD134_2543_DE82_EF95);
    (0..n)
        .map(|_| {
            let x = splitmix(&mut state);
            format!("{}{}", W[(x % 8) as usize], (x >> 3) % 512)
        })
        .collect()
}

/// `--random-range-ratio` as vLLM reads it: one number for both lengths, or a JSON
/// object `{"input": r, "output": r}`; 0 when not given.
fn range_ratios(a: &Args) -> anyhow::Result<(f64, f64)> {
    let Some(v) = a.get("random-range-ratio") else {
        return Ok((0.0, 0.0));
    };
    if let Ok(r) = v.parse::<f64>() {
        return Ok((r, r));
    }
    let j: Value = serde_json::from_str(v)
        .map_err(|_| anyhow::anyhow!("--random-range-ratio: invalid value: '{v}'"))?;
    let of = |k: &str| j.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    Ok((of("input"), of("output")))
}

/// Request `index`'s length: uniform over the whole numbers of [len·(1−r), len·(1+r)],
/// as vLLM's random dataset draws it (`stream` keeps input and output apart).
fn spread(len: usize, r: f64, seed: u64, index: usize, stream: u64) -> usize {
    if r <= 0.0 {
        return len;
    }
    let lo = (len as f64 * (1.0 - r)).floor().max(1.0) as u64;
    let hi = (len as f64 * (1.0 + r)).ceil() as u64;
    let mut state = seed ^ (index as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407) ^ stream;
    (lo + splitmix(&mut state) % (hi - lo + 1)) as usize
}

/// Request `index`'s prompt: the shared prefix, then its own `input_len` words.
fn prompt(prefix: &[String], input_len: usize, seed: u64, index: usize) -> String {
    let own = random_words(input_len, seed, index as u64 + 1);
    prefix
        .iter()
        .chain(own.iter())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// What every request of a run asks: its length, and whether the server is to run past
/// the model's end-of-sequence token (`--ignore-eos`; without it the answer may end
/// early, as with the real client before it ignored end-of-sequence by default).
#[derive(Clone, Copy)]
struct Asked {
    output_len: usize,
    ignore_eos: bool,
}

async fn one(
    t: Arc<Target>,
    model: String,
    text: Arc<String>,
    asked: Asked,
    t0: Instant,
    faults: Faults,
) -> Outcome {
    let mut out = Outcome::default();
    let chat = t.path.contains("chat");
    let output_len = asked.output_len;
    let mut body = if chat {
        json!({"model": model, "messages": [{"role": "user", "content": text.as_str()}],
            "max_completion_tokens": output_len, "stream": true,
            "stream_options": {"include_usage": true}, "temperature": 0.0})
    } else {
        json!({"model": model, "prompt": text.as_str(), "max_tokens": output_len, "stream": true,
            "stream_options": {"include_usage": true}, "temperature": 0.0})
    };
    if asked.ignore_eos {
        body["ignore_eos"] = json!(true);
    }
    if let Some(d) = faults.cpu {
        spend_cpu(d).await;
    }
    let start = Instant::now();
    out.start = monotonic_s();
    let r: anyhow::Result<()> = async {
        if let Some(d) = faults.queue {
            tokio::time::sleep(d).await;
        }
        let stream = tokio::net::TcpStream::connect((t.host.as_str(), t.port)).await?;
        let _ = stream.set_nodelay(true);
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        let req = hyper::Request::post(&t.path)
            .header("host", format!("{}:{}", t.host, t.port))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body.to_string())))?;
        let resp = sender.send_request(req).await?;
        let mut headers_at = faults.ttft_at_headers.then(Instant::now);
        let status = resp.status();
        let mut b = resp.into_body();
        if !status.is_success() {
            // The real client keeps only the HTTP reason ("Bad Request"), not the body.
            let _ = b.collect().await?;
            anyhow::bail!("{}", status.canonical_reason().unwrap_or(""));
        }
        let mut buf = String::new();
        let mut last = start;
        let mut usage_tokens = None;
        let mut chunks = 0usize;
        while let Some(frame) = b.frame().await {
            let frame = frame?;
            let Some(data) = frame.data_ref() else {
                continue;
            };
            buf.push_str(&String::from_utf8_lossy(data));
            while let Some(pos) = buf.find("\n\n") {
                let ev: String = buf.drain(..pos + 2).collect();
                let Some(payload) = ev.trim().strip_prefix("data: ") else {
                    continue;
                };
                if payload == "[DONE]" {
                    continue;
                }
                let v: Value = serde_json::from_str(payload)?;
                if let Some(e) = v.get("error") {
                    anyhow::bail!("{e}");
                }
                if let Some(n) = v
                    .pointer("/usage/completion_tokens")
                    .and_then(Value::as_u64)
                {
                    usage_tokens = Some(n as usize);
                }
                let text = v
                    .pointer("/choices/0/text")
                    .or_else(|| v.pointer("/choices/0/delta/content"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !text.is_empty() {
                    let now = Instant::now();
                    if chunks == 0 {
                        out.ttft = (headers_at.take().unwrap_or(now) - start).as_secs_f64();
                    } else {
                        out.itls.push((now - last).as_secs_f64());
                    }
                    out.token_times.push((now - t0).as_secs_f64());
                    last = now;
                    chunks += 1;
                }
            }
        }
        out.output_tokens = usage_tokens.unwrap_or(chunks);
        Ok(())
    }
    .await;
    out.latency = start.elapsed().as_secs_f64();
    match r {
        Ok(()) => out.ok = true,
        Err(e) => out.error = e.to_string(),
    }
    out
}

/// `CLOCK_MONOTONIC` in seconds: what `vllm bench serve` stamps each request's start with
/// (`time.perf_counter()` on Linux), the clock the recorder's readings carry too.
fn monotonic_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}
fn std(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
}
/// numpy.percentile with linear interpolation.
fn pct(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let r = p / 100.0 * (s.len() - 1) as f64;
    let (lo, hi) = (r.floor() as usize, r.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (r - lo as f64)
}

pub fn main(argv: &[String]) -> anyhow::Result<i32> {
    let a = Args::parse(argv);
    let dataset = a.get("dataset-name").unwrap_or("random");
    anyhow::ensure!(
        dataset == "random",
        "--dataset-name {dataset}: only 'random' is simulated"
    );
    let rate_text = a.get("request-rate").unwrap_or("inf").to_string();
    let rate: Option<f64> = match rate_text.as_str() {
        "inf" => None,
        r => Some(
            r.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| anyhow::anyhow!("--request-rate {r}: a positive number or 'inf'"))?,
        ),
    };
    let faults = Faults::read(&a)?;
    let model = match a.get("model") {
        Some(m) => m.to_string(),
        None => anyhow::bail!("--model is required by the simulated client"),
    };
    let served = a.get("served-model-name").unwrap_or(&model).to_string();
    let input_len: usize = a.num("random-input-len")?.unwrap_or(1024);
    let prefix_len: usize = a.num("random-prefix-len")?.unwrap_or(0);
    let seed: u64 = a.num("seed")?.unwrap_or(0);
    let output_len: usize = a.num("random-output-len")?.unwrap_or(128);
    let (input_ratio, output_ratio) = range_ratios(&a)?;
    let num_prompts: usize = a.num("num-prompts")?.unwrap_or(1000);
    let max_conc: Option<usize> = a.num("max-concurrency")?;
    let warmups: usize = a.num("num-warmups")?.unwrap_or(0);
    let ready_timeout: f64 = a.num("ready-check-timeout-sec")?.unwrap_or(600.0);
    let t = Arc::new(target(&a)?);
    println!("Namespace(subparser='bench', bench_type='serve', backend='{}', base_url={}, host='{}', port={}, endpoint='{}', dataset_name='{dataset}', max_concurrency={}, model='{model}', num_prompts={num_prompts}, request_rate={rate_text}, burstiness=1.0, random_input_len={input_len}, random_output_len={output_len}, ignore_eos={}, save_result={}, num_warmups={warmups})",
        a.get("backend").unwrap_or("openai"), a.get("base-url").map(|u| format!("'{u}'")).unwrap_or("None".into()), t.host, t.port, t.path,
        max_conc.map(|c| c.to_string()).unwrap_or("None".into()), if a.has("ignore-eos") { "True" } else { "False" }, if a.has("save-result") { "True" } else { "False" });
    let rt = crate::server::runtime()?;
    let prefix = random_words(prefix_len, seed, 0);
    let n = num_prompts.max(1);
    let input_lens: Vec<usize> = (0..n)
        .map(|i| spread(input_len, input_ratio, seed, i, 1))
        .collect();
    let prompts: Vec<Arc<String>> = (0..n)
        .map(|i| Arc::new(prompt(&prefix, input_lens[i], seed, i)))
        .collect();
    let prompt_lens: Vec<usize> = input_lens.iter().map(|l| prefix_len + l).collect();
    let asks: Vec<Asked> = (0..n)
        .map(|i| Asked {
            output_len: spread(output_len, output_ratio, seed, i, 2),
            ignore_eos: a.has("ignore-eos"),
        })
        .collect();
    let asked = asks[0];
    rt.block_on(async move {
        let t0 = Instant::now();
        let test = prompts[0].clone();
        if ready_timeout > 0.0 {
            println!("Starting initial single prompt test run...");
            println!("Waiting for endpoint to become up in {} seconds", ready_timeout as u64);
            let deadline = Instant::now() + Duration::from_secs_f64(ready_timeout);
            loop {
                let o = one(t.clone(), served.clone(), test.clone(), asked, t0, Faults::default()).await;
                if o.ok {
                    break;
                }
                if Instant::now() > deadline {
                    anyhow::bail!("Initial test run failed - Please make sure benchmark arguments are correctly specified. Error: {}", o.error);
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            println!("Initial test run completed. Starting main benchmark run...");
        } else {
            println!("Skipping endpoint ready check.");
        }
        if warmups > 0 {
            println!("Warming up with {warmups} requests...");
            let sem = Arc::new(Semaphore::new(max_conc.unwrap_or(warmups).max(1)));
            let mut hs = Vec::new();
            for _ in 0..warmups {
                let (t, m, text, sem) = (t.clone(), served.clone(), test.clone(), sem.clone());
                hs.push(tokio::spawn(async move {
                    let _p = sem.acquire_owned().await.expect("semaphore");
                    one(t, m, text, asked, t0, Faults::default()).await
                }));
            }
            for h in hs {
                let _ = h.await;
            }
            println!("Warmup run completed.");
        }
        println!("Traffic request rate: {rate_text}");
        println!("Burstiness factor: 1.0 (Poisson process)");
        println!("Maximum request concurrency: {}", max_conc.map(|c| c.to_string()).unwrap_or("None".into()));
        let sem = Arc::new(Semaphore::new(max_conc.unwrap_or(num_prompts).max(1)));
        let inflight = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let bench_start = Instant::now();
        let due = rate.map(|r| schedule(num_prompts, r, seed));
        let mut hs = Vec::new();
        for (i, (text, asked)) in prompts.iter().take(num_prompts).cloned().zip(asks.iter().copied()).enumerate() {
            if let Some(at) = due.as_ref().map(|d| d[i]) {
                tokio::time::sleep_until((bench_start + Duration::from_secs_f64(at)).into()).await;
            }
            let (t, m, sem, inflight, peak) = (t.clone(), served.clone(), sem.clone(), inflight.clone(), peak.clone());
            hs.push(tokio::spawn(async move {
                let _p = sem.acquire_owned().await.expect("semaphore");
                let n = inflight.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                peak.fetch_max(n, std::sync::atomic::Ordering::SeqCst);
                let o = one(t, m, text, asked, bench_start, faults).await;
                inflight.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                o
            }));
        }
        let mut outs = Vec::new();
        let mut done = 0;
        for h in hs {
            outs.push(h.await?);
            done += 1;
            if done == num_prompts || done % (num_prompts / 4).max(1) == 0 {
                let el = bench_start.elapsed().as_secs_f64();
                println!("Benchmarking: {:>3}%| {done}/{num_prompts} [{:02}:{:02}]", done * 100 / num_prompts.max(1), el as u64 / 60, el as u64 % 60);
            }
        }
        let duration = bench_start.elapsed().as_secs_f64();
        let good: Vec<&Outcome> = outs.iter().filter(|o| o.ok).collect();
        let completed = good.len();
        let failed = outs.len() - completed;
        let total_in: usize = outs.iter().zip(&prompt_lens).filter(|(o, _)| o.ok).map(|(_, l)| l).sum();
        let total_out: usize = good.iter().map(|o| o.output_tokens).sum();
        let ttfts: Vec<f64> = good.iter().map(|o| o.ttft * 1000.0).collect();
        let tpots: Vec<f64> = good.iter().filter(|o| o.output_tokens > 1).map(|o| (o.latency - o.ttft) / (o.output_tokens - 1) as f64 * 1000.0).collect();
        let itls: Vec<f64> = good.iter().flat_map(|o| o.itls.iter().map(|x| x * 1000.0)).collect();
        let mut per_sec = std::collections::BTreeMap::<u64, usize>::new();
        for o in &good {
            for tt in &o.token_times {
                *per_sec.entry(*tt as u64).or_insert(0) += 1;
            }
        }
        if failed > 0 {
            for o in outs.iter().filter(|o| !o.ok).take(3) {
                eprintln!("Request failed: {}", o.error);
            }
        }
        println!("Total failed requests: {failed}");
        println!("============ Serving Benchmark Result ============");
        println!("{:<40} {:<10}", "Successful requests:", completed);
        println!("{:<40} {:<10}", "Failed requests:", failed);
        println!("{:<40} {:<10}", "Maximum request concurrency:", max_conc.map(|c| c.to_string()).unwrap_or("None".into()));
        println!("{:<40} {:<10.2}", "Benchmark duration (s):", duration);
        println!("{:<40} {:<10}", "Total input tokens:", total_in);
        println!("{:<40} {:<10}", "Total generated tokens:", total_out);
        println!("{:<40} {:<10.2}", "Request throughput (req/s):", completed as f64 / duration);
        println!("{:<40} {:<10.2}", "Output token throughput (tok/s):", total_out as f64 / duration);
        println!("{:<40} {:<10.2}", "Peak output token throughput (tok/s):", per_sec.values().max().copied().unwrap_or(0) as f64);
        println!("{:<40} {:<10.2}", "Peak concurrent requests:", peak.load(std::sync::atomic::Ordering::SeqCst) as f64);
        println!("{:<40} {:<10.2}", "Total Token throughput (tok/s):", (total_in + total_out) as f64 / duration);
        println!("{:-^50}", "Time to First Token");
        println!("{:<40} {:<10.2}", "Mean TTFT (ms):", mean(&ttfts));
        println!("{:<40} {:<10.2}", "Median TTFT (ms):", pct(&ttfts, 50.0));
        println!("{:<40} {:<10.2}", "P99 TTFT (ms):", pct(&ttfts, 99.0));
        println!("{:-^50}", "Time per Output Token (excl. 1st token)");
        println!("{:<40} {:<10.2}", "Mean TPOT (ms):", mean(&tpots));
        println!("{:<40} {:<10.2}", "Median TPOT (ms):", pct(&tpots, 50.0));
        println!("{:<40} {:<10.2}", "P99 TPOT (ms):", pct(&tpots, 99.0));
        println!("{:-^50}", "Inter-token Latency");
        println!("{:<40} {:<10.2}", "Mean ITL (ms):", mean(&itls));
        println!("{:<40} {:<10.2}", "Median ITL (ms):", pct(&itls, 50.0));
        println!("{:<40} {:<10.2}", "P99 ITL (ms):", pct(&itls, 99.0));
        println!("{}", "=".repeat(50));
        if a.has("save-result") {
            let (y, mo, d, h, mi, s) = crate::log::local_now();
            let date = format!("{y}{mo:02}{d:02}-{h:02}{mi:02}{s:02}");
            let mut result = json!({
                "date": date, "endpoint_type": "openai", "backend": a.get("backend").unwrap_or("openai"), "label": null,
                "model_id": model, "tokenizer_id": a.get("tokenizer").unwrap_or(&model), "num_prompts": num_prompts,
                "request_rate": rate.map_or(json!("inf"), |r| json!(r)), "burstiness": 1.0, "max_concurrency": max_conc,
                "duration": duration, "completed": completed, "failed": failed,
                "total_input_tokens": total_in, "total_output_tokens": total_out,
                "request_throughput": completed as f64 / duration, "request_goodput": null,
                "output_throughput": total_out as f64 / duration,
                "total_token_throughput": (total_in + total_out) as f64 / duration,
                "latencies": outs.iter().map(|o| if o.ok { o.latency } else { 0.0 }).collect::<Vec<_>>(),
                "max_output_tokens_per_s": per_sec.values().max().copied().unwrap_or(0) as f64,
                "max_concurrent_requests": peak.load(std::sync::atomic::Ordering::SeqCst),
                "mean_ttft_ms": mean(&ttfts), "median_ttft_ms": pct(&ttfts, 50.0), "std_ttft_ms": std(&ttfts), "p99_ttft_ms": pct(&ttfts, 99.0),
                "mean_tpot_ms": mean(&tpots), "median_tpot_ms": pct(&tpots, 50.0), "std_tpot_ms": std(&tpots), "p99_tpot_ms": pct(&tpots, 99.0),
                "mean_itl_ms": mean(&itls), "median_itl_ms": pct(&itls, 50.0), "std_itl_ms": std(&itls), "p99_itl_ms": pct(&itls, 99.0),
            });
            if a.has("save-detailed") {
                // Per request, in the order sent; a failed one has 0 and its error.
                let detail = json!({
                    "input_lens": prompt_lens.iter().take(outs.len()).collect::<Vec<_>>(),
                    "output_lens": outs.iter().map(|o| o.output_tokens).collect::<Vec<_>>(),
                    "ttfts": outs.iter().map(|o| if o.ok { o.ttft } else { 0.0 }).collect::<Vec<_>>(),
                    "itls": outs.iter().map(|o| o.itls.clone()).collect::<Vec<_>>(),
                    "start_times": outs.iter().map(|o| o.start).collect::<Vec<_>>(),
                    "generated_texts": outs.iter().map(|_| "").collect::<Vec<_>>(),
                    "errors": outs.iter().map(|o| o.error.clone()).collect::<Vec<_>>(),
                });
                if let (Some(r), Some(d)) = (result.as_object_mut(), detail.as_object()) {
                    r.extend(d.clone());
                }
            }
            let name = a.get("result-filename").map(str::to_string).unwrap_or_else(|| {
                let base = std::path::Path::new(&model).file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
                format!("openai-{}qps-concurrency{}-{base}-{date}.json", rate_text, max_conc.map(|c| c.to_string()).unwrap_or("None".into()))
            });
            let dir = a.get("result-dir").unwrap_or(".");
            std::fs::create_dir_all(dir)?;
            let path = std::path::Path::new(dir).join(name);
            std::fs::write(&path, result.to_string())?;
        }
        anyhow::Ok(0)
    })
}
