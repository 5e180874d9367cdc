//! `gpu-inspect`: the cards' facts, then the clear-card rule; T2 as the
//! analyzer judges the gate document it fills (written with `-o`).

use anyhow::{bail, Context, Result};

use analyzer::rules::t02_orphaned_engine::{self as t02, CardCheck, Rule};

use super::{fs_of, say_to};
use crate::cli::GpuArgs;
use crate::docs::{exit_status, print_results, write_doc_to};
use crate::record::gate::{gate, gate_doc};
use crate::{gpu, procs};

pub fn gpu_inspect(args: GpuArgs) -> Result<i32> {
    if args.consecutive < 1 {
        bail!("--consecutive must be at least 1");
    }
    let json = args.common.json;
    let gpus = gpu::facts().unwrap_or_default();
    if gpus.is_empty() {
        say_to(json, "no NVIDIA GPU found: nvidia-smi is missing or failed");
    }
    for line in gpus.iter().flat_map(gpu::lines) {
        say_to(json, &line);
    }
    let fs = fs_of(&args.proc_root);
    let rule = Rule::new(args.max_used_mib, args.consecutive, args.timeout);
    let doc = if procs::linux(&fs.root) {
        gate(&fs, &rule, Some(gpus))
    } else {
        let unjudged = CardCheck {
            reason: t02::NEEDS_LINUX.into(),
            ..CardCheck::default()
        };
        gate_doc(&rule, unjudged, Vec::new(), false, Some(gpus))
    };
    if let Some(out) = &args.out {
        write_doc_to(out, &doc).with_context(|| format!("cannot write {}", out.display()))?;
    }
    let result = t02::inspected(&doc);
    print_results(std::slice::from_ref(&result), json);
    Ok(exit_status(&[result], args.common.strict))
}
