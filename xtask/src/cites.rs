//! `cargo xtask tidy`, the citations: a source comment or a Markdown file of the repository
//! may point only at documents the repository holds. A name ending in `.md` must be a file
//! of this repository (relative to the file that names it, to the repository's root, or
//! as the tail of a path in it, such as `recorded/README.md`), an `#anchor` after it must
//! be a heading or an `<a id>` of that file, and no section sign appears: sections are
//! cited by anchor. A document outside the repository cannot be followed by the next owner.
//!
//! Rust files are read for their comments only (a small lexer sets string and char
//! literals apart); Markdown files, and the comments of the other scripts (Python,
//! JavaScript, shell, TOML), are read whole.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// Files whose citations are not checked: none. Entries ending in `/` are folders.
const EXEMPT: &[&str] = &[];

/// The section sign: the repository's documents are cited by anchor, never by number.
const SECTION: char = '\u{a7}';

/// The files read, by how they end: Rust for its comments, the rest whole.
const SCRIPTS: &[&str] = &[".py", ".mjs", ".js", ".sh", ".toml"];

/// A citation that leads nowhere in this repository.
#[derive(Debug, PartialEq)]
struct Finding {
    file: String,
    line: usize,
    detail: String,
}

/// The repository's Markdown files (paths from the root, `/`-separated) and the anchors
/// each one offers.
#[derive(Debug, Default)]
struct Documents {
    anchors: HashMap<String, HashSet<String>>,
}

/// Checks every file of the repository; prints each finding and fails when there is one.
pub(crate) fn check(top: &Path) -> Result<()> {
    let files = walk(top);
    let mut docs = Documents::default();
    for rel in files.iter().filter(|r| r.ends_with(".md")) {
        let text = std::fs::read_to_string(top.join(rel))?;
        docs.anchors.insert(rel.clone(), anchors(&text));
    }
    let mut findings = Vec::new();
    let mut read = 0;
    for rel in &files {
        if exempt(rel) || !(rel.ends_with(".rs") || rel.ends_with(".md") || is_script(rel)) {
            continue;
        }
        let text = std::fs::read_to_string(top.join(rel))?;
        findings.extend(check_file(rel, &text, &docs));
        read += 1;
    }
    for f in &findings {
        eprintln!("{}:{}: citations: {}", f.file, f.line, f.detail);
    }
    if !findings.is_empty() {
        bail!(
            "tidy: {} citation(s) of documents not in this repository (cite docs/… by anchor)",
            findings.len()
        );
    }
    eprintln!("== tidy: {read} files cite only documents of this repository");
    Ok(())
}

fn exempt(rel: &str) -> bool {
    listed(EXEMPT, rel)
}

/// Whether `rel` is one of `list`'s files or in one of its folders.
fn listed(list: &[&str], rel: &str) -> bool {
    list.iter()
        .any(|e| rel == *e || (e.ends_with('/') && rel.starts_with(e)))
}

fn is_script(rel: &str) -> bool {
    SCRIPTS.iter().any(|s| rel.ends_with(s))
}

/// Every file under `top` (paths from it), outside build outputs, installed tools and
/// hidden folders.
fn walk(top: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![top.to_path_buf()];
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
            } else if kind.is_file() {
                let path = e.path();
                let rel = path.strip_prefix(top).unwrap_or(&path);
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// The findings of one file: its comments (Rust) or its whole text.
fn check_file(rel: &str, text: &str, docs: &Documents) -> Vec<Finding> {
    let parts = if rel.ends_with(".rs") {
        rust_comments(text)
    } else {
        text.lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.to_string()))
            .collect()
    };
    let mut out = Vec::new();
    for (line, part) in parts {
        let mut push = |detail: String| {
            out.push(Finding {
                file: rel.to_string(),
                line,
                detail,
            })
        };
        if part.contains(SECTION) {
            push(format!(
                "a section sign ({SECTION}): cite a document of this repository by its anchor"
            ));
        }
        for m in mentions(&part) {
            if let Err(why) = docs.resolve(rel, &m.path, m.anchor.as_deref()) {
                push(why);
            }
        }
    }
    out
}

/// A document named in text: its path as written, and the anchor after it.
#[derive(Debug, PartialEq)]
struct Mention {
    path: String,
    anchor: Option<String>,
}

fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

fn anchor_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
}

/// Every name ending in `.md` (a run of path characters, not followed by another word
/// character) with its `#anchor`; web addresses (`https://…`) are not documents.
fn mentions(text: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices(".md") {
        let end = at + 3;
        let rest = &text[end..];
        if rest
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let start = text[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| path_char(c))
            .last()
            .map_or(at, |(i, _)| i);
        let path = &text[start..end];
        let name = path.rsplit('/').next().unwrap_or(path);
        if name == ".md" || text[..start].ends_with(':') {
            continue;
        }
        let anchor = rest.strip_prefix('#').map(|a| {
            let n = a.find(|c: char| !anchor_char(c)).unwrap_or(a.len());
            a[..n].to_string()
        });
        out.push(Mention {
            path: path.to_string(),
            anchor: anchor.filter(|a| !a.is_empty()),
        });
    }
    out
}

/// `path` with `.` and `..` worked out; none when it climbs above the root.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

impl Documents {
    /// The repository's documents `path` can name from `from`: beside it, from the root,
    /// or any whose path ends with it.
    fn candidates(&self, from: &str, path: &str) -> Vec<&String> {
        let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
        let exact: Vec<String> = [format!("{dir}/{path}"), path.to_string()]
            .iter()
            .filter_map(|p| normalise(p))
            .collect();
        let tail = (!path.split('/').any(|p| p == ".."))
            .then(|| path.trim_start_matches("./"))
            .filter(|t| !t.is_empty());
        self.anchors
            .keys()
            .filter(|doc| {
                exact.contains(doc)
                    || tail.is_some_and(|t| *doc == t || doc.ends_with(&format!("/{t}")))
            })
            .collect()
    }

    /// Whether `path` (and its anchor) names a document of the repository; why not.
    fn resolve(&self, from: &str, path: &str, anchor: Option<&str>) -> Result<(), String> {
        let found = self.candidates(from, path);
        if found.is_empty() {
            return Err(format!(
                "`{path}` is not a document of this repository: state the fact here, or \
                 point at docs/run-folder.md, docs/tripwires.md or a module"
            ));
        }
        match anchor {
            Some(a) if !found.iter().any(|d| self.anchors[*d].contains(a)) => Err(format!(
                "`{path}` has no anchor `#{a}` (a heading or an `<a id>` of {})",
                found[0]
            )),
            _ => Ok(()),
        }
    }
}

/// The anchors a Markdown file offers: `<a id="…">` (or `name=`), and each heading's
/// slug as GitHub makes it (lower case; letters, digits, `-` and `_` kept; spaces to `-`).
fn anchors(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for line in text.lines() {
        for key in ["<a id=\"", "<a name=\""] {
            for (at, _) in line.match_indices(key) {
                let rest = &line[at + key.len()..];
                if let Some(end) = rest.find('"') {
                    out.insert(rest[..end].to_string());
                }
            }
        }
        let t = line.trim_start();
        let level = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && t[level..].starts_with(' ') {
            out.insert(slug(t[level..].trim()));
        }
    }
    out
}

fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The comments of Rust source, each line of a comment with its 1-based line. String,
/// raw-string, byte and char literals are skipped, so text inside them is not a comment.
fn rust_comments(src: &str) -> Vec<(usize, String)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let newlines = |s: &[u8]| s.iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        let c = b[i];
        let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |n| i + n);
            out.push((line, src[i..end].to_string()));
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut j, mut depth) = (i, 0);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            let j = j.min(b.len());
            for (k, l) in src[i..j].lines().enumerate() {
                out.push((line + k, l.to_string()));
            }
            line += newlines(&b[i..j]);
            i = j;
        } else if !prev_ident && (c == b'r' || (c == b'b' && b.get(i + 1) == Some(&b'r'))) {
            // A raw string: r"…", r#"…"#, br#"…"#; otherwise an identifier.
            let mut j = i + if c == b'b' { 2 } else { 1 };
            let hashes = b[j..].iter().take_while(|&&x| x == b'#').count();
            j += hashes;
            if b.get(j) == Some(&b'"') {
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let body = j + 1;
                let end = (body..b.len())
                    .find(|&k| b[k..].starts_with(&close))
                    .map_or(b.len(), |k| k + close.len());
                line += newlines(&b[i..end]);
                i = end;
            } else {
                i += 1;
            }
        } else if c == b'"' || (c == b'b' && !prev_ident && b.get(i + 1) == Some(&b'"')) {
            let mut j = if c == b'b' { i + 2 } else { i + 1 };
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            line += newlines(&b[i..end]);
            i = end;
        } else if c == b'\'' {
            // A char literal ('"', '\'', 'x') is skipped whole; a lifetime ('a) is code.
            let len = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&x| x == b'\'').map(|p| p + 3)
            } else {
                let n = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + n) == Some(&b'\'')).then_some(n + 2)
            };
            i += len.unwrap_or(1);
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs() -> Documents {
        let mut d = Documents::default();
        let tripwires = "# Tripwires\n<a id=\"t9\"></a>\n## T9 — falling-ceiling\n";
        d.anchors
            .insert("docs/tripwires.md".into(), anchors(tripwires));
        d.anchors
            .insert("docs/run-folder.md".into(), anchors("## The series\n"));
        d.anchors
            .insert("analyzer/src/checks/README.md".into(), HashSet::new());
        d.anchors.insert("README.md".into(), HashSet::new());
        d
    }

    fn details(rel: &str, text: &str) -> Vec<String> {
        check_file(rel, text, &docs())
            .into_iter()
            .map(|f| format!("{}: {}", f.line, f.detail))
            .collect()
    }

    #[test]
    fn mentions_are_paths_ending_in_md_with_their_anchor() {
        let m = mentions("see `docs/tripwires.md#t9`, formats.md, a.mdx, (README.md).");
        let paths: Vec<(&str, Option<&str>)> = m
            .iter()
            .map(|m| (m.path.as_str(), m.anchor.as_deref()))
            .collect();
        assert_eq!(
            paths,
            [
                ("docs/tripwires.md", Some("t9")),
                ("formats.md", None),
                ("README.md", None)
            ]
        );
        assert!(mentions("https://example.com/x/README.md and *.md files").is_empty());
    }

    #[test]
    fn documents_resolve_beside_from_the_root_or_by_their_tail() {
        let d = docs();
        let ok = |from: &str, path: &str| d.resolve(from, path, None).is_ok();
        assert!(ok("docs/run-folder.md", "tripwires.md"));
        assert!(ok("analyzer/src/x.rs", "docs/tripwires.md"));
        assert!(ok(
            "analyzer/src/checks/t09.rs",
            "../../../docs/tripwires.md"
        ));
        assert!(ok("analyzer/src/x.rs", "checks/README.md"));
        assert!(!ok("analyzer/src/x.rs", "formats.md"));
        assert!(!ok("ARCHITECTURE.md", "../shared/spec/README.md"));
        assert!(d.resolve("x.rs", "docs/tripwires.md", Some("t9")).is_ok());
        assert!(d
            .resolve("x.rs", "docs/tripwires.md", Some("t9--falling-ceiling"))
            .is_ok());
        assert!(d
            .resolve("x.rs", "docs/run-folder.md", Some("the-series"))
            .is_ok());
        assert!(d.resolve("x.rs", "docs/tripwires.md", Some("t99")).is_err());
    }

    #[test]
    fn rust_is_read_for_its_comments_only() {
        let src = "//! The rule (docs/tripwires.md#t9).\nconst A: &str = \"formats.md \u{a7}3 // no\";\nlet c = '\"'; // checks.md\n/* a\n   report.md */ let r = r#\"bootlog.md\"#;\nfn f<'a>(x: &'a str) {} // fine\n";
        assert_eq!(
            details("analyzer/src/x.rs", src),
            [
                "3: `checks.md` is not a document of this repository: state the fact here, or point at docs/run-folder.md, docs/tripwires.md or a module",
                "5: `report.md` is not a document of this repository: state the fact here, or point at docs/run-folder.md, docs/tripwires.md or a module",
            ]
        );
    }

    #[test]
    fn markdown_and_scripts_are_read_whole() {
        let found = details(
            "ARCHITECTURE.md",
            "Rules: `docs/tripwires.md`.\nSee recorder.md \u{a7}7.2.\n",
        );
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("2: a section sign"), "{found:?}");
        assert!(found[1].starts_with("2: `recorder.md`"), "{found:?}");
        assert_eq!(details("tests/t.py", "x = 1  # formats.md\n").len(), 1);
        assert!(details("docs/run-folder.md", "[T9](tripwires.md#t9)\n").is_empty());
        assert_eq!(
            details("docs/run-folder.md", "[T9](tripwires.md#t10)\n").len(),
            1
        );
    }

    #[test]
    fn an_exempt_list_names_files_and_folders() {
        let list = ["analyzer/src/checks/", "analyzer/src/verdict.rs"];
        assert!(listed(&list, "analyzer/src/checks/t09_ceiling.rs"));
        assert!(listed(&list, "analyzer/src/verdict.rs"));
        assert!(!listed(&list, "analyzer/src/verdicts.rs"));
        assert!(!listed(&list, "analyzer/src/checksum.rs"));
        assert!(!exempt("analyzer/src/series.rs"));
    }

    #[test]
    fn headings_give_github_anchors() {
        let a = anchors("## `manifest.json` (`inferlint.run/1`)\n### A result object\n#nope\n");
        assert!(a.contains("manifestjson-inferlintrun1"), "{a:?}");
        assert!(a.contains("a-result-object"));
        assert_eq!(a.len(), 2);
    }
}
