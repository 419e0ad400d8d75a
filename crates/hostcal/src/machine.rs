//! What the machine says of itself without a benchmark: its kernel, CPUs,
//! clock, tick rate, preemption model, idle states and load.

use std::path::Path;

/// One cpuidle state of CPU 0 (`/sys/devices/system/cpu/cpu0/cpuidle/stateN`,
/// Documentation/admin-guide/pm/cpuidle.rst).
#[derive(Clone, Debug, PartialEq)]
pub struct IdleState {
    pub name: String,
    /// The exit latency the driver declares, us (`latency`).
    pub latency_us: u64,
    /// The target residency, us (`residency`).
    pub residency_us: u64,
    /// Entered so far (`usage`).
    pub usage: u64,
}

/// The cpuidle driver, governor and states; all empty where the kernel
/// exposes none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Idle {
    pub driver: String,
    pub governor: String,
    pub states: Vec<IdleState>,
}

fn read(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// CPU 0's idle states as the kernel declares them.
pub fn idle() -> Idle {
    let base = Path::new("/sys/devices/system/cpu/cpuidle");
    let mut states = Vec::new();
    for i in 0.. {
        let d = Path::new("/sys/devices/system/cpu/cpu0/cpuidle").join(format!("state{i}"));
        let Some(name) = read(d.join("name")) else {
            break;
        };
        let num = |f: &str| read(d.join(f)).and_then(|s| s.parse().ok()).unwrap_or(0);
        states.push(IdleState {
            name,
            latency_us: num("latency"),
            residency_us: num("residency"),
            usage: num("usage"),
        });
    }
    Idle {
        driver: read(base.join("current_driver")).unwrap_or_default(),
        governor: read(base.join("current_governor"))
            .or_else(|| read(base.join("current_governor_ro")))
            .unwrap_or_default(),
        states,
    }
}

/// `uname -r` and `uname -v`.
pub fn kernel() -> (String, String) {
    (
        read("/proc/sys/kernel/osrelease").unwrap_or_default(),
        read("/proc/sys/kernel/version").unwrap_or_default(),
    )
}

/// The kernel's (major, minor) from a release string ("6.18.44-fc" ->
/// (6, 18)).
pub fn version(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// The first "cpu MHz" of /proc/cpuinfo, GHz.
pub fn ghz() -> Option<f64> {
    let t = read("/proc/cpuinfo")?;
    t.lines()
        .find(|l| l.starts_with("cpu MHz"))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|mhz| mhz / 1000.0)
}

/// `jiffies` from /proc/timer_list (root only), for the tick rate: two
/// reads some time apart give HZ.
pub fn jiffies() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/timer_list").ok()?;
    t.lines()
        .find_map(|l| l.trim().strip_prefix("jiffies:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The HZ nearest `per_sec` jiffies a second among Linux's choices
/// (kernel/Kconfig.hz: 100, 250, 300, 1000).
pub fn nearest_hz(per_sec: f64) -> u64 {
    [100u64, 250, 300, 1000]
        .into_iter()
        .min_by(|a, b| {
            (*a as f64 - per_sec)
                .abs()
                .total_cmp(&(*b as f64 - per_sec).abs())
        })
        .expect("four choices")
}

/// The preemption model, and why: "full" for a kernel built PREEMPT (not
/// dynamic) or RT, or booted `preempt=full`; otherwise "voluntary" (the
/// model's "none" too: no kernel path is preempted either way,
/// vm-native.toml).
pub fn preemption(version: &str, cmdline: &str) -> (&'static str, String) {
    let boot = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("preempt="));
    let dynamic = version.contains("PREEMPT_DYNAMIC");
    let rt = version.contains("PREEMPT_RT");
    let built_full = version.split_whitespace().any(|w| w == "PREEMPT");
    let full = rt || boot == Some("full") || (built_full && !dynamic && boot.is_none());
    let why = format!(
        "`uname -v`: \"{version}\"; /proc/cmdline: {}",
        boot.map(|b| format!("preempt={b}"))
            .unwrap_or_else(|| "no preempt=".into())
    );
    (if full { "full" } else { "voluntary" }, why)
}

/// `/proc/loadavg`'s three averages ("1.74 1.36 1.82").
pub fn load() -> String {
    read("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// The host's name (`/proc/sys/kernel/hostname`).
pub fn hostname() -> String {
    read("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_versions_and_tick_rates() {
        assert_eq!(version("6.18.44-fc-v669"), Some((6, 18)));
        assert_eq!(version("5.0.8"), Some((5, 0)));
        assert_eq!(nearest_hz(251.3), 250);
        assert_eq!(nearest_hz(990.0), 1000);
    }

    #[test]
    fn preemption_from_uname_and_cmdline() {
        let dynamic = "#1 SMP PREEMPT_DYNAMIC Tue";
        assert_eq!(preemption(dynamic, "quiet").0, "voluntary");
        assert_eq!(preemption(dynamic, "preempt=full").0, "full");
        assert_eq!(preemption("#1 SMP PREEMPT Tue", "").0, "full");
        assert_eq!(preemption("#1 SMP PREEMPT_RT Tue", "").0, "full");
        assert_eq!(preemption("#1 SMP Tue", "").0, "voluntary");
    }
}
