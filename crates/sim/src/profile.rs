//! Device and host profiles: the numbers the simulator runs on, read from
//! TOML files with one comment per number giving its source.
//!
//! Times in the files are strings with units (`"8us"`, `"740ns"`) and become
//! `u64` nanoseconds here. A bare name (`optane`) loads a shipped profile from
//! the repository's `profiles/` directory (embedded at build time); anything
//! containing `/` or ending in `.toml` is read from that path.

use std::path::Path;

use std::ops::Range;

use crate::limits::{
    MAX_BW, MAX_CORES, MAX_HOST_TIME, MAX_IOPS, MAX_PROFILE_BYTES, MAX_QUEUES, MAX_QUEUE_DEPTH,
    MAX_SERVICE, MIN_BW, TICK,
};

use serde::{Deserialize, Deserializer};
use service::duration;
use toml::Spanned;

use policy::quote::{one_line, quoted};
use policy::{Nanos, SEC};

/// Errors loading a profile. Every message is one line naming the file and,
/// where known, the line and key.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("{file}: {reason}")]
    Read { file: String, reason: String },
    /// A bare name that is not a shipped profile.
    #[error(
        "unknown {kind} profile '{name}' (shipped: {shipped}; or give a path to a .toml file)"
    )]
    UnknownName {
        kind: &'static str,
        name: String,
        shipped: String,
    },
    /// The toml crate refused the file (malformed TOML, a missing or
    /// unknown key, a value of the wrong type): its own message, with the
    /// line of its span and the key there (or the table a missing key
    /// belongs in), found through toml's spans.
    #[error("{file}:{line}: {}{message}", key.as_ref().map(|k| format!("key '{k}': ")).unwrap_or_default())]
    Toml {
        file: String,
        line: usize,
        key: Option<String>,
        message: String,
    },
    /// A value out of range.
    #[error("{file}:{line}: key '{key}': {reason}")]
    BadValue {
        file: String,
        line: usize,
        key: String,
        reason: String,
    },
}

// A read's or write's time inside the device, shared with the emulator
// (`cinterrupts run --device`).
pub use service::{Distribution, ServiceTime};

/// An NVMe SSD as the simulator sees it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    /// Short name (`optane`).
    pub name: String,
    /// The product this models.
    pub description: String,
    /// I/O submission/completion queue pairs available (one per core).
    pub queues: u32,
    /// Entries per queue.
    pub queue_depth: u32,
    /// Commands the device serves at once (internal channels / dies).
    pub parallelism: u32,
    /// Random 4 KiB read IOPS ceiling of the whole device.
    pub max_read_iops: u64,
    /// Random 4 KiB write IOPS ceiling of the whole device.
    pub max_write_iops: u64,
    /// Read bandwidth ceiling of the whole device, bytes a second (absent:
    /// none; the IOPS ceiling and the units alone bound throughput). A
    /// token bucket in bytes beside the IOPS one ([`service::Gate`]).
    #[serde(default)]
    pub max_read_bw: Option<u64>,
    /// Write bandwidth ceiling, bytes a second (absent: none).
    #[serde(default)]
    pub max_write_bw: Option<u64>,
    /// Read service time.
    pub read: ServiceTime,
    /// Write service time.
    pub write: ServiceTime,
    /// The coalescing timeout delta tuned for this device, ns (TOS 5.2).
    #[serde(deserialize_with = "duration")]
    pub default_delta: u64,
    /// The coalescing threshold thr tuned for this device (TOS 5.2).
    pub default_thr: u32,
}

/// A host: cores and what the kernel's I/O path costs on them.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostProfile {
    /// Short name (`xeon-e5-2660v4`).
    pub name: String,
    /// The machine this models.
    pub description: String,
    /// Cores available to workloads.
    pub cores: u32,
    /// Clock in GHz (cycles = ns * ghz).
    pub ghz: f64,
    /// System call entry plus exit, ns.
    #[serde(deserialize_with = "duration")]
    pub syscall: u64,
    /// Block layer plus driver work to submit one request (to the SQ
    /// doorbell), ns.
    #[serde(deserialize_with = "duration")]
    pub submit_per_request: u64,
    /// Interrupt entry plus exit, ns.
    #[serde(deserialize_with = "duration")]
    pub irq_entry: u64,
    /// Handling one CQE in the interrupt handler plus block-layer
    /// completion, ns.
    #[serde(deserialize_with = "duration")]
    pub per_completion: u64,
    /// Switching to a thread of the process whose address space the core
    /// already holds (a thread of the same process, or back from idle,
    /// which keeps the last one: lazy TLB), ns. Charged to the incoming
    /// thread.
    #[serde(deserialize_with = "duration")]
    pub context_switch: u64,
    /// Switching to a thread of another process (fio's jobs are processes
    /// unless `thread` is set): the same plus a new address space (CR3,
    /// TLB and cache refill), ns. Absent: `context_switch`.
    #[serde(default, deserialize_with = "opt_duration")]
    pub process_switch: Option<u64>,
    /// The interrupt handler's part of waking a blocked thread
    /// (try_to_wake_up: enqueue and the preemption check), ns.
    #[serde(deserialize_with = "duration")]
    pub wakeup: u64,
    /// The part of a completion the thread that takes it pays in its own
    /// context, per completion: after a blocking call's wake-up, its return
    /// path (bio and dio clean-up); for io_getevents, copying the event
    /// out of the ring, ns. Absent: 0.
    #[serde(default, deserialize_with = "duration")]
    pub reap_per_completion: u64,
    /// The paper's measured CPU cost of one interrupt in cycles (TOS 2,
    /// Fig 3: ~1,500): not a model input, the target `cinterrupts
    /// calibrate` holds the model's interrupt time against.
    pub irq_cycles: u64,
    /// The benchmark's own user-space work per I/O (fio: picking the offset,
    /// io_u bookkeeping, timestamps and latency accounting), ns.
    #[serde(default = "default_user_per_io", deserialize_with = "duration")]
    pub user_per_io: u64,
    /// CFS `sched_latency`: the period in which every runnable thread runs
    /// once, ns (Linux: 6 ms x (1 + log2(min(cpus, 8)))).
    #[serde(default = "default_sched_latency", deserialize_with = "duration")]
    pub sched_latency: u64,
    /// CFS `sched_min_granularity`, ns (Linux: 0.75 ms, scaled as above).
    #[serde(default = "default_min_granularity", deserialize_with = "duration")]
    pub sched_min_granularity: u64,
    /// CFS `sched_wakeup_granularity`: how far ahead in vruntime the running
    /// thread must be for a woken one to preempt it, ns (Linux: 1 ms, scaled).
    #[serde(default = "default_wakeup_granularity", deserialize_with = "duration")]
    pub sched_wakeup_granularity: u64,
    /// Scheduler tick, ns (Linux HZ=250: 4 ms).
    #[serde(default = "default_tick", deserialize_with = "duration")]
    pub tick: u64,
    /// How a device's fire reaches a core: `ipi` (default) as the authors'
    /// emulator that produced the paper's microbenchmarks, one IPI per
    /// fire, never merged (`smp_call_function_single` in their
    /// `cinterrupts-01-basis.patch`; the call slot is only freed as the
    /// handler starts, Linux 5.0 kernel/smp.c); `apic` merges a fire into an
    /// interrupt already pending for the same queue, as a real MSI-X vector.
    #[serde(default)]
    pub irq_delivery: IrqDelivery,
    /// When a core takes a device interrupt: `at-once` (default: a
    /// hardware interrupt cuts whatever runs short) or `poll`, the
    /// emulator's polled delivery that `cinterrupts exec` runs with
    /// (`emu::config::Delivery::Poll`): nothing takes the interrupt while
    /// a thread runs a segment on the core; it is taken when the core goes
    /// idle (a SCHED_IDLE poller spins on the line), at the end of the
    /// running thread's segment (the job threads take it at their next
    /// step, in their own context), or after [`HostProfile::irq_poll_fallback`]
    /// (the device wakes a SCHED_FIFO handler). A model of the measuring
    /// instrument, for cross-validating against `exec` on this machine
    /// (`profiles/hosts/vm-exec.toml`); a real kernel takes it at once.
    /// Only device interrupts wait: a timer's is the kernel's own.
    #[serde(default)]
    pub irq_taken: IrqTaken,
    /// Under `irq_taken = "poll"`: how long an interrupt may stay pending
    /// behind a busy core before the fallback handler takes it, ns.
    /// Default 50us, the emulator's (`emu::config::POLL_FALLBACK`).
    #[serde(default = "default_irq_poll_fallback", deserialize_with = "duration")]
    pub irq_poll_fallback: u64,
    /// When a thread woken by an interrupt may take the CPU from a running
    /// one: `voluntary` (default; Linux's CONFIG_PREEMPT_VOLUNTARY, the
    /// authors' kernel, linux-kernel/config-file in their artifact): on
    /// the return to user space or at the end of a kernel path, never in
    /// the middle of one; `full` (CONFIG_PREEMPT): on the interrupt's
    /// return, wherever the thread was.
    #[serde(default)]
    pub preemption: Preemption,
    /// The block-layer scheduler between the threads' submit calls and
    /// the device: `none` (default: each request goes to the device whole,
    /// at once) or FastResponse's LD, `ld[,tokens=N][,split=SIZE][,opportunistic]`
    /// ([`crate::BlockScheduler`], `host::ld`; FR 3.3).
    #[serde(default)]
    pub block_scheduler: crate::BlockScheduler,
    /// How a waiting thread learns of its completion: `interrupt`
    /// (default), `poll`, `hybrid` or `select-isr` ([`crate::Completion`],
    /// `host::poll`).
    #[serde(default)]
    pub completion: crate::Completion,
    /// How an io_uring job's thread waits for its completions
    /// (`host::uring::STRATEGIES`): `min-complete` (default: CQEs posted
    /// by the interrupt, woken once `min_complete` are there), `task-work`,
    /// `defer-taskrun`, `min-wait=TIME[,nr=N][,timeout=TIME]`, `iopoll` or
    /// `sqpoll`. A job's own ring flags win: `hipri` is IOPOLL,
    /// `sqthread_poll` SQPOLL (`sim::uring`, private).
    #[serde(default, deserialize_with = "uring_strategy")]
    pub uring: host::uring::Strategy,
    /// The scheduler's wake-up preemption rule ([`crate::Wakeup`]):
    /// `plain` (default: the check above with `sched_wakeup_granularity`),
    /// `vanilla` (Linux CFS with its `next` buddy, the granularity from
    /// `cores`), `boost` (FastResponse's critical boost, FR Alg. 1 as
    /// printed), `boost-code` (the authors' code). Critical = the job's
    /// `critical` flag.
    #[serde(default)]
    pub wakeup_rule: crate::Wakeup,
    /// The ext4 journal mode the fsync path runs in, for jobs with
    /// `fsync=N` or `fdatasync=N` ([`crate::Journal`], `host::fsync`):
    /// `ordered` (default: ext4 `data=ordered`, D1 then JBD2's D2, JD, JC;
    /// FR 2.1) or `fjournal` (FastResponse's file-level journaling for
    /// critical callers; FR 3.4).
    #[serde(default)]
    pub journal: crate::Journal,
    /// JBD2 (kjournald2) runs as a critical thread: its journal writes are
    /// critical in the block layer and its wake-ups in the scheduler (FR
    /// 4.4: "we configure JBD2 as a critical process in B-Opt, BS-Opt, and
    /// SelectISR"). Its D2 writes never are (FR 4.2). Default false.
    #[serde(default)]
    pub jbd2_critical: bool,
    /// The fsync path's I/Os (D1, D2, JD, JC, the f-transaction) of a
    /// thread the completion mode polls for (`select-isr`: a critical job,
    /// JBD2 when `jbd2_critical`) are polled: the waiting thread spins
    /// instead of sleeping until the interrupt (FR 4.4's SelectISR "polls
    /// the I/O completions for those I/Os"). Default false: they complete
    /// by interrupt whatever the mode, as in Linux (`wait_on_buffer`).
    #[serde(default)]
    pub fsync_io_polls: bool,
    /// CPU a buffered write pays per KiB to copy into the page cache and
    /// dirty its pages (beside `syscall`), in runs that model the page
    /// cache (a job fsyncs). Default 300ns: best of three `dd
    /// if=/dev/zero of=/tmp/f bs=128k count=6250` on ext4 (3.3 GB/s,
    /// Linux 6.18, 2026-11-26, this project's build machine; not in the
    /// papers).
    #[serde(
        default = "default_buffered_write_per_kib",
        deserialize_with = "duration"
    )]
    pub buffered_write_per_kib: u64,
}

/// [`HostProfile::buffered_write_per_kib`]'s default, ns (measured: see
/// there).
fn default_buffered_write_per_kib() -> u64 {
    300
}

/// The kernel's preemption model ([`HostProfile::preemption`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preemption {
    /// CONFIG_PREEMPT_VOLUNTARY: a kernel path is not preempted on an
    /// interrupt's return.
    #[default]
    Voluntary,
    /// CONFIG_PREEMPT: any path is.
    Full,
}

/// How a fire becomes an interrupt on the host ([`HostProfile::irq_delivery`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IrqDelivery {
    /// One interrupt per fire, queued behind the one not yet taken.
    #[default]
    Ipi,
    /// A fire while the queue's interrupt is pending merges into it.
    Apic,
}

/// When a core takes a device interrupt ([`HostProfile::irq_taken`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IrqTaken {
    /// As a hardware interrupt: at once, whatever runs.
    #[default]
    AtOnce,
    /// As the emulator's polled delivery: when the core idles, at the end
    /// of the running segment, or after the fallback.
    Poll,
}

/// [`HostProfile::irq_poll_fallback`]'s default: the emulator's
/// `POLL_FALLBACK` (crates/emu/src/config.rs), 50 us.
fn default_irq_poll_fallback() -> u64 {
    50_000
}

// Linux 5.0 defaults on a machine with 8 or more CPUs (scale factor 4).
fn default_user_per_io() -> u64 {
    1_000
}
fn default_sched_latency() -> u64 {
    24_000_000
}
fn default_min_granularity() -> u64 {
    3_000_000
}
fn default_wakeup_granularity() -> u64 {
    4_000_000
}
fn default_tick() -> u64 {
    4_000_000
}

/// Shipped device profiles: (name, repository path, text).
const DEVICES: &[(&str, &str, &str)] = &[
    (
        "optane",
        "profiles/devices/optane.toml",
        include_str!("../../../profiles/devices/optane.toml"),
    ),
    (
        "p3700",
        "profiles/devices/p3700.toml",
        include_str!("../../../profiles/devices/p3700.toml"),
    ),
    (
        "optane-900p",
        "profiles/devices/optane-900p.toml",
        include_str!("../../../profiles/devices/optane-900p.toml"),
    ),
];

/// Shipped host profiles: (name, repository path, text).
const HOSTS: &[(&str, &str, &str)] = &[
    (
        "xeon-e5-2660v4",
        "profiles/hosts/xeon-e5-2660v4.toml",
        include_str!("../../../profiles/hosts/xeon-e5-2660v4.toml"),
    ),
    (
        "xeon-e5-2630v3",
        "profiles/hosts/xeon-e5-2630v3.toml",
        include_str!("../../../profiles/hosts/xeon-e5-2630v3.toml"),
    ),
    (
        "vm-exec",
        "profiles/hosts/vm-exec.toml",
        include_str!("../../../profiles/hosts/vm-exec.toml"),
    ),
];

impl DeviceProfile {
    /// A shipped profile by name (`optane`, `p3700`, `optane-900p`), or a
    /// TOML file by path (anything containing `/` or ending in `.toml`).
    pub fn load(name_or_path: &str) -> Result<DeviceProfile, ProfileError> {
        let (text, origin) = resolve("device", DEVICES, name_or_path)?;
        Self::parse(&text, &origin)
    }

    /// Names of the shipped device profiles.
    pub fn shipped() -> Vec<&'static str> {
        DEVICES.iter().map(|(name, _, _)| *name).collect()
    }

    /// A device whose timing is hand-computable: every read and write takes
    /// exactly `service` (a time as the profiles write it: `5500ns`, `10us`)
    /// on one of `parallelism` units, under an IOPS ceiling of `max_iops`
    /// each way. Kept busy with one unit, it posts a completion every
    /// `service` exactly, so the completion gaps, TOS 5.2's delta and the
    /// throughput are known in advance: the fixture the tests of the gaps,
    /// of `tune` and of the CLI share. The TOML text, for a file a command
    /// line can name.
    pub fn constant_service_toml(service: &str, parallelism: u32, max_iops: u64) -> String {
        let op = format!(
            "distribution = \"normal\"\nmean = \"{service}\"\nstddev = \"0ns\"\nper_kib = \"0ns\"\n"
        );
        format!(
            "name = \"const\"\ndescription = \"constant service time\"\nqueues = 32\n\
             queue_depth = 4096\nparallelism = {parallelism}\nmax_read_iops = {max_iops}\n\
             max_write_iops = {max_iops}\ndefault_delta = \"6us\"\ndefault_thr = 32\n\
             [read]\n{op}[write]\n{op}"
        )
    }

    /// [`DeviceProfile::constant_service_toml`], parsed.
    pub fn constant_service(
        service: &str,
        parallelism: u32,
        max_iops: u64,
    ) -> Result<DeviceProfile, ProfileError> {
        Self::parse(
            &Self::constant_service_toml(service, parallelism, max_iops),
            "const.toml",
        )
    }

    /// Parses profile text; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<DeviceProfile, ProfileError> {
        let p: DeviceProfile = toml::from_str(text).map_err(|e| convert(&e, text, origin))?;
        p.validate(text, origin)?;
        Ok(p)
    }

    fn validate(&self, text: &str, origin: &str) -> Result<(), ProfileError> {
        let bad = |table: Option<&str>, key: &str, reason: &str| {
            Err(bad_value(text, origin, &dotted(table, key), reason))
        };
        if self.name.trim().is_empty() {
            return bad(None, "name", "must not be empty");
        }
        if !(1..=MAX_QUEUES).contains(&self.queues) {
            return bad(
                None,
                "queues",
                &format!("must be 1 to {MAX_QUEUES} (NVMe Number of Queues)"),
            );
        }
        if !(2..=MAX_QUEUE_DEPTH).contains(&self.queue_depth) {
            return bad(
                None,
                "queue_depth",
                &format!("must be 2 to {MAX_QUEUE_DEPTH} (NVMe CAP.MQES)"),
            );
        }
        if self.parallelism < 1 {
            return bad(None, "parallelism", "must be at least 1");
        }
        for (key, iops) in [
            ("max_read_iops", self.max_read_iops),
            ("max_write_iops", self.max_write_iops),
        ] {
            if !(1..=MAX_IOPS).contains(&iops) {
                return bad(
                    None,
                    key,
                    &format!("must be 1 to {MAX_IOPS} (10M, three times the fastest NVMe drives)"),
                );
            }
        }
        for (key, bw) in [
            ("max_read_bw", self.max_read_bw),
            ("max_write_bw", self.max_write_bw),
        ] {
            if bw.is_some_and(|bw| !(MIN_BW..=MAX_BW).contains(&bw)) {
                return bad(
                    None,
                    key,
                    &format!("must be {MIN_BW} to {MAX_BW} bytes a second (1 MB/s to 1 TB/s)"),
                );
            }
        }
        let service = format!(
            "must be at most {} (Linux's NVMe I/O timeout)",
            human(MAX_SERVICE)
        );
        for (table, st) in [("read", &self.read), ("write", &self.write)] {
            if st.mean == 0 {
                return bad(Some(table), "mean", "must be greater than 0");
            }
            for (key, t) in [
                ("mean", st.mean),
                ("stddev", st.stddev),
                ("per_kib", st.per_kib),
            ] {
                if t > MAX_SERVICE {
                    return bad(Some(table), key, &service);
                }
            }
            if st.floor >= st.mean {
                return bad(Some(table), "floor", "must be below mean");
            }
        }
        if self.default_delta == 0 || self.default_delta > MAX_HOST_TIME {
            return bad(
                None,
                "default_delta",
                &format!("must be more than 0 and at most {}", human(MAX_HOST_TIME)),
            );
        }
        if self.default_thr < 1 {
            return bad(None, "default_thr", "must be at least 1");
        }
        Ok(())
    }
}

impl HostProfile {
    /// A shipped profile by name (`xeon-e5-2660v4`), or a TOML file by path
    /// (anything containing `/` or ending in `.toml`).
    pub fn load(name_or_path: &str) -> Result<HostProfile, ProfileError> {
        let (text, origin) = resolve("host", HOSTS, name_or_path)?;
        Self::parse(&text, &origin)
    }

    /// Names of the shipped host profiles.
    pub fn shipped() -> Vec<&'static str> {
        HOSTS.iter().map(|(name, _, _)| *name).collect()
    }

    /// Parses profile text; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<HostProfile, ProfileError> {
        let p: HostProfile = toml::from_str(text).map_err(|e| convert(&e, text, origin))?;
        p.validate(text, origin)?;
        Ok(p)
    }

    /// A switch to a thread of another process, ns
    /// ([`HostProfile::process_switch`], else `context_switch`).
    pub fn process_switch(&self) -> u64 {
        self.process_switch.unwrap_or(self.context_switch)
    }

    /// Cycles of `ns` nanoseconds at this host's clock.
    pub fn cycles(&self, ns: u64) -> f64 {
        ns as f64 * self.ghz
    }

    fn validate(&self, text: &str, origin: &str) -> Result<(), ProfileError> {
        let bad = |key: &str, reason: &str| Err(bad_value(text, origin, key, reason));
        if self.name.trim().is_empty() {
            return bad("name", "must not be empty");
        }
        if !(1..=MAX_CORES).contains(&self.cores) {
            return bad(
                "cores",
                &format!("must be 1 to {MAX_CORES} (Linux's largest NR_CPUS)"),
            );
        }
        if !(self.ghz.is_finite() && self.ghz > 0.0) {
            return bad("ghz", "must be greater than 0");
        }
        if self.irq_cycles == 0 {
            return bad("irq_cycles", "must be greater than 0");
        }
        if self.sched_min_granularity == 0 || self.sched_latency < self.sched_min_granularity {
            return bad(
                "sched_latency",
                "must be at least sched_min_granularity, which must be > 0",
            );
        }
        if !TICK.contains(&self.tick) {
            return bad(
                "tick",
                "must be 1ms to 10ms (Linux's HZ is 100 to 1000, kernel/Kconfig.hz)",
            );
        }
        for (key, t) in [
            ("syscall", self.syscall),
            ("submit_per_request", self.submit_per_request),
            ("irq_entry", self.irq_entry),
            ("per_completion", self.per_completion),
            ("context_switch", self.context_switch),
            ("process_switch", self.process_switch()),
            ("wakeup", self.wakeup),
            ("reap_per_completion", self.reap_per_completion),
            ("user_per_io", self.user_per_io),
            ("irq_poll_fallback", self.irq_poll_fallback),
            ("buffered_write_per_kib", self.buffered_write_per_kib),
            ("sched_latency", self.sched_latency),
            ("sched_min_granularity", self.sched_min_granularity),
            ("sched_wakeup_granularity", self.sched_wakeup_granularity),
        ] {
            if t > MAX_HOST_TIME {
                return bad(
                    key,
                    &format!(
                        "must be at most {} (kernel/sysctl.c's bound on CFS's periods)",
                        human(MAX_HOST_TIME)
                    ),
                );
            }
        }
        Ok(())
    }
}

/// The text and origin of a shipped name or a path.
fn resolve(
    kind: &'static str,
    shipped: &[(&str, &str, &str)],
    name_or_path: &str,
) -> Result<(String, String), ProfileError> {
    if name_or_path.contains('/') || name_or_path.ends_with(".toml") {
        let text = read_bounded(Path::new(name_or_path)).map_err(|reason| ProfileError::Read {
            file: name_or_path.to_string(),
            reason,
        })?;
        return Ok((text, name_or_path.to_string()));
    }
    match shipped.iter().find(|(name, _, _)| *name == name_or_path) {
        Some((_, path, text)) => Ok((text.to_string(), path.to_string())),
        None => Err(ProfileError::UnknownName {
            kind,
            name: name_or_path.to_string(),
            shipped: shipped
                .iter()
                .map(|(n, _, _)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// A profile file's text: a regular file of at most [`MAX_PROFILE_BYTES`]
/// (a device node or a FIFO is refused before anything is read).
fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let not_regular = || "not a regular file (a profile is a .toml file)".to_string();
    // Checked before opening too: opening a FIFO blocks until a writer
    // comes.
    if !std::fs::metadata(path)
        .map_err(|e| e.to_string())?
        .is_file()
    {
        return Err(not_regular());
    }
    let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let too_big = || {
        format!(
            "larger than {} KiB, the most a profile may be (the shipped ones are 3 KB)",
            MAX_PROFILE_BYTES >> 10
        )
    };
    if meta.len() > MAX_PROFILE_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    // The file may grow after the check: read one byte past the bound.
    f.by_ref()
        .take(MAX_PROFILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "line {}: not UTF-8 text",
            1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
        )
    })
}

/// `ns` as the profiles write times (`30s`, `1s`).
fn human(ns: Nanos) -> String {
    if ns % SEC == 0 {
        format!("{}s", ns / SEC)
    } else {
        format!("{ns}ns")
    }
}

fn opt_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    duration(d).map(Some)
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// `table.key` or `key`.
fn dotted(table: Option<&str>, key: &str) -> String {
    match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    }
}

/// A TOML document's keys with toml's spans: of each key, and of its value
/// (a table's value spans its keys).
#[derive(Debug, Default)]
struct Node(Vec<(Spanned<String>, Spanned<Node>)>);

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a TOML value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut keys = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    keys.push(entry);
                }
                Ok(Node(keys))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Node::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
                Ok(Node::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
                Ok(Node::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
                Ok(Node::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
                Ok(Node::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Node, E> {
                Ok(Node::default())
            }
        }
        d.deserialize_any(Visit)
    }
}

/// One key of the document: its dotted path and toml's spans.
struct Key {
    path: String,
    key: Range<usize>,
    value: Range<usize>,
    table: bool,
}

/// Every key of `text`, tables before their keys (empty if toml cannot
/// read the text at all: then only the error's own span locates it).
fn keys(text: &str) -> Vec<Key> {
    fn walk(node: &Node, prefix: Option<&str>, out: &mut Vec<Key>) {
        for (k, v) in &node.0 {
            let path = dotted(prefix, k.get_ref());
            out.push(Key {
                path: path.clone(),
                key: k.span(),
                value: v.span(),
                table: !v.get_ref().0.is_empty(),
            });
            walk(v.get_ref(), Some(&path), out);
        }
    }
    let mut out = Vec::new();
    if let Ok(root) = toml::from_str::<Node>(text) {
        walk(&root, None, &mut out);
    }
    out
}

/// The line where `key` (dotted) is assigned, from toml's key span.
fn line_of_key(text: &str, key: &str) -> usize {
    keys(text)
        .iter()
        .find(|k| k.path == key)
        .map_or(1, |k| line_of(text, k.key.start))
}

fn bad_value(text: &str, origin: &str, key: &str, reason: &str) -> ProfileError {
    ProfileError::BadValue {
        file: origin.to_string(),
        line: line_of_key(text, key),
        key: quoted(key),
        reason: one_line(reason),
    }
}

/// A toml error as a one-line [`ProfileError`]: toml's own message, the
/// line its span starts on, and the key whose key or value the span falls
/// in (the innermost); for a span covering a whole table (a key missing
/// from it), that table.
fn convert(e: &toml::de::Error, text: &str, origin: &str) -> ProfileError {
    let message = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let span = e.span();
    let keys = keys(text);
    let key = span.as_ref().and_then(|s| {
        let inside = |r: &Range<usize>| r.start <= s.start && s.end <= r.end.max(r.start + 1);
        keys.iter()
            .rev()
            .find(|k| inside(&k.key) || (!k.table && inside(&k.value)))
            .or_else(|| keys.iter().rev().find(|k| k.table && inside(&k.value)))
            .map(|k| quoted(&k.path))
    });
    // toml's messages can carry the input (a 1 MB key, a bad duration
    // string): one bounded line, as every front door quotes (found by the
    // fuzzer, crates/fuzz).
    ProfileError::Toml {
        file: origin.to_string(),
        line: span.map_or(1, |s| line_of(text, s.start)),
        key,
        message: one_line(&message),
    }
}

/// A host key's io_uring strategy, as `host::uring::parse` reads it.
fn uring_strategy<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<host::uring::Strategy, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    host::uring::parse(&s).map_err(serde::de::Error::custom)
}
