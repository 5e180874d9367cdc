//! The simulated GPU: each process that "holds" card memory owns one small file in a state
//! folder (`INFERLINT_SIM_GPU_STATE`, default `$TMPDIR/inferlint-enginesim-gpu`). Files are
//! written by atomic rename, so concurrent writers never see a torn entry, and readers count
//! only live (non-zombie) owners, so a killed process stops counting once it is gone.
//!
//! An engine also says whether it is computing and whether its card is throttled, in the
//! same way (`activity/PID`, written only when that changes), so the fake `nvidia-smi`
//! reports clocks, power, temperature, utilization and throttle reasons that match what
//! the engine does: idle, busy riding its power cap, or throttled by heat (T16). With
//! `-lms N` (or `-l N`) it keeps printing every N ms, as the real one does.

use std::path::PathBuf;
use std::sync::Mutex;

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

/// The card's maximum SM clock (`clocks.max.sm` of an RTX 4090) and power limit.
pub const MAX_SM_CLOCK_MHZ: u32 = 3105;
pub const POWER_LIMIT_W: f64 = 450.0;

/// What the card reports in each state: SM clock, power, temperature, utilization and the
/// active clock-limiting reasons.
struct Reading {
    clock_mhz: u32,
    power_w: f64,
    temp_c: u32,
    util_pct: u32,
    reasons: &'static [&'static str],
}

const IDLE: Reading = Reading {
    clock_mhz: 210,
    power_w: 22.5,
    temp_c: 38,
    util_pct: 0,
    reasons: &["gpu_idle"],
};
/// Busy at the power cap, a little under the top boost clock: the card's normal speed.
const BUSY: Reading = Reading {
    clock_mhz: 2730,
    power_w: 441.3,
    temp_c: 71,
    util_pct: 97,
    reasons: &["sw_power_cap"],
};
/// Hot: the driver has pulled the clock down to stay within its thermal limit.
const THROTTLED: Reading = Reading {
    clock_mhz: 1395,
    power_w: 449.6,
    temp_c: 88,
    util_pct: 99,
    reasons: &["sw_power_cap", "hw_thermal_slowdown", "sw_thermal_slowdown"],
};

/// How much longer a step takes on the throttled card than on the busy one.
pub fn throttle_slowdown() -> f64 {
    f64::from(BUSY.clock_mhz) / f64::from(THROTTLED.clock_mhz)
}

/// The reason fields `nvidia-smi` knows, after `clocks_event_reasons.` (or, on older
/// drivers, `clocks_throttle_reasons.`).
const REASON_FIELDS: [&str; 8] = [
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
    "sync_boost",
];

fn activity_dir() -> PathBuf {
    state_dir().join("activity")
}

/// The last activity this process wrote, so a step writes only on a change.
static LAST_ACTIVITY: Mutex<Option<(bool, bool)>> = Mutex::new(None);

/// Says whether this process's engine is computing and whether its card is throttled.
pub fn set_activity(busy: bool, throttled: bool) {
    let mut last = LAST_ACTIVITY.lock().unwrap_or_else(|e| e.into_inner());
    if *last == Some((busy, throttled)) {
        return;
    }
    *last = Some((busy, throttled));
    let pid = std::process::id();
    let start = proc_stat(pid).map(|s| s.1).unwrap_or(0);
    let dir = activity_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{pid}.tmp"));
    let line = format!("{pid} {start} {} {}\n", u8::from(busy), u8::from(throttled));
    if std::fs::write(&tmp, line).is_ok() {
        let _ = std::fs::rename(&tmp, dir.join(pid.to_string()));
    }
}

/// Whether any live engine is computing, and whether any has its card throttled.
fn activity() -> (bool, bool) {
    let Ok(rd) = std::fs::read_dir(activity_dir()) else {
        return (false, false);
    };
    let (mut busy, mut throttled) = (false, false);
    for e in rd.flatten() {
        if e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let f: Vec<u64> = text
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if f.len() != 4 {
            continue;
        }
        match proc_stat(f[0] as u32) {
            Some((state, start))
                if (start == f[1] || f[1] == 0) && state != 'Z' && state != 'X' =>
            {
                busy |= f[2] == 1;
                throttled |= f[3] == 1;
            }
            Some(_) => {}
            None => {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    (busy, throttled)
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

/// The `nvidia-smi` personality: the queries the recorder makes, in the driver's CSV, once
/// or (with `-lms N` / `-l N`) every N milliseconds / seconds until stopped.
pub fn nvidia_smi(argv: &[String]) -> i32 {
    let mut query: Option<String> = None;
    let mut format = String::new();
    let mut every: Option<std::time::Duration> = None;
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        let next = argv.get(i + 1);
        if let Some(v) = a.strip_prefix("--query-gpu=") {
            query = Some(v.to_string());
        } else if a == "--query-gpu" && next.is_some() {
            query = next.cloned();
            i += 1;
        } else if let Some(v) = a.strip_prefix("--format=") {
            format = v.to_string();
        } else if a == "--format" && next.is_some() {
            format = next.cloned().unwrap_or_default();
            i += 1;
        } else if (a == "-lms" || a == "--loop-ms" || a == "-l" || a == "--loop") && next.is_some()
        {
            let Some(n) = next.and_then(|v| v.parse::<u64>().ok()).filter(|n| *n > 0) else {
                eprintln!("Invalid value for {a}. Please run 'nvidia-smi -h' for help.");
                return 2;
            };
            every = Some(if a.contains("ms") {
                std::time::Duration::from_millis(n)
            } else {
                std::time::Duration::from_secs(n)
            });
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
    let units = !format.split(',').any(|f| f.trim() == "nounits");
    let header = !format.split(',').any(|f| f.trim() == "noheader");
    if !format.split(',').any(|f| f.trim() == "csv") {
        eprintln!("inferlint-enginesim: only --format=csv is simulated");
        return 2;
    }
    let fields: Vec<&str> = query.split(',').map(str::trim).collect();
    // Refuse an unknown field before printing anything, as the driver does.
    let old_driver = std::env::var("INFERLINT_SIM_GPU_OLD_DRIVER").is_ok_and(|v| v == "1");
    for f in &fields {
        if cell(f, units, old_driver, &IDLE, 0).is_none() {
            eprintln!("Field \"{f}\" is not a valid field to query.");
            eprintln!();
            return 2;
        }
    }
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if header {
        let heads: Vec<String> = fields.iter().map(|f| head(f, units)).collect();
        if writeln!(out, "{}", heads.join(", ")).is_err() {
            return 0;
        }
    }
    loop {
        let used = used_mib().min(TOTAL_MIB - RESERVED_MIB);
        let reading = match activity() {
            (true, true) => &THROTTLED,
            (true, false) => &BUSY,
            _ => &IDLE,
        };
        let vals: Vec<String> = fields
            .iter()
            .map(|f| cell(f, units, old_driver, reading, used).unwrap_or_default())
            .collect();
        // A reader that went away ends the loop, as SIGPIPE ends the real one.
        if writeln!(out, "{}", vals.join(", ")).is_err() || out.flush().is_err() {
            return 0;
        }
        match every {
            Some(d) => std::thread::sleep(d),
            None => return 0,
        }
    }
}

/// A field's column heading.
fn head(field: &str, units: bool) -> String {
    let (name, unit) = match field {
        "name" | "gpu_name" => ("name", ""),
        "memory.total" | "memory.used" | "memory.free" => (field, " [MiB]"),
        "clocks.sm" | "clocks.max.sm" => (field, " [MHz]"),
        "power.draw" | "power.limit" => (field, " [W]"),
        "utilization.gpu" => (field, " [%]"),
        _ => (field, ""),
    };
    if units {
        format!("{name}{unit}")
    } else {
        name.to_string()
    }
}

/// A field's value in one reading; none for a field the driver does not know.
fn cell(field: &str, units: bool, old_driver: bool, r: &Reading, used: u64) -> Option<String> {
    let with = |v: String, unit: &str| if units { format!("{v} {unit}") } else { v };
    let reason = |name: &str| {
        REASON_FIELDS.contains(&name).then(|| {
            if r.reasons.contains(&name) {
                "Active".to_string()
            } else {
                "Not Active".to_string()
            }
        })
    };
    Some(match field {
        "index" => "0".to_string(),
        "name" | "gpu_name" => NAME.to_string(),
        "memory.total" => with(TOTAL_MIB.to_string(), "MiB"),
        "memory.used" => with(used.to_string(), "MiB"),
        "memory.free" => with((TOTAL_MIB - RESERVED_MIB - used).to_string(), "MiB"),
        "driver_version" => DRIVER.to_string(),
        "compute_cap" if !old_driver => COMPUTE_CAP.to_string(),
        "uuid" => "GPU-5f1c0d4e-0000-0000-0000-000000000000".to_string(),
        "clocks.sm" => with(r.clock_mhz.to_string(), "MHz"),
        "clocks.max.sm" => with(MAX_SM_CLOCK_MHZ.to_string(), "MHz"),
        "power.draw" => with(format!("{:.2}", r.power_w), "W"),
        "power.limit" => with(format!("{POWER_LIMIT_W:.2}"), "W"),
        "temperature.gpu" => r.temp_c.to_string(),
        "utilization.gpu" => with(r.util_pct.to_string(), "%"),
        f => match f
            .strip_prefix("clocks_event_reasons.")
            .filter(|_| !old_driver)
            .or_else(|| f.strip_prefix("clocks_throttle_reasons."))
        {
            Some(name) => reason(name)?,
            None => return None,
        },
    })
}
