//! Reading inputs from disk: one file given by path, or a whole run folder. The command,
//! the benchmarks and the tests all load folders through here, so they see the same files.
//!
//! A run folder may come from someone else, so every entry is listed without following
//! it: a symbolic link, a folder or a device in the folder keeps its role by name but is
//! not read (its checks say why they cannot tell) and is listed as skipped. A regular file
//! is opened without following a link and without blocking, checked again on the open
//! handle, refused when over its role's size limit (`analyzer::sizes`) or sparse, and
//! only then read.

use std::cell::RefCell;
use std::fs::{File, Metadata};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use analyzer::analysis::{InputFile, RunInput};
use analyzer::folder;
use analyzer::input::InputError;
use analyzer::pack::{columns, Carriage};
use analyzer::series::{Series, SeriesReader};
use analyzer::sizes::Role;
use analyzer::Skipped;

/// Reads a file given on the command line (links followed: the user named it); an
/// unreadable file keeps its error.
pub fn read_input(path: &Path, role: Role) -> InputFile {
    let name = path.display().to_string();
    InputFile {
        name,
        bytes: read_file(path, role, false),
    }
}

/// Why an entry is not a file to read, from its own metadata (not its link's target).
fn not_a_file(m: &Metadata) -> Option<&'static str> {
    let t = m.file_type();
    if t.is_symlink() {
        Some("a symbolic link: not followed")
    } else if t.is_dir() {
        Some("a folder, not a file")
    } else if !t.is_file() {
        Some("a device, FIFO or socket, not a file")
    } else {
        None
    }
}

/// Reads a regular file within its role's limit. With `no_follow`, a link at `path` is
/// refused rather than followed.
fn read_file(path: &Path, role: Role, no_follow: bool) -> Result<Vec<u8>, String> {
    let (f, len) = open_checked(path, role, no_follow)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // One byte past the limit tells a file that grew while being read.
    f.take(role.max_bytes() + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_reason(&e))?;
    if let Some(why) = role.refuse(bytes.len() as u64) {
        return Err(why);
    }
    Ok(bytes)
}

/// Opens a regular file to read from its start, after the checks every read makes: not
/// a link (with `no_follow`), a folder or a device, within its role's size limit, not
/// sparse. Returns the file and its size.
fn open_checked(path: &Path, role: Role, no_follow: bool) -> Result<(File, u64), String> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
        let follow = if no_follow { libc::O_NOFOLLOW } else { 0 };
        opts.custom_flags(libc::O_NONBLOCK | follow);
    }
    let f = match opts.open(path) {
        Ok(f) => f,
        Err(e) if no_follow && e.raw_os_error() == Some(libc::ELOOP) => {
            return Err("a symbolic link: not followed".into())
        }
        Err(e) => return Err(io_reason(&e)),
    };
    // The handle's own metadata: what was opened, whatever the path points at now.
    let m = f.metadata().map_err(|e| io_reason(&e))?;
    if let Some(why) = not_a_file(&m) {
        return Err(why.into());
    }
    if let Some(why) = role.refuse(m.len()) {
        return Err(why);
    }
    if has_holes(&f, m.len()) {
        return Err(format!(
            "a sparse file ({} bytes with holes): not a recording, not read",
            analyzer::num::thousands(m.len() as f64)
        ));
    }
    let mut f = f;
    // Read from the start, wherever the hole search left the offset.
    f.seek(SeekFrom::Start(0)).map_err(|e| io_reason(&e))?;
    Ok((f, m.len()))
}

/// How much of a series is read at a time: large enough that reading costs few calls,
/// small enough to stay in the cache while its lines are parsed.
const SERIES_PIECE: usize = 1 << 20;

/// A series at least this large is read as two halves at once (a second thread pays for
/// itself on a long recording, not on a short one).
const SERIES_HALVES_FROM: u64 = 16 << 20;

/// Reads a series file as it streams from disk, piece by piece into a
/// [`SeriesReader`]: its text is never held whole, only its rows. The same checks as
/// every other read (`open_checked`); `shown` names the file in messages.
pub fn read_series(path: &Path, shown: &str, no_follow: bool) -> Result<Series, InputError> {
    match stream_series(path, shown, no_follow, false) {
        Ok((read, _)) => read,
        Err(reason) => Err(InputError::new(shown, None, reason)),
    }
}

/// As [`read_series`], telling a file that could not be read (the reason, as
/// `read_file` gives it) from one read but not a series. A long file is read as two
/// halves in two threads, split after a newline, and joined (`SeriesReader::append`).
/// With `carry`, another thread encodes the same file for the one-file report meanwhile
/// ([`Carrier`]; `None` when it could not start) and the file is read in one piece.
fn stream_series(
    path: &Path,
    shown: &str,
    no_follow: bool,
    carry: bool,
) -> Result<(Result<Series, InputError>, Option<Carrier>), String> {
    let (f, len) = open_checked(path, Role::Series, no_follow)?;
    let carrier = if carry { Carrier::start(&f) } else { None };
    // With a carrier on the other core, one reader: joining two halves holds the later
    // half's rows twice for a moment, on top of the carrier's columns.
    let halfway = match carrier {
        Some(_) => None,
        None => halfway_line(&f, len)?,
    };
    let reader = match halfway {
        None => read_part(&f, shown, 0, None)?,
        Some(mid) => std::thread::scope(|scope| {
            let later = scope.spawn(|| read_part(&f, shown, mid, None));
            let mut first = read_part(&f, shown, 0, Some(mid))?;
            let later = later
                .join()
                .map_err(|_| "cannot read: the reading thread failed".to_string())??;
            first.append(later);
            Ok::<_, String>(first)
        })?,
    };
    Ok((reader.finish(), carrier))
}

/// The series' carriage in the one-file report (`pack::Carriage`: its columns, deflated
/// and base64-encoded), made on its own thread from its own reading of the same open
/// file while the series is parsed and analyzed: the text is read once more, in pieces,
/// but never held whole, and the page waits only for what is left of it.
#[derive(Debug)]
pub struct Carrier(std::thread::JoinHandle<Result<Carriage, String>>);

impl Carrier {
    /// Starts encoding the file open in `f` (a second handle on it, so the file is the
    /// one being parsed); `None` when the handle or the thread cannot be had.
    fn start(f: &File) -> Option<Carrier> {
        let f = f.try_clone().ok()?;
        std::thread::Builder::new()
            .name("series-carriage".into())
            .spawn(move || carry_series(&f))
            .ok()
            .map(Carrier)
    }

    /// The carriage, or why the file could not be read for it.
    pub fn wait(self) -> Result<Carriage, String> {
        self.0
            .join()
            .unwrap_or_else(|_| Err("cannot read: the reading thread failed".to_string()))
    }
}

/// Reads the whole file piece by piece into the columns encoder, within the series' size
/// limit, then deflates the columns.
fn carry_series(f: &File) -> Result<Carriage, String> {
    let mut encoder = columns::Encoder::default();
    let size = read_pieces(f, 0, None, |piece| encoder.push(piece))?;
    let size = usize::try_from(size).map_err(|_| "too large to carry".to_string())?;
    Ok(Carriage::columnar(size, &encoder.finish()))
}

/// Reads the file from `start` to `end` (its end when `None`) a piece at a time by
/// positional reads (several readers may share one handle), handing each piece on, within
/// the series' size limit; returns where the reading stopped.
fn read_pieces(
    f: &File,
    start: u64,
    end: Option<u64>,
    mut each: impl FnMut(&[u8]),
) -> Result<u64, String> {
    let mut piece = vec![0u8; SERIES_PIECE];
    let mut at = start;
    loop {
        let want = end.map_or(piece.len(), |e| {
            usize::try_from(e.saturating_sub(at)).map_or(piece.len(), |w| w.min(piece.len()))
        });
        if want == 0 {
            break;
        }
        let n = match read_at(f, &mut piece[..want], at) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_reason(&e)),
        };
        at += n as u64;
        // A file that grew past the limit while being read.
        if let Some(why) = Role::Series.refuse(at) {
            return Err(why);
        }
        each(&piece[..n]);
    }
    Ok(at)
}

/// Where the line after the middle of a long file starts, to read its halves apart;
/// `None` for a short file or one without a newline near its middle.
fn halfway_line(f: &File, len: u64) -> Result<Option<u64>, String> {
    if len < SERIES_HALVES_FROM {
        return Ok(None);
    }
    let mut piece = vec![0u8; SERIES_PIECE];
    let n = read_at(f, &mut piece, len / 2).map_err(|e| io_reason(&e))?;
    let newline = piece[..n].iter().position(|&b| b == b'\n');
    Ok(newline.map(|i| len / 2 + i as u64 + 1))
}

/// Reads the file from `start` to `end` (its end when `None`) into a new reader, by
/// positional reads (the halves share one handle), within the series' size limit.
fn read_part(f: &File, shown: &str, start: u64, end: Option<u64>) -> Result<SeriesReader, String> {
    let mut reader = SeriesReader::new(shown);
    read_pieces(f, start, end, |piece| reader.push(piece))?;
    Ok(reader)
}

/// Reads at an offset without moving the handle's own position.
fn read_at(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(f, buf, at)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(f, buf, at)
    }
}

/// Whether the file has a hole before its end (`SEEK_HOLE`): the recorder only appends,
/// so a sparse file is made by hand, and its zeros would be read for nothing.
fn has_holes(f: &File, len: u64) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if len == 0 {
            return false;
        }
        // SAFETY: lseek on a descriptor we own; it only moves the file offset, which
        // the caller sets back to 0 before reading.
        let hole = unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_HOLE) };
        hole >= 0 && (hole as u64) < len
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (f, len);
        false
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => format!("cannot read: {e}"),
    }
}

/// Every entry of a folder by name, each with why it is not read (a link, a folder, a
/// device), without following any. Names that are not UTF-8 cannot play a role and are
/// returned apart.
pub fn folder_entries(dir: &Path) -> std::io::Result<FolderEntries> {
    let mut out = FolderEntries::default();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let problem = match std::fs::symlink_metadata(e.path()) {
            Ok(m) => not_a_file(&m).map(str::to_string),
            Err(err) => Some(io_reason(&err)),
        };
        match e.file_name().into_string() {
            Ok(n) => out.entries.push((n, problem)),
            Err(raw) => out.unnamed.push(raw.to_string_lossy().into_owned()),
        }
    }
    out.entries.sort();
    out.unnamed.sort();
    Ok(out)
}

/// A folder's entries: `(name, why not read)`, and the names that are not UTF-8.
#[derive(Debug, Default)]
pub struct FolderEntries {
    pub entries: Vec<(String, Option<String>)>,
    pub unnamed: Vec<String>,
}

/// Loads a run folder's files by role (docs/run-folder.md#discovery), naming each file as
/// the folder path as given joined with its name.
pub fn load_run_folder(dir: &Path) -> std::io::Result<RunInput> {
    load_run_folder_as(dir, &dir.display().to_string())
}

/// As [`load_run_folder`], naming files under `shown` instead of the folder's path (tests
/// name fixtures by their path relative to the fixtures folder).
pub fn load_run_folder_as(dir: &Path, shown: &str) -> std::io::Result<RunInput> {
    load_folder(dir, shown, false).map(|(input, _)| input)
}

/// A run whose series was read as it streamed from disk ([`read_series`]): the input's
/// `series` names the file and holds no bytes (see [`StreamedRun::series_carriage`] for
/// the page that carries them).
#[derive(Debug, Default)]
pub struct StreamedRun {
    pub input: RunInput,
    /// The series read, or why it could not be; `None` when the run has none.
    pub series: Option<Result<Series, InputError>>,
    /// Where the series is on disk, for reading its bytes again, and whether a link
    /// there is followed.
    series_path: Option<(PathBuf, bool)>,
    /// Whether the series is encoded for the one-file report as it is read.
    carry: bool,
    /// The series' carriage being made while it is read, when `carry`.
    carrier: Option<Carrier>,
}

impl StreamedRun {
    /// Streams the series file given on the command line (links followed: the user named
    /// it) in place of the folder's.
    pub fn use_series_file(&mut self, path: &Path) {
        let name = path.display().to_string();
        let (bytes, read, carrier) = match stream_series(path, &name, false, self.carry) {
            Ok((read, carrier)) => (Ok(Vec::new()), read, carrier),
            Err(reason) => (
                Err(reason.clone()),
                Err(InputError::new(&name, None, reason)),
                None,
            ),
        };
        self.input.series = Some(InputFile { name, bytes });
        self.series = Some(read);
        self.series_path = Some((path.to_path_buf(), true));
        self.carrier = carrier;
    }

    /// The series file's bytes, read again (for the one-file report, once the rows are
    /// gone); `None` when the run has no series.
    pub fn series_bytes(&self) -> Option<Result<Vec<u8>, String>> {
        let (path, follow) = self.series_path.as_ref()?;
        Some(read_file(path, Role::Series, !follow))
    }

    /// The series as the one-file report carries it: made while it was read when the
    /// run was loaded to carry it ([`load_run_folder_carried`]), else from its bytes read
    /// again; `None` when the run has no series file.
    pub fn series_carriage(&mut self) -> Option<Result<Carriage, String>> {
        if let Some(carrier) = self.carrier.take() {
            return Some(carrier.wait());
        }
        self.series_bytes()
            .map(|read| read.map(|b| Carriage::columnar(b.len(), &columns::encode(&b))))
    }
}

/// As [`load_run_folder`], the series streamed into its rows rather than read whole.
pub fn load_run_folder_streamed(dir: &Path) -> std::io::Result<StreamedRun> {
    load_streamed(dir, false)
}

/// As [`load_run_folder_streamed`], the series also encoded for the one-file report as
/// it is read, on its own thread ([`StreamedRun::series_carriage`]).
pub fn load_run_folder_carried(dir: &Path) -> std::io::Result<StreamedRun> {
    load_streamed(dir, true)
}

fn load_streamed(dir: &Path, carry: bool) -> std::io::Result<StreamedRun> {
    let shown = dir.display().to_string();
    let (mut input, deferred) = load_folder(dir, &shown, true)?;
    let mut series = None;
    let mut series_path = None;
    let mut carrier = None;
    if let (Some(name), Some(f)) = (deferred, &mut input.series) {
        let path = dir.join(&name);
        series = Some(match stream_series(&path, &f.name, true, carry) {
            Ok((read, started)) => {
                carrier = started;
                read
            }
            Err(reason) => {
                // As a file refused by `read_file`: listed as skipped, unreadable for checks.
                input.skipped.push(Skipped {
                    name,
                    reason: reason.clone(),
                });
                input.skipped.sort_by(|a, b| a.name.cmp(&b.name));
                input.skipped.dedup();
                f.bytes = Err(reason.clone());
                Err(InputError::new(&f.name, None, reason))
            }
        });
        series_path = Some((path, false));
    } else if let Some(f) = &input.series {
        // Not deferred: the entry itself was refused (a link, a folder, a device).
        series = Some(match &f.bytes {
            Ok(b) => Series::read(&f.name, b),
            Err(reason) => Err(InputError::new(&f.name, None, reason.clone())),
        });
    }
    Ok(StreamedRun {
        input,
        series,
        series_path,
        carry,
        carrier,
    })
}

/// Loads a folder; with `defer_series`, the series file is not read (its `InputFile`
/// holds no bytes) and its name is returned to stream it.
fn load_folder(
    dir: &Path,
    shown: &str,
    defer_series: bool,
) -> std::io::Result<(RunInput, Option<String>)> {
    let listing = folder_entries(dir)?;
    let deferred: RefCell<Option<String>> = RefCell::new(None);
    let names: Vec<&str> = listing.entries.iter().map(|(n, _)| n.as_str()).collect();
    // Files that were opened but refused (too large, sparse) join the skipped list.
    let refused: RefCell<Vec<Skipped>> = RefCell::new(Vec::new());
    let read = |n: &str| {
        let problem = listing
            .entries
            .iter()
            .find(|(k, _)| k == n)
            .and_then(|(_, p)| p.clone());
        if let Some(p) = problem {
            return Err(p);
        }
        let role = Role::of_name(n);
        if defer_series && role == Role::Series {
            *deferred.borrow_mut() = Some(n.to_string());
            return Ok(Vec::new());
        }
        let r = read_file(&dir.join(n), role, true);
        if let Err(reason) = &r {
            refused.borrow_mut().push(Skipped {
                name: n.to_string(),
                reason: reason.clone(),
            });
        }
        r
    };
    let mut input = folder::load(shown, &names, &read);
    let outputs = [analyzer::docs::RESULTS, analyzer::docs::REPORT];
    let mut skipped: Vec<Skipped> = listing
        .entries
        .iter()
        .filter(|(n, _)| !outputs.contains(&n.as_str()))
        .filter_map(|(n, p)| {
            Some(Skipped {
                name: n.clone(),
                reason: p.clone()?,
            })
        })
        .collect();
    skipped.extend(refused.into_inner());
    skipped.extend(listing.unnamed.into_iter().map(|name| Skipped {
        name,
        reason: "a name that is not UTF-8 text: not read".into(),
    }));
    if input.fleet.is_some() {
        let read_as_fleet = load_fleet_subfolders(dir, shown, &mut input, &mut skipped);
        skipped.retain(|s| !read_as_fleet.contains(&s.name.as_str()));
    }
    skipped.sort_by(|a, b| a.name.cmp(&b.name));
    skipped.dedup();
    input.skipped = skipped;
    Ok((input, deferred.into_inner()))
}

/// Whether `path` is a real folder, judged without following a link.
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

/// Why a name is not read (not UTF-8).
const NOT_UTF8: &str = "a name that is not UTF-8 text: not read";

/// The entries of the subfolder `rel` as relative paths with why each is not read.
fn list_files(
    dir: &Path,
    rel: &str,
    paths: &mut Vec<(String, Option<String>)>,
    skipped: &mut Vec<Skipped>,
) {
    match folder_entries(&dir.join(rel)) {
        Ok(l) => {
            paths.extend(
                l.entries
                    .into_iter()
                    .map(|(n, p)| (format!("{rel}/{n}"), p)),
            );
            skipped.extend(l.unnamed.into_iter().map(|n| Skipped {
                name: format!("{rel}/{n}"),
                reason: NOT_UTF8.into(),
            }));
        }
        Err(e) => skipped.push(Skipped {
            name: rel.to_string(),
            reason: io_reason(&e),
        }),
    }
}

/// A fleet folder's `replicas/<id>/` and `router/` (formats of `analyzer::fleet`): listed
/// with the same rules as the top level (links never followed, each file by its role's
/// limit); a replica folder with a bad id, a link or a file where a folder belongs is
/// skipped with its reason. Returns the top-level subfolders read, which are then no
/// longer listed as skipped.
fn load_fleet_subfolders(
    dir: &Path,
    shown: &str,
    input: &mut RunInput,
    skipped: &mut Vec<Skipped>,
) -> Vec<&'static str> {
    use analyzer::docs::{REPLICAS_DIR, ROUTER_DIR};
    let mut read_dirs = Vec::new();
    // (relative path, why it is not read)
    let mut paths: Vec<(String, Option<String>)> = Vec::new();
    if is_real_dir(&dir.join(REPLICAS_DIR)) {
        read_dirs.push(REPLICAS_DIR);
        match folder_entries(&dir.join(REPLICAS_DIR)) {
            Ok(l) => {
                for (id, problem) in l.entries {
                    let rel = format!("{REPLICAS_DIR}/{id}");
                    let why = if is_real_dir(&dir.join(&rel)) {
                        analyzer::fleet::folder::bad_replica_id(&id)
                    } else {
                        Some(match problem {
                            Some(p) => format!("{p}; a replica's readings live in a folder"),
                            None => "a file, not a replica's folder: not read".to_string(),
                        })
                    };
                    match why {
                        Some(reason) => skipped.push(Skipped { name: rel, reason }),
                        None => list_files(dir, &rel, &mut paths, skipped),
                    }
                }
                skipped.extend(l.unnamed.into_iter().map(|n| Skipped {
                    name: format!("{REPLICAS_DIR}/{n}"),
                    reason: NOT_UTF8.into(),
                }));
            }
            Err(e) => skipped.push(Skipped {
                name: REPLICAS_DIR.to_string(),
                reason: io_reason(&e),
            }),
        }
    }
    if is_real_dir(&dir.join(ROUTER_DIR)) {
        read_dirs.push(ROUTER_DIR);
        list_files(dir, ROUTER_DIR, &mut paths, skipped);
    }
    let refused: RefCell<Vec<Skipped>> = RefCell::new(Vec::new());
    let read = |rel: &str| {
        if let Some(p) = paths
            .iter()
            .find(|(k, _)| k == rel)
            .and_then(|(_, p)| p.clone())
        {
            return Err(p);
        }
        let base = rel.rsplit('/').next().unwrap_or(rel);
        let r = read_file(&dir.join(rel), Role::of_name(base), true);
        if let Err(reason) = &r {
            refused.borrow_mut().push(Skipped {
                name: rel.to_string(),
                reason: reason.clone(),
            });
        }
        r
    };
    let names: Vec<&str> = paths.iter().map(|(n, _)| n.as_str()).collect();
    let found = analyzer::fleet::load_files(shown, &names, &read);
    skipped.extend(paths.iter().filter_map(|(n, p)| {
        Some(Skipped {
            name: n.clone(),
            reason: p.clone()?,
        })
    }));
    skipped.extend(found.skipped);
    skipped.extend(refused.into_inner());
    skipped.sort_by(|a, b| a.name.cmp(&b.name));
    skipped.dedup();
    input.replicas = found.replicas;
    input.router = found.router;
    read_dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_series_read_in_halves_reads_as_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("inferlint-halves-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.series.jsonl");
        let mut text = String::from("{\"schema\": \"inferlint.series/1\", \"engine\": \"vllm\"}\n");
        let mut i = 0;
        while (text.len() as u64) < SERIES_HALVES_FROM + 4096 {
            // A damaged line and a refused value now and then, to number them right.
            match i % 1000 {
                500 => text.push_str("{\"t_wall\": 1.0, \"runn\n"),
                700 => text.push_str(&format!("{{\"t_wall\": {i}.5, \"kv_usage\": 7.0}}\n")),
                _ => text.push_str(&format!(
                    "{{\"t_wall\": {i}.25, \"running\": {}.0}}\n",
                    i % 9
                )),
            }
            i += 1;
        }
        std::fs::write(&p, &text).unwrap();
        let streamed = read_series(&p, "run.series.jsonl", true);
        let _ = std::fs::remove_dir_all(&dir);
        let whole = Series::read("run.series.jsonl", text.as_bytes());
        let streamed = streamed.unwrap();
        assert!(streamed.skipped > 1 && streamed.implausible.len() > 1);
        // No NaN in these rows: equality is exact.
        assert!(streamed == whole.unwrap());
    }

    #[test]
    fn a_sparse_file_is_refused_before_it_is_read() {
        let dir = std::env::temp_dir().join(format!("inferlint-sparse-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.series.jsonl");
        let f = File::create(&p).unwrap();
        f.set_len(1 << 30).unwrap();
        drop(f);
        let on_disk = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(&p).unwrap().blocks() * 512
        };
        let r = read_file(&p, Role::Series, true);
        let _ = std::fs::remove_dir_all(&dir);
        // Where the file system really left it sparse, the holes are seen.
        if on_disk < 1 << 30 {
            let e = r.unwrap_err();
            assert!(e.contains("sparse"), "{e}");
        }
    }
}
