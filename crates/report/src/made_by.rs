//! What made a result (issue 42 item 1): the code (commit, whether the
//! tree was dirty, a hash of the sources, the Cargo.lock hash, rustc), the
//! machine (CPU model and count, kernel, idle driver and governor), the
//! load average at the start and at the end, the seeds and the full
//! command line. Every run file, store entry, `summary.json`, sweep table
//! and report carries one as `made_by`, so that a figure handed to an
//! artifact evaluator says what made it, and a store never mixes the
//! results of two code versions without saying so.
//!
//! The code is the binary's: its build script (`crates/cli/build.rs`)
//! reads git (or, in an evaluation bundle without `.git`, the bundle's
//! `CODE-VERSION` file) and the binary hands it here once with
//! [`set_code`] before any verb runs. A library used on its own (a unit
//! test) has no build identity: [`code`] then says `unknown`, and
//! [`Code::id`] keys its results apart from any real build's.
//!
//! The machine is read from `/proc` and `/sys` as Linux documents them:
//! `/proc/cpuinfo` (`model name`), `/proc/sys/kernel/osrelease`,
//! `/proc/loadavg` (proc(5)), and `/sys/devices/system/cpu/cpuidle/
//! current_driver` and `current_governor_ro` (or `current_governor`,
//! writable since Linux 5.7: Documentation/admin-guide/pm/cpuidle.rst).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The code a result was made with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Code {
    /// The package version (`Cargo.toml`).
    pub version: String,
    /// The git commit (40 hex digits), or `unknown`.
    pub commit: String,
    /// Whether the sources differed from the commit (tracked files
    /// modified, or untracked files, under `crates/` or the workspace's
    /// `Cargo.toml` / `Cargo.lock`).
    pub dirty: bool,
    /// SHA-256 of the sources the binary was built from (every file under
    /// `crates/` but build output, and the workspace's `Cargo.toml` and
    /// `Cargo.lock`), hex: tells two dirty builds of one commit apart.
    pub source: String,
    /// SHA-256 of `Cargo.lock`, hex.
    pub cargo_lock: String,
    /// `rustc -V` of the compiler that built the binary.
    pub rustc: String,
}

impl Code {
    /// A build with no identity (a library used on its own).
    pub fn unknown() -> Code {
        Code {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: "unknown".into(),
            dirty: false,
            source: "unknown".into(),
            cargo_lock: "unknown".into(),
            rustc: "unknown".into(),
        }
    }

    /// The code version as keys and tables spell it: the package version
    /// and the commit's first 12 digits; a dirty tree adds `+dirty` and
    /// the source hash's first 12 digits, since its code is not the
    /// commit's; a build of unknown commit is named by its sources alone.
    pub fn id(&self) -> String {
        let short = |s: &str| s.chars().take(12).collect::<String>();
        if self.commit == "unknown" {
            return format!("{} src.{}", self.version, short(&self.source));
        }
        if self.dirty {
            format!(
                "{} g{}+dirty.{}",
                self.version,
                short(&self.commit),
                short(&self.source)
            )
        } else {
            format!("{} g{}", self.version, short(&self.commit))
        }
    }
}

static CODE: OnceLock<Code> = OnceLock::new();

/// Sets the binary's code identity; the first call wins (a binary sets it
/// once, before anything is made).
pub fn set_code(code: Code) {
    let _ = CODE.set(code);
}

/// The binary's code identity, or [`Code::unknown`] when none was set.
pub fn code() -> Code {
    CODE.get().cloned().unwrap_or_else(Code::unknown)
}

/// [`Machine::kernel`] where `/proc/sys/kernel/osrelease` does not read.
pub const UNKNOWN_KERNEL: &str = "unknown";

/// The machine a result was made on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// `/proc/cpuinfo`'s first `model name` (the architecture where the
    /// kernel gives none).
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cpus: usize,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: String,
    /// The cpuidle driver and governor (`none` where the kernel has no
    /// cpuidle: a VM without a driver).
    pub idle_driver: String,
    pub idle_governor: String,
}

impl Machine {
    /// This machine, read now.
    pub fn this() -> Machine {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
        };
        let cpu_model = read("/proc/cpuinfo")
            .and_then(|c| {
                c.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, m)| m.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let idle = "/sys/devices/system/cpu/cpuidle";
        Machine {
            cpu_model,
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            kernel: read("/proc/sys/kernel/osrelease").unwrap_or_else(|| UNKNOWN_KERNEL.into()),
            idle_driver: read(&format!("{idle}/current_driver")).unwrap_or_else(|| "none".into()),
            idle_governor: read(&format!("{idle}/current_governor_ro"))
                .or_else(|| read(&format!("{idle}/current_governor")))
                .unwrap_or_else(|| "none".into()),
        }
    }

    /// One line: `CPU model, N CPUs, Linux K, idle DRIVER/GOVERNOR`.
    pub fn line(&self) -> String {
        format!(
            "{}, {} CPUs, Linux {}, idle {}/{}",
            self.cpu_model, self.cpus, self.kernel, self.idle_driver, self.idle_governor
        )
    }
}

/// `/proc/loadavg`'s 1, 5 and 15 minute load averages (proc(5)).
pub fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(str::parse::<f64>);
    Some([it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?])
}

/// The start of this process's work: when, under what load, by which
/// command line. Taken at the first [`current`] (or [`begin`]) call.
#[derive(Clone, Debug)]
struct Start {
    at: String,
    load: Option<[f64; 3]>,
    command: Vec<String>,
    machine: Machine,
}

static START: OnceLock<Start> = OnceLock::new();

/// Marks the start of the process's work (its load average, time and
/// command line). The binary calls it first thing; [`current`] calls it
/// if nobody did.
pub fn begin() {
    START.get_or_init(|| Start {
        at: utc_now(),
        load: load_average(),
        command: std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        machine: Machine::this(),
    });
}

/// What made a result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MadeBy {
    pub code: Code,
    pub machine: Machine,
    /// When the work started and when this record was taken (UTC,
    /// `YYYY-MM-DDTHH:MM:SSZ`).
    pub started: String,
    pub ended: String,
    /// The 1, 5 and 15 minute load averages at the start and at the end
    /// (absent where the system does not tell them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_start: Option<[f64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_end: Option<[f64; 3]>,
    /// The seeds the result's runs used (empty: none, or not one run's).
    #[serde(default)]
    pub seeds: Vec<u64>,
    /// The full command line, as the process was given it.
    pub command: Vec<String>,
}

/// What made a result finished now: the process's start (its time, load
/// and command line), the load and time now, and `seeds`.
pub fn current(seeds: &[u64]) -> MadeBy {
    begin();
    let start = START.get().expect("begin() sets it");
    MadeBy {
        code: code(),
        machine: start.machine.clone(),
        started: start.at.clone(),
        ended: utc_now(),
        load_start: start.load,
        load_end: load_average(),
        seeds: seeds.to_vec(),
        command: start.command.clone(),
    }
}

impl MadeBy {
    /// The record as (what, value) rows, for a report's "Made by" table.
    pub fn rows(&self) -> Vec<(String, String)> {
        let load = |l: &Option<[f64; 3]>| {
            l.map_or("unknown".to_string(), |l| {
                format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])
            })
        };
        let seeds = if self.seeds.is_empty() {
            "none".to_string()
        } else {
            self.seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        vec![
            ("code".into(), format!("cinterrupts {}", self.code.id())),
            (
                "commit".into(),
                format!(
                    "{}{}",
                    self.code.commit,
                    if self.code.dirty { " (dirty tree)" } else { "" }
                ),
            ),
            ("sources (sha256)".into(), self.code.source.clone()),
            ("Cargo.lock (sha256)".into(), self.code.cargo_lock.clone()),
            ("compiler".into(), self.code.rustc.clone()),
            ("machine".into(), self.machine.line()),
            (
                "started, ended (UTC)".into(),
                format!("{}, {}", self.started, self.ended),
            ),
            (
                "load average (1, 5, 15 min), start / end".into(),
                format!("{} / {}", load(&self.load_start), load(&self.load_end)),
            ),
            ("seeds".into(), seeds),
            ("command".into(), shell_words(&self.command)),
        ]
    }

    /// The record as an HTML section (a heading and a table), for the
    /// pages that are not built from `report::doc` blocks.
    pub fn html(&self) -> String {
        let esc = |t: &str| {
            t.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        };
        let mut s = String::from("<h2>Made by</h2>\n<table>\n");
        for (k, v) in self.rows() {
            s += &format!("<tr><th>{}</th><td>{}</td></tr>\n", esc(&k), esc(&v));
        }
        s + "</table>\n"
    }

    /// The record as Markdown list items.
    pub fn markdown(&self) -> String {
        self.rows()
            .iter()
            .map(|(k, v)| format!("- {k}: {v}\n"))
            .collect()
    }
}

/// A command line as a shell would take it back: words with anything
/// but `[A-Za-z0-9_./:=,+-]` single-quoted.
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_./:=,+-@%".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Now, UTC, as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// `secs` after the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (the civil date
/// from days, after Howard Hinnant's `civil_from_days`).
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(commit: &str, dirty: bool, source: &str) -> Code {
        Code {
            version: "0.1.0".into(),
            commit: commit.into(),
            dirty,
            source: source.into(),
            cargo_lock: "ab".into(),
            rustc: "rustc 1".into(),
        }
    }

    #[test]
    fn the_code_id_tells_commits_and_dirty_trees_apart() {
        let c = "0123456789abcdef0123456789abcdef01234567";
        let clean = code(c, false, "aaaaaaaaaaaaaaaa");
        assert_eq!(clean.id(), "0.1.0 g0123456789ab");
        // A clean tree is its commit, whatever the source hash says.
        assert_eq!(clean.id(), code(c, false, "bbbbbbbbbbbbbbbb").id());
        let d1 = code(c, true, "aaaaaaaaaaaaaaaa");
        let d2 = code(c, true, "bbbbbbbbbbbbbbbb");
        assert_ne!(d1.id(), clean.id());
        assert_ne!(d1.id(), d2.id());
        assert!(d1.id().contains("+dirty."), "{}", d1.id());
        let other = code("fedcba9876543210fedcba9876543210fedcba98", false, "a");
        assert_ne!(other.id(), clean.id());
        assert!(Code::unknown().id().contains("src.unknown"));
    }

    #[test]
    fn a_record_says_the_machine_the_load_and_the_command() {
        let m = current(&[7, 8]);
        assert_eq!(m.seeds, vec![7, 8]);
        assert!(!m.command.is_empty());
        assert!(m.machine.cpus >= 1);
        assert!(!m.machine.kernel.is_empty());
        assert!(m.started.len() == 20 && m.ended >= m.started, "{m:?}");
        let text = m.markdown();
        for part in [
            "- code: cinterrupts",
            "- machine:",
            "- load average",
            "- seeds: 7, 8",
            "- command:",
        ] {
            assert!(text.contains(part), "{part} in {text}");
        }
        let html = m.html();
        assert!(
            html.starts_with("<h2>Made by</h2>") && html.contains("<th>seeds</th><td>7, 8</td>"),
            "{html}"
        );
        let back: MadeBy = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        let w = |s: &[&str]| shell_words(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(w(&["sim", "a.fio", "--delta=6us"]), "sim a.fio --delta=6us");
        assert_eq!(w(&["a b", "it's", ""]), r"'a b' 'it'\''s' ''");
    }

    #[test]
    fn utc_is_the_civil_date() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        // 2026-12-07T21:00:00Z, from `date -u -d @1796677200`.
        assert_eq!(utc(1_796_677_200), "2026-12-07T21:00:00Z");
    }
}
