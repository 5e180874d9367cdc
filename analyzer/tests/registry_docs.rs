//! The documents that list the tripwires say what the registry says: the README's table
//! (number, slug, one-line summary, in order, every tripwire once, under a heading that
//! counts them) and a section per tripwire in docs/tripwires.md.

#[path = "common/mod.rs"]
mod common;

use analyzer::num::spelled;
use analyzer::rules::registry;

fn read(rel: &str) -> String {
    let p = common::workspace_root().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn the_readme_table_is_the_registry() {
    let readme = read("README.md");
    let rows: Vec<(String, String, String)> = readme
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .strip_prefix('|')?
                .strip_suffix('|')?
                .split(" | ")
                .collect();
            let [id, slug, summary] = cells.as_slice() else {
                return None;
            };
            let id = id.trim();
            (id.starts_with('T') && id[1..].bytes().all(|b| b.is_ascii_digit())).then(|| {
                (
                    id.to_string(),
                    slug.trim().to_string(),
                    summary.trim().to_string(),
                )
            })
        })
        .collect();
    let want: Vec<(String, String, String)> = registry::all()
        .iter()
        .map(|e| (e.id(), e.slug.to_string(), e.summary.to_string()))
        .collect();
    assert_eq!(
        rows, want,
        "README.md's tripwire table differs from rules/registry.rs"
    );
    let heading = format!("## The {} tripwires", spelled(registry::all().len()));
    assert!(
        readme.lines().any(|l| l.trim() == heading),
        "README.md has no heading \"{heading}\""
    );
}

#[test]
fn every_tripwire_has_its_section_in_the_rules_document() {
    let doc = read("docs/tripwires.md");
    for e in registry::all() {
        let anchor = format!("<a id=\"t{}\"></a>", e.tripwire.number());
        let heading = format!("## {} — {}", e.id(), e.slug);
        let at = doc
            .find(&anchor)
            .unwrap_or_else(|| panic!("docs/tripwires.md has no anchor {anchor}"));
        assert!(
            doc[at..]
                .lines()
                .nth(1)
                .is_some_and(|l| l.trim() == heading),
            "docs/tripwires.md: the section after {anchor} is not headed \"{heading}\""
        );
    }
}
