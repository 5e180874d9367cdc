//! A field's converted value: what a value rule gives and what the
//! facts pass records. A leaf: the engines' rule files build these values and the field
//! table hands them on, neither importing the other.

use crate::json::Json;

/// A field's converted value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FieldValue {
    Text(String),
    Dict(Json),
    Int(i64),
    Float(f64),
    /// vLLM's and SGLang's `model_load`.
    ModelLoad {
        gib: f64,
        seconds: f64,
    },
    /// vLLM's `memory_split`.
    MemorySplit {
        consumed_gib: f64,
        peak_activation_gib: f64,
    },
    Backend {
        name: String,
        candidates: Option<Vec<String>>,
    },
    KvPool {
        tokens: i64,
        request_len: i64,
        concurrency: f64,
    },
    CudagraphDowngrade {
        from: String,
        to: String,
    },
    /// SGLang's pool, its K and V sizes in GB as printed.
    SglangKvPool {
        tokens: i64,
        k_gb: f64,
        v_gb: f64,
    },
    RunningCapReason {
        cap: i64,
        reason: String,
    },
    SglangLimits {
        pool_tokens: i64,
        running_cap: i64,
    },
    TrtKvPool {
        gib: f64,
        tokens: i64,
    },
    TrtLimits {
        requests: i64,
        tokens: i64,
        batch: i64,
    },
    /// A line that only marks something (TensorRT-LLM's `LLM Args:` header).
    Nothing,
}

impl FieldValue {
    /// The value as listed under `conflicts`: a value of several parts becomes an array
    /// of them, in the order the line prints them.
    pub(crate) fn to_json(&self) -> Json {
        match self {
            FieldValue::Text(s) => Json::Str(s.clone()),
            FieldValue::Dict(d) => d.clone(),
            FieldValue::Int(n) => Json::Int(*n),
            FieldValue::Float(f) => Json::Float(*f),
            FieldValue::ModelLoad { gib, seconds } => {
                Json::Arr(vec![Json::Float(*gib), Json::Float(*seconds)])
            }
            FieldValue::MemorySplit {
                consumed_gib,
                peak_activation_gib,
            } => Json::Arr(vec![
                Json::Float(*consumed_gib),
                Json::Float(*peak_activation_gib),
            ]),
            FieldValue::Backend { name, candidates } => match candidates {
                None => Json::Str(name.clone()),
                Some(c) => Json::Arr(vec![Json::Str(name.clone()), c.clone().into()]),
            },
            FieldValue::KvPool {
                tokens,
                request_len,
                concurrency,
            } => Json::Arr(vec![
                Json::Int(*tokens),
                Json::Int(*request_len),
                Json::Float(*concurrency),
            ]),
            FieldValue::CudagraphDowngrade { from, to } => {
                Json::Arr(vec![from.as_str().into(), to.as_str().into()])
            }
            FieldValue::SglangKvPool { tokens, k_gb, v_gb } => Json::Arr(vec![
                Json::Int(*tokens),
                Json::Float(*k_gb),
                Json::Float(*v_gb),
            ]),
            FieldValue::RunningCapReason { cap, reason } => {
                Json::Arr(vec![Json::Int(*cap), reason.as_str().into()])
            }
            FieldValue::SglangLimits {
                pool_tokens,
                running_cap,
            } => Json::Arr(vec![Json::Int(*pool_tokens), Json::Int(*running_cap)]),
            FieldValue::TrtKvPool { gib, tokens } => {
                Json::Arr(vec![Json::Float(*gib), Json::Int(*tokens)])
            }
            FieldValue::TrtLimits {
                requests,
                tokens,
                batch,
            } => Json::Arr(vec![
                Json::Int(*requests),
                Json::Int(*tokens),
                Json::Int(*batch),
            ]),
            FieldValue::Nothing => Json::Null,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_in_printed_order() {
        let v = FieldValue::ModelLoad {
            gib: 17.71,
            seconds: 75.25,
        };
        assert_eq!(
            v.to_json(),
            Json::Arr(vec![Json::Float(17.71), Json::Float(75.25)])
        );
        let v = FieldValue::RunningCapReason {
            cap: 1,
            reason: "mamba state cache".into(),
        };
        assert_eq!(
            v.to_json(),
            Json::Arr(vec![Json::Int(1), Json::Str("mamba state cache".into())])
        );
        assert_eq!(FieldValue::Nothing.to_json(), Json::Null);
    }
}
