//! The analyzer library's layers (ARCHITECTURE.md, "The parts"), checked on its source:
//! each top-level module belongs to one layer and uses only modules of its own layer or
//! those below; no two modules use each other, directly or round a circle; and no
//! function runs over [`MAX_FN_LINES`] lines. Test code is exempt.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::tidy::{cfg_test_ranges, lex, Kind};

/// The layers, lowest first, each with its top-level modules of `analyzer/src`.
pub(crate) const LAYERS: &[(&str, &[&str])] = &[
    (
        "foundation",
        &[
            "json",
            "num",
            "text",
            "term",
            "chunks",
            "input",
            "plausible",
            "engine",
        ],
    ),
    (
        "documents and parsers",
        &[
            "docs",
            "prom",
            "inputs",
            "manifest",
            "sizes",
            "samples",
            "gpu_samples",
            "load_cpu",
            "bootlog",
            "bench",
            "load_tool",
            "series",
            "snapshot",
            "counters",
            "histogram",
            "blocks",
            "folder",
            "glossary",
        ],
    ),
    ("rules", &["rules"]),
    (
        "analysis and report",
        &[
            "phases", "insights", "fleet", "report", "compare", "analysis",
        ],
    ),
    ("carriers for the front ends", &["pack", "page"]),
];

/// The longest a function of the analyzer may be, in lines: one that needs a scroll to
/// read is two functions.
pub(crate) const MAX_FN_LINES: usize = 100;

/// A module's source, code only (comments and literals dropped), line by line, outside
/// `#[cfg(test)]` items; with the file each line came from.
struct Code {
    lines: Vec<(PathBuf, usize, String)>,
}

fn module_files(src: &Path, module: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let file = src.join(format!("{module}.rs"));
    if file.is_file() {
        out.push(file);
    }
    let mut stack = vec![src.join(module)];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && p.file_name().is_some_and(|n| n != "tests.rs")
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn code_of(files: &[PathBuf]) -> Result<Code> {
    let mut lines = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)?;
        let tokens = lex(&text);
        let tests = cfg_test_ranges(&tokens);
        let mut by_line: BTreeMap<usize, String> = BTreeMap::new();
        for t in &tokens {
            if tests.iter().any(|r| r.contains(&t.line)) {
                continue;
            }
            let piece = match &t.kind {
                Kind::Code(c) => c.as_str(),
                Kind::Str(_) => "\"\"",
                Kind::Comment => continue,
            };
            by_line.entry(t.line).or_default().push_str(piece);
        }
        lines.extend(by_line.into_iter().map(|(n, l)| (f.clone(), n, l)));
    }
    Ok(Code { lines })
}

/// The modules a line of code names as `crate::m` or inside `crate::{m, n::x}`.
fn uses(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let ident = |s: &str| -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in line.match_indices("crate::") {
        let rest = &line[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The group's items at its own depth: `a::{b, c}` names `a` only.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => out.push(ident(&std::mem::take(&mut item))),
                    _ if depth == 0 => item.push(c),
                    _ => {}
                }
            }
            out.push(ident(&item));
            out.retain(|s| !s.is_empty());
        } else {
            out.push(ident(rest));
        }
    }
    out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

/// Every problem with the analyzer's layers, a line each.
pub(crate) fn check(top: &Path) -> Result<Vec<String>> {
    let src = top.join("analyzer/src");
    let mut modules = BTreeSet::new();
    for e in std::fs::read_dir(&src)?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "lib" {
                modules.insert(stem.to_string());
            }
        } else if e.path().is_dir() {
            modules.insert(name);
        }
    }
    let mut problems = Vec::new();
    for m in &modules {
        if layer_of(m).is_none() {
            problems.push(format!(
                "analyzer/src/{m}: a module in no layer: place it in xtask/src/layers.rs and ARCHITECTURE.md"
            ));
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in &modules {
        let code = code_of(&module_files(&src, m))?;
        let deps = graph.entry(m.clone()).or_default();
        for (file, n, line) in &code.lines {
            for used in uses(line) {
                if used == *m || !modules.contains(&used) {
                    continue;
                }
                if let (Some(a), Some(b)) = (layer_of(m), layer_of(&used)) {
                    if b > a {
                        problems.push(format!(
                            "{}:{n}: `{m}` ({}) uses `{used}` ({}), a layer above it",
                            rel(top, file),
                            LAYERS[a].0,
                            LAYERS[b].0
                        ));
                    }
                }
                deps.insert(used);
            }
        }
        problems.extend(long_functions(top, &code));
    }
    problems.extend(circles(&graph));
    Ok(problems)
}

fn rel(top: &Path, p: &Path) -> String {
    p.strip_prefix(top).unwrap_or(p).display().to_string()
}

/// Each circle of modules using each other, once.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut found = BTreeSet::new();
    for start in graph.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for next in graph.get(&at).into_iter().flatten() {
                if next == start {
                    // Named from its smallest module, so a circle is reported once.
                    let k = path
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, m)| *m)
                        .map_or(0, |p| p.0);
                    let mut c: Vec<&str> = path[k..]
                        .iter()
                        .chain(&path[..k])
                        .map(String::as_str)
                        .collect();
                    c.push(c[0]);
                    found.insert(c.join(" -> "));
                } else if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
    }
    found
        .into_iter()
        .map(|c| format!("analyzer/src: an import circle: {c}"))
        .collect()
}

/// Functions longer than [`MAX_FN_LINES`].
fn long_functions(top: &Path, code: &Code) -> Vec<String> {
    let mut out = Vec::new();
    let lines = &code.lines;
    let mut i = 0;
    while i < lines.len() {
        let (file, start, text) = &lines[i];
        let is_fn = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == "fn");
        if !is_fn {
            i += 1;
            continue;
        }
        // From the function's first brace to the one that closes it.
        let mut depth = 0i64;
        let mut opened = false;
        let mut j = i;
        'scan: while j < lines.len() && lines[j].0 == *file {
            for c in lines[j].2.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => {
                        depth -= 1;
                        if opened && depth == 0 {
                            break 'scan;
                        }
                    }
                    ';' if !opened => break 'scan,
                    _ => {}
                }
            }
            j += 1;
        }
        let end = lines.get(j).map_or(*start, |l| l.1);
        if opened && end - start + 1 > MAX_FN_LINES {
            let name = text
                .split("fn ")
                .nth(1)
                .map(|s| s.split(['(', '<']).next().unwrap_or("").trim().to_string())
                .unwrap_or_default();
            out.push(format!(
                "{}:{start}: `{name}` runs {} lines, more than {MAX_FN_LINES}: split it",
                rel(top, file),
                end - start + 1
            ));
        }
        // Functions inside it are checked too.
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_reads_plain_and_grouped_paths() {
        assert_eq!(uses("use crate::series::Series;"), ["series"]);
        assert_eq!(
            uses("use crate::{bench::X, json, rules::{a, b}};"),
            ["bench", "json", "rules"]
        );
        assert_eq!(uses("let x = crate::num::fixed(1.0, 2);"), ["num"]);
    }

    #[test]
    fn a_circle_is_named_once() {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        g.entry("b".into()).or_default().insert("a".into());
        g.entry("a".into()).or_default().insert("b".into());
        g.entry("c".into()).or_default().insert("a".into());
        assert_eq!(circles(&g), ["analyzer/src: an import circle: a -> b -> a"]);
    }

    #[test]
    fn every_layer_module_is_named_once() {
        let all: Vec<&str> = LAYERS.iter().flat_map(|(_, m)| m.iter().copied()).collect();
        let set: BTreeSet<&str> = all.iter().copied().collect();
        assert_eq!(all.len(), set.len());
    }
}
