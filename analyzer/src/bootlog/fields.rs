//! The field table (docs/run-folder.md#boot-log): each field's anchor, value rule and
//! repeat policy, in the order the tables give (which is the order fields are tried on a
//! line).

use super::anchors::{Anchor, AnchorSet};
use super::value::FieldValue;
use super::{sglang, trtllm, vllm};

/// What happens when a field is seen more than once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Policy {
    /// The last value holds; several distinct values are listed under `conflicts`.
    LastConflict,
    /// The last value holds, silently.
    Last,
    /// Values add up (rounded to 2 decimals after each addition).
    Sum,
    /// Every value is appended.
    List,
}

macro_rules! fields {
    ($($name:ident => $id:literal, $anchor:ident, $policy:ident;)*) => {
        /// One row of the field tables.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Field { $($name,)* }

        /// Every field, in table order.
        pub(crate) const TABLE: &[Field] = &[$(Field::$name,)*];

        impl Field {
            /// The field id used in `unparsed` and `conflicts`.
            pub(crate) fn id(self) -> &'static str {
                match self { $(Field::$name => $id,)* }
            }
            pub(crate) fn policy(self) -> Policy {
                match self { $(Field::$name => Policy::$policy,)* }
            }
            fn anchor(self) -> Anchor {
                match self { $(Field::$name => Anchor::$anchor,)* }
            }
        }
    };
}

fields! {
    VllmVersion => "vllm_version", VllmInit, LastConflict;
    NonDefaultArgs => "non_default_args", NonDefault, LastConflict;
    BackendCandidates => "selected_backend", Potential, List;
    BackendEnum => "selected_backend", EnumBackend, List;
    AttentionBlockSize => "attention_block_size", BlockSize, LastConflict;
    MambaPadding => "mamba_page_padding_pct", MambaPad, LastConflict;
    KvPool => "kv_pool", KvSize, LastConflict;
    AvailableKv => "available_kv_cache_gib", AvailKv, LastConflict;
    CpuKvPool => "kv_pool", CpuKvSize, LastConflict;
    CpuKvSpace => "available_kv_cache_gib", CpuKvSpace, LastConflict;
    CpuMlaBackend => "selected_backend", CpuMla, List;
    ModelLoad => "model_load", ModelLoading, LastConflict;
    CudagraphEstimated => "cudagraph_estimated_gib", CgEstimated, LastConflict;
    CudagraphActual => "cudagraph_actual_gib", CgPool, LastConflict;
    MemorySplit => "memory_split", Consumed, LastConflict;
    CompileSeconds => "compile_s", Compile, Sum;
    CudagraphDowngrade => "cudagraph_mode_downgrade", SpecDecode, LastConflict;
    ServerArgs => "server_args", ServerArgs, LastConflict;
    SglangKvPool => "sglang_kv_pool", SgKv, LastConflict;
    SglangModelLoad => "model_load", SgLoad, LastConflict;
    SglangCudagraph => "sglang_cudagraph_gib", SgGraph, Sum;
    SglangCapReason => "sglang_running_cap_reason", SgCapped, LastConflict;
    SglangLimits => "sglang_limits", SgLimits, LastConflict;
    SglangDefaultBackend => "sglang_default_backend", SgDefault, LastConflict;
    EngineVersion => "engine_version", TrtVersion, Last;
    TrtKvPool => "trt_kv_pool", TrtPool, Last;
    PageSize => "page_size", TrtPage, Last;
    TrtLimits => "trt_limits", TrtLimits, Last;
    TrtModelLoadGib => "model_load_gib", TrtLoad, LastConflict;
    TrtLlmArgs => "trt_llm_args", LlmArgs, LastConflict;
}

/// What one field makes of one line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// The anchor is not on the line.
    Absent,
    /// The anchor is there but the value did not match or convert.
    Unparsed,
    Value(FieldValue),
}

impl Field {
    /// Applies this field's anchor and value rule to `line` (ANSI removed); `anchors`
    /// holds the anchors found on it.
    pub(crate) fn read(self, line: &str, anchors: AnchorSet) -> Outcome {
        if !anchors.has(self.anchor()) {
            return Outcome::Absent;
        }
        let got = match self {
            Field::BackendEnum => match vllm::enum_backend(line) {
                None => return Outcome::Absent,
                Some(v) => v,
            },
            Field::VllmVersion => vllm::version(line),
            Field::NonDefaultArgs => vllm::non_default_args(line),
            Field::BackendCandidates => vllm::backend_with_candidates(line),
            Field::AttentionBlockSize => vllm::block_size(line),
            Field::MambaPadding => vllm::mamba_padding(line),
            Field::KvPool | Field::CpuKvPool => vllm::kv_pool(line),
            Field::AvailableKv => vllm::available_kv(line),
            Field::CpuKvSpace => vllm::cpu_kv_space(line),
            Field::CpuMlaBackend => vllm::cpu_mla_backend(line),
            Field::ModelLoad => vllm::model_load(line),
            Field::CudagraphEstimated => vllm::cudagraph_estimated(line),
            Field::CudagraphActual => vllm::cudagraph_actual(line),
            Field::MemorySplit => vllm::memory_split(line),
            Field::CompileSeconds => vllm::compile_seconds(line),
            Field::CudagraphDowngrade => vllm::cudagraph_downgrade(line),
            Field::ServerArgs => sglang::server_args(line),
            Field::SglangKvPool => sglang::kv_pool(line),
            Field::SglangModelLoad => sglang::model_load(line),
            Field::SglangCudagraph => sglang::cudagraph(line),
            Field::SglangCapReason => sglang::capped(line),
            Field::SglangLimits => sglang::limits(line),
            Field::SglangDefaultBackend => sglang::default_backend(line),
            Field::EngineVersion => trtllm::version(line),
            Field::TrtKvPool => trtllm::kv_pool(line),
            Field::PageSize => trtllm::page_size(line),
            Field::TrtLimits => trtllm::limits(line),
            Field::TrtModelLoadGib => trtllm::model_load_gib(line),
            Field::TrtLlmArgs => trtllm::llm_args_header(line),
        };
        got.map_or(Outcome::Unparsed, Outcome::Value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::anchors::anchors_in;

    fn read(f: Field, line: &str) -> Outcome {
        f.read(line, anchors_in(line).anchors)
    }

    #[test]
    fn anchor_value_unparsed() {
        assert_eq!(read(Field::KvPool, "nothing here"), Outcome::Absent);
        assert_eq!(
            read(Field::KvPool, "GPU KV cache size: 31.5k tokens (1.93x)"),
            Outcome::Unparsed
        );
        assert_eq!(
            read(Field::AvailableKv, "Available KV cache memory: 2.51 GiB"),
            Outcome::Value(FieldValue::Float(2.51))
        );
        assert_eq!(
            read(
                Field::BackendEnum,
                "Using AttentionBackendEnum.FLASH_ATTN for MMEncoderAttention."
            ),
            Outcome::Absent
        );
        assert_eq!(
            read(Field::TrtLlmArgs, "[_torch] LLM Args: x"),
            Outcome::Unparsed
        );
    }

    #[test]
    fn table_ids() {
        assert_eq!(TABLE.len(), 30);
        assert_eq!(Field::SglangModelLoad.id(), Field::ModelLoad.id());
        assert_eq!(Field::PageSize.policy(), Policy::Last);
        assert_eq!(Field::CompileSeconds.policy(), Policy::Sum);
    }
}
