//! The registry: every tripwire once. Its number, slug, title, the one-line summary the
//! README's table shows, the scopes it is judged in, and its catalogue entry (what it
//! catches, why it matters, what inferlint reads, how to check and fix it, and a note per
//! engine). `inferlint explain`, the report's guide, `results.json`'s `id` and `name`, the
//! JUnit case names and the README's table (a test holds it to this table) all read it
//! from here; nothing else spells a slug or a title.
//!
//! Adding a tripwire: a variant of [`Tripwire`], an [`Entry`] below, and a rule file in
//! this folder that the runner (`runner.rs`) calls for each scope listed here.

use serde::Serialize;

use crate::engine::Engine;

/// Every tripwire, by its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tripwire {
    SilentPreemption = 1,
    OrphanedEngine,
    CleanupSelfKill,
    PoolSizeJump,
    LargeKvBlocks,
    BackendIgnored,
    CrashAfterReady,
    ConcurrencyNotReached,
    FallingCeiling,
    IntegerSecondTimer,
    KvMemoryDrift,
    UnexplainedFailure,
    StaleWaiter,
    NullBlock,
    ClientServerMismatch,
    GpuThrottled,
    PrefixCacheHits,
    WarmUpInWindow,
    LoadUnbalanced,
    LoadGeneratorBound = 20,
    OutputNotAsAsked,
    FailuresHidden,
    LatencyMismatch,
    CoarseRecording,
}

/// Where a tripwire is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// One server start's boot log.
    BootLog,
    /// Several starts with the same settings, compared.
    Starts,
    /// The whole recorded run of one server.
    Run,
    /// One phase of a sweep (a benchmark of a result holding several, or one of several
    /// load commands), on its own stretch of the recording.
    Phase,
    /// One replica of a fleet, on its own readings.
    Replica,
    /// A fleet of replicas behind a router, as a whole.
    Fleet,
    /// A folder holding only a load tool's own scrape of the server's metrics (AIPerf's).
    Scrape,
    /// A rule the recorder keeps while it runs; no file records a verdict.
    Recorder,
}

/// One tripwire's definition and its catalogue entry.
#[derive(Debug)]
pub struct Entry {
    pub tripwire: Tripwire,
    /// The stable name results carry as `name`.
    pub slug: &'static str,
    /// A short title for people.
    pub title: &'static str,
    /// What goes wrong, in one line (Markdown): the README's table.
    pub summary: &'static str,
    /// Where it is judged.
    pub scopes: &'static [Scope],
    /// What goes wrong.
    pub catches: &'static str,
    /// Why it matters for a benchmark number; shown under each failing finding.
    pub why: &'static str,
    /// What inferlint reads to decide.
    pub evidence: &'static str,
    /// The inferlint command(s) that check it.
    pub reproduce: &'static str,
    /// What to do about it.
    pub fix: &'static str,
    /// Engine-specific notes ("" when there is none).
    pub vllm: &'static str,
    pub sglang: &'static str,
    pub trtllm: &'static str,
}

impl Tripwire {
    /// Every tripwire, in number order.
    pub const ALL: [Tripwire; 24] = [
        Tripwire::SilentPreemption,
        Tripwire::OrphanedEngine,
        Tripwire::CleanupSelfKill,
        Tripwire::PoolSizeJump,
        Tripwire::LargeKvBlocks,
        Tripwire::BackendIgnored,
        Tripwire::CrashAfterReady,
        Tripwire::ConcurrencyNotReached,
        Tripwire::FallingCeiling,
        Tripwire::IntegerSecondTimer,
        Tripwire::KvMemoryDrift,
        Tripwire::UnexplainedFailure,
        Tripwire::StaleWaiter,
        Tripwire::NullBlock,
        Tripwire::ClientServerMismatch,
        Tripwire::GpuThrottled,
        Tripwire::PrefixCacheHits,
        Tripwire::WarmUpInWindow,
        Tripwire::LoadUnbalanced,
        Tripwire::LoadGeneratorBound,
        Tripwire::OutputNotAsAsked,
        Tripwire::FailuresHidden,
        Tripwire::LatencyMismatch,
        Tripwire::CoarseRecording,
    ];

    /// Its number, as in "T9".
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The tripwire numbered `n`.
    pub fn from_number(n: u8) -> Option<Tripwire> {
        Tripwire::ALL.into_iter().find(|t| t.number() == n)
    }

    /// Its place in [`Tripwire::ALL`] and in the entries (a test holds them in step).
    fn index(self) -> usize {
        Tripwire::ALL
            .iter()
            .position(|t| *t == self)
            .expect("every tripwire is listed in Tripwire::ALL")
    }

    /// "T9".
    pub fn id(self) -> String {
        format!("T{}", self.number())
    }

    pub fn entry(self) -> &'static Entry {
        &ENTRIES[self.index()]
    }

    pub fn slug(self) -> &'static str {
        self.entry().slug
    }

    pub fn title(self) -> &'static str {
        self.entry().title
    }

    /// Whether it is judged in `scope`.
    pub fn judged_in(self, scope: Scope) -> bool {
        self.entry().scopes.contains(&scope)
    }

    /// Whether only a fleet has it (T19): a single server's guide and count leave it out.
    pub fn fleet_only(self) -> bool {
        self.entry().scopes == [Scope::Fleet]
    }

    /// Finds by "T9", "t9", "9", or slug "falling-ceiling" (trimmed, case-insensitive).
    pub fn find(query: &str) -> Option<Tripwire> {
        let q = query.trim().to_ascii_lowercase();
        if q.is_empty() {
            return None;
        }
        let digits = q.strip_prefix('t').unwrap_or(&q);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return digits.parse::<u8>().ok().and_then(Tripwire::from_number);
        }
        Tripwire::ALL.into_iter().find(|t| t.slug() == q)
    }
}

/// The tripwires judged in `scope`, in number order.
pub fn judged_in(scope: Scope) -> impl Iterator<Item = Tripwire> {
    Tripwire::ALL
        .into_iter()
        .filter(move |t| t.judged_in(scope))
}

/// Every entry, in number order.
pub fn all() -> &'static [Entry] {
    &ENTRIES
}

/// The entries a single server's report and `explain` list: all but the fleet's own.
pub fn single_server() -> impl Iterator<Item = &'static Entry> {
    ENTRIES.iter().filter(|e| !e.tripwire.fleet_only())
}

impl Entry {
    /// The note for one engine ("" when there is none).
    pub fn engine_note(&self, e: Engine) -> &'static str {
        match e {
            Engine::Vllm => self.vllm,
            Engine::Sglang => self.sglang,
            Engine::Trtllm => self.trtllm,
        }
    }

    /// "T9".
    pub fn id(&self) -> String {
        self.tripwire.id()
    }

    /// The tripwire as the report's guide lists it, with one engine's note.
    pub fn guide_entry(&self, engine: Engine) -> GuideEntry {
        GuideEntry {
            id: self.id(),
            name: self.slug,
            title: self.title,
            catches: self.catches,
            why: self.why,
            reproduce: self.reproduce,
            note: self.engine_note(engine),
        }
    }

    /// The whole entry as `explain --json` writes it, with the notes of `engines`.
    pub fn explanation(&self, engines: &[Engine]) -> Explanation {
        Explanation {
            id: self.id(),
            name: self.slug,
            title: self.title,
            catches: self.catches,
            why: self.why,
            evidence: self.evidence,
            reproduce: self.reproduce,
            fix: self.fix,
            engine_notes: engines
                .iter()
                .map(|&e| (e.key(), self.engine_note(e)))
                .collect(),
        }
    }
}

/// One entry of the report's tripwire guide (the Report's `guide`).
#[derive(Debug, Clone, Serialize)]
pub struct GuideEntry {
    pub id: String,
    /// The slug.
    pub name: &'static str,
    pub title: &'static str,
    pub catches: &'static str,
    pub why: &'static str,
    pub reproduce: &'static str,
    /// The report's engine's note ("" when there is none).
    pub note: &'static str,
}

/// One tripwire as `inferlint explain --json` writes it.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub id: String,
    /// The slug.
    pub name: &'static str,
    pub title: &'static str,
    pub catches: &'static str,
    pub why: &'static str,
    pub evidence: &'static str,
    pub reproduce: &'static str,
    pub fix: &'static str,
    /// Engine key → its note ("" when there is none), in the order asked for.
    #[serde(serialize_with = "crate::json::ordered_map")]
    pub engine_notes: Vec<(&'static str, &'static str)>,
}

static ENTRIES: [Entry; 24] = [
    Entry {
        tripwire: Tripwire::SilentPreemption,
        slug: "silent-preemption",
        title: "Silent preemption",
        summary: "requests evicted from a full KV cache and recomputed, often with no log line",
        scopes: &[Scope::Run, Scope::Phase, Scope::Replica, Scope::Fleet, Scope::Scrape],
        catches: "When the KV cache has no room left, the engine evicts a running request: it \
                  throws away that request's cache and sends it back to the queue. When the \
                  request resumes, the server recomputes its prompt and everything it had \
                  written so far. The client sees a slower answer and no error, and depending \
                  on the engine the server log may say nothing at all.",
        why: "Latency and throughput include recomputed work the load tool never sees, so the \
              numbers describe a server that was throwing work away, not one running smoothly.",
        evidence: "The engine's eviction counter in the before and after readings (vLLM \
                   `vllm:num_preemptions_total`, SGLang `sglang:num_retracted_requests_total`). \
                   TensorRT-LLM counts none, so inferlint counts the pause lines in the server \
                   log that covers the run, or else looks for paused requests in the recording.",
        reproduce: "inferlint preemption BEFORE AFTER (for TensorRT-LLM add --boot-log boot.log \
                    and --series SERIES), or inferlint analyze RUN_DIR",
        fix: "Give the KV cache more room (a larger memory share, a shorter maximum length, a \
              smaller or quantised cache) or lower the concurrency until the count stays at 0. \
              If you keep the run, report the number of evictions with its results.",
        vllm: "vLLM counts preemptions in `vllm:num_preemptions_total` and writes no log line \
               for them at the default log level: the counter is the only trace.",
        sglang: "SGLang calls it a retraction and logs a WARNING for each one. Its counter \
                 `sglang:num_retracted_requests_total` exists only after the first retraction; \
                 before that, the `sglang:num_retracted_reqs` gauge shows the count is 0.",
        trtllm: "TensorRT-LLM calls it a pause and counts nothing. Under the MAX_UTILIZATION \
                 scheduler policy it logs each one at INFO as `request ID N -> pause`, so the \
                 verdict needs the server log saved until after the run. Its default policy, \
                 GUARANTEED_NO_EVICT, starts a request only when its whole output fits, and \
                 pauses none.",
    },
    Entry {
        tripwire: Tripwire::OrphanedEngine,
        slug: "orphaned-engine",
        title: "Orphaned engine process",
        summary: "a renamed engine worker left behind holds GPU memory; the next start gets a smaller pool",
        scopes: &[Scope::Run],
        catches: "Stopping a server by killing only its API process can leave the engine's \
                  worker running under another name. That orphan keeps the model weights and \
                  the KV cache in GPU memory. The next server then finds less memory free, \
                  sizes a smaller KV pool, and reports no error.",
        why: "Runs started next to an orphan have a smaller cache than their settings imply, so \
              they cannot be compared with runs that started on a free card.",
        evidence: "The recorder's readings of server processes (from /proc) and GPU memory used \
                   (from nvidia-smi), taken at its GPU check before a start (`gate.json`) and \
                   after it stops the server (`teardown.json`). The card is clear after 2 \
                   readings in a row with no server process and at most 800 MiB used (by default).",
        reproduce: "inferlint-recorder teardown (stop every server process, then wait for a \
                    clear card); inferlint-recorder gpu-inspect (check the card before a \
                    start); inferlint analyze RUN_DIR reads teardown.json or gate.json",
        fix: "Stop servers with `inferlint-recorder teardown`, which also finds renamed engine \
              workers, and start the next server only once the card reads clear. If an \
              orphan is left, stop it by its process id.",
        vllm: "The orphan is the renamed engine child `VLLM::EngineCore` (or another \
               `VLLM::` process, such as `VLLM::Worker_TP0`).",
        sglang: "The orphans are SGLang's renamed workers, `sglang::scheduler` and \
                 `sglang::detokenizer`.",
        trtllm: "The workers are `prte` and `python -m mpi4py.futures.server` processes \
                 started under `trtllm-serve`. They are recognised only as its descendants, \
                 never by name, so an unrelated MPI job is left alone.",
    },
    Entry {
        tripwire: Tripwire::CleanupSelfKill,
        slug: "cleanup-self-kill",
        title: "Clean-up kills its own shell",
        summary: "`pkill -f` in a clean-up line kills its own shell (a rule the recorder keeps)",
        scopes: &[Scope::Recorder],
        catches: "A clean-up line such as `bash -c '...; pkill -f \"vllm serve\"; ...'` \
                  contains its own search pattern. `pkill -f` matches against whole command \
                  lines, so it kills the shell running it: the shell exits with status 143 and \
                  the commands after it never run. The same kill also misses renamed engine \
                  workers (T2) and can hit bystanders such as `tail -f \"vllm serve.log\"`.",
        why: "The rest of the clean-up silently never happens, so the next run can start on a \
              busy card or next to a half-stopped server.",
        evidence: "No run file can show it, so inferlint gives no verdict. The recorder avoids \
                   it: it recognises server processes by the shape of their argument lists, \
                   never by a substring, and never targets itself or its parent processes.",
        reproduce: "inferlint-recorder teardown --dry-run (lists the server processes it would \
                    stop, and what `pkill -f` would miss or wrongly hit)",
        fix: "Do not kill servers by substring from a shell whose own command line contains \
              the pattern. Use `inferlint-recorder teardown`, or signal the exact process ids \
              you saved when you started the server.",
        vllm: "The usual pattern, `vllm serve`, also misses the renamed `VLLM::EngineCore`.",
        sglang: "The usual patterns are `sglang.launch_server` or `sglang serve`; the renamed \
                 `sglang::` workers may not match them.",
        trtllm: "The usual pattern is `trtllm-serve`; its `prte` and `mpi4py.futures.server` \
                 workers do not carry it in their command lines.",
    },
    Entry {
        tripwire: Tripwire::PoolSizeJump,
        slug: "pool-size-jump",
        title: "KV pool size jumps between starts",
        summary: "two starts with the same settings size different KV pools",
        scopes: &[Scope::Starts],
        catches: "At each start the engine sizes its KV pool from the GPU memory left after \
                  loading the weights and capturing CUDA graphs, and the size moves in steps. \
                  Two starts with exactly the same settings can land on different steps, \
                  thousands of tokens apart. Nothing in the log marks this as unusual.",
        why: "A different pool changes how many requests fit and when evictions begin, so two \
              runs from such starts differ for a reason unrelated to what you changed.",
        evidence: "The pool size line of each boot log (vLLM `GPU KV cache size`, SGLang `KV \
                   Cache is allocated ... #tokens`, TensorRT-LLM `Allocated ... for max tokens \
                   in paged KV cache`), compared between starts with the same settings. Any \
                   difference, even one token, is a warning.",
        reproduce: "inferlint check-log boot.log boot2.log",
        fix: "Compare results only between starts with the same pool, and keep the pool size \
              with every result. If it moved, restart until it matches, or set the cache size \
              explicitly where the engine allows it.",
        vllm: "Starts are matched on the whole set of non-default arguments. The vLLM version \
               is not part of it, so starts of two releases with the same arguments are \
               compared too.",
        sglang: "Starts are matched on every printed setting except `random_seed`, which SGLang \
                 draws afresh at each start.",
        trtllm: "Starts are matched on the `LLM Args` line without the values derived from the \
                 pool itself (`max_tokens` and `max_gpu_total_bytes` in its KV cache config), so \
                 two starts with the same settings are compared even when their pools differ.",
    },
    Entry {
        tripwire: Tripwire::LargeKvBlocks,
        slug: "large-kv-blocks",
        title: "Large KV blocks",
        summary: "hybrid models force blocks of hundreds of tokens: fewer requests fit than the pool suggests",
        scopes: &[Scope::BootLog],
        catches: "The KV cache is handed out in blocks, and every request holds whole blocks. \
                  Models that mix attention layers with Mamba layers force the block to \
                  hundreds of tokens, so that an attention page is at least as large as a \
                  Mamba state page. A 100-token request then occupies a full 784-token block, \
                  so the real capacity is a fraction of what the token count promises.",
        why: "Capacity worked out from the pool in tokens overstates how many requests fit, so \
              concurrency and eviction figures cannot be compared with a model using small \
              blocks.",
        evidence: "The block size in the boot log: vLLM's `Setting attention block size to N \
                   tokens` line (with the Mamba page padding), SGLang's `page_size` setting, \
                   TensorRT-LLM's `tokens per block=N`. A warning when vLLM forced a size other \
                   than the one asked for (16 by default).",
        reproduce: "inferlint check-log boot.log",
        fix: "There is nothing to repair: it is how such models are served. Size the load in \
              whole blocks, and compare the run only with runs that use the same block size.",
        vllm: "Hybrid attention/Mamba models print a forced block size (784, 416, 832 or 1568 \
               tokens in the tested runs); plain models keep the default 16 tokens and pass.",
        sglang: "SGLang calls the unit a page. Its size is the `page_size` setting (1 token in \
                 the tested runs), and it passes as set.",
        trtllm: "TensorRT-LLM prints `tokens per block=N` (32 in the tested runs); any size \
                 passes.",
    },
    Entry {
        tripwire: Tripwire::BackendIgnored,
        slug: "backend-ignored",
        title: "Requested attention backend ignored",
        summary: "the attention backend asked for is not the one running",
        scopes: &[Scope::BootLog],
        catches: "You can ask for an attention backend by name, but the request applies to the \
                  main model only. With speculative decoding, the draft model picks its own \
                  backend from a list of candidates, and nothing in the log calls that an \
                  override. A run meant to test one backend can partly run on another.",
        why: "A result labelled with one attention backend may have measured another, so the \
              comparison it was made for does not hold.",
        evidence: "The backend asked for in the boot log's arguments, against the backend \
                   selection lines for the main model and, after `Loading drafter model`, for \
                   the draft model.",
        reproduce: "inferlint check-log boot.log",
        fix: "Check that the backend you ask for is one the draft model can use too, or label \
              the result with every backend that actually ran.",
        vllm: "The flag is `--attention-backend`. Selection lines read `Using NAME attention \
               backend out of potential backends` or `Using AttentionBackendEnum.NAME \
               backend.`; a draft model (`speculative_config`) can pick, say, FLASHINFER \
               while the main model runs TRITON_ATTN.",
        sglang: "The flag is `--attention-backend`. Without it SGLang logs `Attention backend \
                 not specified. Use NAME backend by default` (flashinfer in the tested runs).",
        trtllm: "The setting is `attn_backend`. The `LLM Args` line prints the backend in use \
                 whether or not one was asked for, so inferlint never treats it as requested \
                 and reports the backend it shows.",
    },
    Entry {
        tripwire: Tripwire::CrashAfterReady,
        slug: "crash-after-ready",
        title: "Crash after ready",
        summary: "the server died after it said it was ready",
        scopes: &[Scope::BootLog, Scope::Run],
        catches: "A server can announce it is ready, then fail on its first real requests or \
                  die during the run. Typical causes are a GPU kernel built on first use that \
                  does not compile, or memory that runs out once real batches arrive. The load \
                  tool then records errors or timeouts instead of a measurement.",
        why: "Being ready is not the same as serving: numbers from such a run describe a \
              failing server, not its speed.",
        evidence: "The boot log after `Application startup complete`: the first error with a \
                   known cause, unless a later request was answered with status 200. Also the \
                   recorder's probe (`probe.json`): one request, a burst of 8 at once, then a \
                   health check. Requests turned away by admission control are counted, not \
                   treated as a crash.",
        reproduce: "inferlint-recorder probe URL; inferlint check-log boot.log (on the log \
                    saved after the run)",
        fix: "Read the cause in the finding, fix it (build toolchain, memory setting, backend) \
              and start again. Probe a new configuration before sending it a benchmark load.",
        vllm: "A kernel built on the first request (for example FlashInfer for a draft model) \
               can fail only then. Rejections by admission control (`--max-num-queued-reqs`, \
               `QueueOverflowError`, HTTP 503) mean the server stayed up: T7 passes and says \
               how many were rejected.",
        sglang: "SGLang logs some errors after ready that it survives, such as a failed \
                 post-warm-up step; they are ignored when a later request was served.",
        trtllm: "TensorRT-LLM's error lines start with a `[TRT-LLM] [E]` prefix, so only causes \
                 recognised anywhere in a line (toolchain, out of memory, CUDA errors) are \
                 read from them.",
    },
    Entry {
        tripwire: Tripwire::ConcurrencyNotReached,
        slug: "concurrency-not-reached",
        title: "Concurrency not reached",
        summary: "the load kept N requests open, the server ran fewer",
        scopes: &[Scope::Run, Scope::Phase, Scope::Replica, Scope::Fleet, Scope::Scrape],
        catches: "A load tool's concurrency is how many requests it keeps open, not how many \
                  the server runs. The scheduler may run far fewer and queue the rest, held \
                  back by its running limit or by the KV cache. vLLM's boot line 'Maximum \
                  concurrency for N tokens per request' assumes every request fills the whole \
                  context, so it proves nothing either way.",
        why: "A result labelled with the concurrency you asked for may describe a server that \
              ran far fewer requests at once.",
        evidence: "The peak of the running-requests gauge in the recording, and running plus \
                   waiting, against the concurrency asked for (`--requested`, the recorder's \
                   manifest, or the load tool's `max_concurrency`). The boot log gives the \
                   server's own running limit and admission-control limit to explain a \
                   shortfall.",
        reproduce: "inferlint series SERIES --requested N --boot-log boot.log, or inferlint \
                    analyze RUN_DIR --requested N",
        fix: "Raise the server's running limit or give the KV cache more room until the peak \
              reaches what you asked for, or report the concurrency the server actually ran.",
        vllm: "`--max-num-seqs` caps how many run at once. From 0.29, admission control \
               (`--max-num-queued-reqs`) rejects requests beyond the queue limit instead of \
               queueing them, and the load tool counts them as failed.",
        sglang: "SGLang may lower `--max-running-requests` at start-up (for example because of \
                 the mamba state cache) and still report the limit it was given; its log line \
                 `max_running_requests is capped to N by the ...` shows the real one.",
        trtllm: "Its gauges move only when a request completes, so a peak below the concurrency \
                 asked for may be a missed reading: the check then says it can't tell instead of \
                 failing. Its running limit is `max_batch_size` (logged as \
                 `max_num_requests`), and the gauges need `enable_iter_perf_stats: true`.",
    },
    Entry {
        tripwire: Tripwire::FallingCeiling,
        slug: "falling-ceiling",
        title: "Falling concurrency ceiling",
        summary: "how many requests fit falls as their outputs grow",
        scopes: &[Scope::Run, Scope::Phase, Scope::Replica],
        catches: "With the KV cache full, the number of requests that fit is floor(1 / share), \
                  where share is the fraction of the cache one running request holds. Each \
                  request holds more blocks as its answer grows, so this ceiling falls during \
                  the run, and every fall evicts requests (T1). A single 'maximum concurrency' \
                  figure describes no moment of such a run.",
        why: "Concurrency was not a constant of this run, so any single capacity figure quoted \
              for it holds for only part of it.",
        evidence: "The running-requests and KV-usage gauges in the recording, at the readings \
                   where the cache was at least 90% full (else at every busy reading). With \
                   T14's block count the arithmetic is done in whole blocks.",
        reproduce: "inferlint series SERIES --snapshot S",
        fix: "Report concurrency as the range the check gives, or give the cache more room or \
              shorten the answers so the ceiling stays above the concurrency you asked for.",
        vllm: "The usage gauge counts out of the usable blocks (one fewer than exported, T14); \
               with an after reading the ceiling is computed in whole blocks.",
        sglang: "SGLang's usage gauge is its fullest memory pool, which for a hybrid model may \
                 be the per-request state slots rather than the KV cache, and it is rounded to \
                 0.01, so the shares are approximate.",
        trtllm: "Its gauges move only when a request completes, so the ceiling rests on few \
                 readings.",
    },
    Entry {
        tripwire: Tripwire::IntegerSecondTimer,
        slug: "integer-second-timer",
        title: "Whole-second timer",
        summary: "throughput computed from a timer with whole seconds",
        scopes: &[Scope::Run, Scope::Phase, Scope::Replica],
        catches: "A run timed with whole-second stamps, such as `date +%s`, can be off by up to \
                  a second at each end. On a 30-second run that is a few percent, and the \
                  error differs independently between the two runs of a comparison.",
        why: "A throughput difference of a few percent between two runs can be nothing but \
              timer rounding.",
        evidence: "The generated-token counter in the before and after readings, divided by \
                   the time between them on their own sub-second clocks (monotonic when both \
                   have one); also what two whole-second stamps would have given.",
        reproduce: "inferlint rate BEFORE AFTER",
        fix: "Time runs with a sub-second clock, or take the rate from the readings' own \
              clocks as inferlint does.",
        vllm: "",
        sglang: "SGLang's token counter moves only when a request finishes, so take the after \
                 reading once the last request has ended.",
        trtllm: "TensorRT-LLM's token counter moves only when a request finishes, so take the \
                 after reading once the last request has ended.",
    },
    Entry {
        tripwire: Tripwire::KvMemoryDrift,
        slug: "kv-memory-drift",
        title: "KV memory drift between starts",
        summary: "the memory left for the KV cache moves between starts",
        scopes: &[Scope::Starts],
        catches: "The GPU memory left for the KV cache varies between starts with the same \
                  settings, mostly because CUDA-graph capture and compilation take a slightly \
                  different amount each time. A small loss can drop the pool by a whole step \
                  (T4).",
        why: "Runs that look identical may have had different cache sizes, and that alone can \
              change their concurrency and evictions.",
        evidence: "The KV memory line of each boot log (vLLM `Available KV cache memory`, \
                   SGLang's K plus V sizes, TensorRT-LLM's allocated GiB), compared between \
                   starts with the same settings, with what moved beside it: weights and other \
                   memory, peak activation, and whether the model was compiled from scratch.",
        reproduce: "inferlint check-log boot.log boot2.log",
        fix: "Keep every start's boot log and compare results only between starts with the \
              same KV memory. Let the compile cache warm up so every start loads it the same \
              way.",
        vllm: "A start that compiles the model from scratch (`Compiling a graph for compile \
               range`) can leave a different amount of memory than one that loads the saved \
               compilation (`Directly load AOT compilation`).",
        sglang: "SGLang prints the K and V sizes in GB; their sum is compared as printed.",
        trtllm: "",
    },
    Entry {
        tripwire: Tripwire::UnexplainedFailure,
        slug: "unexplained-failure",
        title: "Failed start with a buried cause",
        summary: "a start that failed, classified from its log",
        scopes: &[Scope::BootLog],
        catches: "A server that fails to start often prints a long trail of errors, and the \
                  last one (the engine is dead, a generic exception) is rarely the cause. The \
                  real cause sits earlier: a kernel build toolchain that does not work, memory \
                  that ran out, a KV cache too small for one request, a CUDA or accelerator \
                  error.",
        why: "Without the real cause, people change the wrong setting, or report a broken \
              configuration as a slow one.",
        evidence: "The boot log up to readiness, read against ordered rules: build toolchain \
                   errors first, then out of memory, KV cache too small, accelerator and CUDA \
                   errors, assertions, value and runtime errors, other exceptions, and 'engine \
                   dead' last. Optional-import tracebacks are skipped.",
        reproduce: "inferlint check-log boot.log",
        fix: "Fix the cause named in the finding (matching CUDA headers or linker libraries, a \
              lower memory share or context length, a free GPU), then start again.",
        vllm: "Everything from the first `[shutdown]` line on is ignored: a server stopped from \
               outside logs tracebacks from closing pipes, which are not failures.",
        sglang: "Optional-import tracebacks between `[start of ... traceback]` and `[end of ... \
                 traceback]` are ignored. A hybrid model can fail with 'Not enough GPU memory \
                 for hybrid (mamba/linear-attention) state cache'.",
        trtllm: "Lines behind the `[TRT-LLM] [E]` prefix reach only the rules that match \
                 anywhere in a line; a missing CUDA_HOME, for example, shows as the bare \
                 assertion `assert cuda_home is not None`.",
    },
    Entry {
        tripwire: Tripwire::StaleWaiter,
        slug: "stale-waiter",
        title: "Stale waiter adopts the next server",
        summary: "a wait adopts another campaign's server (a rule the recorder keeps)",
        scopes: &[Scope::Recorder],
        catches: "A test script stopped while waiting for its server to become ready can keep \
                  polling the port. When the next script starts its own server on the same \
                  port, the stale waiter takes it for its own, and its late clean-up then \
                  kills that server in the middle of the other run.",
        why: "A run that loses its server halfway, or shares it with another campaign, gives \
              numbers that belong to neither.",
        evidence: "No run file can show it, so inferlint gives no verdict. The recorder avoids \
                   it: it refuses to start while a server process is visible or the port is \
                   taken, and at readiness checks that the port's listening socket belongs to \
                   a process it started.",
        reproduce: "inferlint-recorder record -o run/ --serve \"...\" -- LOAD...",
        fix: "In your own scripts, confirm a stopped script's process is really gone, use one \
              port per campaign, and check that the server you found is the one you started.",
        vllm: "vLLM and TensorRT-LLM both listen on port 8000 by default, so their campaigns \
               share a port unless one is moved.",
        sglang: "SGLang listens on port 30000 by default.",
        trtllm: "TensorRT-LLM and vLLM both listen on port 8000 by default, so their campaigns \
                 share a port unless one is moved.",
    },
    Entry {
        tripwire: Tripwire::NullBlock,
        slug: "null-block",
        title: "Reserved null block",
        summary: "vLLM's usage gauge counts out of one block fewer than it reports",
        scopes: &[Scope::Run, Scope::Replica],
        catches: "vLLM exports its number of KV blocks as `num_gpu_blocks`, but one block is \
                  reserved and never holds a request's cache. Its usage gauge counts out of \
                  one block fewer. Any capacity computed from the exported count is one block \
                  too high.",
        why: "On a small pool one block is several percent of capacity, so 'how many fit' \
              figures built on the exported count are too high.",
        evidence: "The `num_gpu_blocks` label of `vllm:cache_config_info` in the after reading, \
                   against the block count inferred from the KV-usage readings in the recording \
                   (their common denominator, trusted with at least 5 distinct readings).",
        reproduce: "inferlint series SERIES --snapshot S",
        fix: "Use num_gpu_blocks - 1 as the usable block count. If the check fails, make sure \
              the recording and the after reading come from the same start; otherwise the \
              gauge's meaning changed in this vLLM release.",
        vllm: "The usage gauge `vllm:kv_cache_usage_perc` moves in steps of 1 / \
               (num_gpu_blocks - 1).",
        sglang: "Does not apply: T14 is about vLLM's reserved block, and SGLang exports no \
                 block count.",
        trtllm: "Does not apply: T14 is about vLLM's reserved block, and TensorRT-LLM exports \
                 no block count.",
    },
    Entry {
        tripwire: Tripwire::ClientServerMismatch,
        slug: "client-server-mismatch",
        title: "Client and server counts disagree",
        summary: "the load tool's counts and the server's disagree",
        scopes: &[Scope::Run, Scope::Phase, Scope::Fleet, Scope::Scrape],
        catches: "The load tool counts the requests and tokens it sent; the server counts \
                  everything it served. If other traffic shared the server during the run, the \
                  server's numbers include it. If the load tool counted work the server never \
                  did, its own numbers are wrong. Warm-up and test requests are counted by the \
                  server but left out of the load tool's result.",
        why: "Either way the throughput and latency figures do not describe the load you think \
              they describe.",
        evidence: "The load tool's result file (completed and failed requests, output tokens) \
                   against the server's finished-request and generated-token counters between \
                   the before and after readings, allowing for the test and warm-up requests \
                   the load tool's output (`load.log`) says it sent.",
        reproduce: "inferlint analyze RUN_DIR (needs the load tool's result file, such as \
                    bench.json, and both readings)",
        fix: "Benchmark on a server nothing else uses, and keep the load tool's output so its \
              warm-up requests can be counted. If the counts still disagree, find the other \
              client before trusting the numbers.",
        vllm: "`vllm bench serve` may send an initial test request and `--num-warmups N` \
               warm-up requests that its result leaves out. Requests rejected by admission \
               control count as failed on the client and never finish on the server, so the \
               counts still agree.",
        sglang: "SGLang's own client sends `--warmup-requests` (1 by default) before timing \
                 starts and prints `Warmup completed with N sequences`; the server counts \
                 them.",
        trtllm: "TensorRT-LLM's client sends one initial test request (`Initial test run \
                 completed.`) that the server counts and its result leaves out.",
    },
    Entry {
        tripwire: Tripwire::GpuThrottled,
        slug: "gpu-throttled",
        title: "GPU throttled during the run",
        summary: "a power or thermal limit lowered the GPU's clock during the run",
        scopes: &[Scope::Run],
        catches: "A card that reaches its power limit or a temperature limit lowers its SM \
                  clock to stay within it. Every step of the model then takes longer, so \
                  tokens per second fall part-way through the run, and neither the server nor \
                  the load tool logs anything about it.",
        why: "The throughput describes a slowed-down card, not the hardware's capacity: a run \
              in a warm room, after a long run, or next to another busy card gives a lower \
              number for a reason unrelated to the server.",
        evidence: "The recorder's GPU samples (`gpu.samples.jsonl`): one `nvidia-smi` process \
                   kept running with `-lms` at the series interval reports each card's SM \
                   clock against its maximum, power draw against its limit, temperature, \
                   utilization and the active clock-limiting reasons (`clocks_event_reasons.*`, \
                   `clocks_throttle_reasons.*` on older drivers). A busy sample is throttled \
                   when a power or thermal reason is active and the clock is under 75% of its \
                   maximum. A card fails when throttled for 10% or more of its busy time and \
                   warns on a shorter episode of two samples or more; without samples the \
                   verdict is \"can't tell\".",
        reproduce: "inferlint-recorder record ... on the GPU machine (it writes \
                    gpu.samples.jsonl), then inferlint analyze RUN_DIR; the page shades the \
                    throttled stretches on its GPU chart",
        fix: "Cool the card and keep its power limit at the default (`nvidia-smi -q -d \
              PERFORMANCE` shows what limits it), let it cool down between runs, and run again. \
              Report the throttled share with any result you keep.",
        vllm: "vLLM reports nothing about clocks; only the card's own readings show it.",
        sglang: "SGLang reports nothing about clocks; only the card's own readings show it.",
        trtllm: "TensorRT-LLM reports nothing about clocks; only the card's own readings show \
                 it.",
    },
    Entry {
        tripwire: Tripwire::PrefixCacheHits,
        slug: "prefix-cache-hits",
        title: "Prefix-cache hits inflated the throughput",
        summary: "repeated or shared prompts were served from the prefix cache, inflating throughput",
        scopes: &[Scope::Run],
        catches: "Engines keep the KV cache of prompts they have seen and reuse it when a new \
                  prompt starts the same way. With repeated prompts or a long shared system \
                  prompt, much of the prefill is skipped, so requests start sooner and the \
                  server finishes more of them per second.",
        why: "The throughput and time to first token hold only for traffic that shares as much \
              of its prompts; real traffic with fewer repeats is slower.",
        evidence: "The engine's prefix-cache counters between the before and after readings: \
                   the prompt tokens served from the cache against the prompt tokens looked \
                   up. A share of 10% or more is a warning that names the counters; an engine \
                   that exports none of them makes the tripwire not apply.",
        reproduce: "inferlint analyze RUN_DIR (needs both readings); the page charts the share \
                    over time from the recording",
        fix: "Benchmark with prompts that share no more than your real traffic does (for \
              `vllm bench serve`, leave `--random-prefix-len` at 0 unless your traffic has a \
              shared prefix), or switch prefix caching off for a worst-case number. Report the \
              share with the result.",
        vllm: "vLLM counts `vllm:prefix_cache_hits_total` against \
               `vllm:prefix_cache_queries_total`, both in tokens. `vllm bench serve \
               --random-prefix-len N` gives every prompt the same first N tokens, and its \
               initial test request repeats the first prompt.",
        sglang: "SGLang counts prefill tokens by where they came from in \
                 `sglang:prefill_effective_tokens_total`: the `device_hit`, `host_hit` and \
                 `storage_hit` modes against all modes (`input` was computed). Its radix cache \
                 is on unless started with `--disable-radix-cache`.",
        trtllm: "TensorRT-LLM counts reused prompt tokens in `trtllm_prompt_cached_tokens_total` \
                 against `trtllm_prompt_tokens_total`, both when a request finishes; block \
                 reuse is on unless `enable_block_reuse: false` is set in its KV cache \
                 settings.",
    },
    Entry {
        tripwire: Tripwire::WarmUpInWindow,
        slug: "warm-up-in-window",
        title: "Warm-up inside the measured window",
        summary: "one-time warm-up (graph capture, compilation) fell inside the measurement",
        scopes: &[Scope::Run],
        catches: "The first requests a server sees pay one-time costs the rest do not: \
                  capturing CUDA graphs for a batch size not seen yet, compiling kernels for a \
                  new shape, allocating memory lazily. When the measurement starts on a cold \
                  server, those costs land in its first seconds.",
        why: "A short run's throughput and latency include work that never happens again, so \
              they understate the server; how much depends on the run's length, not on the \
              server.",
        evidence: "The load tool's per-request times (`vllm bench serve --save-detailed`): the \
                   median time to first token of the first wave (the requests started before \
                   any finished) against that of the later requests. Three times as long and \
                   at least 0.25 s more, while the recording shows no request waiting in the \
                   queue then, is a warning with the size of the effect; if requests did wait, \
                   queueing may explain it and the verdict is \"can't tell\". Without \
                   per-request times, lines of compilation or graph capture that the server \
                   logged while the load ran (the recorder notes the boot log's length at the \
                   load's start and end) give the warning.",
        reproduce: "inferlint analyze RUN_DIR (needs the load tool's per-request times, or the \
                    recorder's boot log)",
        fix: "Run a warm-up phase at the load's concurrency before measuring: `vllm bench \
              serve --num-warmups N` with N at least the concurrency, or one run thrown away. \
              The recorder's probe sends single requests, so it counts as a warm-up only if \
              the load runs at those batch sizes too.",
        vllm: "vLLM captures its CUDA graphs at start-up for a list of batch sizes and \
               compiles with torch.compile then; a size outside that list, or a compile range \
               met for the first time, is compiled while serving (`Compiling a graph for ...`).",
        sglang: "SGLang captures CUDA graphs at start-up (`Capture cuda graph`); batches larger \
                 than `--cuda-graph-max-bs` run without them, and kernels may be compiled on \
                 first use.",
        trtllm: "TensorRT-LLM runs its warm-up passes at start-up (`[warmup]` lines); shapes it \
                 did not warm up are compiled or tuned on first use.",
    },
    Entry {
        tripwire: Tripwire::LoadUnbalanced,
    slug: "load-unbalanced",
    title: "The load was unbalanced across the replicas",
        summary: "behind a router, one replica ran at its ceiling while another had room (fleets only)",
        scopes: &[Scope::Fleet],
    catches: "Behind a router, one replica can run at its ceiling (preempting, or keeping \
              requests waiting with its cache full) while another runs few: the router's \
              placement (session affinity, prefix-aware routing, a stale load signal) sent \
              more there than it could hold.",
    why: "The fleet's throughput and latency then measure where the router put the load, not \
          what the pool of replicas can serve; a balanced placement would give other numbers.",
    evidence: "Each replica's recording and readings: a replica is at its ceiling when it \
               preempted during the run (its T1) or a reading shows requests waiting with the \
               KV cache at least 90% full; another replica runs few when its peak of running \
               requests is under half the saturated one's. A replica without a recording makes \
               it \"can't tell\".",
    reproduce: "inferlint analyze RUN_DIR (a fleet folder: fleet.json and replicas/<id>/)",
    fix: "Use a routing policy that spreads by load (round robin or least-loaded) for the \
          benchmark, or give the replicas the same capacity; report the per-replica peaks with \
          the result.",
    vllm: "vllm-router's `cache_aware` policy sends prompts sharing a prefix to the same \
           worker; its `vllm_router_processed_requests_total{worker}` counts what each got.",
    sglang: "",
    trtllm: "",
    },
    Entry {
        tripwire: Tripwire::LoadGeneratorBound,
        slug: "load-generator-bound",
        title: "The load tool limited the run",
        summary: "the load tool, not the server, held the load back: fewer requests open, or sent later, than asked",
        scopes: &[Scope::Run, Scope::Phase],
        catches: "A load tool is a program too, and it can be the slowest part of a benchmark. \
                  Asked to keep 64 requests open, a client that spends its time building \
                  prompts or reading answers sends the next request late, so fewer are open \
                  than asked while the server sits with room to spare. Asked for 3,000 \
                  requests a second, it may send 1,800. Nothing fails and nothing is logged: \
                  the result is simply labelled with a load that never happened.",
        why: "The figures describe a lighter load than their label, and a fast server is \
              reported slow because the client, not the server, was the limit.",
        evidence: "The load tool's own record of each request: when it was sent and how long \
                   it took (`vllm bench serve --save-detailed`, GuideLLM's request records, \
                   AIPerf's per-request export). For a concurrency load, the average number \
                   of requests open while the tool was still sending, against the number \
                   asked for; the recording shows whether the server had room then (nothing \
                   waiting, the KV cache not full, fewer running than its limit). For a \
                   rate load, the rate at which requests were actually sent against the one \
                   asked for. The recorder also samples the CPU time of the load command's \
                   processes (`load.cpu.jsonl`), which shows a client pinned at a full core.",
        reproduce: "inferlint analyze RUN_DIR (needs the load tool's per-request times; the \
                    recorder adds --save-detailed to vllm bench serve)",
        fix: "Give the load tool a core of its own (or several clients on several cores), use \
              a faster tokenizer or pre-tokenized prompts, or ask for less; then run again \
              until the requests open (or the send rate) match what the result is labelled \
              with. Report the load actually reached if you keep the run.",
        vllm: "`vllm bench serve` runs in one Python process, and one event loop sends, \
               streams and times every request, so it is bound by a single core. \
               `--save-detailed` keeps each request's `start_times` and `latencies`.",
        sglang: "SGLang's own client (`sglang.bench_serving`) has the same single-loop design; \
                 inferlint reads its result but it keeps no per-request send times.",
        trtllm: "",
    },
    Entry {
        tripwire: Tripwire::OutputNotAsAsked,
        slug: "output-not-as-asked",
        title: "Answers shorter or longer than the load asked",
        summary: "answers came back shorter than the load asked (end-of-sequence, a length cap, a cut to fit the context), so the figures describe less work",
        scopes: &[Scope::Run, Scope::Phase],
        catches: "A benchmark asks for answers of a set length, say 1,000 tokens each, so that \
                  its tokens per second and its latencies describe that much work per request. \
                  The answers can come back shorter with no error anywhere: the model ends its \
                  answer when it writes its end-of-sequence token and the load did not ask the \
                  server to ignore it, a gateway in between caps the length, or the server \
                  quietly lowers the length so that the prompt and the answer fit in its \
                  context window.",
        why: "A shorter answer is less work: each request finishes sooner and more of them fit \
              in a second, so latency and requests per second look better than for the answers \
              asked, and the run no longer compares with one of full-length answers. Answers \
              longer than asked mean the length limit was not applied at all.",
        evidence: "What was asked: the load tool's result where it says (SGLang's \
                   `random_output_len`, GuideLLM's `output_tokens`, AIPerf's `osl`), else the \
                   load command the recorder ran (`--random-output-len`, `--output-len`, \
                   `--output-tokens-mean`). What came back: the result's output tokens over \
                   its completed requests, and each answer's length where the result keeps \
                   them (`vllm bench serve --save-detailed`, AIPerf's per-request export). The \
                   server's own count of answers that ended on end-of-sequence between the \
                   snapshots (finish reason `stop`), and vLLM's record of the `max_tokens` it \
                   applied. A mean more than 10% away from a fixed asked length, or any \
                   answer ended on end-of-sequence, is a warning naming the short answers.",
        reproduce: "inferlint analyze RUN_DIR (a folder the recorder made, or a load-tool \
                    result that names its output length)",
        fix: "Ask the server to ignore end-of-sequence (`vllm bench serve --ignore-eos`, AIPerf \
              `--extra-inputs ignore_eos:true`), make sure every prompt plus its answer fits \
              the server's context length (`--max-model-len`), take out any length cap in \
              between, and run again; or report the mean answer length with the results.",
        vllm: "vLLM counts how answers ended in `vllm:request_success_total{finished_reason}`. \
               Release 0.32 lowers `max_tokens` without a word when the prompt and the answer \
               would not fit `--max-model-len`: the answer then stops exactly at the context \
               length, with finish reason `length`, and `vllm:request_params_max_tokens` shows \
               the lowered value.",
        sglang: "SGLang counts no finish reasons in its metrics, so only the answers' lengths \
                 decide. Its `bench_serving` ignores end-of-sequence unless \
                 `--disable-ignore-eos` is given.",
        trtllm: "TensorRT-LLM counts how answers ended in \
                 `trtllm_request_success_total{finished_reason}`.",
    },
    Entry {
        tripwire: Tripwire::FailuresHidden,
        slug: "failures-hidden",
        title: "Failed requests left out of the figures",
        summary: "requests failed or were refused while throughput and latency count only the ones that succeeded",
        scopes: &[Scope::Run, Scope::Phase],
        catches: "Load tools compute throughput and latency from the requests that succeeded. \
                  Requests the server refused (a prompt longer than its context, a full queue), \
                  that timed out or broke off are left out of those figures, often with no more \
                  than a count in the result file. A server that turns work away can then look \
                  as fast as one that served it all, or faster.",
        why: "The headline figures describe the part of the load that got through, not the load \
              that was sent: a run where half the requests failed reports a throughput for half \
              the work, and the latencies of the requests that were lucky. A load where every \
              request failed measured nothing at all.",
        evidence: "The load tool's counts of completed and failed requests (`vllm bench \
                   serve`'s `failed`, else its requests less the completed ones; GuideLLM's \
                   errored and incomplete requests; AIPerf's `error_request_count`) and its \
                   error texts, grouped (`vllm bench serve --save-detailed`'s `errors`, \
                   AIPerf's `error_summary`). The server's own counts between the snapshots: \
                   requests ended by abort or error, requests turned away by admission control, \
                   and error responses on the endpoints that generate. More than 10% of the \
                   requests sent failing fails; fewer warns, and so do refusals the server \
                   counted while the load tool counted none.",
        reproduce: "inferlint analyze RUN_DIR",
        fix: "Read the error texts: shorten the prompts or raise the server's context length, \
              raise its queue limits, give the client a longer timeout, or lower the load; run \
              until no request fails, or report the failures and the figures per request sent \
              with the results.",
        vllm: "vLLM refuses a prompt longer than `--max-model-len` with HTTP 400 before it \
               reaches the engine, so only the HTTP counter `http_requests_total` \
               (`status=\"4xx\"`) sees it; `vllm bench serve` keeps only the HTTP reason (\"Bad \
               Request\") as the error text. Aborted requests are counted by finish reason.",
        sglang: "SGLang counts aborted requests in `sglang:num_aborted_requests_total` (exported \
                 from the first one) and every HTTP response by status code in \
                 `sglang:http_responses_total`.",
        trtllm: "TensorRT-LLM exports no HTTP counts; the load tool's counts and the finish \
                 reasons decide.",
    },
    Entry {
        tripwire: Tripwire::LatencyMismatch,
        slug: "latency-mismatch",
        title: "Client and server latencies disagree",
        summary: "the client's time to first token, time between tokens or latency disagrees with the server's own",
        scopes: &[Scope::Run],
        catches: "The load tool times each request from its side: from sending it to the first \
                  piece of the answer, between the pieces, and to the end. The server times \
                  the same requests from its side and keeps the results as histograms. The \
                  client's times should be the server's plus a little for the network. A \
                  client time far above the server's means something else sits in between (a \
                  proxy that holds the stream back, a slow network, requests waiting inside \
                  the client); a client time below the server's is impossible, and means the \
                  client timed something else (an empty first piece, the reply's headers).",
        why: "The latency figures then measure the client, the proxy or the network, not the \
              server, and cannot be compared with runs measured directly.",
        evidence: "The client's mean time to first token, mean time between tokens and mean \
                   end-to-end latency, against the server's histograms of the same three \
                   between the before and after readings (their sum and count, and their \
                   buckets, which bound the requests the client sent when the server also \
                   served others).",
        reproduce: "inferlint analyze RUN_DIR (needs the load tool's result and both readings)",
        fix: "Measure next to the server, without a proxy in between, or give the client its \
              own core; if the client's figure is below the server's, check how the client \
              times its first token (an empty first chunk, the reply's headers). Report which \
              side's figures you quote.",
        vllm: "vLLM keeps `vllm:time_to_first_token_seconds`, \
               `vllm:inter_token_latency_seconds` (`vllm:time_per_output_token_seconds` \
               before 0.11) and `vllm:e2e_request_latency_seconds`, each from the moment its \
               API server received the request.",
        sglang: "SGLang keeps `sglang:time_to_first_token_seconds`, \
                 `sglang:inter_token_latency_seconds` and `sglang:e2e_request_latency_seconds`.",
        trtllm: "TensorRT-LLM keeps `trtllm_time_to_first_token_seconds`, \
                 `trtllm_time_per_output_token_seconds` and \
                 `trtllm_e2e_request_latency_seconds`.",
    },
    Entry {
        tripwire: Tripwire::CoarseRecording,
        slug: "coarse-recording",
        title: "Readings too coarse for the load",
        summary: "too few readings inside the load, readings later than asked, or requests shorter than the gap between readings: the series checks cannot hold",
        scopes: &[Scope::Run, Scope::Phase],
        catches: "The recorder reads the server's gauges (requests running and waiting, the KV \
                  cache's use) at an interval, and the checks built on them see only those \
                  readings. A short load read at a long interval gets a handful of readings; a \
                  busy machine delays each reading past its interval; requests shorter than \
                  the gap between readings start and end unseen. The peak, the ceiling and the \
                  steps read off such a recording are whatever the few readings happened to \
                  catch.",
        why: "A verdict on the readings then claims more than they show: a server that ran \
              every request at once is reported as never having run more than a few, or a \
              ceiling is drawn through two points. The verdicts of the series checks on that \
              run are not evidence either way.",
        evidence: "The series' readings inside the load (the manifest's load start and end, \
                   or a phase's own), their gaps against the interval the recording asked for \
                   (the series' header), and the load tool's per-request send times and \
                   latencies where its result keeps them. Fewer than 3 readings inside the \
                   load fails; fewer than 10, a median gap over twice the interval, or a \
                   median request shorter than the gap between readings warns. T8 compares \
                   the running gauge's peak with the most requests the load tool had open at \
                   once, and can't tell when the readings were too sparse to see it.",
        reproduce: "inferlint analyze RUN_DIR (a folder the recorder made)",
        fix: "Record again at a finer interval (`inferlint-recorder record --interval 0.1`), \
              run a longer load (more requests than the concurrency, several rounds of them), \
              or give the recorder a core of its own so its readings keep to their interval.",
        vllm: "",
        sglang: "",
        trtllm: "",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_the_table() {
        let mut last = 0;
        for (i, t) in Tripwire::ALL.into_iter().enumerate() {
            assert!(t.number() > last, "{} out of order", t.id());
            last = t.number();
            assert_eq!(t.id(), format!("T{}", t.number()));
            assert_eq!(all()[i].tripwire, t, "{}", t.id());
            assert_eq!(t.entry().tripwire, t, "{}", t.id());
            assert_eq!(Tripwire::from_number(t.number()), Some(t));
        }
        assert!(Tripwire::ALL
            .windows(2)
            .all(|w| w[0].number() < w[1].number()));
        assert_eq!(Tripwire::ALL[0].number(), 1);
        assert_eq!(Tripwire::from_number(0), None);
        assert_eq!(Tripwire::from_number(25), None);
        assert_eq!(single_server().count(), 23);
        assert!(Tripwire::LoadUnbalanced.fleet_only());
    }

    #[test]
    fn slugs_and_titles_are_unique() {
        let mut slugs: Vec<&str> = all().iter().map(|e| e.slug).collect();
        let mut titles: Vec<&str> = all().iter().map(|e| e.title).collect();
        slugs.sort_unstable();
        slugs.dedup();
        titles.sort_unstable();
        titles.dedup();
        assert_eq!((slugs.len(), titles.len()), (all().len(), all().len()));
        for e in all() {
            assert!(
                e.slug.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{}",
                e.slug
            );
        }
    }

    #[test]
    fn finding_by_number_or_slug() {
        let n = |q: &str| Tripwire::find(q).map(Tripwire::number);
        assert_eq!(n("T9"), Some(9));
        assert_eq!(n("t9"), Some(9));
        assert_eq!(n("9"), Some(9));
        assert_eq!(n("falling-ceiling"), Some(9));
        assert_eq!(n(" t14 "), Some(14));
        assert_eq!(n("Null-Block"), Some(14));
        assert_eq!(n("T1"), Some(1));
        assert_eq!(n("T15"), Some(15));
        assert_eq!(n("warm-up-in-window"), Some(18));
        assert_eq!(n("load-unbalanced"), Some(19));
        assert_eq!(n("T20"), Some(20));
        assert_eq!(n("latency-mismatch"), Some(23));
        assert_eq!(n("coarse-recording"), Some(24));
        for bad in ["T25", "x", "", " ", "T", "t0", "0", "-1", "T9x", "999"] {
            assert_eq!(n(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn every_entry_is_filled() {
        for t in all() {
            for (field, text) in [
                ("title", t.title),
                ("summary", t.summary),
                ("catches", t.catches),
                ("why", t.why),
                ("evidence", t.evidence),
                ("reproduce", t.reproduce),
                ("fix", t.fix),
            ] {
                assert!(!text.trim().is_empty(), "{} {field}", t.id());
            }
            assert!(t.reproduce.contains("inferlint"), "{}", t.id());
            assert!(!t.scopes.is_empty(), "{}", t.id());
        }
    }

    #[test]
    fn engine_notes() {
        let t14 = Tripwire::NullBlock.entry();
        assert!(t14
            .engine_note(Engine::Sglang)
            .starts_with("Does not apply"));
        assert!(t14
            .engine_note(Engine::Trtllm)
            .starts_with("Does not apply"));
        assert!(!t14.engine_note(Engine::Vllm).starts_with("Does not apply"));
        let t1 = Tripwire::SilentPreemption.entry();
        assert!(t1
            .engine_note(Engine::Trtllm)
            .contains("request ID N -> pause"));
        assert!(t1.engine_note(Engine::Sglang).contains("WARNING"));
        assert!(Tripwire::OrphanedEngine
            .entry()
            .vllm
            .contains("VLLM::EngineCore"));
    }
}
