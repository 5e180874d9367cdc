//! The facts pass (docs/run-folder.md#boot-log): every field rule and marker tried on
//! every line, in one pass, keeping only what the derived facts (`derive`) need afterwards.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::anchors::{Anchor, AnchorSet};
use super::fields::{Field, Outcome, Policy, TABLE};
use super::scan::LineView;
use super::value::FieldValue;
use super::{counts, jsoneq, stamps, BootFacts, Unparsed};
use crate::json::Json;
use crate::num::round_dp;
use crate::text::cut_chars;

/// Distinct values of one field, in order of first appearance.
struct Seen {
    id: &'static str,
    values: Vec<Json>,
    keys: HashSet<String>,
}

/// Where the `LLM Args:` header search stands (its settings follow on the next line).
#[derive(Debug, Clone, PartialEq)]
enum LlmArgs {
    Looking,
    NextLine,
    Found(String),
}

/// What the scan leaves for the derived facts (`derive`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Extras {
    /// SGLang's "Attention backend not specified" line was read.
    pub not_specified: bool,
    /// TensorRT-LLM's settings line, ANSI removed and trimmed.
    pub llm_args: Option<String>,
    pub served: i64,
    pub pauses: i64,
    /// Seconds into a leap year of the first and last stamped line up to ready.
    pub first_stamp: Option<i64>,
    pub last_stamp: Option<i64>,
    pub compiled: bool,
    /// vLLM's engine configuration names the CPU platform (`device_config=cpu`).
    pub cpu_platform: bool,
    pub aot_loaded: bool,
}

pub(crate) struct FactsScan {
    pub facts: BootFacts,
    pub extras: Extras,
    drafter: bool,
    seen: Vec<Seen>,
    llm_args: LlmArgs,
    procs: Vec<(String, BTreeSet<i64>)>,
    proc_index: HashMap<String, usize>,
    recent_procs: [usize; 2],
    recent_tags: Vec<(String, String)>,
    /// The anchors of the field table: a line with none of them skips the table.
    field_anchors: AnchorSet,
    /// The last line each argument dict (vLLM's non-default args, SGLang's server_args)
    /// was read from: the same text again gives the same value, so a log that repeats a
    /// start (or many) parses each dict once instead of every time.
    last_dict_line: [String; 2],
}

impl FactsScan {
    pub(crate) fn new() -> Self {
        let field_anchors = AnchorSet::of(&[
            Anchor::VllmInit,
            Anchor::NonDefault,
            Anchor::Potential,
            Anchor::EnumBackend,
            Anchor::BlockSize,
            Anchor::MambaPad,
            Anchor::KvSize,
            Anchor::AvailKv,
            Anchor::CpuKvSize,
            Anchor::CpuKvSpace,
            Anchor::CpuMla,
            Anchor::ModelLoading,
            Anchor::CgEstimated,
            Anchor::CgPool,
            Anchor::Consumed,
            Anchor::Compile,
            Anchor::SpecDecode,
            Anchor::ServerArgs,
            Anchor::SgKv,
            Anchor::SgLoad,
            Anchor::SgGraph,
            Anchor::SgCapped,
            Anchor::SgLimits,
            Anchor::SgDefault,
            Anchor::TrtVersion,
            Anchor::TrtPool,
            Anchor::TrtPage,
            Anchor::TrtLimits,
            Anchor::TrtLoad,
            Anchor::LlmArgs,
        ]);
        FactsScan {
            facts: BootFacts::default(),
            extras: Extras::default(),
            drafter: false,
            seen: Vec::new(),
            llm_args: LlmArgs::Looking,
            procs: vec![(String::new(), BTreeSet::new())],
            proc_index: HashMap::new(),
            recent_procs: [0, 0],
            recent_tags: Vec::with_capacity(4),
            field_anchors,
            last_dict_line: [String::new(), String::new()],
        }
    }

    pub(crate) fn line(&mut self, v: &LineView<'_>) {
        let clean: &str = &v.clean;
        self.facts.lines = v.lineno;
        if self.llm_args == LlmArgs::NextLine {
            self.llm_args = LlmArgs::Found(clean.trim().to_string());
        }
        if v.anchors.has(Anchor::Drafter) {
            self.drafter = true;
        }
        if let Some((name, pid)) = v.tag() {
            self.process(name, pid);
        }
        if v.anchors.meets(self.field_anchors) {
            self.fields(v.lineno, clean, v.body(), v.anchors);
        }
        // Eager mode, or a configuration without CUDA graphs (vLLM's CPU platform).
        if v.anchors.has(Anchor::Eager) || v.anchors.has(Anchor::NoGraphs) {
            self.facts.cudagraphs = Some(false);
        }
        if v.anchors.has(Anchor::CpuDevice) {
            self.extras.cpu_platform = true;
        }
        if v.anchors.has(Anchor::Compiling) {
            self.extras.compiled = true;
        }
        if v.anchors.has(Anchor::AotLoad) {
            self.extras.aot_loaded = true;
        }
        if !self.facts.ready {
            if let Some(Some(t)) = stamps::first_stamp(clean) {
                self.extras.first_stamp.get_or_insert(t);
                self.extras.last_stamp = Some(t);
            }
            if v.anchors.has(Anchor::Ready) {
                self.facts.ready = true;
                self.facts.ready_lineno = Some(v.lineno);
            }
        }
        self.raw_counts(v);
    }

    /// Counts and markers read from the raw text (`counts`).
    fn raw_counts(&mut self, v: &LineView<'_>) {
        if self.llm_args == LlmArgs::Looking
            && v.raw_has(Anchor::LlmArgs)
            && v.raw.trim_end().ends_with("LLM Args:")
        {
            self.llm_args = LlmArgs::NextLine;
        }
        if v.raw_has(Anchor::Post) {
            self.extras.served += counts::served(v.raw);
        }
        if v.raw_has(Anchor::RequestId) {
            self.extras.pauses += counts::pauses(v.raw);
        }
    }

    fn process(&mut self, name: &str, pid: &str) {
        // Most lines repeat the tag of a recent one.
        if self.recent_tags.iter().any(|(n, p)| n == name && p == pid) {
            return;
        }
        if self.recent_tags.len() == 4 {
            self.recent_tags.remove(0);
        }
        self.recent_tags.push((name.to_string(), pid.to_string()));
        let Ok(pid) = pid.parse::<i64>() else { return };
        // Lines come in runs from one process: try the last two names first.
        let at = match self
            .recent_procs
            .iter()
            .find(|&&at| self.procs[at].0 == name)
        {
            Some(&at) => at,
            None => {
                let at = match self.proc_index.get(name) {
                    Some(&at) => at,
                    None => {
                        self.proc_index.insert(name.to_string(), self.procs.len());
                        self.procs.push((name.to_string(), BTreeSet::new()));
                        self.procs.len() - 1
                    }
                };
                self.recent_procs = [at, self.recent_procs[0]];
                at
            }
        };
        let pids = &mut self.procs[at].1;
        if pids.last() != Some(&pid) {
            pids.insert(pid);
        }
    }

    fn fields(&mut self, lineno: usize, clean: &str, body: &str, anchors: AnchorSet) {
        for &field in TABLE {
            let dict = match field {
                Field::NonDefaultArgs => Some(0),
                Field::ServerArgs => Some(1),
                _ => None,
            };
            // Same text as the last value read: last wins with that same value, and it
            // is already among the distinct values.
            if dict.is_some_and(|d| !clean.is_empty() && self.last_dict_line[d] == clean) {
                continue;
            }
            let outcome = field.read(clean, anchors);
            if let (Some(d), Outcome::Value(_)) = (dict, &outcome) {
                self.last_dict_line[d].clear();
                self.last_dict_line[d].push_str(clean);
            }
            match outcome {
                Outcome::Absent => {}
                Outcome::Unparsed => self.facts.unparsed.push(Unparsed {
                    field: field.id().to_string(),
                    lineno,
                    line: cut_chars(body, 300).to_string(),
                }),
                Outcome::Value(val) => {
                    if field.policy() == Policy::LastConflict && val != FieldValue::Nothing {
                        self.remember(field.id(), val.to_json());
                    }
                    self.apply(field, val);
                }
            }
        }
    }

    fn remember(&mut self, id: &'static str, value: Json) {
        let at = match self.seen.iter().position(|s| s.id == id) {
            Some(at) => at,
            None => {
                self.seen.push(Seen {
                    id,
                    values: Vec::new(),
                    keys: HashSet::new(),
                });
                self.seen.len() - 1
            }
        };
        let s = &mut self.seen[at];
        if s.keys.insert(jsoneq::canon(&value)) {
            s.values.push(value);
        }
    }

    fn apply(&mut self, field: Field, val: FieldValue) {
        let f = &mut self.facts;
        match val {
            FieldValue::Backend { name, candidates } => {
                if self.drafter {
                    f.drafter_backends.push(name);
                } else {
                    f.selected_backends.push(name);
                    if let Some(c) = candidates {
                        f.candidate_backends = c;
                    }
                }
            }
            FieldValue::Text(s) => match field {
                Field::VllmVersion => f.vllm_version = Some(s),
                Field::EngineVersion => f.engine_version = Some(s),
                Field::SglangDefaultBackend => {
                    f.selected_backends.push(s);
                    self.extras.not_specified = true;
                }
                _ => {}
            },
            FieldValue::Dict(d) => match field {
                Field::NonDefaultArgs => f.non_default_args = Some(d),
                Field::ServerArgs => f.server_args = Some(d),
                _ => {}
            },
            FieldValue::Int(n) => match field {
                Field::AttentionBlockSize => f.attention_block_size = Some(n),
                Field::PageSize => f.page_size = Some(n),
                _ => {}
            },
            FieldValue::Float(x) => match field {
                Field::MambaPadding => f.mamba_page_padding_pct = Some(x),
                Field::AvailableKv | Field::CpuKvSpace => f.available_kv_cache_gib = Some(x),
                Field::CudagraphEstimated => f.cudagraph_estimated_gib = Some(x),
                Field::CudagraphActual => f.cudagraph_actual_gib = Some(x),
                Field::CompileSeconds => f.compile_s = Some(add(f.compile_s, x)),
                Field::SglangCudagraph => {
                    f.cudagraph_actual_gib = Some(add(f.cudagraph_actual_gib, x));
                }
                Field::TrtModelLoadGib => f.model_load_gib = Some(x),
                _ => {}
            },
            FieldValue::ModelLoad { gib, seconds } => {
                f.model_load_gib = Some(gib);
                f.model_load_s = Some(seconds);
            }
            FieldValue::MemorySplit {
                consumed_gib,
                peak_activation_gib,
            } => {
                f.consumed_gib = Some(consumed_gib);
                f.peak_activation_gib = Some(peak_activation_gib);
            }
            FieldValue::KvPool {
                tokens,
                request_len,
                concurrency,
            } => {
                f.kv_pool_tokens = Some(tokens);
                f.max_concurrency_request_len = Some(request_len);
                f.max_concurrency = Some(concurrency);
            }
            FieldValue::CudagraphDowngrade { from, to } => {
                f.cudagraph_mode_downgrade = Some((from, to));
            }
            FieldValue::SglangKvPool { tokens, k_gb, v_gb } => {
                f.kv_pool_tokens = Some(tokens);
                f.available_kv_cache_gib = Some(round_dp(k_gb + v_gb, 2));
            }
            FieldValue::RunningCapReason { cap, reason } => {
                f.running_cap = Some(cap);
                f.running_cap_reason = Some(reason);
            }
            FieldValue::SglangLimits {
                pool_tokens,
                running_cap,
            } => {
                f.kv_pool_tokens = Some(pool_tokens);
                f.running_cap = Some(running_cap);
            }
            FieldValue::TrtKvPool { gib, tokens } => {
                f.kv_pool_tokens = Some(tokens);
                f.available_kv_cache_gib = Some(gib);
            }
            FieldValue::TrtLimits {
                requests, batch, ..
            } => {
                f.running_cap = Some(requests);
                f.requested_running = Some(batch);
            }
            FieldValue::Nothing => {}
        }
    }

    /// Ends the scan: processes, conflicts and the `LLM Args` line.
    pub(crate) fn end(mut self) -> (BootFacts, Extras) {
        // Slot 0 is a placeholder that no tag name matches (names are never empty).
        self.facts.processes = self
            .procs
            .into_iter()
            .skip(1)
            .map(|(name, pids)| (name, pids.into_iter().collect()))
            .collect();
        self.facts.conflicts = self
            .seen
            .into_iter()
            .filter(|s| s.values.len() > 1)
            .map(|s| (s.id.to_string(), s.values))
            .collect();
        if let LlmArgs::Found(line) = self.llm_args {
            self.extras.llm_args = Some(line);
        }
        (self.facts, self.extras)
    }
}

/// A running sum, rounded to 2 decimals after each addition (`Policy::Sum`).
fn add(sum: Option<f64>, x: f64) -> f64 {
    round_dp(sum.unwrap_or(0.0) + x, 2)
}

#[cfg(test)]
mod tests {
    use crate::bootlog::read_facts;
    use crate::json::Json;

    /// A repeated argument line is read once; a changed one still counts, and the last
    /// line wins whatever was skipped.
    #[test]
    fn repeated_argument_lines_keep_last_wins_and_conflicts() {
        let a = "(APIServer pid=1) INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model': 'm', 'max_num_seqs': 8}";
        let b = "(APIServer pid=1) INFO 01-01 00:00:01 [utils.py:1] non-default args: {'model': 'm', 'max_num_seqs': 16}";
        let text = [a, a, b, b, a, a].join("\n");
        let f = read_facts(&text, None);
        let seqs = |v: &Json| v.get("max_num_seqs").and_then(Json::as_i64_trunc);
        assert_eq!(f.non_default_args.as_ref().and_then(seqs), Some(8));
        let (_, values) = f
            .conflicts
            .iter()
            .find(|(k, _)| k == "non_default_args")
            .expect("a conflict");
        assert_eq!(
            values.iter().map(seqs).collect::<Vec<_>>(),
            [Some(8), Some(16)]
        );
        // A line that does not parse is reported each time it appears.
        let bad =
            "(APIServer pid=1) INFO 01-01 00:00:02 [utils.py:1] non-default args: {'model': 'm'";
        let f = read_facts(&[a, bad, bad].join("\n"), None);
        assert_eq!(f.unparsed.len(), 2);
        assert_eq!(f.non_default_args.as_ref().and_then(seqs), Some(8));
    }
}
