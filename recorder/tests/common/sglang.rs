//! The real SGLang for its real-engine tier (`cargo xtask real --engine sglang`): where its
//! environment, the models and the stand-in for its CPU kernel package are, commands that
//! run it as its recipe says (`SGLANG_USE_CPU_ENGINE=1`, no hub, the native-torch
//! attention backend), and the load tools an SGLang user runs against it.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

use super::World;

/// The environment `cargo xtask real --engine sglang` installed, the models it built, the
/// stand-in `sgl_kernel`, and the vLLM tier's environment when it exists (for
/// `vllm bench serve` as the load).
pub struct RealSglang {
    pub venv: PathBuf,
    pub models: PathBuf,
    pub kernel: PathBuf,
    pub vllm: Option<PathBuf>,
    /// Held for the whole test: one real server at a time (it wants both cores and
    /// about 3.6 GB).
    _one_at_a_time: MutexGuard<'static, ()>,
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

impl RealSglang {
    /// The tier's environment from `INFERLINT_SGLANG_VENV`, `INFERLINT_REAL_MODELS` and
    /// `INFERLINT_SGL_KERNEL` (`cargo xtask real --engine sglang` sets them); a clear
    /// failure when they are missing.
    pub fn get() -> RealSglang {
        let var = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    panic!(
                        "{name} is not set: the real SGLang tests run under \
                         `cargo xtask real --engine sglang`"
                    )
                })
        };
        let venv = var("INFERLINT_SGLANG_VENV");
        let models = var("INFERLINT_REAL_MODELS");
        let kernel = var("INFERLINT_SGL_KERNEL");
        assert!(
            venv.join("bin/python").is_file(),
            "{} has no bin/python",
            venv.display()
        );
        assert!(
            kernel.join("sgl_kernel/__init__.py").is_file(),
            "{} holds no sgl_kernel stand-in",
            kernel.display()
        );
        let vllm = std::env::var_os("INFERLINT_REAL_VENV")
            .map(PathBuf::from)
            .filter(|v| v.join("bin/vllm").is_file());
        let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        RealSglang {
            venv,
            models,
            kernel,
            vllm,
            _one_at_a_time: guard,
        }
    }

    /// A model's folder (`tiny-llama`).
    pub fn model(&self, name: &str) -> String {
        let p = self.models.join(name);
        assert!(p.join("config.json").is_file(), "{} missing", p.display());
        p.display().to_string()
    }

    /// A command in `w` with the environment's `python` first on PATH (then the vLLM
    /// tier's `vllm`, when there is one) and SGLang's CPU settings: the CPU engine, no
    /// model hub, the stand-in kernel package first on PYTHONPATH.
    pub fn cmd(&self, w: &World, prog: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = w.cmd(prog);
        let mut dirs = vec![self.venv.join("bin")];
        dirs.extend(self.vllm.as_ref().map(|v| v.join("bin")));
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        c.env("PATH", std::env::join_paths(dirs).unwrap())
            .env("SGLANG_USE_CPU_ENGINE", "1")
            .env("HF_HUB_OFFLINE", "1")
            .env("TRANSFORMERS_OFFLINE", "1")
            .env("PYTHONPATH", &self.kernel)
            // For `vllm bench serve`: without it vLLM's CLI loads kernels this CPU lacks.
            .env("VLLM_TARGET_DEVICE", "cpu")
            .env_remove("INFERLINT_SIM_GPU_STATE");
        c
    }

    pub fn recorder(&self, w: &World) -> Command {
        let mut c = self.cmd(w, super::RECORDER);
        c.stdin(std::process::Stdio::null());
        c
    }
}

/// The `python -m sglang.launch_server` command of a case, on loopback, on the CPU with the
/// native-torch attention backend (the CPU default needs SGLang's own kernels) and
/// metrics on.
pub fn serve(model: &str, port: u16, flags: &str) -> String {
    format!(
        "python -m sglang.launch_server --model-path {model} --device cpu --host 127.0.0.1 \
         --port {port} --enable-metrics --attention-backend torch_native {flags}"
    )
    .trim_end()
    .to_string()
}

/// `python -m sglang.bench_serving` with its native backend (`/generate`): `prompts`
/// requests of `input` random token ids and `out` tokens, `concurrency` at once.
/// `ignore_eos` false lets requests end early at the model's end token.
pub fn bench(
    base: &str,
    model: &str,
    shape: (u32, u32),
    prompts: u32,
    concurrency: u32,
    ignore_eos: bool,
) -> Vec<String> {
    let (input, out) = shape;
    let mut v: Vec<String> = [
        "python",
        "-m",
        "sglang.bench_serving",
        "--backend",
        "sglang",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (flag, value) in [
        ("--base-url", base.to_string()),
        ("--model", model.to_string()),
        ("--dataset-name", "random-ids".into()),
        ("--random-input-len", input.to_string()),
        ("--random-output-len", out.to_string()),
        ("--random-range-ratio", "1.0".into()),
        ("--num-prompts", prompts.to_string()),
        ("--max-concurrency", concurrency.to_string()),
    ] {
        v.push(flag.into());
        v.push(value);
    }
    v.push("--disable-tqdm".into());
    if !ignore_eos {
        v.push("--disable-ignore-eos".into());
    }
    v
}

/// `vllm bench serve` against SGLang's OpenAI-compatible `/v1/completions`, as a user
/// comparing engines with one tool runs it.
pub fn vllm_bench(base: &str, model: &str, prompts: u32, concurrency: u32) -> Vec<String> {
    let mut v: Vec<String> = ["vllm", "bench", "serve", "--backend", "openai"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (flag, value) in [
        ("--base-url", base.to_string()),
        ("--endpoint", "/v1/completions".into()),
        ("--model", model.to_string()),
        ("--dataset-name", "random".into()),
        ("--random-input-len", "88".into()),
        ("--random-output-len", "100".into()),
        ("--num-prompts", prompts.to_string()),
        ("--max-concurrency", concurrency.to_string()),
    ] {
        v.push(flag.into());
        v.push(value);
    }
    v.push("--ignore-eos".into());
    v
}
