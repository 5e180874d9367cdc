//! The run embedded in a one-file report: packed from a folder read on disk and unpacked
//! again, it gives the same Report.

#[path = "../../tests/common/mod.rs"]
mod common;

use analyzer::analysis::{InputFile, Options};
use analyzer::pack::{decode, encode, from_pack, to_pack};

#[test]
fn pack_round_trip_gives_the_same_report() {
    let dir = common::workspace_root().join("fixtures/edge/restart");
    let mut input = inferlint::disk::load_run_folder_as(&dir, "restart").unwrap();
    input.load_log = Some(InputFile {
        name: "restart/load.log".into(),
        bytes: Err("no such file".into()),
    });
    let opts = Options {
        requested: Some(32),
        title: Some("</script><img src=x onerror=alert(1)>".into()),
        ..Options::default()
    };
    let text = encode(&to_pack(&input, &opts, Some(1.0e12)));
    assert!(!text.contains('<'));
    let back = decode(&text).unwrap();
    assert_eq!(back.generated_ms, Some(1.0e12));
    let (input2, opts2) = from_pack(&back);
    assert_eq!(opts2.requested, Some(32));
    assert_eq!(opts2.title, opts.title);
    let a = analyzer::analyze(&input, &opts).unwrap();
    let b = analyzer::analyze(&input2, &opts2).unwrap();
    assert_eq!(
        analyzer::json::to_compact(&a.report),
        analyzer::json::to_compact(&b.report)
    );
    assert_eq!(input2.load_log.unwrap().bytes, Err("no such file".into()));
}
