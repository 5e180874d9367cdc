//! Short names for logs given together: each path's shortest tail that tells them apart.

/// A path's components: empty and `.` components dropped; an absolute path's root is a
/// component of its own.
fn components(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if path.starts_with('/') {
        out.push("/");
    }
    out.extend(path.split('/').filter(|c| !c.is_empty() && *c != "."));
    out
}

/// The last `d` components joined by `/`.
fn tail(parts: &[&str], d: usize) -> String {
    parts[parts.len().saturating_sub(d)..].join("/")
}

/// For each path, its last `d` components with the smallest `d` that makes all names
/// distinct; the paths as given when no depth does.
pub(crate) fn labels(paths: &[String]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = paths.iter().map(|p| components(p)).collect();
    let deepest = parts.iter().map(Vec::len).max().unwrap_or(0);
    for d in 1..=deepest.max(1) {
        let names: Vec<String> = parts.iter().map(|p| tail(p, d)).collect();
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort();
        sorted.dedup();
        if sorted.len() == names.len() && names.iter().all(|n| !n.is_empty()) {
            return names;
        }
    }
    paths.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(paths: &[&str]) -> Vec<String> {
        labels(&paths.iter().map(|p| p.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn shortest_distinct_tails() {
        assert_eq!(
            l(&[
                "fixtures/vllm-0.28/boot_pool_level_hi.log",
                "fixtures/vllm-0.28/boot_pool_level_lo.log"
            ]),
            ["boot_pool_level_hi.log", "boot_pool_level_lo.log"]
        );
        assert_eq!(
            l(&[
                "sglang-0.5/qwen3-8b/boot.log",
                "sglang-0.5/qwen3-8b-start2/boot.log"
            ]),
            ["qwen3-8b/boot.log", "qwen3-8b-start2/boot.log"]
        );
        assert_eq!(
            l(&["/f/vllm-0.28/live/boot.log", "./f/vllm-0.30/live//boot.log"]),
            ["vllm-0.28/live/boot.log", "vllm-0.30/live/boot.log"]
        );
        assert_eq!(
            l(&["a/x.log", "b/c/boot.log", "d/c/boot.log"]),
            ["a/x.log", "b/c/boot.log", "d/c/boot.log"]
        );
    }

    #[test]
    fn single_and_degenerate_paths() {
        assert_eq!(l(&["/tmp/run/boot.log"]), ["boot.log"]);
        assert_eq!(l(&["boot.log"]), ["boot.log"]);
        assert_eq!(
            l(&["x/boot.log", "x/boot.log"]),
            ["x/boot.log", "x/boot.log"]
        );
        assert_eq!(l(&["/x.log", "x.log"]), ["//x.log", "x.log"]);
        assert_eq!(l(&[""]), [""]);
        assert_eq!(l(&[]), Vec::<String>::new());
    }
}
