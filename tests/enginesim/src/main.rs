//! inferlint-enginesim: a simulator of vLLM, SGLang and TensorRT-LLM (and of the
//! `nvidia-smi` and `vllm bench serve` they are used with), for testing inferlint on a
//! machine without a GPU. It picks its personality from the name it was run under.

mod args;
mod bench;
mod body;
mod bootfail;
mod complete;
mod gpu;
mod hist;
mod http;
mod log;
mod metrics;
mod model;
mod openai;
mod procs;
mod prompt;
mod pylit;
mod sched;
mod server;
mod sglang;
mod sglang_metrics;
mod tokenize;
mod trtllm;
mod vllm;
mod vllm032;

use std::path::Path;

const USAGE: &str = "usage: inferlint-enginesim <vllm|sglang|trtllm-serve|nvidia-smi> ARGS...
       inferlint-enginesim install DIR   (links named vllm, sglang, trtllm-serve, nvidia-smi)
or run it through a link of one of those names.";

fn install(rest: &[String]) -> anyhow::Result<i32> {
    let dir = rest
        .first()
        .ok_or_else(|| anyhow::anyhow!("install needs a folder"))?;
    std::fs::create_dir_all(dir)?;
    let exe = std::env::current_exe()?;
    for name in ["vllm", "sglang", "trtllm-serve", "nvidia-smi"] {
        let link = Path::new(dir).join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&exe, &link)?;
        println!("{}", link.display());
    }
    Ok(0)
}

fn run(argv: Vec<String>) -> anyhow::Result<i32> {
    let prog = argv
        .first()
        .map(|a| {
            Path::new(a)
                .file_name()
                .map(|f| f.to_string_lossy().to_string())
                .unwrap_or_default()
        })
        .unwrap_or_default();
    let (who, rest): (String, &[String]) = match prog.as_str() {
        "vllm" | "sglang" | "trtllm-serve" | "nvidia-smi" => (prog.clone(), &argv[1..]),
        _ => match argv.get(1) {
            Some(p) => (p.clone(), &argv[2..]),
            None => {
                eprintln!("{USAGE}");
                return Ok(2);
            }
        },
    };
    let sub = rest.first().map(String::as_str).unwrap_or("");
    match (who.as_str(), sub) {
        ("install", _) => install(rest),
        ("nvidia-smi", _) => Ok(gpu::nvidia_smi(rest)),
        ("vllm", "serve") => vllm::serve(&rest[1..]),
        ("vllm", "bench") if rest.get(1).map(String::as_str) == Some("serve") => {
            bench::main(&rest[2..])
        }
        ("vllm", "--version") => {
            println!("{}", vllm::DEFAULT_VERSION);
            Ok(0)
        }
        ("sglang", "serve") => sglang::serve(&rest[1..]),
        ("trtllm-serve", "serve") => trtllm::serve(&rest[1..]),
        _ => {
            eprintln!(
                "inferlint-enginesim: not simulated: {who} {}",
                rest.join(" ")
            );
            eprintln!("{USAGE}");
            Ok(2)
        }
    }
}

fn main() {
    if let Ok(role) = std::env::var(procs::ROLE_ENV) {
        std::process::exit(procs::child_main(&role));
    }
    let argv: Vec<String> = std::env::args().collect();
    match run(argv) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("inferlint-enginesim: error: {e:#}");
            std::process::exit(2);
        }
    }
}
