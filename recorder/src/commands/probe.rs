//! `probe URL` (docs/tripwires.md#t7): the live T7 probe; its result as the analyzer reads
//! `probe.json`. Exit 0 pass, 1 fail.

use anyhow::{Context, Result};

use crate::cli::ProbeArgs;
use crate::docs::{print_results, write_doc_to};
use crate::probe::{self, ProbeOptions};

pub fn probe(args: ProbeArgs) -> Result<i32> {
    let opts = ProbeOptions {
        model: args.model,
        concurrency: args.concurrency,
        max_tokens: args.max_tokens,
    };
    let doc = probe::run(&args.url, &opts);
    if let Some(out) = &args.out {
        write_doc_to(out, &doc).with_context(|| format!("cannot write {}", out.display()))?;
    }
    print_results(&[probe::result(&doc)], args.common.json);
    Ok(if probe::passed(&doc) { 0 } else { 1 })
}
