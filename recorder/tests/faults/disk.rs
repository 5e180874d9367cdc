//! The run folder failing the recorder: a folder it cannot write at all (refused before
//! anything starts) and a disk that fills during the load (the run stopped cleanly, the
//! problem in the manifest, what was written kept readable). A small tmpfs stands for the
//! disk, mounted in the case's own mount namespace.

use super::*;

#[test]
fn a_folder_that_cannot_be_written_is_refused_before_anything_starts() {
    let w = World::new("fault-readonly");
    let port = free_port();
    let args = record_args(port, "", load(port, 10));
    let mut case = if common::isolated::namespaces() {
        Isolated::record(&w, &args, Some("64k,ro"))
    } else {
        // Without a namespace (and so without root), permissions refuse the writes.
        let run = w.dir.join("run");
        std::fs::create_dir_all(&run).unwrap();
        let mut p = std::fs::metadata(&run).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o555);
        std::fs::set_permissions(&run, p).unwrap();
        Isolated::record(&w, &args, None)
    };
    let code = case.wait_recorder(60);
    nothing_left(&w);
    let run = case.run.clone();
    let end = case.finish(code);
    eprintln!(
        "fault case unwritable folder: exit {}; {}",
        end.code,
        end.stderr.trim()
    );
    assert_eq!(end.code, 1);
    assert!(
        end.stderr.contains("cannot write in run: "),
        "{}",
        end.stderr
    );
    assert!(
        end.stderr.contains("; nothing was started"),
        "{}",
        end.stderr
    );
    assert!(
        !end.stdout.contains("== start the server"),
        "{}",
        end.stdout
    );
    assert!(files(&run).is_empty(), "{:?}", files(&run));
}

#[test]
fn a_disk_that_fills_stops_the_run_and_keeps_what_was_written() {
    if !common::isolated::namespaces() {
        // Not passed quietly: leaving the case out is asked for by name.
        assert!(
            std::env::var_os("INFERLINT_FAULT_NO_TMPFS").is_some(),
            "the disk-full case needs a mount namespace for its 100 KB tmpfs (unshare, as \
             root); set INFERLINT_FAULT_NO_TMPFS=1 to leave it out on a machine without one"
        );
        eprintln!("fault case disk full: LEFT OUT (INFERLINT_FAULT_NO_TMPFS is set)");
        return;
    }
    let w = World::new("fault-full");
    let port = free_port();
    let args = record_args(port, "", load(port, 4000));
    let mut case = Isolated::record(&w, &args, Some("100k"));
    let code = case.wait_recorder(120);
    nothing_left(&w);
    let run = case.run.clone();
    let end = case.finish(code);
    let a = broken(
        &w,
        "disk full",
        &end,
        &run,
        "no space left on device while writing",
    );
    assert!(
        end.stdout
            .contains("== no space left on device while writing"),
        "{}",
        end.stdout
    );
    assert_eq!(stopped_for(&run).as_deref(), Some("write_failed"));
    let m = json(&run.join("manifest.json"));
    let outcome = m.get("outcome").unwrap();
    assert_eq!(outcome.get("state").and_then(Json::as_str), Some("problem"));
    let problem = outcome.get("problem").and_then(Json::as_str).unwrap();
    assert!(
        problem.starts_with("no space left on device while writing "),
        "{problem}"
    );
    // The folder reads: the readings written are there, the stop is recorded, and the
    // room kept aside is given back.
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert!(!files(&run).contains(&analyzer::docs::RESERVE.to_string()));
    for f in [
        "boot.log",
        "before.snapshot.json",
        "run.series.jsonl",
        "teardown.json",
    ] {
        assert!(run.join(f).is_file(), "{f}: {:?}", files(&run));
    }
    assert!(!series_now(&run).is_empty());
    assert_eq!(
        one(&a, "T2").status,
        Status::Pass,
        "the teardown ran and was recorded"
    );
}
