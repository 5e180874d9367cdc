//! The engine core: a KV pool of whole blocks, a running set capped at a limit, a waiting
//! queue, admission by free blocks, and eviction with recompute when a running request
//! needs a block and none is free. Time is simulated: each step lasts what a decode step
//! of that batch would, divided by the sim speed.
//!
//! Also what the newer tripwires need: a prefix cache (the prompt's full blocks by a
//! chained hash; a request whose leading blocks are cached skips their prefill, and the
//! hits and lookups are counted, T17), a GPU that throttles after a given busy time and
//! slows every step by the clock it lost (T16), and a one-time cost the first time a
//! batch larger than any before runs after ready, as capturing a CUDA graph for that size
//! would (smaller batches are padded into a graph already captured) (T18).

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::hist::{self, Hist};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Policy {
    /// vLLM: allocate as tokens come, preempt the newest running request when short.
    Vllm,
    /// SGLang: admit against an estimate of future tokens (new_token_ratio), retract when short.
    Sglang,
    /// TensorRT-LLM GUARANTEED_NO_EVICT: reserve prompt + max_tokens at admission.
    TrtNoEvict,
    /// TensorRT-LLM MAX_UTILIZATION: like vLLM, and each eviction is a logged pause.
    TrtMaxUtil,
}

#[derive(Debug, Clone)]
pub struct EngineCfg {
    pub policy: Policy,
    /// Blocks a request can use (vLLM: num_gpu_blocks - 1, the null block excluded).
    pub blocks: usize,
    pub block_size: usize,
    /// State blocks each request holds besides its KV blocks (hybrid models).
    pub state_blocks: usize,
    pub max_running: usize,
    pub step_base_s: f64,
    pub step_per_seq_s: f64,
    pub prefill_per_token_s: f64,
    pub speed: f64,
    /// Prefix caching on (vLLM's default, SGLang's radix cache, TensorRT-LLM's block reuse).
    pub prefix_caching: bool,
    /// The throttle fault: after this many busy simulated seconds, for this many (none:
    /// until the end).
    pub throttle: Option<(f64, Option<f64>)>,
    /// The warm-up fault: simulated seconds the first step of a batch-size bucket (powers
    /// of two) larger than any before costs after ready.
    pub warmup_cost_s: Option<f64>,
}

#[derive(Debug)]
pub enum Event {
    /// One generated token; the request's last one carries why it finished, and is
    /// sent only after the finish is counted, so a client that has it sees the counters.
    Token {
        finish: Option<&'static str>,
    },
    Error(String),
}

pub struct Submit {
    pub prompt: usize,
    /// The prompt's full blocks by a chained hash, for the prefix cache.
    pub prefix_blocks: Vec<u64>,
    pub max_tokens: usize,
    /// The token after which the model writes its end-of-sequence token, when the
    /// request did not ask to ignore it: the answer then ends there (finish reason
    /// `stop`) if that comes before `max_tokens`.
    pub eos_at: Option<usize>,
    pub streaming: bool,
    pub tx: mpsc::UnboundedSender<Event>,
    pub arrived: Instant,
}

/// What the engine tells its owner, for the engine-specific log lines.
#[derive(Debug, Clone)]
pub enum Notice {
    Preempted {
        seq: u64,
        freed_tokens: usize,
    },
    Prefill {
        new_seqs: usize,
        new_tokens: usize,
        /// Of those, prompt tokens found in the prefix cache.
        cached_tokens: usize,
        running: usize,
        waiting: usize,
        usage: f64,
    },
    Decode {
        running: usize,
        tokens: usize,
        usage: f64,
        waiting: usize,
        gen_per_s: f64,
    },
    /// A batch larger than any before ran and paid the warm-up cost for its bucket.
    WarmUp {
        batch: usize,
        seconds: f64,
    },
}

/// One finished request, in simulated seconds.
#[derive(Debug, Clone)]
pub struct Finished {
    pub prompt: usize,
    /// Prompt tokens served from the prefix cache.
    pub cached: usize,
    pub generated: usize,
    pub max_tokens: usize,
    pub streaming: bool,
    #[allow(dead_code)] // kept for debugging and future finish reasons
    pub reason: &'static str,
    pub queue_s: f64,
    pub ttft_s: f64,
    pub e2e_s: f64,
    pub prefill_s: f64,
    pub decode_s: f64,
    pub inference_s: f64,
    pub preemptions: u32,
}

/// What SGLang's gauges show between two log points.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogPoint {
    pub running: usize,
    pub waiting: usize,
    pub used_blocks: usize,
    /// Tokens held by the running requests (prompt and generated).
    pub seq_tokens: usize,
    pub gen_per_s: f64,
}

#[derive(Debug, Clone)]
pub struct StreamAgg {
    pub requests: u64,
    pub prompt_tokens: u64,
    pub generation_tokens: u64,
    pub ttft: Hist,
    pub e2e: Hist,
}

impl StreamAgg {
    fn new() -> StreamAgg {
        StreamAgg {
            requests: 0,
            prompt_tokens: 0,
            generation_tokens: 0,
            ttft: Hist::new(hist::TTFT),
            e2e: Hist::new(hist::LATENCY),
        }
    }
}

/// Gauges and counters the metrics endpoints read.
#[derive(Debug, Clone)]
pub struct Stats {
    pub running: usize,
    pub waiting: usize,
    pub used_blocks: usize,
    pub total_blocks: usize,
    pub preemptions: u64,
    pub paused_now: usize,
    /// Counted as the engine computes (vLLM).
    pub live_prompt_tokens: u64,
    /// Prompt tokens looked up in the prefix cache, and found there (counted at admission).
    pub prefix_queries: u64,
    pub prefix_hits: u64,
    /// Prompt tokens found in the cache, counted when their request finishes (TensorRT-LLM).
    pub finished_cached: u64,
    pub live_generation_tokens: u64,
    pub steps: u64,
    /// Per `is_streaming` (index 1 = streamed), counted at finish (SGLang, TensorRT-LLM).
    pub by_stream: [StreamAgg; 2],
    pub last_finished: Option<Finished>,
    pub finished_by_reason: BTreeMap<&'static str, u64>,
    pub ttft: Hist,
    pub e2e: Hist,
    pub queue: Hist,
    pub itl: Hist,
    pub tpot: Hist,
    pub prefill: Hist,
    pub decode: Hist,
    pub inference: Hist,
    pub prompt_len: Hist,
    pub gen_len: Hist,
    pub max_tokens: Hist,
    pub n_param: Hist,
    pub req_preempt: Hist,
    pub iter_tokens: Hist,
    /// TensorRT-LLM's gauges as of the last completion: (running, waiting, used, paused).
    pub at_last_completion: (usize, usize, usize, usize),
    /// SGLang's gauges as of the scheduler's last log point (a prefill line, every 40th
    /// decode step, going idle): the real one refreshes them only then.
    pub at_last_log: LogPoint,
    /// Prompt and generated tokens of the requests retracted so far (SGLang).
    pub retracted_tokens: (u64, u64),
    /// Tokens SGLang's radix cache gave up to make room, and how many times it did.
    pub evicted_tokens: u64,
    pub evictions: u64,
    pub new_token_ratio: f64,
}

impl Stats {
    fn new(total_blocks: usize) -> Stats {
        Stats {
            running: 0,
            waiting: 0,
            used_blocks: 0,
            total_blocks,
            preemptions: 0,
            paused_now: 0,
            live_prompt_tokens: 0,
            prefix_queries: 0,
            prefix_hits: 0,
            finished_cached: 0,
            live_generation_tokens: 0,
            steps: 0,
            by_stream: [StreamAgg::new(), StreamAgg::new()],
            last_finished: None,
            finished_by_reason: BTreeMap::new(),
            ttft: Hist::new(hist::TTFT),
            e2e: Hist::new(hist::LATENCY),
            queue: Hist::new(hist::LATENCY),
            itl: Hist::new(hist::ITL),
            tpot: Hist::new(hist::ITL),
            prefill: Hist::new(hist::LATENCY),
            decode: Hist::new(hist::LATENCY),
            inference: Hist::new(hist::LATENCY),
            prompt_len: Hist::new(hist::TOKENS),
            gen_len: Hist::new(hist::TOKENS),
            max_tokens: Hist::new(hist::TOKENS),
            n_param: Hist::new(&[1.0, 2.0, 5.0, 10.0, 20.0]),
            req_preempt: Hist::new(hist::COUNT),
            iter_tokens: Hist::new(hist::ITER_TOKENS),
            at_last_completion: (0, 0, 0, 0),
            at_last_log: LogPoint::default(),
            retracted_tokens: (0, 0),
            evicted_tokens: 0,
            evictions: 0,
            new_token_ratio: 0.7,
        }
    }

    pub fn usage(&self) -> f64 {
        if self.total_blocks == 0 {
            0.0
        } else {
            self.used_blocks as f64 / self.total_blocks as f64
        }
    }
}

pub struct Shared {
    pub cfg: EngineCfg,
    pub stats: Mutex<Stats>,
    /// Requests accepted but not running (admission control reads it).
    pub in_queue: AtomicUsize,
    pub submitted: AtomicU64,
    tx: mpsc::UnboundedSender<Submit>,
}

impl Shared {
    pub fn submit(&self, s: Submit) {
        self.in_queue.fetch_add(1, Ordering::SeqCst);
        self.submitted.fetch_add(1, Ordering::SeqCst);
        let _ = self.tx.send(s);
    }
}

struct Seq {
    id: u64,
    sub: Submit,
    generated: usize,
    blocks: usize,
    preempts: u32,
    prefilled: bool,
    /// Prompt tokens its first prefill found in the prefix cache.
    cached: usize,
    first_sched: Option<Instant>,
    first_token: Option<Instant>,
    last_token: Option<Instant>,
    prefill_done: Option<Instant>,
}

pub type Notify = Box<dyn Fn(Notice) + Send + Sync>;

pub fn start(cfg: EngineCfg, notify: Notify) -> Arc<Shared> {
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        stats: Mutex::new(Stats::new(cfg.blocks)),
        cfg,
        in_queue: AtomicUsize::new(0),
        submitted: AtomicU64::new(0),
        tx,
    });
    tokio::spawn(run(shared.clone(), rx, notify));
    shared
}

fn blocks_for(tokens: usize, bs: usize) -> usize {
    tokens.div_ceil(bs)
}

/// Cached prompt blocks by their chained hash, the oldest forgotten first once it holds as
/// many blocks as the pool.
struct PrefixCache {
    blocks: HashSet<u64>,
    order: VecDeque<u64>,
    capacity: usize,
}

impl PrefixCache {
    /// How many of a prompt's leading blocks are cached; then remembers all of them.
    fn look_up(&mut self, prompt: &[u64]) -> usize {
        let hit = prompt
            .iter()
            .take_while(|h| self.blocks.contains(h))
            .count();
        for h in &prompt[hit..] {
            if self.blocks.insert(*h) {
                self.order.push_back(*h);
            }
        }
        let over = self.order.len().saturating_sub(self.capacity);
        self.evict(over);
        hit
    }

    /// Forgets the `n` oldest blocks.
    fn evict(&mut self, n: usize) {
        for _ in 0..n {
            if let Some(old) = self.order.pop_front() {
                self.blocks.remove(&old);
            }
        }
    }
}

/// The throttle fault's state: busy time so far, and whether the card is slowed now.
struct Throttle {
    busy_s: f64,
    window: Option<(f64, Option<f64>)>,
}

impl Throttle {
    fn active(&self) -> bool {
        self.window.is_some_and(|(after, span)| {
            self.busy_s >= after && span.is_none_or(|d| self.busy_s < after + d)
        })
    }
}

async fn run(sh: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<Submit>, notify: Notify) {
    let cfg = sh.cfg.clone();
    let mut running: Vec<Seq> = Vec::new();
    let mut waiting: VecDeque<Seq> = VecDeque::new();
    let mut free = cfg.blocks;
    let mut next_id: u64 = 1;
    let mut deadline = Instant::now();
    let mut gen_since_log = 0usize;
    let mut decode_steps = 0u64;
    let mut last_log = Instant::now();
    let mut ratio = 0.7f64;
    let speed = cfg.speed;
    let sim = |d: Duration| d.as_secs_f64() * speed;
    let mut cache = PrefixCache {
        blocks: HashSet::new(),
        order: VecDeque::new(),
        capacity: cfg.blocks.max(1),
    };
    let mut throttle = Throttle {
        busy_s: 0.0,
        window: cfg.throttle,
    };
    // The largest batch-size bucket warmed up so far.
    let mut warmed = 0usize;
    loop {
        if running.is_empty() && waiting.is_empty() {
            crate::gpu::set_activity(false, false);
            match rx.recv().await {
                Some(s) => {
                    waiting.push_back(new_seq(&mut next_id, s));
                }
                None => return,
            }
            deadline = Instant::now();
        }
        while let Ok(s) = rx.try_recv() {
            waiting.push_back(new_seq(&mut next_id, s));
        }
        // Clients that went away are aborted wherever they are.
        let before = waiting.len();
        waiting.retain(|q| !q.sub.tx.is_closed());
        let gone = before - waiting.len();
        if gone > 0 {
            sh.in_queue.fetch_sub(gone, Ordering::SeqCst);
            sh.stats
                .lock()
                .unwrap()
                .finished_by_reason
                .entry("abort")
                .and_modify(|c| *c += gone as u64)
                .or_insert(gone as u64);
        }
        let mut i = 0;
        while i < running.len() {
            if running[i].sub.tx.is_closed() {
                let s = running.remove(i);
                free += s.blocks;
                *sh.stats
                    .lock()
                    .unwrap()
                    .finished_by_reason
                    .entry("abort")
                    .or_insert(0) += 1;
            } else {
                i += 1;
            }
        }

        // 1. Running requests first: room for one more token each, evicting from the back.
        let mut evicted = false;
        let mut i = 0;
        while i < running.len() {
            let s = &running[i];
            let want = if cfg.policy == Policy::TrtNoEvict {
                s.blocks
            } else {
                blocks_for(s.sub.prompt + s.generated + 1, cfg.block_size) + cfg.state_blocks
            };
            let need = want.saturating_sub(s.blocks);
            if need <= free {
                free -= need;
                running[i].blocks += need;
                i += 1;
                continue;
            }
            let mut v = running.pop().expect("non-empty");
            free += v.blocks;
            let freed = v.blocks * cfg.block_size;
            v.blocks = 0;
            v.prefilled = false;
            v.preempts += 1;
            evicted = true;
            notify(Notice::Preempted {
                seq: v.id,
                freed_tokens: freed,
            });
            if cfg.policy == Policy::Sglang {
                ratio = (ratio + 0.3).min(1.0);
            }
            {
                let mut st = sh.stats.lock().unwrap();
                st.preemptions += 1;
                st.new_token_ratio = ratio;
                st.retracted_tokens.0 += v.sub.prompt as u64;
                st.retracted_tokens.1 += v.generated as u64;
            }
            sh.in_queue.fetch_add(1, Ordering::SeqCst);
            waiting.push_front(v);
        }

        // 2. Then the waiting queue, in order, while blocks and the running limit allow.
        let mut new_seqs = 0;
        let mut new_tokens = 0;
        let mut new_cached = 0;
        if !evicted {
            while running.len() < cfg.max_running {
                let Some(f) = waiting.front() else { break };
                let tokens = f.sub.prompt + f.generated + 1;
                let need = match cfg.policy {
                    Policy::TrtNoEvict => {
                        blocks_for(f.sub.prompt + f.sub.max_tokens, cfg.block_size)
                            + cfg.state_blocks
                    }
                    _ => blocks_for(tokens, cfg.block_size) + cfg.state_blocks,
                };
                if need > free {
                    break;
                }
                if cfg.policy == Policy::Sglang {
                    // Reserve an estimate of what running requests will still generate.
                    let reserved: f64 = running
                        .iter()
                        .map(|s| (s.sub.max_tokens - s.generated) as f64 * ratio)
                        .sum::<f64>()
                        + (f.sub.max_tokens - f.generated) as f64 * ratio;
                    if (need as f64) + reserved > free as f64 && !running.is_empty() {
                        break;
                    }
                }
                let mut s = waiting.pop_front().expect("front");
                free -= need;
                s.blocks = need;
                sh.in_queue.fetch_sub(1, Ordering::SeqCst);
                if s.first_sched.is_none() {
                    s.first_sched = Some(Instant::now());
                    let mut st = sh.stats.lock().unwrap();
                    st.live_prompt_tokens += s.sub.prompt as u64;
                    if cfg.prefix_caching {
                        // The last prompt token is always computed, as vLLM does.
                        let hit = cache.look_up(&s.sub.prefix_blocks) * cfg.block_size;
                        s.cached = hit.min(s.sub.prompt.saturating_sub(1));
                        st.prefix_queries += s.sub.prompt as u64;
                        st.prefix_hits += s.cached as u64;
                        // SGLang's radix cache lives in the pool: what the free slots no
                        // longer hold is evicted.
                        let over = cache.order.len().saturating_sub(free);
                        if cfg.policy == Policy::Sglang && over > 0 {
                            cache.evict(over);
                            st.evicted_tokens += (over * cfg.block_size) as u64;
                            st.evictions += 1;
                        }
                    }
                }
                new_seqs += 1;
                new_tokens += s.sub.prompt + s.generated;
                new_cached += if s.preempts == 0 { s.cached } else { 0 };
                running.push(s);
            }
        }
        // A first prefill skips the tokens the prefix cache held; a recompute does not.
        let prefill_tokens: usize = running
            .iter()
            .filter(|s| !s.prefilled)
            .map(|s| s.sub.prompt + s.generated - if s.preempts == 0 { s.cached } else { 0 })
            .sum();
        let used = cfg.blocks - free;
        {
            let mut st = sh.stats.lock().unwrap();
            st.running = running.len();
            st.waiting = waiting.len();
            st.used_blocks = used;
            st.paused_now = waiting.iter().filter(|s| s.preempts > 0).count();
        }
        if new_seqs > 0 {
            notify(Notice::Prefill {
                new_seqs,
                new_tokens,
                cached_tokens: new_cached,
                running: running.len() - new_seqs,
                waiting: waiting.len(),
                usage: used as f64 / cfg.blocks.max(1) as f64,
            });
            if cfg.policy == Policy::Sglang {
                sh.stats.lock().unwrap().at_last_log = LogPoint {
                    running: running.len() - new_seqs,
                    waiting: waiting.len(),
                    used_blocks: used,
                    seq_tokens: held_tokens(&running),
                    gen_per_s: 0.0,
                };
            }
        }
        if running.is_empty() {
            // Nothing fits (a request larger than the pool): fail the first one.
            if let Some(s) = waiting.pop_front() {
                sh.in_queue.fetch_sub(1, Ordering::SeqCst);
                let _ = s.sub.tx.send(Event::Error(format!(
                    "request needs more KV cache than the pool holds ({} blocks of {} tokens)",
                    cfg.blocks, cfg.block_size
                )));
            }
            continue;
        }

        // 3. One step: a decode for every running request, prefill for the new ones.
        let n = running.len();
        let mut step_s = cfg.step_base_s
            + cfg.step_per_seq_s * n as f64
            + cfg.prefill_per_token_s * prefill_tokens as f64;
        throttle.busy_s += step_s;
        let throttled = throttle.active();
        crate::gpu::set_activity(true, throttled);
        if throttled {
            step_s *= crate::gpu::throttle_slowdown();
        }
        if let Some(cost) = cfg.warmup_cost_s {
            let bucket = n.next_power_of_two();
            if bucket > warmed {
                warmed = bucket;
                step_s += cost;
                notify(Notice::WarmUp {
                    batch: bucket,
                    seconds: cost,
                });
            }
        }
        deadline += Duration::from_secs_f64(step_s / speed);
        let now = Instant::now();
        if deadline < now {
            // Far behind (a slow machine): do not burst to catch up.
            if now - deadline > Duration::from_millis(50) {
                deadline = now;
            }
        } else {
            tokio::time::sleep_until(deadline.into()).await;
        }
        let now = Instant::now();
        decode_steps += 1;
        gen_since_log += n;

        // 4. Every running request gets its token; finished ones leave.
        let mut done_idx = Vec::new();
        {
            let mut st = sh.stats.lock().unwrap();
            st.steps += 1;
            st.live_generation_tokens += n as u64;
            st.iter_tokens.observe(
                (n - running.iter().filter(|s| !s.prefilled).count() + prefill_tokens) as f64,
            );
            for (k, s) in running.iter_mut().enumerate() {
                if !s.prefilled {
                    s.prefilled = true;
                    if s.prefill_done.is_none() {
                        s.prefill_done = Some(now);
                    }
                }
                s.generated += 1;
                if let Some(lt) = s.last_token {
                    st.itl.observe(sim(now - lt));
                }
                s.last_token = Some(now);
                if s.first_token.is_none() {
                    s.first_token = Some(now);
                }
                if s.generated >= s.sub.max_tokens {
                    done_idx.push((k, "length"));
                } else if s.sub.eos_at == Some(s.generated) {
                    done_idx.push((k, "stop"));
                } else {
                    let _ = s.sub.tx.send(Event::Token { finish: None });
                }
            }
        }
        for (k, reason) in done_idx.into_iter().rev() {
            let s = running.remove(k);
            free += s.blocks;
            let f = Finished {
                prompt: s.sub.prompt,
                cached: s.cached,
                generated: s.generated,
                max_tokens: s.sub.max_tokens,
                streaming: s.sub.streaming,
                reason,
                queue_s: sim(s.first_sched.unwrap_or(now) - s.sub.arrived),
                ttft_s: sim(s.first_token.unwrap_or(now) - s.sub.arrived),
                e2e_s: sim(now - s.sub.arrived),
                prefill_s: sim(s.prefill_done.unwrap_or(now) - s.first_sched.unwrap_or(now)),
                decode_s: sim(now - s.prefill_done.unwrap_or(now)),
                inference_s: sim(now - s.first_sched.unwrap_or(now)),
                preemptions: s.preempts,
            };
            let mut st = sh.stats.lock().unwrap();
            st.ttft.observe(f.ttft_s);
            st.e2e.observe(f.e2e_s);
            st.queue.observe(f.queue_s);
            st.prefill.observe(f.prefill_s);
            st.decode.observe(f.decode_s);
            st.inference.observe(f.inference_s);
            if f.generated > 1 {
                st.tpot.observe(f.decode_s / (f.generated - 1) as f64);
            }
            st.prompt_len.observe(f.prompt as f64);
            st.finished_cached += f.cached as u64;
            st.gen_len.observe(f.generated as f64);
            st.max_tokens.observe(f.max_tokens as f64);
            st.n_param.observe(1.0);
            st.req_preempt.observe(f.preemptions as f64);
            *st.finished_by_reason.entry(reason).or_insert(0) += 1;
            st.running = running.len();
            st.used_blocks = cfg.blocks - free;
            st.waiting = waiting.len();
            st.at_last_completion = (
                running.len() + 1,
                waiting.len(),
                cfg.blocks - free + s.blocks,
                st.paused_now,
            );
            let b = &mut st.by_stream[usize::from(f.streaming)];
            b.requests += 1;
            b.prompt_tokens += f.prompt as u64;
            b.generation_tokens += f.generated as u64;
            b.ttft.observe(f.ttft_s);
            b.e2e.observe(f.e2e_s);
            st.last_finished = Some(f);
            drop(st);
            let _ = s.sub.tx.send(Event::Token {
                finish: Some(reason),
            });
        }
        {
            let mut st = sh.stats.lock().unwrap();
            st.used_blocks = cfg.blocks - free;
            st.running = running.len();
        }
        if cfg.policy == Policy::Sglang {
            ratio = (ratio - 0.0007).max(0.1);
        }
        if decode_steps.is_multiple_of(40) && !running.is_empty() {
            let el = sim(now - last_log).max(1e-9);
            let gen_per_s = gen_since_log as f64 / el;
            notify(Notice::Decode {
                running: running.len(),
                tokens: held_tokens(&running),
                usage: (cfg.blocks - free) as f64 / cfg.blocks.max(1) as f64,
                waiting: waiting.len(),
                gen_per_s,
            });
            if cfg.policy == Policy::Sglang {
                sh.stats.lock().unwrap().at_last_log = LogPoint {
                    running: running.len(),
                    waiting: waiting.len(),
                    used_blocks: cfg.blocks - free,
                    seq_tokens: held_tokens(&running),
                    gen_per_s,
                };
            }
            gen_since_log = 0;
            last_log = now;
        }
        if cfg.policy == Policy::Sglang && running.is_empty() && waiting.is_empty() {
            // Going idle is a log point too: the gauges fall back to zero.
            sh.stats.lock().unwrap().at_last_log = LogPoint {
                used_blocks: cfg.blocks - free,
                ..LogPoint::default()
            };
        }
    }
}

/// Tokens the running requests hold: their prompts and what they generated so far.
fn held_tokens(running: &[Seq]) -> usize {
    running.iter().map(|s| s.sub.prompt + s.generated).sum()
}

fn new_seq(next_id: &mut u64, sub: Submit) -> Seq {
    let id = *next_id;
    *next_id += 1;
    Seq {
        id,
        sub,
        generated: 0,
        blocks: 0,
        preempts: 0,
        prefilled: false,
        cached: 0,
        first_sched: None,
        first_token: None,
        last_token: None,
        prefill_done: None,
    }
}
