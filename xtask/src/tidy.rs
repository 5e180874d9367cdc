//! `cargo xtask tidy`: the architecture invariants of ARCHITECTURE.md, checked on the
//! source text so a change that breaks one fails CI with the file and line.
//!
//! The checks read Rust source with a small lexer ([`lex`]) that knows comments, string,
//! raw-string, byte and char literals, so a rule about code is not fooled by prose and a
//! rule about strings is not fooled by code. Test code (`tests/` folders, `benches/`,
//! `examples/`, and `#[cfg(test)]` modules) is exempt from the rules about code.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::root;

/// One broken invariant, at a place in a file.
#[derive(Debug, PartialEq)]
struct Finding {
    file: String,
    line: usize,
    rule: &'static str,
    detail: String,
}

/// The run-folder file names; only the documents module may spell them.
const FILE_NAMES: &[&str] = &[
    "boot.log",
    "before.snapshot.json",
    "after.snapshot.json",
    "run.series.jsonl",
    "bench.json",
    "bench.jsonl",
    "load.log",
    "manifest.json",
    "gate.json",
    "probe.json",
    "teardown.json",
    "processes.json",
    "results.json",
    "report.html",
];

/// Document keys distinctive enough that a literal of one anywhere else means a second,
/// hand-kept definition of a document (generic words such as `engine` are left out).
const DOCUMENT_KEYS: &[&str] = &[
    "t_wall",
    "t_mono_ns",
    "latency_s",
    "interval_s",
    "generation_tokens",
    "prompt_tokens",
    "kv_usage",
    "max_used_mib",
    "left_after_the_server_stopped",
    "left_alone",
    "argv_given",
    "argv_run",
    "start_ticks",
    "from_load",
    "metrics_path",
    "server_version",
    "bench_result",
    "alive_after",
    "models_error",
];

pub(crate) fn tidy() -> Result<()> {
    let top = root().canonicalize()?;
    let mut findings = Vec::new();
    let mut files = 0;
    for path in rust_files(&top) {
        let rel = path
            .strip_prefix(&top)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&path)?;
        findings.extend(check_file(&rel, &text));
        files += 1;
    }
    for f in &findings {
        eprintln!("{}:{}: {}: {}", f.file, f.line, f.rule, f.detail);
    }
    crate::cites::check(&top)?;
    let layering = crate::layers::check(&top)?;
    for p in &layering {
        eprintln!("{p}");
    }
    if !layering.is_empty() {
        bail!(
            "tidy: {} problem(s) with the analyzer's layers, circles or long functions (see \
             ARCHITECTURE.md, \"Architecture invariants\")",
            layering.len()
        );
    }
    if !findings.is_empty() {
        bail!(
            "tidy: {} broken invariant(s) (see ARCHITECTURE.md, \"Architecture invariants\")",
            findings.len()
        );
    }
    eprintln!("== tidy: {files} source files keep every architecture invariant");
    Ok(())
}

/// Every `.rs` file of the project, outside build outputs and installed tools.
fn rust_files(top: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![top.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if !name.starts_with('.')
                    && !matches!(name.as_str(), "target" | "node_modules" | "dist")
                {
                    stack.push(e.path());
                }
            } else if kind.is_file() && name.ends_with(".rs") {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Which crate a file belongs to, for the rules that concern one crate.
fn area(rel: &str) -> &'static str {
    if rel.starts_with("analyzer/cli/") {
        "cli"
    } else if rel.starts_with("analyzer/src/") {
        "analyzer"
    } else if rel.starts_with("recorder/") {
        "recorder"
    } else if rel.starts_with("viewer/") {
        "viewer"
    } else {
        "other"
    }
}

/// Test-only files: the rules about code do not apply to them. A module's `tests.rs` is
/// its `#[cfg(test)] mod tests;` kept in a file of its own.
fn is_test_file(rel: &str) -> bool {
    ["/tests/", "/benches/", "/examples/"]
        .iter()
        .any(|d| rel.contains(d))
        || rel.starts_with("tests/")
        || rel.ends_with("/tests.rs")
}

fn check_file(rel: &str, text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |line: usize, rule: &'static str, detail: String| {
        out.push(Finding {
            file: rel.to_string(),
            line,
            rule,
            detail,
        })
    };
    let first = text.lines().position(|l| !l.trim().is_empty());
    if first.is_none_or(|i| {
        !text
            .lines()
            .nth(i)
            .unwrap_or("")
            .trim_start()
            .starts_with("//!")
    }) {
        push(
            first.map_or(1, |i| i + 1),
            "doc comment",
            "every source file opens with a `//!` comment saying what it is for".into(),
        );
    }
    let tokens = lex(text);
    let test_ranges = cfg_test_ranges(&tokens);
    let in_test = |line: usize| is_test_file(rel) || test_ranges.iter().any(|r| r.contains(&line));
    let area = area(rel);
    // The documents module defines the names; this file lists them to look for them.
    let in_docs_module = rel.starts_with("analyzer/src/docs/") || rel == "xtask/src/tidy.rs";
    for (i, t) in tokens.iter().enumerate() {
        match &t.kind {
            Kind::Code(code) if !in_test(t.line) => {
                if area == "analyzer" {
                    for banned in ["std::fs", "std::time", "std::thread", "std::process"] {
                        if code.contains(banned) || path_use(&tokens, i, banned) {
                            push(
                                t.line,
                                "pure analyzer",
                                format!("`{banned}` in the analyzer library (it takes bytes and returns data; I/O and clocks belong to the front ends)"),
                            );
                        }
                    }
                }
                if matches!(area, "analyzer" | "cli" | "viewer")
                    && code.contains(".evidence_value(")
                    && rel != "analyzer/src/rules/verdict.rs"
                {
                    push(
                        t.line,
                        "typed findings",
                        "a finding read back from its JSON by key: read it by type through its rule's accessor".into(),
                    );
                }
                if matches!(area, "recorder" | "viewer")
                    && (code.contains("CheckResult::new") || code.contains("Status::"))
                {
                    push(
                        t.line,
                        "verdicts in the analyzer",
                        "a verdict built outside the analyzer: call the check in analyzer/src/checks".into(),
                    );
                }
            }
            Kind::Str(s) => {
                if !in_docs_module && !in_test(t.line) {
                    if let Some(name) = FILE_NAMES.iter().find(|n| s == *n) {
                        push(
                            t.line,
                            "one definition per document",
                            format!("the file name \"{name}\" spelled outside analyzer/src/docs: use its constant"),
                        );
                    }
                    let evidence_key = is_evidence_key(&tokens, i);
                    if let Some(key) = DOCUMENT_KEYS.iter().find(|k| s == *k && !evidence_key) {
                        push(
                            t.line,
                            "one definition per document",
                            format!("the document key \"{key}\" spelled outside analyzer/src/docs: read or write the typed document"),
                        );
                    }
                }
                let marked = |l: usize| {
                    text.lines()
                        .nth(l.wrapping_sub(1))
                        .is_some_and(|src| src.contains("tidy: layout"))
                };
                if !in_test(t.line) && !marked(t.line) && !marked(t.line.wrapping_sub(1)) {
                    if let Some(run) = inner_space_run(s) {
                        push(
                            t.line,
                            "no runs of spaces",
                            format!("a string with a run of spaces inside a sentence: \"{run}\""),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A string passed straight to `.set(` or `.with(`: a check's evidence key, whose names
/// the checks fix (some equal a document's key, as T2's `left_after_the_server_stopped`).
fn is_evidence_key(tokens: &[Token], i: usize) -> bool {
    tokens[..i]
        .iter()
        .rev()
        .find_map(|t| match &t.kind {
            Kind::Code(c) if c.trim().is_empty() => None,
            Kind::Code(c) => {
                Some(c.trim_end().ends_with(".set(") || c.trim_end().ends_with(".with("))
            }
            _ => Some(false),
        })
        .unwrap_or(false)
}

/// `use std::{fs, ...}` split over tokens: code `std::{` followed by the banned module name.
fn path_use(tokens: &[Token], i: usize, banned: &str) -> bool {
    let Kind::Code(code) = &tokens[i].kind else {
        return false;
    };
    let module = banned.trim_start_matches("std::");
    code.contains("std::{")
        && code.split("std::{").skip(1).any(|rest| {
            rest.split('}').next().is_some_and(|inside| {
                inside
                    .split(',')
                    .any(|p| p.trim().split("::").next() == Some(module))
            })
        })
}

/// A line of the string with two or more spaces between words. Indented lines (help
/// tables, examples) are layout and keep their spaces, as do gaps next to a format
/// placeholder (`"{label}  {message}"` aligns terminal columns). A line of source marked
/// `// tidy: layout` (or the line above it) is exempt: a format the spec fixes.
fn inner_space_run(s: &str) -> Option<String> {
    for line in s.lines() {
        if line.starts_with("  ") {
            continue;
        }
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        let mut k = 0;
        while k < chars.len() {
            if chars[k].1 != ' ' {
                k += 1;
                continue;
            }
            let run_start = k;
            while k < chars.len() && chars[k].1 == ' ' {
                k += 1;
            }
            if k - run_start < 2 || run_start == 0 || k == chars.len() {
                continue;
            }
            let before = chars[run_start - 1].1;
            let after = chars[k].1;
            if (before.is_alphanumeric() || ".,;:)".contains(before)) && after.is_alphanumeric() {
                let from = chars[run_start.saturating_sub(12)].0;
                let to = chars.get(k + 12).map_or(line.len(), |c| c.0);
                return Some(line[from..to].to_string());
            }
        }
    }
    None
}

/// Line ranges of `#[cfg(test)]` items (the module or function that follows).
pub(crate) fn cfg_test_ranges(tokens: &[Token]) -> Vec<std::ops::RangeInclusive<usize>> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let Kind::Code(code) = &t.kind else { continue };
        let Some(at) = code.find("#[cfg(test)]") else {
            continue;
        };
        // Find the item's opening brace, then its matching close, across code tokens.
        let mut depth = 0usize;
        let mut started = false;
        let mut end_line = t.line;
        'outer: for tok in &tokens[i..] {
            let Kind::Code(c) = &tok.kind else { continue };
            let text = if std::ptr::eq(tok, t) {
                &c[at..]
            } else {
                c.as_str()
            };
            let mut line = tok.line;
            for ch in text.chars() {
                match ch {
                    '\n' => line += 1,
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' if started => {
                        depth -= 1;
                        if depth == 0 {
                            end_line = line;
                            break 'outer;
                        }
                    }
                    ';' if !started => {
                        end_line = line;
                        break 'outer;
                    }
                    _ => {}
                }
            }
            end_line = line;
        }
        out.push(t.line..=end_line);
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// Source text outside comments and literals, on one line.
    Code(String),
    /// The value of a string literal (escapes and line continuations applied).
    Str(String),
    Comment,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    /// 1-based line where the token starts.
    pub(crate) line: usize,
    pub(crate) kind: Kind,
}

/// Splits Rust source into code, string literals and comments.
pub(crate) fn lex(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let mut code = String::new();
    let mut code_line = 1;
    let flush = |out: &mut Vec<Token>, code: &mut String, code_line: usize| {
        if !code.is_empty() {
            out.push(Token {
                line: code_line,
                kind: Kind::Code(std::mem::take(code)),
            });
        }
    };
    while i < b.len() {
        let c = b[i];
        let start_line = line;
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            flush(&mut out, &mut code, code_line);
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            out.push(Token {
                line: start_line,
                kind: Kind::Comment,
            });
            code_line = line;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            flush(&mut out, &mut code, code_line);
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
            out.push(Token {
                line: start_line,
                kind: Kind::Comment,
            });
            code_line = line;
            continue;
        }
        // Raw strings: r"..", r#".."#, br#".."#.
        let raw_at = if c == b'r' {
            Some(i + 1)
        } else if c == b'b' && b.get(i + 1) == Some(&b'r') {
            Some(i + 2)
        } else {
            None
        };
        if let Some(mut j) = raw_at {
            let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if !prev_ident && b.get(j) == Some(&b'"') {
                flush(&mut out, &mut code, code_line);
                let body_start = j + 1;
                let mut k = body_start;
                let closing: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                while k < b.len() && !b[k..].starts_with(&closing) {
                    k += 1;
                }
                let body = &src[body_start..k.min(b.len())];
                line += body.matches('\n').count();
                out.push(Token {
                    line: start_line,
                    kind: Kind::Str(body.to_string()),
                });
                i = (k + closing.len()).min(b.len());
                code_line = line;
                continue;
            }
        }
        if c == b'"' || (c == b'b' && b.get(i + 1) == Some(&b'"')) {
            let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
            if !(c == b'b' && prev_ident) {
                flush(&mut out, &mut code, code_line);
                let mut k = if c == b'b' { i + 2 } else { i + 1 };
                let mut value = String::new();
                while k < b.len() && b[k] != b'"' {
                    if b[k] == b'\\' {
                        match b.get(k + 1) {
                            Some(b'\n') => {
                                // A line continuation drops the break and the next
                                // line's leading whitespace.
                                k += 2;
                                line += 1;
                                while k < b.len() && b[k].is_ascii_whitespace() {
                                    if b[k] == b'\n' {
                                        line += 1;
                                    }
                                    k += 1;
                                }
                                continue;
                            }
                            Some(b'n') => value.push('\n'),
                            Some(b't') => value.push('\t'),
                            Some(&e) => value.push(e as char),
                            None => {}
                        }
                        k += 2;
                        continue;
                    }
                    if b[k] == b'\n' {
                        line += 1;
                    }
                    let ch_len = utf8_len(b[k]);
                    value.push_str(&src[k..(k + ch_len).min(b.len())]);
                    k += ch_len;
                }
                out.push(Token {
                    line: start_line,
                    kind: Kind::Str(value),
                });
                i = (k + 1).min(b.len());
                code_line = line;
                continue;
            }
        }
        // Char literals ('"', '\'', 'x') and lifetimes ('a): skip a char literal whole.
        if c == b'\'' {
            let lit_len = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&x| x == b'\'').map(|p| p + 3)
            } else {
                let n = b.get(i + 1).map_or(1, |&x| utf8_len(x));
                (b.get(i + 1 + n) == Some(&b'\'')).then_some(n + 2)
            };
            if let Some(n) = lit_len {
                code.push_str("' '");
                i += n;
                continue;
            }
        }
        if code.is_empty() {
            code_line = line;
        }
        let n = utf8_len(c);
        code.push_str(&src[i..(i + n).min(b.len())]);
        i += n;
        if c == b'\n' {
            // Code tokens stay on one line, so a rule reports the line it fired on.
            flush(&mut out, &mut code, code_line);
            line += 1;
            code_line = line;
        }
    }
    flush(&mut out, &mut code, code_line);
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(src: &str) -> Vec<(usize, String)> {
        lex(src)
            .into_iter()
            .filter_map(|t| match t.kind {
                Kind::Str(s) => Some((t.line, s)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn lexer_finds_strings_not_comments_or_chars() {
        let src = "//! doc \"not a string\"\nlet a = '\"'; let b = \"x\\\"y\";\n/* \"no\" */ let c = r#\"raw \"q\"\"#;\nlet d = \"one \\\n      two\";";
        assert_eq!(
            strings(src),
            vec![
                (2, "x\"y".to_string()),
                (3, "raw \"q\"".to_string()),
                (4, "one two".to_string())
            ]
        );
    }

    #[test]
    fn space_runs_in_sentences_are_found_and_layout_is_not() {
        assert!(inner_space_run("outside                  every count").is_some());
        assert!(inner_space_run("two  spaces").is_some());
        assert!(inner_space_run(" continues, outside    every count.").is_some());
        assert!(inner_space_run("  inferlint analyze RUN_DIR        check a run folder").is_none());
        assert!(inner_space_run("one space only. Then more.").is_none());
        assert!(inner_space_run("line\n  indented  table").is_none());
    }

    #[test]
    fn rules_fire_on_the_defects_they_describe() {
        let src =
            "//! x\nuse std::fs;\nfn f() { let n = \"manifest.json\"; let k = \"t_wall\"; }\n";
        let rules: Vec<&str> = check_file("analyzer/src/x.rs", src)
            .iter()
            .map(|f| f.rule)
            .collect();
        assert_eq!(
            rules,
            vec![
                "pure analyzer",
                "one definition per document",
                "one definition per document"
            ]
        );
        let typed = "//! x\nfn f(r: &R) -> Option<Json> { r.evidence_value(\"k\") }\n";
        assert_eq!(check_file("analyzer/src/insights/x.rs", typed).len(), 1);
        assert_eq!(check_file("analyzer/src/rules/verdict.rs", typed).len(), 0);
        let src = "//! x\nfn f() { CheckResult::new(2, Status::Fail, \"\"); }\n";
        assert_eq!(check_file("recorder/src/x.rs", src).len(), 1);
        assert!(check_file(
            "analyzer/src/docs/names.rs",
            "//! x\nconst A: &str = \"boot.log\";\n"
        )
        .is_empty());
        assert_eq!(
            check_file("viewer/src/a.rs", "fn main() {}\n")[0].rule,
            "doc comment"
        );
        let layout = "//! x\n// tidy: layout\nconst L: &str = \"target  pid=\";\n";
        assert!(check_file("recorder/src/t.rs", layout).is_empty());
        assert_eq!(
            check_file("recorder/src/t.rs", &layout.replace("tidy: layout", "")).len(),
            1
        );
    }

    #[test]
    fn test_code_is_exempt_from_code_rules() {
        let src = "//! x\nfn f() {}\n#[cfg(test)]\nmod tests {\n    fn g() { std::fs::read(\"boot.log\"); }\n}\nfn h() { let _ = std::fs::read; }\n";
        let lines: Vec<usize> = check_file("analyzer/src/x.rs", src)
            .iter()
            .map(|f| f.line)
            .collect();
        assert_eq!(lines, vec![7]);
        assert!(check_file("analyzer/tests/t.rs", "//! t\nuse std::fs;\n").is_empty());
        assert!(check_file("analyzer/src/m/tests.rs", "//! t\nuse std::fs;\n").is_empty());
        assert!(!check_file("analyzer/src/m/tests_of.rs", "//! t\nuse std::fs;\n").is_empty());
    }

    #[test]
    fn grouped_use_of_a_banned_module_is_found() {
        let f = check_file(
            "analyzer/src/x.rs",
            "//! x\nuse std::{collections::HashMap, fs};\n",
        );
        assert_eq!(f.len(), 1);
    }
}
