//! A run as the viewer holds it: the embedded pack read back into the analyzer's inputs,
//! and the analyzer's inputs written as a pack (to save a one-file report).

use analyzer::analysis::{BenchInput, InputFile, NamedEngine, Options, RunInput};
use analyzer::json::{self, Json};
use analyzer::Engine;

use crate::pack::{self, Pack, PackedFile};

/// Reads a pack's JSON text (as `pack::encode` writes it).
pub fn decode(text: &str) -> Result<Pack, String> {
    let doc = json::parse(text).map_err(|e| format!("the embedded run is damaged: {e:?}"))?;
    if doc.get("format").and_then(Json::as_str) != Some(pack::FORMAT) {
        return Err(format!(
            "the embedded run is not in the {} format",
            pack::FORMAT
        ));
    }
    let options = doc
        .get("options")
        .and_then(Json::as_object)
        .unwrap_or(&[])
        .iter()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect();
    let mut files = Vec::new();
    for f in doc.get("files").and_then(Json::as_array).unwrap_or(&[]) {
        let s = |k: &str| f.get(k).and_then(Json::as_str).map(str::to_string);
        let name = s("name").unwrap_or_default();
        let bytes = match (s("z"), s("error")) {
            (Some(z), _) => pack::base64_decode(&z)
                .and_then(|b| pack::decompress(&b))
                .map_err(|e| format!("embedded copy unreadable: {e}")),
            (None, Some(e)) => Err(e),
            (None, None) => Err("no content embedded".to_string()),
        };
        files.push(PackedFile {
            role: s("role").unwrap_or_default(),
            name,
            bytes,
            evidence_path: s("evidence_path"),
        });
    }
    Ok(Pack {
        generated_ms: doc.get("generated_ms").and_then(Json::as_f64),
        options,
        files,
    })
}

/// The analyzer's inputs and options from a pack.
pub fn from_pack(p: &Pack) -> (RunInput, Options) {
    let mut input = RunInput::default();
    for f in &p.files {
        let file = InputFile {
            name: f.name.clone(),
            bytes: f.bytes.clone(),
        };
        match f.role.as_str() {
            "boot_log" => input.boot_logs.push(file),
            "before" => input.before = Some(file),
            "after" => input.after = Some(file),
            "series" => input.series = Some(file),
            "bench" => {
                input.bench = Some(BenchInput {
                    evidence_path: f.evidence_path.clone().unwrap_or_else(|| f.name.clone()),
                    file,
                })
            }
            "load_log" => input.load_log = Some(file),
            "manifest" => input.manifest = Some(file),
            "gate" => input.gate = Some(file),
            "probe" => input.probe = Some(file),
            "teardown" => input.teardown = Some(file),
            _ => {}
        }
    }
    let engine = p
        .option("engine")
        .and_then(Engine::parse_name)
        .map(|engine| NamedEngine {
            engine,
            by: match p.option("engine_by") {
                Some("INFERLINT_ENGINE") => "INFERLINT_ENGINE",
                _ => "--engine",
            },
        });
    let opts = Options {
        engine,
        requested: p.option("requested").and_then(|r| r.parse().ok()),
        title: p.option("title").map(str::to_string),
        ..Options::default()
    };
    (input, opts)
}

/// A pack of the analyzer's inputs and options.
pub fn to_pack(input: &RunInput, opts: &Options, generated_ms: Option<f64>) -> Pack {
    let mut files = Vec::new();
    let mut add = |role: &str, f: &InputFile, evidence_path: Option<String>| {
        files.push(PackedFile {
            role: role.to_string(),
            name: f.name.clone(),
            bytes: f.bytes.clone(),
            evidence_path,
        })
    };
    for f in &input.boot_logs {
        add("boot_log", f, None);
    }
    for (role, f) in [
        ("before", &input.before),
        ("after", &input.after),
        ("series", &input.series),
    ] {
        if let Some(f) = f {
            add(role, f, None);
        }
    }
    if let Some(b) = &input.bench {
        add("bench", &b.file, Some(b.evidence_path.clone()));
    }
    for (role, f) in [
        ("load_log", &input.load_log),
        ("manifest", &input.manifest),
        ("gate", &input.gate),
        ("probe", &input.probe),
        ("teardown", &input.teardown),
    ] {
        if let Some(f) = f {
            add(role, f, None);
        }
    }
    let mut options = Vec::new();
    if let Some(e) = opts.engine {
        options.push(("engine".to_string(), e.engine.key().to_string()));
        options.push(("engine_by".to_string(), e.by.to_string()));
    }
    if let Some(r) = opts.requested {
        options.push(("requested".to_string(), r.to_string()));
    }
    if let Some(t) = &opts.title {
        options.push(("title".to_string(), t.clone()));
    }
    Pack {
        generated_ms,
        options,
        files,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trip_gives_the_same_report() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/edge/restart");
        let names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let read = |n: &str| std::fs::read(format!("{dir}/{n}")).map_err(|e| e.to_string());
        let mut input = analyzer::folder::load("restart", &refs, &read);
        input.load_log = Some(InputFile {
            name: "restart/load.log".into(),
            bytes: Err("no such file".into()),
        });
        let opts = Options {
            requested: Some(32),
            title: Some("</script><img src=x onerror=alert(1)>".into()),
            ..Options::default()
        };
        let text = pack::encode(&to_pack(&input, &opts, Some(1.0e12)));
        assert!(!text.contains('<'));
        let back = decode(&text).unwrap();
        assert_eq!(back.generated_ms, Some(1.0e12));
        let (input2, opts2) = from_pack(&back);
        assert_eq!(opts2.requested, Some(32));
        assert_eq!(opts2.title, opts.title);
        let a = analyzer::analyze(&input, &opts).unwrap();
        let b = analyzer::analyze(&input2, &opts2).unwrap();
        assert_eq!(
            a.report.to_json().to_compact(),
            b.report.to_json().to_compact()
        );
        assert_eq!(input2.load_log.unwrap().bytes, Err("no such file".into()));
    }

    #[test]
    fn damaged_packs_are_refused_with_a_reason() {
        assert!(decode("{").is_err());
        assert!(decode("{\"format\": \"other\"}").is_err());
        let p = decode(
            "{\"format\":\"inferlint.run/1\",\"files\":[{\"role\":\"series\",\"name\":\"s\",\"z\":\"AAAA\"}]}",
        )
        .unwrap();
        assert!(p.files[0].bytes.as_ref().unwrap_err().contains("damaged"));
    }
}
