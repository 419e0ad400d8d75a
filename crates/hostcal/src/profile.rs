//! The measurement as a host profile: the keys `sim::HostProfile` loads,
//! each with a comment naming the benchmark that measured it (its median,
//! spread, rounds, the date and the load), or saying it was not measured
//! and where its value comes from. Written whole or not at all.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::stats::{int, num};
use crate::{HostMeasurement, HostcalError, Measured};

/// The paper's Xeon's fitted interrupt entry and exit, ns
/// (profiles/hosts/xeon-e5-2660v4.toml, `calibrate --fit`), carried over
/// as vm-native.toml carries it: not visible to tracepoints.
pub const CARRIED_IRQ_ENTRY: u64 = 422;
/// The Xeon's fitted return-path part of a completion, ns (same file).
pub const CARRIED_REAP: u64 = 175;
/// The Xeon's fitted fio user work per I/O, ns (same file).
pub const CARRIED_USER_PER_IO: u64 = 1_317;
/// The Xeon's handler part of a completion, ns (same file, an estimate),
/// where tracefs cannot be read.
pub const CARRIED_PER_COMPLETION: u64 = 300;
/// The Xeon's submission estimate, ns (same file), where the disk's path
/// cannot be measured.
pub const CARRIED_SUBMIT: u64 = 500;
/// vm-native.toml's pipe switch, ns, where the ping-pong cannot run.
pub const CARRIED_SWITCH: u64 = 3_060;

/// The profile's times as derived from the measurement, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Derived {
    pub syscall: u64,
    pub context_switch: u64,
    pub per_completion: u64,
    pub irq_entry: u64,
    pub reap_per_completion: u64,
    /// The measured QD1 host path (pread - disk time), if measured.
    pub host_path: Option<u64>,
    /// host_path less the parts charged elsewhere (never below 0).
    pub submit_per_request: u64,
    /// The residual before clamping, if it was below 0.
    pub negative_residual: Option<i64>,
    pub buffered_write_per_kib: Option<u64>,
    /// HZ's tick, ns (4 ms if not measured).
    pub tick: u64,
}

impl Derived {
    /// The mapping of the benchmarks onto the model's keys.
    pub fn of(m: &HostMeasurement) -> Derived {
        let r = |x: f64| x.round().max(0.0) as u64;
        let syscall = r(m.syscall.median);
        let context_switch = m
            .switch_round_trip
            .as_ref()
            .map(|s| r((s.median - 4.0 * syscall as f64) / 2.0))
            .unwrap_or(CARRIED_SWITCH);
        let disk = m.disk.as_ref().ok();
        let per_completion = disk
            .and_then(|d| d.irq.as_ref().ok())
            .map(|i| r(i.per_completion.median))
            .unwrap_or(CARRIED_PER_COMPLETION);
        let host_path = disk.map(|d| r(d.host_path.median));
        let parts = syscall + context_switch + CARRIED_IRQ_ENTRY + per_completion + CARRIED_REAP;
        let residual = host_path.map(|p| p as i64 - parts as i64);
        Derived {
            syscall,
            context_switch,
            per_completion,
            irq_entry: CARRIED_IRQ_ENTRY,
            reap_per_completion: CARRIED_REAP,
            host_path,
            submit_per_request: residual.map_or(CARRIED_SUBMIT, |x| x.max(0) as u64),
            negative_residual: residual.filter(|x| *x < 0),
            buffered_write_per_kib: m.buffered_write_per_kib.as_ref().ok().map(|s| r(s.median)),
            tick: m.hz.map_or(4_000_000, |(hz, _)| 1_000_000_000 / hz),
        }
    }
}

/// "median 98 ns (min 95, max 120; 7 rounds)" or the reason.
fn sp(m: &Measured, unit: &str) -> String {
    match m {
        Ok(s) => s.describe(unit),
        Err(e) => format!("not measured: {e}"),
    }
}

/// Wraps `text` as `# ` comment lines of at most 76 characters.
fn comment(out: &mut String, text: &str) {
    let mut line = String::from("#");
    for w in text.split_whitespace() {
        if line.len() + 1 + w.len() > 76 && line.len() > 1 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(w);
    }
    out.push_str(&line);
    out.push('\n');
}

/// A key's comment and line.
fn key(out: &mut String, why: &str, k: &str, v: &str) {
    comment(out, why);
    let _ = writeln!(out, "{k} = {v}");
}

/// A time as the hand-written profiles write it: the largest unit that
/// keeps it whole ("12ms", "1500us", "208ns").
fn ns(x: u64) -> String {
    match x {
        0 => "\"0ns\"".into(),
        x if x % 1_000_000 == 0 => format!("\"{}ms\"", x / 1_000_000),
        x if x % 1_000 == 0 => format!("\"{}us\"", x / 1_000),
        x => format!("\"{x}ns\""),
    }
}

/// The profile's text.
pub fn render(m: &HostMeasurement) -> String {
    let d = Derived::of(m);
    let one = |l: &str| l.split_whitespace().next().unwrap_or("?").to_string();
    let when = format!(
        "{}, load {} -> {}",
        m.date,
        one(&m.load_before),
        one(&m.load_after)
    );
    let mut o = String::new();
    comment(
        &mut o,
        &format!(
            "This machine ({}, {} CPUs, Linux {}) as `cinterrupts calibrate --host{}` \
             measured it on {} in {:.1} s (crates/hostcal: each benchmark {} rounds, \
             interleaved; a round yields one mean, the spread is over rounds; \
             \"load\" below is the 1-minute load average before -> after; the \
             benchmarks ran in {}, the timer's sleeps in SCHED_OTHER). Load \
             average {} before, {} after. Keys not measured say so and where their \
             value comes from. The measured values that are not model keys are at the \
             end.",
            m.hostname,
            m.cores,
            m.kernel,
            if m.quick { " --quick" } else { "" },
            m.date,
            m.elapsed_ms as f64 / 1000.0,
            m.rounds,
            m.policy,
            m.load_before,
            m.load_after
        ),
    );
    o.push('\n');
    let name: String = m
        .hostname
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    key(
        &mut o,
        "The host's name (/proc/sys/kernel/hostname).",
        "name",
        &format!("\"measured-{name}\""),
    );
    key(
        &mut o,
        "What was measured, where and when (above).",
        "description",
        &format!(
            "\"{} ({} CPUs, Linux {}) measured by cinterrupts calibrate --host on {}\"",
            name, m.cores, m.kernel, m.date
        ),
    );
    o.push('\n');
    key(
        &mut o,
        &format!("`nproc` (sched_getaffinity): {}.", m.cores),
        "cores",
        &m.cores.to_string(),
    );
    let ghz = m.ghz.unwrap_or(2.0);
    key(
        &mut o,
        &match m.ghz {
            Some(g) => format!("/proc/cpuinfo \"cpu MHz\": {:.0}. Cycles only.", g * 1000.0),
            None => "Not measured: /proc/cpuinfo has no \"cpu MHz\"; 2.0, the papers' Xeon's \
                     clock (TOS 4.1). Cycles only."
                .into(),
        },
        "ghz",
        &format!("{ghz:.3}"),
    );
    o.push('\n');
    key(
        &mut o,
        &format!(
            "Measured: a `syscall(SYS_getppid)` loop (as `perf bench syscall basic`), \
             {} calls a round: {}; {when}.",
            num(m.iterations.syscall as f64),
            m.syscall.describe("ns")
        ),
        "syscall",
        &ns(d.syscall),
    );
    key(
        &mut o,
        &match &m.switch_round_trip {
            Ok(s) => format!(
                "Measured: one-byte pipe ping-pong between two threads pinned to CPU {} \
                 (as `taskset -c {} perf bench sched pipe -T`), {} round trips a round: \
                 round trip {}; {when}. A round trip is two writes and two reads (4 x \
                 syscall) and two wake-ups with their switches: ({} - 4 x {}) / 2 = {} ns \
                 (vm-exec.toml's derivation). The wake-up is inside.",
                m.cpus.0,
                m.cpus.0,
                num(m.iterations.switch as f64),
                s.describe("ns"),
                num(s.median),
                d.syscall,
                d.context_switch
            ),
            Err(e) => format!(
                "Not measured ({e}): vm-native.toml's pipe ping-pong figure, measured on \
                 the project's VM."
            ),
        },
        "context_switch",
        &ns(d.context_switch),
    );
    key(
        &mut o,
        "Inside context_switch (measured together).",
        "wakeup",
        &ns(0),
    );
    let vectors = m
        .disk
        .as_ref()
        .map(|dm| {
            dm.disk
                .vectors
                .iter()
                .map(|(i, n)| format!("{i} ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    key(
        &mut o,
        &format!(
            "Not measurable from user space: the vector's dispatch before \
             irq_handler_entry and irq_exit after irq_handler_exit are outside the \
             tracepoints. The paper's Xeon's fitted figure (xeon-e5-2660v4.toml), as \
             vm-native.toml carries it; {CARRIED_IRQ_ENTRY} ns."
        ),
        "irq_entry",
        &ns(d.irq_entry),
    );
    let pc = match m.disk.as_ref().map(|dm| (dm, dm.irq.as_ref())) {
        Ok((dm, Ok(i))) => format!(
            "Measured: tracefs (a private instance) irq:irq_handler_entry/exit on vector \
             {vectors} and irq:softirq_entry/exit vec=4 (BLOCK) while the reads of \
             submit_per_request ran: handler {}; block softirq {}, of which {} to its \
             block:block_rq_complete and {} after it; all handlers' and \
             softirqs' time per completion of /dev/{} {}; {} handlers and {} softirqs \
             recorded, {} lost; {when}. The softirq after block_rq_complete is the \
             bio's and the direct I/O's completion and the reader's wake-up (an IPI \
             when the vector's CPU, here {:?}, is not the reader's). The handler and \
             the softirq up to block_rq_complete are also inside the disk's time \
             (below), which ends at the request's accounting in blk_mq_end_request, \
             block/blk-mq.c.",
            i.handler.describe("ns"),
            i.softirq.describe("ns"),
            i.softirq_before_complete.describe("ns"),
            i.softirq_after_complete.describe("ns"),
            dm.disk.name,
            i.per_completion.describe("ns"),
            int(i.handlers as u64),
            int(i.softirqs as u64),
            i.lost,
            dm.irq_cpus
        ),
        Ok((_, Err(e))) | Err(e) => format!(
            "Not measured ({e}): the paper's Xeon's estimate (xeon-e5-2660v4.toml), as \
             vm-native.toml carries it; {CARRIED_PER_COMPLETION} ns."
        ),
    };
    key(&mut o, &pc, "per_completion", &ns(d.per_completion));
    key(
        &mut o,
        &format!(
            "Not measured apart (a woken pread's return path is inside the measured read, \
             so inside submit_per_request's residual either way): the paper's Xeon's \
             fitted figure (xeon-e5-2660v4.toml), as vm-native.toml carries it; \
             {CARRIED_REAP} ns."
        ),
        "reap_per_completion",
        &ns(d.reap_per_completion),
    );
    let submit = match (&m.disk, d.host_path) {
        (Ok(dm), Some(path)) => format!(
            "MAPPING, not a benchmark of its own: the QD1 host path measured below less \
             the parts charged elsewhere: {path} - syscall {} - context_switch {} - \
             irq_entry {} - per_completion {} - reap_per_completion {} = {} ns{}, charged at \
             submission (the block layer, the I/O scheduler and the driver's notification). \
             Which side of the device a microsecond is charged to moves the device's start, \
             not the QD1 total. The QD1 host path: psync O_DIRECT 4 KiB random reads of a \
             {} MiB file under {} on /dev/{}, {} a round: a pread's mean time {}; the disk's own \
             time per read, {} (read ms over reads completed, as /proc/diskstats fields 7 \
             and 4, vm-native.toml's method) {}; the path, pread - disk time per read, {}; \
             {} of {} rounds had only our reads on the disk; {when}. It replaces \
             vm-native.toml's hand-fitted 12.5 us path.",
            d.syscall,
            d.context_switch,
            d.irq_entry,
            d.per_completion,
            d.reap_per_completion,
            d.negative_residual.unwrap_or(d.submit_per_request as i64),
            if d.negative_residual.is_some() {
                " (below 0, so 0 is charged: the parts above overlap the disk's time, which \
                 runs from the request's start to its accounting in blk_mq_end_request, \
                 block/blk-mq.c, inside the BLOCK softirq: irq_entry, the handler and \
                 the softirq up to block_rq_complete are in both, see per_completion; a \
                 QD1 run in sim with a device timed as diskstats or capture time it is \
                 that much slower than measured)"
            } else {
                ""
            },
            dm.file_size >> 20,
            dm.file
                .parent()
                .and_then(|p| p.parent())
                .unwrap_or(Path::new("/"))
                .display(),
            dm.disk.name,
            num(dm.reads_per_round as f64),
            dm.read_latency.describe("ns"),
            dm.disk.stat.display(),
            dm.device_per_read.describe("ns"),
            dm.host_path.describe("ns"),
            dm.clean_rounds,
            dm.host_path.rounds
        ),
        _ => format!(
            "Not measured ({}): the paper's Xeon's estimate (xeon-e5-2660v4.toml); \
             {CARRIED_SUBMIT} ns.",
            m.disk.as_ref().err().cloned().unwrap_or_default()
        ),
    };
    key(
        &mut o,
        &submit,
        "submit_per_request",
        &ns(d.submit_per_request),
    );
    key(
        &mut o,
        "Not a model input: the paper's interrupt cost in cycles (TOS 2, Fig 3), the \
         target of `calibrate`.",
        "irq_cycles",
        "1500",
    );
    key(
        &mut o,
        &format!(
            "Not measured: fio's own work per I/O (outside the host's path); the paper's \
             Xeon's fitted figure (xeon-e5-2660v4.toml), as vm-native.toml carries it; \
             {CARRIED_USER_PER_IO} ns."
        ),
        "user_per_io",
        &ns(CARRIED_USER_PER_IO),
    );
    o.push('\n');
    let f = 1 + (m.cores.clamp(1, 8) as f64).log2().floor() as u64;
    let cfs = format!(
        "Not measured: Linux's CFS default scaled by 1 + log2(min(cores, 8)) = {f} \
         (kernel/sched/fair.c, get_update_sysctl_factor), as vm-native.toml:"
    );
    key(
        &mut o,
        &format!("{cfs} 6 ms x {f}."),
        "sched_latency",
        &ns(6_000_000 * f),
    );
    key(
        &mut o,
        &format!("{cfs} 0.75 ms x {f}."),
        "sched_min_granularity",
        &ns(750_000 * f),
    );
    key(
        &mut o,
        &format!("{cfs} 1 ms x {f}."),
        "sched_wakeup_granularity",
        &ns(1_000_000 * f),
    );
    key(
        &mut o,
        &match m.hz {
            Some((hz, rate)) => format!(
                "Measured: /proc/timer_list's jiffies over the run, {rate:.1} a second: \
                 HZ={hz} (the nearest of kernel/Kconfig.hz's 100, 250, 300, 1000)."
            ),
            None => "Not measured (/proc/timer_list unreadable: it needs root): \
                     HZ=250, the common distribution default."
                .into(),
        },
        "tick",
        &ns(d.tick),
    );
    match crate::machine::version(&m.kernel) {
        Some(v) if v >= (6, 6) => key(
            &mut o,
            &format!(
                "`uname -r` {}: the scheduler is EEVDF since Linux 6.6 (commit \
                 147f3efaa241, kernel/sched/fair.c; host::eevdf).",
                m.kernel
            ),
            "wakeup_rule",
            "\"eevdf\"",
        ),
        _ => comment(
            &mut o,
            &format!(
                "wakeup_rule: `uname -r` {}, before EEVDF (Linux 6.6): CFS's plain rule, \
                 the default.",
                m.kernel
            ),
        ),
    }
    o.push('\n');
    key(
        &mut o,
        &format!(
            "A real device's MSI-X vector ({}) merges a fire into an interrupt already \
             pending, as sim's `apic` delivery.",
            if vectors.is_empty() {
                "none found"
            } else {
                &vectors
            }
        ),
        "irq_delivery",
        "\"apic\"",
    );
    key(
        &mut o,
        &format!("{}: {}.", m.preemption.1, m.preemption.0),
        "preemption",
        &format!("\"{}\"", m.preemption.0),
    );
    if let Some(w) = d.buffered_write_per_kib {
        key(
            &mut o,
            &format!(
                "Measured: buffered 128 KiB pwrite over the first 4 MiB of the scratch \
                 file (its pages cached), {} a round: {}; {when}.",
                int(m.iterations.buffered_write),
                sp(&m.buffered_write_per_kib, "ns per KiB")
            ),
            "buffered_write_per_kib",
            &ns(w),
        );
    } else {
        comment(
            &mut o,
            &format!(
                "buffered_write_per_kib: {}; sim's default (300 ns).",
                sp(&m.buffered_write_per_kib, "ns per KiB")
            ),
        );
    }
    o.push('\n');
    comment(
        &mut o,
        "Measured, not model keys (for the reader, and for keys to come):",
    );
    comment(
        &mut o,
        &format!(
            "- cross-core wake-up: the same pipe ping-pong pinned to CPUs {} and {}, {} \
             round trips a round: round trip {}.",
            m.cpus.0,
            m.cpus.1.map_or("-".into(), |c| c.to_string()),
            num(m.iterations.cross_core as f64),
            sp(&m.cross_core_round_trip, "ns")
        ),
    );
    for (asked, s) in &m.sleep_overshoot {
        comment(
            &mut o,
            &format!(
                "- timer: clock_nanosleep(CLOCK_MONOTONIC) of {} us, {} a round, timer slack \
                 {} ns: slept beyond it {}.",
                asked / 1000,
                int(m.iterations.sleep),
                m.timer_slack_ns,
                sp(s, "ns")
            ),
        );
    }
    comment(
        &mut o,
        &format!(
            "- io_uring enter: one NOP submitted and waited for (io_uring_enter to_submit 1, \
             min_complete 1), {} a round: {}.",
            num(m.iterations.uring as f64),
            sp(&m.uring_nop, "ns")
        ),
    );
    comment(
        &mut o,
        &format!(
            "- copy: memcpy of 4 KiB {}; of 64 KiB {}.",
            m.copy_4k_per_kib.describe("ns per KiB"),
            m.copy_64k_per_kib.describe("ns per KiB")
        ),
    );
    if let Ok(dm) = &m.disk {
        comment(
            &mut o,
            &format!(
                "- interrupts per read of /dev/{} (/proc/interrupts, vectors {}): {}; taken \
                 on CPUs {:?}.",
                dm.disk.name,
                vectors,
                dm.interrupts_per_read.describe("per read"),
                dm.irq_cpus
            ),
        );
    }
    let idle = &m.idle;
    comment(
        &mut o,
        &format!(
            "- idle states (not measured: as the kernel declares them, \
             /sys/devices/system/cpu/cpu0/cpuidle): driver {}, governor {}; {}.",
            or_none(&idle.driver),
            or_none(&idle.governor),
            if idle.states.is_empty() {
                "no states".to_string()
            } else {
                idle.states
                    .iter()
                    .map(|s| {
                        format!(
                            "{} exit latency {} us, target residency {} us",
                            s.name, s.latency_us, s.residency_us
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            }
        ),
    );
    o
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "none"
    } else {
        s
    }
}

/// Whether a profile can be written at `path`: not a directory, in a
/// directory that exists and is writable. Checked before measuring, so a
/// bad `-o` costs nothing and writes nothing.
pub fn check_output(path: &Path) -> Result<(), HostcalError> {
    let bad = |reason: &str| HostcalError::Output {
        path: path.display().to_string(),
        reason: reason.to_string(),
    };
    if path.is_dir() {
        return Err(bad("is a directory"));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(bad(&format!("no such directory {}", parent.display())));
    }
    let c = std::ffi::CString::new(parent.as_os_str().as_encoded_bytes())
        .map_err(|_| bad("contains a NUL byte"))?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(bad(&format!("{} is not writable", parent.display())));
    }
    Ok(())
}

/// Writes `m`'s profile to `path`: checked to load in `sim`
/// (`sim::HostProfile::parse`) first, then written beside and renamed
/// over, so the file appears whole or not at all.
pub fn write_profile(m: &HostMeasurement, path: &Path) -> Result<(), HostcalError> {
    check_output(path)?;
    let text = render(m);
    sim::HostProfile::parse(&text, &path.display().to_string())
        .map_err(|e| HostcalError::Profile(e.to_string()))?;
    let tmp = PathBuf::from(format!("{}.tmp.{}", path.display(), std::process::id()));
    let out = |e: std::io::Error| HostcalError::Output {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    if let Err(e) = std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(out(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DiskMeasurement, Idle, IrqMeasurement, Iterations, Spread};

    fn s(x: f64) -> Spread {
        Spread::of(&[x * 0.9, x, x * 1.1]).unwrap()
    }

    /// A machine measured with the given disk result; every CPU benchmark
    /// at round figures.
    fn machine(disk: Result<DiskMeasurement, String>) -> HostMeasurement {
        HostMeasurement {
            date: "2026-12-07T07:00:00Z".into(),
            load_before: "1.00 1.00 1.00".into(),
            load_after: "1.10 1.00 1.00".into(),
            hostname: "box".into(),
            kernel: "6.12.1".into(),
            kernel_version: "#1 SMP PREEMPT_DYNAMIC".into(),
            cores: 4,
            ghz: None,
            hz: None,
            preemption: ("voluntary", "test".into()),
            idle: Idle::default(),
            timer_slack_ns: 50_000,
            rounds: 3,
            quick: true,
            policy: "SCHED_OTHER".into(),
            iterations: Iterations {
                syscall: 1,
                switch: 1,
                cross_core: 1,
                sleep: 1,
                uring: 1,
                copy_64k: 1,
                copy_4k: 1,
                buffered_write: 1,
                reads: 1,
            },
            syscall: s(100.0),
            switch_round_trip: Ok(s(2_400.0)),
            cross_core_round_trip: Err("one CPU allowed".into()),
            cpus: (0, None),
            sleep_overshoot: vec![(10_000, Ok(s(50_000.0)))],
            uring_nop: Err("io_uring_setup: EPERM".into()),
            copy_4k_per_kib: s(20.0),
            copy_64k_per_kib: s(20.0),
            buffered_write_per_kib: Err("no scratch".into()),
            disk,
            elapsed_ms: 1,
        }
    }

    fn disk(irq: Result<IrqMeasurement, String>) -> DiskMeasurement {
        DiskMeasurement {
            disk: crate::Disk {
                name: "vda".into(),
                dev: (254, 0),
                stat: "/sys/block/vda/stat".into(),
                vectors: vec![(36, "virtio1-req.0".into())],
            },
            file: "/var/tmp/x/data".into(),
            file_size: 8 << 20,
            reads_per_round: 500,
            read_latency: s(60_000.0),
            device_per_read: s(48_000.0),
            host_path: s(12_000.0),
            clean_rounds: 3,
            interrupts_per_read: s(1.0),
            irq_cpus: vec![1],
            irq,
        }
    }

    fn irq(per_completion: f64) -> IrqMeasurement {
        IrqMeasurement {
            handler: s(1_000.0),
            softirq: s(per_completion - 1_000.0),
            per_completion: s(per_completion),
            softirq_before_complete: s(500.0),
            softirq_after_complete: s(per_completion - 1_500.0),
            handlers: 3,
            softirqs: 3,
            lost: 0,
        }
    }

    fn comment_of<'a>(text: &'a str, key: &str) -> String {
        let lines: Vec<&'a str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("{key} =")))
            .unwrap_or_else(|| panic!("no {key} in {text}"));
        let mut block: Vec<&str> = lines[..at]
            .iter()
            .rev()
            .take_while(|l| l.starts_with('#'))
            .copied()
            .collect();
        block.reverse();
        block.join(" ")
    }

    #[test]
    fn the_path_less_the_measured_parts_is_charged_at_submission() {
        let m = machine(Ok(disk(Ok(irq(3_000.0)))));
        let d = Derived::of(&m);
        // (2,400 - 4 x 100) / 2.
        assert_eq!(d.context_switch, 1_000);
        // 12,000 - 100 - 1,000 - 422 - 3,000 - 175.
        assert_eq!(d.submit_per_request, 7_303);
        assert_eq!(d.negative_residual, None);
        let text = render(&m);
        let p = sim::HostProfile::parse(&text, "test").unwrap();
        assert_eq!(p.submit_per_request, 7_303);
        assert!(comment_of(&text, "submit_per_request").contains("MAPPING"));
    }

    #[test]
    fn a_residual_below_zero_is_charged_as_zero_and_said() {
        let m = machine(Ok(disk(Ok(irq(20_000.0)))));
        let d = Derived::of(&m);
        assert_eq!(d.submit_per_request, 0);
        assert_eq!(
            d.negative_residual,
            Some(12_000 - 100 - 1_000 - 422 - 20_000 - 175)
        );
        assert!(comment_of(&render(&m), "submit_per_request").contains("below 0"));
    }

    #[test]
    fn what_could_not_be_measured_is_carried_over_and_says_so() {
        for m in [
            machine(Err("/var/tmp: read-only".into())),
            machine(Ok(disk(Err("unshare(CLONE_NEWNS): EPERM".into())))),
        ] {
            let text = render(&m);
            let p = sim::HostProfile::parse(&text, "test").unwrap();
            assert_eq!(p.per_completion, CARRIED_PER_COMPLETION);
            let c = comment_of(&text, "per_completion");
            assert!(
                c.starts_with("# Not measured (") && c.contains("xeon-e5-2660v4.toml"),
                "{c}"
            );
            // HZ unreadable: the common default, said; the clock likewise.
            assert!(comment_of(&text, "tick").contains("Not measured"));
            assert!(comment_of(&text, "ghz").contains("Not measured"));
            // A failed benchmark that is no key is named with its reason.
            assert!(
                text.replace("\n# ", " ").contains("io_uring_setup: EPERM"),
                "{text}"
            );
        }
        let m = machine(Err("/var/tmp: read-only".into()));
        let p = sim::HostProfile::parse(&render(&m), "test").unwrap();
        assert_eq!(p.submit_per_request, CARRIED_SUBMIT);
        // Before Linux 6.6 there is no EEVDF; 6.12 has it.
        assert_eq!(p.wakeup_rule, sim::Wakeup::Eevdf);
        let mut old = machine(Err("x".into()));
        old.kernel = "5.15.0".into();
        let p = sim::HostProfile::parse(&render(&old), "test").unwrap();
        assert_ne!(p.wakeup_rule, sim::Wakeup::Eevdf);
    }

    #[test]
    fn times_are_written_in_the_largest_whole_unit() {
        assert_eq!(ns(12_000_000), "\"12ms\"");
        assert_eq!(ns(1_500_000), "\"1500us\"");
        assert_eq!(ns(208), "\"208ns\"");
        assert_eq!(ns(0), "\"0ns\"");
    }
}
