//! Reading run folders in the browser: dropped folders (walked through
//! `webkitGetAsEntry`; several at once, or a folder of run folders, to compare them; a
//! fleet's `replicas/<id>/` and `router/` subfolders too), a
//! folder chosen with the folder picker (`webkitdirectory`), or files chosen one by one. Nothing is sent anywhere: the files are read into memory and handed
//! to the analyzer's own folder discovery (`analyzer::folder::load`).

use js_sys::{Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// The regular files of one run folder: its label, base names, and each file's bytes;
/// for a fleet, the files of its `replicas/<id>/` and `router/` subfolders by path under
/// the folder (`None`: too large to read).
pub struct Picked {
    pub folder: String,
    pub names: Vec<String>,
    pub files: Vec<(String, Vec<u8>)>,
    pub sub: Vec<(String, Option<Vec<u8>>)>,
}

/// Whether the path (folder parts under the dropped or picked top) is inside a fleet's
/// subfolders: `…/replicas`, `…/replicas/<id>` or `…/router`.
fn in_fleet_subfolder(parts: &[String]) -> bool {
    use analyzer::docs::{REPLICAS_DIR, ROUTER_DIR};
    let n = parts.len();
    (n >= 1 && (parts[n - 1] == REPLICAS_DIR || parts[n - 1] == ROUTER_DIR))
        || (n >= 2 && parts[n - 2] == REPLICAS_DIR)
}

/// Files bigger than this are refused (a run folder's largest file, a 24-hour series, is
/// about 40 MB).
const MAX_FILE: f64 = 512.0 * 1024.0 * 1024.0;

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn call(obj: &JsValue, method: &str, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let f: Function = get(obj, method).dyn_into()?;
    match args {
        [] => f.call0(obj),
        [a] => f.call1(obj, a),
        [a, b] => f.call2(obj, a, b),
        _ => Err(JsValue::from_str("too many arguments")),
    }
}

fn text(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| get(e, "message").as_string())
        .unwrap_or_else(|| "unknown error".to_string())
}

/// Calls a callback-style method (`readEntries`, `file`) as a promise.
async fn callback(obj: &JsValue, method: &str) -> Result<JsValue, String> {
    let mut failed = None;
    let p = Promise::new(&mut |resolve, reject| {
        if let Err(e) = call(obj, method, &[&resolve, &reject]) {
            failed = Some(text(&e));
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    JsFuture::from(p).await.map_err(|e| text(&e))
}

async fn bytes(file: &JsValue) -> Result<Vec<u8>, String> {
    let size = get(file, "size").as_f64().unwrap_or(0.0);
    if size > MAX_FILE {
        return Err(format!("too large to read here ({:.0} MB)", size / 1e6));
    }
    let p: Promise = call(file, "arrayBuffer", &[])
        .and_then(|v| v.dyn_into())
        .map_err(|e| text(&e))?;
    let buf = JsFuture::from(p).await.map_err(|e| text(&e))?;
    Ok(Uint8Array::new(&buf).to_vec())
}

/// Whether a folder's file names include a run file (the analyzer's own discovery).
fn has_run_files(names: &[&str]) -> bool {
    analyzer::folder::discover(names).has_run_files()
}

/// The run folders among the paths: every folder holding run files at the shallowest
/// depth where any does (several dropped folders, or a folder of run folders), in the
/// order the top folders were given (`order`), else in name order; without any, the first folder at the shallowest depth, or the files given
/// without a folder, as one run (the analyzer then says what is missing).
fn run_folders(parts: &[(Vec<String>, JsValue)], order: &[String]) -> Vec<Vec<String>> {
    let mut dirs: Vec<Vec<String>> = parts
        .iter()
        .map(|(p, _)| p[..p.len() - 1].to_vec())
        .collect();
    let given = |d: &Vec<String>| {
        d.first()
            .and_then(|top| order.iter().position(|o| o == top))
            .unwrap_or(usize::MAX)
    };
    dirs.sort_by(|a, b| (given(a), a).cmp(&(given(b), b)));
    dirs.dedup();
    let names_in = |dir: &Vec<String>| -> Vec<&str> {
        parts
            .iter()
            .filter(|(p, _)| p.len() == dir.len() + 1 && p[..dir.len()] == dir[..])
            .map(|(p, _)| p[p.len() - 1].as_str())
            .collect()
    };
    let runs: Vec<&Vec<String>> = dirs
        .iter()
        .filter(|d| has_run_files(&names_in(d)))
        .collect();
    match runs.iter().map(|d| d.len()).min() {
        Some(depth) => runs
            .into_iter()
            .filter(|d| d.len() == depth)
            .cloned()
            .collect(),
        None => {
            let depth = dirs.iter().map(Vec::len).min().unwrap_or(0);
            dirs.into_iter()
                .filter(|d| d.len() == depth)
                .take(1)
                .collect()
        }
    }
}

/// Reads the files directly inside each run folder among the paths (see [`run_folders`]).
async fn group(
    list: Vec<(String, JsValue)>,
    loose: &str,
    order: &[String],
) -> Result<Vec<Picked>, String> {
    let parts: Vec<(Vec<String>, JsValue)> = list
        .into_iter()
        .map(|(p, f)| {
            (
                p.split('/')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
                f,
            )
        })
        .filter(|(p, _): &(Vec<String>, JsValue)| !p.is_empty())
        .collect();
    if parts.is_empty() {
        return Err("Nothing to read: no files were given.".to_string());
    }
    let mut out = Vec::new();
    for dir in run_folders(&parts, order) {
        let mut names = Vec::new();
        let mut files = Vec::new();
        for (p, f) in parts
            .iter()
            .filter(|(p, _)| p.len() == dir.len() + 1 && p[..dir.len()] == dir[..])
        {
            let name = p.last().cloned().unwrap_or_default();
            match bytes(f).await {
                Ok(b) => files.push((name.clone(), b)),
                // Kept out of `files`: the analyzer then reports it as unreadable, by name.
                Err(e) => web_sys::console::warn_1(&JsValue::from_str(&format!("{name}: {e}"))),
            }
            names.push(name);
        }
        // Files two or three levels down in a fleet's subfolders, by path under `dir`.
        let mut sub = Vec::new();
        for (p, f) in parts.iter().filter(|(p, _)| {
            p.len() > dir.len() + 1
                && p[..dir.len()] == dir[..]
                && in_fleet_subfolder(&p[dir.len()..p.len() - 1])
        }) {
            let rel = p[dir.len()..].join("/");
            match bytes(f).await {
                Ok(b) => sub.push((rel, Some(b))),
                Err(e) => {
                    web_sys::console::warn_1(&JsValue::from_str(&format!("{rel}: {e}")));
                    sub.push((rel, None));
                }
            }
        }
        out.push(Picked {
            sub,
            folder: if dir.is_empty() {
                loose.to_string()
            } else {
                dir.join("/")
            },
            names,
            files,
        });
    }
    Ok(out)
}

/// Files chosen with an `<input type=file>` (a folder with `webkitdirectory`, or files).
pub fn from_input(
    input: web_sys::HtmlInputElement,
    done: impl Fn(Result<Vec<Picked>, String>) + 'static,
) {
    let mut list = Vec::new();
    if let Some(files) = input.files() {
        for i in 0..files.length() {
            if let Some(f) = files.get(i) {
                let rel = get(&f, "webkitRelativePath")
                    .as_string()
                    .unwrap_or_default();
                let path = if rel.is_empty() { f.name() } else { rel };
                list.push((path, JsValue::from(f)));
            }
        }
    }
    // Choosing the same folder again must fire `change` again.
    input.set_value("");
    wasm_bindgen_futures::spawn_local(async move {
        done(group(list, "chosen files", &[]).await);
    });
}

/// A drop: folders are walked through `webkitGetAsEntry` (their files and, one level
/// down, the files of a run folder inside); plain files are taken as they are.
pub fn from_drop(ev: web_sys::DragEvent, done: impl Fn(Result<Vec<Picked>, String>) + 'static) {
    let dt = get(&ev, "dataTransfer");
    let mut entries = Vec::new();
    let mut loose = Vec::new();
    // Entries must be taken during the event: the data transfer empties afterwards.
    let items = get(&dt, "items");
    let n = get(&items, "length").as_f64().unwrap_or(0.0) as u32;
    for i in 0..n {
        let item = Reflect::get_u32(&items, i).unwrap_or(JsValue::UNDEFINED);
        if get(&item, "kind").as_string().as_deref() != Some("file") {
            continue;
        }
        let entry = call(&item, "webkitGetAsEntry", &[]).unwrap_or(JsValue::NULL);
        if entry.is_object() {
            entries.push(entry);
        } else if let Ok(f) = call(&item, "getAsFile", &[]) {
            if f.is_object() {
                loose.push((get(&f, "name").as_string().unwrap_or_default(), f));
            }
        }
    }
    if entries.is_empty() && loose.is_empty() {
        let files = get(&dt, "files");
        let n = get(&files, "length").as_f64().unwrap_or(0.0) as u32;
        for i in 0..n {
            if let Ok(f) = Reflect::get_u32(&files, i) {
                loose.push((get(&f, "name").as_string().unwrap_or_default(), f));
            }
        }
    }
    // The folders in the order they were dropped, to keep the columns in that order.
    let order: Vec<String> = entries
        .iter()
        .filter_map(|e| get(e, "name").as_string())
        .collect();
    wasm_bindgen_futures::spawn_local(async move {
        let mut list = loose;
        // (entry, depth): a dropped folder is depth 0; its run folders are depth 1.
        let mut stack: Vec<(JsValue, usize)> = entries.into_iter().map(|e| (e, 0)).collect();
        while let Some((entry, depth)) = stack.pop() {
            if get(&entry, "isDirectory").as_bool() == Some(true) {
                // A run folder one level down; a fleet's subfolders two or three.
                let path = get(&entry, "fullPath").as_string().unwrap_or_default();
                let parts: Vec<String> = path
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                if depth > 1 && !(depth <= 3 && in_fleet_subfolder(&parts)) {
                    continue;
                }
                let Ok(reader) = call(&entry, "createReader", &[]) else {
                    continue;
                };
                // readEntries gives the folder in batches until an empty one.
                loop {
                    match callback(&reader, "readEntries").await {
                        Ok(batch) => {
                            let batch = js_sys::Array::from(&batch);
                            if batch.length() == 0 {
                                break;
                            }
                            for e in batch.iter() {
                                stack.push((e, depth + 1));
                            }
                        }
                        Err(e) => {
                            done(Err(format!("Could not list the dropped folder: {e}")));
                            return;
                        }
                    }
                }
            } else if get(&entry, "isFile").as_bool() == Some(true) {
                let path = get(&entry, "fullPath")
                    .as_string()
                    .unwrap_or_else(|| get(&entry, "name").as_string().unwrap_or_default());
                match callback(&entry, "file").await {
                    Ok(f) => list.push((path, f)),
                    Err(e) => web_sys::console::warn_1(&JsValue::from_str(&format!("{path}: {e}"))),
                }
            }
        }
        done(group(list, "dropped files", &order).await);
    });
}
