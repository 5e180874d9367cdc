//! A fleet folder's subfolders by role: `replicas/<id>/` (one per replica, each read like a
//! single server's folder) and `router/`. Pure name matching on paths relative to the run
//! folder, so the disk reader and the browser find the same files; how entries are listed
//! (links never followed, sizes limited) is the front end's job, and every entry it could
//! not use arrives here as a read error or as a skipped entry.

use crate::docs::fleet::replica_id_is_valid;
use crate::docs::{REPLICAS_DIR, ROUTER_DIR};
use crate::folder::{discover, join};
use crate::inputs::{InputFile, ReplicaInput, RouterInput, Skipped};

/// The replicas and the router found among a folder's relative paths.
#[derive(Debug, Clone, Default)]
pub struct FleetFiles {
    pub replicas: Vec<ReplicaInput>,
    pub router: Option<RouterInput>,
    /// Paths under `replicas/` that cannot be a replica's file (a bad id, a file where a
    /// folder belongs, a folder nested deeper).
    pub skipped: Vec<Skipped>,
}

/// Why a replica folder name is refused, when it is.
pub fn bad_replica_id(id: &str) -> Option<String> {
    (!replica_id_is_valid(id))
        .then(|| "not a replica id (1 to 64 of A-Z a-z 0-9 . _ -): not read".to_string())
}

/// Sorts `paths` (relative, `/`-separated, e.g. `replicas/a/run.series.jsonl`) into the
/// replicas' and the router's files. `read` gives a path's bytes or why it cannot be
/// read; `dir` is the run folder as shown in messages.
pub fn load(
    dir: &str,
    paths: &[&str],
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
) -> FleetFiles {
    let mut out = FleetFiles::default();
    let mut by_replica: Vec<(String, Vec<String>)> = Vec::new();
    let mut router_names: Vec<String> = Vec::new();
    for path in paths {
        let parts: Vec<&str> = path.split('/').collect();
        match parts.as_slice() {
            [top, id, name] if *top == REPLICAS_DIR => {
                if let Some(why) = bad_replica_id(id) {
                    out.skipped.push(Skipped {
                        name: format!("{REPLICAS_DIR}/{id}"),
                        reason: why,
                    });
                    continue;
                }
                match by_replica.iter_mut().find(|(k, _)| k == id) {
                    Some((_, names)) => names.push(name.to_string()),
                    None => by_replica.push((id.to_string(), vec![name.to_string()])),
                }
            }
            [top, name] if *top == ROUTER_DIR => router_names.push(name.to_string()),
            [top, ..] if *top == REPLICAS_DIR => out.skipped.push(Skipped {
                name: path.to_string(),
                reason: "not inside a replica's folder (replicas/<id>/<file>): not read".into(),
            }),
            _ => {}
        }
    }
    by_replica.sort();
    out.skipped.sort_by(|a, b| a.name.cmp(&b.name));
    out.skipped.dedup();
    for (id, names) in by_replica {
        let sub = format!("{REPLICAS_DIR}/{id}");
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let found = discover(&names);
        let file = |n: &Option<String>| {
            n.as_ref().map(|n| {
                let rel = format!("{sub}/{n}");
                InputFile {
                    name: join(dir, &rel),
                    bytes: read(&rel),
                }
            })
        };
        out.replicas.push(ReplicaInput {
            before: file(&found.before),
            after: file(&found.after),
            series: file(&found.series),
            id,
        });
    }
    if !router_names.is_empty() {
        let names: Vec<&str> = router_names.iter().map(String::as_str).collect();
        let found = discover(&names);
        let file = |n: &Option<String>| {
            n.as_ref().map(|n| {
                let rel = format!("{ROUTER_DIR}/{n}");
                InputFile {
                    name: join(dir, &rel),
                    bytes: read(&rel),
                }
            })
        };
        out.router = Some(RouterInput {
            before: file(&found.before),
            after: file(&found.after),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_and_router_by_path() {
        let paths = [
            "replicas/b/run.series.jsonl",
            "replicas/a/before.snapshot.json",
            "replicas/a/after.snapshot.json",
            "replicas/..%2f/x",
            "replicas/a/deeper/x",
            "router/before.snapshot.json",
            "bench.json",
        ];
        let f = load("run", &paths, &|p| Ok(p.as_bytes().to_vec()));
        let ids: Vec<&str> = f.replicas.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(
            f.replicas[0].before.as_ref().unwrap().name,
            "run/replicas/a/before.snapshot.json"
        );
        assert!(f.replicas[0].series.is_none() && f.replicas[1].series.is_some());
        assert!(f.router.as_ref().unwrap().after.is_none());
        let skipped: Vec<&str> = f.skipped.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(skipped, ["replicas/..%2f", "replicas/a/deeper/x"]);
    }
}
