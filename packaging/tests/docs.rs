//! The docs are true of the commands: every `inferlint …` and `inferlint-recorder …`
//! command line in README.md and docs/*.md (code blocks and inline code) names a real
//! subcommand and only flags that subcommand has, every flag named alone in the prose is
//! one of the two commands' flags (or a listed flag of another tool), and every
//! `cargo xtask NAME` is an xtask command. The clap definitions are the source.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::CommandFactory;

/// Flags the docs name that belong to other programs (engines, load tools, the router,
/// pip), each with whose it is. A flag of ours mentioned alone needs no entry.
const FOREIGN_FLAGS: &[(&str, &str)] = &[
    (
        "--then",
        "the recorder's separator between load commands, inside the load",
    ),
    ("--enforce-eager", "vLLM"),
    ("--max-num-seqs", "vLLM"),
    ("--max-num-queued-reqs", "vLLM"),
    ("--num-gpu-blocks-override", "vLLM"),
    ("--attention-backend", "vLLM and SGLang"),
    ("--max-running-requests", "SGLang"),
    ("--device", "SGLang"),
    ("--max-concurrency", "vllm bench serve"),
    ("--profile-export-prefix", "AIPerf"),
    ("--save-result", "vllm bench serve"),
    ("--save-detailed", "vllm bench serve"),
    ("--result-dir", "vllm bench serve"),
    ("--result-filename", "vllm bench serve"),
    ("--profile", "GuideLLM"),
    ("--tokenizer", "GuideLLM and AIPerf"),
    ("--request-rate", "AIPerf"),
    ("--prometheus-port", "vllm-router"),
    ("--no-deps", "pip"),
    ("--max-model-len", "vLLM"),
    (
        "--<dataset>-output-len",
        "vllm bench serve (the dataset's own output length)",
    ),
    (
        "--random-output-len",
        "vllm bench serve and SGLang's and TensorRT-LLM's scripts",
    ),
    (
        "--sharegpt-output-len",
        "vllm bench serve and SGLang's and TensorRT-LLM's scripts",
    ),
    (
        "--random-range-ratio",
        "vllm bench serve and SGLang's script",
    ),
    ("--ignore-eos", "vllm bench serve"),
    ("--disable-ignore-eos", "SGLang's bench_serving"),
    ("--data", "GuideLLM"),
    ("--output-tokens-mean", "AIPerf"),
    ("--osl", "AIPerf"),
    ("--extra-inputs", "AIPerf"),
    ("--sim-speed", "the engine simulator (tests/enginesim)"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pages checked: README.md and every docs/*.md.
fn pages() -> Vec<(String, String)> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|f| {
            let name = f.strip_prefix(root()).unwrap_or(&f).display().to_string();
            (name, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

/// A command line or a lone flag found in a page, with where.
#[derive(Debug)]
struct Mention {
    place: String,
    tokens: Vec<String>,
}

/// Shell-like words: whitespace splits, quotes group (and are removed).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            None => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The command lines of a fenced block's text: continuation lines joined, `$ ` prompts
/// taken (a console block's other lines are output), comments cut.
fn block_lines(lang: &str, body: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in body {
        let line = if lang == "console" {
            match line.strip_prefix("$ ") {
                Some(cmd) => cmd,
                None if !pending.is_empty() => line,
                None => continue,
            }
        } else {
            line
        };
        match line.trim_end().strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(line);
                out.push(std::mem::take(&mut pending));
            }
        }
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    out
}

/// Words that end the part of a line a command owns.
fn ends_command(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | ";" | ">" | ">>" | "2>") || word.starts_with('#')
}

/// Every mention in one page: command lines of ours, lone flags, `cargo xtask` uses.
fn mentions(page: &str, text: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let place = format!("{page}:{}", i + 1);
        if let Some(lang) = lines[i].trim_start().strip_prefix("```") {
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && !lines[end].trim_start().starts_with("```") {
                end += 1;
            }
            let lang = lang.trim();
            if matches!(lang, "sh" | "bash" | "shell" | "console" | "yaml" | "") {
                for line in block_lines(lang, &lines[start..end]) {
                    let w = words(&line);
                    let w: Vec<String> =
                        w.into_iter().take_while(|t| !t.starts_with('#')).collect();
                    commands_in(&w, &place, &mut out);
                }
            }
            i = end + 1;
            continue;
        }
        // Inline code spans of prose lines.
        for (n, span) in lines[i].split('`').enumerate() {
            if n % 2 == 1 {
                let w = words(span);
                if w.first().is_some_and(|t| t.starts_with("--")) {
                    out.push(Mention {
                        place: place.clone(),
                        tokens: w,
                    });
                } else {
                    commands_in(&w, &place, &mut out);
                }
            }
        }
        i += 1;
    }
    out
}

/// The commands of ours (and `cargo xtask …`) that start in a line's words.
fn commands_in(w: &[String], place: &str, out: &mut Vec<Mention>) {
    for (k, t) in w.iter().enumerate() {
        let starts = k == 0
            || matches!(
                w[k - 1].as_str(),
                "-" | "run:" | "&&" | "||" | ";" | "|" | "$"
            );
        let ours = t == "inferlint" || t == "inferlint-recorder";
        let xtask = t == "cargo" && w.get(k + 1).is_some_and(|n| n == "xtask");
        if starts && (ours || xtask) {
            let tokens = w[k..]
                .iter()
                .take_while(|t| !ends_command(t))
                .cloned()
                .collect();
            out.push(Mention {
                place: place.to_string(),
                tokens,
            });
        }
    }
}

/// What a command accepts: its subcommands, and the flags of each (`""`: the top level).
struct Accepts {
    flags: BTreeMap<String, BTreeSet<String>>,
}

fn accepts(cmd: clap::Command) -> Accepts {
    let mut cmd = cmd;
    cmd.build();
    let flags_of = |c: &clap::Command| -> BTreeSet<String> {
        c.get_arguments()
            .flat_map(|a| {
                let long = a.get_long().map(|l| format!("--{l}"));
                let short = a.get_short().map(|s| format!("-{s}"));
                long.into_iter().chain(short)
            })
            .collect()
    };
    let mut flags = BTreeMap::new();
    flags.insert(String::new(), flags_of(&cmd));
    for sub in cmd.get_subcommands() {
        flags.insert(sub.get_name().to_string(), flags_of(sub));
    }
    Accepts { flags }
}

/// The xtask commands, as its `main.rs` dispatches them.
fn xtask_commands() -> BTreeSet<String> {
    let main = std::fs::read_to_string(root().join("xtask/src/main.rs")).unwrap();
    main.split("Some(\"")
        .skip(1)
        .filter_map(|s| {
            let (name, rest) = s.split_once('"')?;
            rest.starts_with(") =>").then(|| name.to_string())
        })
        .collect()
}

/// The problems with one command line of ours.
fn check_command(m: &Mention, acc: &Accepts, problems: &mut Vec<String>) {
    let program = &m.tokens[0];
    let mut sub = String::new();
    for t in &m.tokens[1..] {
        if t == "--" {
            break; // the recorder's load command follows
        }
        if let Some(flag) = t
            .strip_prefix('-')
            .map(|_| t.split('=').next().unwrap_or(t))
        {
            if flag == "-" || flag.len() < 2 {
                continue;
            }
            let known = acc.flags.get(&sub).is_some_and(|f| f.contains(flag));
            if !known {
                problems.push(format!(
                    "{}: `{program}{}` has no flag {flag}",
                    m.place,
                    if sub.is_empty() {
                        String::new()
                    } else {
                        format!(" {sub}")
                    }
                ));
            }
        } else if sub.is_empty() {
            let name = t.as_str();
            if name.starts_with('<') {
                return; // a placeholder (`inferlint <check>`) stands for any subcommand
            }
            if !acc.flags.contains_key(name) {
                problems.push(format!("{}: `{program}` has no subcommand {name}", m.place));
                return;
            }
            sub = name.to_string();
        }
    }
}

#[test]
fn every_command_and_flag_the_docs_name_exists() {
    let ours: BTreeMap<&str, Accepts> = [
        ("inferlint", accepts(inferlint::args::Cli::command())),
        ("inferlint-recorder", accepts(recorder::cli::Cli::command())),
    ]
    .into_iter()
    .collect();
    let all_flags: BTreeSet<&String> = ours
        .values()
        .flat_map(|a| a.flags.values().flatten())
        .collect();
    let foreign: BTreeSet<&str> = FOREIGN_FLAGS.iter().map(|(f, _)| *f).collect();
    let xtask = xtask_commands();
    assert!(
        xtask.contains("test") && xtask.contains("dist"),
        "{xtask:?}"
    );

    let mut problems = Vec::new();
    let mut counted = (0, 0, 0);
    let mut foreign_seen = BTreeSet::new();
    for (page, text) in pages() {
        for m in mentions(&page, &text) {
            let first = m.tokens.first().map(String::as_str).unwrap_or("");
            if let Some(acc) = ours.get(first) {
                counted.0 += 1;
                check_command(&m, acc, &mut problems);
            } else if first == "cargo" {
                counted.1 += 1;
                match m.tokens.get(2) {
                    Some(name) if xtask.contains(name) => {}
                    other => problems.push(format!(
                        "{}: `cargo xtask {}` is not an xtask command",
                        m.place,
                        other.map(String::as_str).unwrap_or("")
                    )),
                }
            } else {
                for t in m
                    .tokens
                    .iter()
                    .filter(|t| t.starts_with("--") && t.len() > 2)
                {
                    counted.2 += 1;
                    let flag = t.split('=').next().unwrap_or(t);
                    if foreign.contains(flag) {
                        foreign_seen.insert(flag.to_string());
                    } else if !all_flags.contains(&flag.to_string()) {
                        problems.push(format!(
                            "{}: {flag} is no flag of inferlint or inferlint-recorder (another tool's? list it in FOREIGN_FLAGS)",
                            m.place
                        ));
                    }
                }
            }
        }
    }
    // The list of other tools' flags stays short: each entry is named in the docs and is
    // no flag of ours.
    for (flag, whose) in FOREIGN_FLAGS {
        if all_flags.contains(&flag.to_string()) {
            problems.push(format!(
                "FOREIGN_FLAGS: {flag} ({whose}) is a flag of ours too"
            ));
        }
        if !foreign_seen.contains(*flag) {
            problems.push(format!(
                "FOREIGN_FLAGS: {flag} ({whose}) is named nowhere in the docs"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the docs name what does not exist:\n{}",
        problems.join("\n")
    );
    // The pages are read: a parser that found nothing would pass anything.
    assert!(
        counted.0 > 40 && counted.1 > 10 && counted.2 > 30,
        "found {counted:?}"
    );
}

#[test]
fn the_checker_catches_what_does_not_exist() {
    let acc = accepts(inferlint::args::Cli::command());
    let mut problems = Vec::new();
    let page = "```sh\ninferlint analyze run/ --strictt \\\n    --json\ninferlint anlyze run/\n```\n\
                Prose: `inferlint compare --baseline a/ b/ --tolerance 5%` and `inferlint explain T9`.\n";
    for m in mentions("p.md", page) {
        check_command(&m, &acc, &mut problems);
    }
    assert_eq!(
        problems,
        [
            "p.md:1: `inferlint analyze` has no flag --strictt",
            "p.md:1: `inferlint` has no subcommand anlyze",
        ]
    );
    // A console block's output lines are not commands; the recorder's load is not ours.
    let page = "```console\n$ inferlint analyze x\n[ T7] inferlint --nope\n```\n\
                `inferlint-recorder record -o r --serve \"vllm serve M --max-num-seqs 4\" -- vllm bench serve --model M`\n";
    let found: Vec<Vec<String>> = mentions("p.md", page)
        .into_iter()
        .map(|m| m.tokens)
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    let rec = accepts(recorder::cli::Cli::command());
    let mut problems = Vec::new();
    for m in mentions("p.md", page).iter().skip(1) {
        check_command(m, &rec, &mut problems);
    }
    assert!(problems.is_empty(), "{problems:?}");
}
