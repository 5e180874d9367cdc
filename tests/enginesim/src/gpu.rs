//! The simulated GPU: each process that "holds" card memory owns one small file in a state
//! folder (`INFERLINT_SIM_GPU_STATE`, default `$TMPDIR/inferlint-enginesim-gpu`). Files are
//! written by atomic rename, so concurrent writers never see a torn entry, and readers count
//! only live (non-zombie) owners, so a killed process stops counting once it is gone.

use std::path::PathBuf;

pub const TOTAL_MIB: u64 = 24564;
/// What the driver keeps for itself on an idle card (24564 total, 24138 free).
pub const RESERVED_MIB: u64 = 426;
pub const NAME: &str = "NVIDIA GeForce RTX 4090";
pub const DRIVER: &str = "616.56";
pub const COMPUTE_CAP: &str = "8.9";

pub fn state_dir() -> PathBuf {
    if let Ok(p) = std::env::var("INFERLINT_SIM_GPU_STATE") {
        if !p.trim().is_empty() {
            return PathBuf::from(p);
        }
    }
    std::env::temp_dir().join("inferlint-enginesim-gpu")
}

/// The process's start time (field 22 of /proc/PID/stat) and state, to tell a live owner
/// from a zombie or from a new process that reused the PID.
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let state = f.first()?.chars().next()?;
    let start = f.get(19)?.parse().ok()?;
    Some((state, start))
}

pub fn register(mib: u64) -> std::io::Result<()> {
    let pid = std::process::id();
    let start = proc_stat(pid).map(|s| s.1).unwrap_or(0);
    let dir = state_dir();
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(".{pid}.tmp"));
    std::fs::write(&tmp, format!("{pid} {start} {mib}\n"))?;
    std::fs::rename(&tmp, dir.join(pid.to_string()))
}

pub fn unregister() {
    let _ = std::fs::remove_file(state_dir().join(std::process::id().to_string()));
}

/// MiB held by live processes (owners that are gone or zombies are skipped; files of
/// processes that are gone for good are removed).
pub fn used_mib() -> u64 {
    let Ok(rd) = std::fs::read_dir(state_dir()) else {
        return 0;
    };
    let mut total = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let f: Vec<u64> = text
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if f.len() != 3 {
            continue;
        }
        match proc_stat(f[0] as u32) {
            Some((state, start)) if start == f[1] || f[1] == 0 => {
                if state != 'Z' && state != 'X' {
                    total += f[2];
                }
            }
            _ => {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    total
}

/// The `nvidia-smi` personality: the two queries the recorder makes, in the driver's CSV.
pub fn nvidia_smi(argv: &[String]) -> i32 {
    let mut query: Option<String> = None;
    let mut format = String::new();
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        if let Some(v) = a.strip_prefix("--query-gpu=") {
            query = Some(v.to_string());
        } else if a == "--query-gpu" && i + 1 < argv.len() {
            query = Some(argv[i + 1].clone());
            i += 1;
        } else if let Some(v) = a.strip_prefix("--format=") {
            format = v.to_string();
        } else if a == "--format" && i + 1 < argv.len() {
            format = argv[i + 1].clone();
            i += 1;
        } else if a == "-L" || a == "--list-gpus" {
            println!("GPU 0: {NAME} (UUID: GPU-5f1c0d4e-0000-0000-0000-000000000000)");
            return 0;
        } else {
            eprintln!(
                "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."
            );
            return 2;
        }
        i += 1;
    }
    let Some(query) = query else {
        // The plain summary is not simulated: the recorder only queries.
        eprintln!("inferlint-enginesim: nvidia-smi without --query-gpu is not simulated");
        return 2;
    };
    let old_driver = std::env::var("INFERLINT_SIM_GPU_OLD_DRIVER").is_ok_and(|v| v == "1");
    let units = !format.split(',').any(|f| f.trim() == "nounits");
    let header = !format.split(',').any(|f| f.trim() == "noheader");
    if !format.split(',').any(|f| f.trim() == "csv") {
        eprintln!("inferlint-enginesim: only --format=csv is simulated");
        return 2;
    }
    let used = used_mib().min(TOTAL_MIB - RESERVED_MIB);
    let free = TOTAL_MIB - RESERVED_MIB - used;
    let mib = |v: u64| {
        if units {
            format!("{v} MiB")
        } else {
            v.to_string()
        }
    };
    let mut heads = Vec::new();
    let mut vals = Vec::new();
    for field in query.split(',').map(str::trim) {
        let (h, v) = match field {
            "index" => ("index", "0".to_string()),
            "name" | "gpu_name" => ("name", NAME.to_string()),
            "memory.total" => ("memory.total [MiB]", mib(TOTAL_MIB)),
            "memory.used" => ("memory.used [MiB]", mib(used)),
            "memory.free" => ("memory.free [MiB]", mib(free)),
            "driver_version" => ("driver_version", DRIVER.to_string()),
            "compute_cap" if !old_driver => ("compute_cap", COMPUTE_CAP.to_string()),
            "uuid" => (
                "uuid",
                "GPU-5f1c0d4e-0000-0000-0000-000000000000".to_string(),
            ),
            _ => {
                eprintln!("Field \"{field}\" is not a valid field to query.");
                eprintln!();
                return 2;
            }
        };
        heads.push(if units {
            h.to_string()
        } else {
            h.replace(" [MiB]", "")
        });
        vals.push(v);
    }
    if header {
        println!("{}", heads.join(", "));
    }
    println!("{}", vals.join(", "));
    0
}
