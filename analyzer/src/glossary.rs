//! The report's glossary: the words a reader who has never heard of KV caches meets in
//! the report, each with a short plain definition; a few depend on the engine.

use crate::engine::Engine;

/// The report's glossary: 18 terms in a fixed order, each with a short
/// plain definition; a few depend on the engine.
/// The terms whose definitions depend on the engine.
struct EngineWords {
    kv_block: &'static str,
    null_block: String,
    ceiling: &'static str,
    preemption: String,
    tokens_per_s: String,
    backend_flag: &'static str,
}

fn engine_words(engine: Engine) -> EngineWords {
    let name = engine.display();
    let kv_block = match engine {
        Engine::Vllm => {
            "The unit the KV pool is divided into; a request always occupies whole blocks, so \
             its last one is often partly empty. vLLM's blocks hold 16 tokens unless set \
             otherwise, but models that mix attention with Mamba layers get blocks of hundreds \
             of tokens (T5)."
        }
        Engine::Sglang => {
            "The unit the KV pool is divided into; a request always occupies whole blocks, so \
             its last one is often partly empty. SGLang calls a block a page and uses 1-token \
             pages unless set otherwise; 16 tokens is common elsewhere, and models that mix \
             attention with Mamba layers can need hundreds (T5)."
        }
        Engine::Trtllm => {
            "The unit the KV pool is divided into; a request always occupies whole blocks, so \
             its last one is often partly empty. TensorRT-LLM's blocks held 32 tokens in the \
             tested runs; 16 is common elsewhere, and models that mix attention with Mamba \
             layers can need hundreds (T5)."
        }
    };
    let null_block = match engine {
        Engine::Vllm => "vLLM reserves one block of its pool as a placeholder and never hands it \
                         to a request: of the N blocks it reports, only N - 1 can hold requests' \
                         data (T14)."
            .to_string(),
        _ => format!(
            "vLLM reserves one block of its pool as a placeholder and never hands it to a \
             request, so only N - 1 of the N blocks it reports hold data (T14). {name} exports \
             no block count, so this check does not apply to it."
        ),
    };
    let ceiling = match engine {
        Engine::Sglang => {
            "The number of requests the full cache could hold at their present length: floor(1 \
             / share), share being the slice of the cache one running request occupies. It \
             drops as requests grow (T9); SGLang's share comes from its fullest memory pool."
        }
        _ => {
            "The number of requests the full cache could hold at their present length: floor(1 \
             / share), share being the slice of the cache one running request occupies. \
             Requests grow as they write, so this number drops during a run (T9)."
        }
    };
    let evict = "Making room in a full KV cache by stopping a running request and discarding \
                 its cached data; the request goes back to the queue and recomputes all of it \
                 later.";
    let preemption = match engine {
        Engine::Vllm => {
            format!("{evict} vLLM counts each preemption but writes no log line for it (T1).")
        }
        Engine::Sglang => format!(
            "{evict} SGLang calls it a retraction: it logs a warning for each one and counts \
             them, though its counter appears only after the first (T1)."
        ),
        Engine::Trtllm => format!(
            "{evict} TensorRT-LLM calls it a pause and pauses only under its MAX_UTILIZATION \
             policy, counting none and logging each at INFO level; its default \
             GUARANTEED_NO_EVICT policy pauses none (T1)."
        ),
    };
    let tokens_per_s = if engine.tokens_at_finish() {
        format!(
            "The server's count of generated tokens over the measured time, divided by its \
             length: the output of all requests combined, not the speed of one. {name}'s \
             counter moves only when a request finishes."
        )
    } else {
        "The server's count of generated tokens over the measured time, divided by its length: \
         the output of all requests combined, not the speed of one."
            .to_string()
    };
    let backend_flag = match engine {
        Engine::Trtllm => "the `attn_backend` setting",
        _ => "`--attention-backend`",
    };
    EngineWords {
        kv_block,
        null_block,
        ceiling,
        preemption,
        tokens_per_s,
        backend_flag,
    }
}

pub fn glossary(engine: Engine) -> Vec<(&'static str, String)> {
    let name = engine.display();
    let EngineWords {
        kv_block,
        null_block,
        ceiling,
        preemption,
        tokens_per_s,
        backend_flag,
    } = engine_words(engine);
    let mut terms = basics(name);
    terms.extend([
        ("KV block", kv_block.to_string()),
        ("Null block", null_block),
        ("Fit in cache (ceiling)", ceiling.to_string()),
        ("Preemption", preemption),
        ("Output tokens per second", tokens_per_s),
    ]);
    terms.extend(reading_the_run(name, backend_flag));
    terms
}

/// The words every report uses, whatever the engine.
fn basics(name: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "Token",
            "The unit a language model reads and writes: a word or a piece of one, roughly four \
             characters of English. Most figures in this report, from speed to cache size, \
             are counted in tokens."
                .to_string(),
        ),
        (
            "Prompt and output tokens",
            "The prompt is the input a request carries, and its length in tokens is its prompt \
             tokens. Output tokens are what the model generates in reply, produced one at a \
             time."
                .to_string(),
        ),
        (
            "Request",
            "One call to the server: a prompt goes in and the model's whole answer comes back."
                .to_string(),
        ),
        (
            "Concurrency",
            "The number of requests in flight together. Asked for: how many the load tool holds \
             open at once; running: how many of those the server's scheduler is processing; \
             any others sit in the queue."
                .to_string(),
        ),
        (
            "Waiting (queue)",
            "Requests that have reached the server but not begun, because the KV cache or the \
             server's running limit has no space for them yet. Their wait is part of their time \
             to first token."
                .to_string(),
        ),
        (
            "KV cache",
            "Memory on the GPU holding the intermediate results (keys and values) the model \
             computed for every token of each active request, so they are not recomputed at \
             every step. Each new token a request writes adds to its part of the cache."
                .to_string(),
        ),
        (
            "KV pool",
            format!(
                "How many tokens the KV cache can hold in total. {name} decides it anew at every \
                 start, from whatever GPU memory remains once the model is loaded, so the same \
                 settings can give a different pool next time (T4, T11)."
            ),
        ),
    ]
}

/// The words of where the figures come from: the server's log, its readings, its kernels.
fn reading_the_run(name: &str, backend_flag: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "Time to first token",
            "How long a request waits, from being sent, until the first piece of its answer \
             arrives. Queueing counts too, so it grows when the server is full."
                .to_string(),
        ),
        (
            "Boot log",
            format!(
                "The server's own output, saved from the moment it starts until it is stopped. \
                 It shows the settings {name} really applied (sometimes not the ones \
                 requested), the memory it set aside, and any errors."
            ),
        ),
        (
            "Before and after readings",
            "Two captures of every server counter, one right before the load starts and one \
             right after it ends. Subtracting the first from the second isolates what the load \
             did."
                .to_string(),
        ),
        (
            "Recording",
            "Samples of the server's live gauges (requests running and waiting, share of the KV \
             cache in use), taken every fraction of a second while the load runs. The charts \
             and several checks are built from it."
                .to_string(),
        ),
        (
            "Attention backend",
            format!(
                "The set of GPU kernels that performs attention, the step where each token looks \
                 back at the text before it. {name} ships several and chooses one itself unless \
                 {backend_flag} asks for a specific one (T6)."
            ),
        ),
        (
            "CUDA graphs",
            "A start-up optimisation: the server captures its sequence of GPU operations once \
             and then replays it, instead of launching each operation separately. The captured \
             graphs occupy GPU memory that the KV cache then cannot use."
                .to_string(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_reference_command_names() {
        let glossaries: Vec<String> = Engine::ALL
            .into_iter()
            .flat_map(glossary)
            .map(|(term, def)| format!("{term} {def}"))
            .collect();
        let all_texts = crate::rules::registry::all()
            .iter()
            .flat_map(|t| {
                [
                    t.title,
                    t.catches,
                    t.why,
                    t.evidence,
                    t.reproduce,
                    t.fix,
                    t.vllm,
                    t.sglang,
                    t.trtllm,
                    t.slug,
                    t.summary,
                ]
            })
            .map(str::to_string)
            .chain(glossaries);
        // The reference's command names, spelled in pieces so this file itself stays free
        // of them for a plain text search.
        let banned = [["x", "ray"].concat(), ["inferlint ", "report"].concat()];
        for text in all_texts {
            let lower = text.to_ascii_lowercase();
            for word in &banned {
                assert!(!lower.contains(word.as_str()), "{word:?} in {text}");
            }
        }
    }

    #[test]
    fn glossary_terms() {
        let expected = [
            "Token",
            "Prompt and output tokens",
            "Request",
            "Concurrency",
            "Waiting (queue)",
            "KV cache",
            "KV pool",
            "KV block",
            "Null block",
            "Fit in cache (ceiling)",
            "Preemption",
            "Output tokens per second",
            "Time to first token",
            "Boot log",
            "Before and after readings",
            "Recording",
            "Attention backend",
            "CUDA graphs",
        ];
        for e in Engine::ALL {
            let g = glossary(e);
            let terms: Vec<&str> = g.iter().map(|(t, _)| *t).collect();
            assert_eq!(terms, expected, "{}", e.key());
            for (term, def) in &g {
                assert!(!def.trim().is_empty(), "{term}");
            }
        }
        let preemption = |e| {
            glossary(e)
                .into_iter()
                .find(|(t, _)| *t == "Preemption")
                .unwrap()
                .1
        };
        let (v, s, t) = (
            preemption(Engine::Vllm),
            preemption(Engine::Sglang),
            preemption(Engine::Trtllm),
        );
        assert!(v != s && s != t && v != t);
        assert!(s.contains("retraction"));
        assert!(t.contains("MAX_UTILIZATION") && t.contains("GUARANTEED_NO_EVICT"));
    }
}
