//! Start-up failures (T12) and crashes after ready (T7), as the tracebacks the engines
//! print. Each kind ends in the line the analyzer's classifier keys on
//! (`bootlog/classify.rs`).

/// The traceback body (without any engine prefix) for a failure kind.
pub fn traceback(kind: &str, site: &str) -> Vec<String> {
    let mut v = vec![
        "Traceback (most recent call last):".to_string(),
        format!("  File \"/opt/venv/lib/python3.12/site-packages/{site}\", line 1357, in run_engine_core"),
        "    engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)".to_string(),
    ];
    let tail: &[&str] = match kind {
        "oom" => &[
            "  File \"/opt/venv/lib/python3.12/site-packages/torch/utils/_device.py\", line 104, in __torch_function__",
            "    return func(*args, **kwargs)",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.99 GiB of which 1.12 GiB is free. Of the allocated memory 20.41 GiB is allocated by PyTorch, and 183.02 MiB is reserved by PyTorch but unallocated.",
        ],
        "cuda" => &[
            "  File \"/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py\", line 412, in _lazy_init",
            "    torch._C._cuda_init()",
            "RuntimeError: CUDA error: unspecified launch failure",
        ],
        "accelerator" => &[
            "  File \"/opt/venv/lib/python3.12/site-packages/torch/cuda/__init__.py\", line 1005, in synchronize",
            "    return torch._C._cuda_synchronize()",
            "torch.AcceleratorError: CUDA error: device not ready",
        ],
        "ld" => &[
            "  File \"/opt/venv/lib/python3.12/site-packages/flashinfer/jit/cpp_ext.py\", line 382, in run_ninja",
            "    raise RuntimeError(msg) from e",
            "RuntimeError: Ninja build failed. Ninja output:",
            "FAILED: [code=1] /root/.cache/flashinfer/cached_ops/sampling/sampling.so ",
            "/usr/bin/ld: cannot find -lcudart: No such file or directory",
            "collect2: error: ld returned 1 exit status",
            "ninja: build stopped: subcommand failed.",
        ],
        "headers" => &[
            "  File \"/opt/venv/lib/python3.12/site-packages/flashinfer/jit/cpp_ext.py\", line 382, in run_ninja",
            "    raise RuntimeError(msg) from e",
            "RuntimeError: Ninja build failed. Ninja output:",
            "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- CUDA compiler and CUDA toolkit headers are incompatible, please check your include paths",
        ],
        "kv" => &[
            "  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/core/kv_cache_utils.py\", line 686, in check_enough_kv_cache_memory",
            "    raise ValueError(",
            "ValueError: To serve at least one request with the models's max seq len (16384), (2.25 GiB KV cache is needed, which is larger than the available KV cache memory (1.09 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        ],
        _ => &[
            "  File \"/opt/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py\", line 2410, in _join_cuda_home",
            "    assert cuda_home is not None",
            "AssertionError",
        ],
    };
    v.extend(tail.iter().map(|s| s.to_string()));
    v
}

/// The crash after ready (T7): an illegal memory access in the engine's step.
pub fn crash_lines() -> Vec<String> {
    vec![
        "EngineCore encountered a fatal error.".into(),
        "Traceback (most recent call last):".into(),
        "  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py\", line 1021, in run_busy_loop".into(),
        "    self._process_engine_step()".into(),
        "  File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py\", line 2874, in execute_model".into(),
        "    torch.cuda.synchronize()".into(),
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered".into(),
    ]
}
