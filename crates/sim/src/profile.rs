//! Host profiles, and the device profiles the device model owns: the
//! numbers the simulator runs on, read from TOML files with one comment per
//! number giving its source.
//!
//! Times in the files are strings with units (`"8us"`, `"740ns"`) and become
//! `u64` nanoseconds here. A bare name (`xeon-e5-2660v4`) loads a shipped
//! profile from the repository's `profiles/` directory (embedded at build
//! time); anything containing `/` or ending in `.toml` is read from that
//! path.

use serde::{Deserialize, Deserializer};
use service::duration;
use service::toml_file::{bad_value, human, resolve};

use crate::limits::{MAX_CORES, MAX_HOST_TIME, TICK};

// The device's profile is the device model's (crate `service`, issue 26
// item 1), read by the same machinery as the host's.
pub use service::toml_file::ProfileError;
pub use service::{DeviceProfile, Distribution, ServiceTime};

/// A host: cores and what the kernel's I/O path costs on them.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostProfile {
    /// Short name (`xeon-e5-2660v4`).
    pub name: String,
    /// The machine this models.
    pub description: String,
    /// The Linux release this host runs (`"5.0.8"`, `"6.12"`; X.Y
    /// counts), if the profile pins one (issue 37 item 1): each mechanism
    /// key the file sets must exist there (`host::era`), and `sim` names
    /// it in its report. Without it no check is made.
    #[serde(default, deserialize_with = "kernel_release")]
    pub kernel: Option<host::era::Kernel>,
    /// The mechanisms set explicitly, by this file's own keys (filled by
    /// [`HostProfile::parse`]) or by [`HostProfile::apply`], as the command
    /// line would write them: what a run on another `--kernel` checks
    /// (the defaults are the simulator's, no era's).
    #[serde(skip)]
    // Boxed: kept off the profile's own size (tune's `Target` holds one by value).
    pub explicit: Box<host::mechanism::Settings>,
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
    /// How long hybrid polling sleeps before it spins: `half-mean`
    /// (default, Linux's `io_poll_delay` 0) or a fixed time (Linux's > 0).
    #[serde(default)]
    pub io_poll_delay: host::poll::HybridSleep,
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
    /// The cores' idle states (issue 37 item 2, `host::cpuidle`): `off`
    /// (default, and every shipped profile: both papers turned C-states
    /// off), `skx`, `icx`, `spr` (Linux intel_idle's Skylake-SP, Ice
    /// Lake-SP and Sapphire Rapids tables), `haltpoll` (a KVM guest's, as
    /// this project's VM) or `poll`. A wake-up on an idle core pays its
    /// state's exit latency.
    #[serde(default, deserialize_with = "idle_table")]
    pub idle_states: host::cpuidle::Table,
    /// States of the table turned off, by name (`["C6"]`: sysfs
    /// `cpuidle/stateN/disable` = 1 on every CPU, as Kristo's "C6
    /// disabled"). Default none.
    #[serde(default)]
    pub idle_disabled: Vec<String>,
    /// The cpuidle governor: `menu` (default), `teo` or `haltpoll`.
    #[serde(default, deserialize_with = "idle_governor")]
    pub idle_governor: host::cpuidle::GovernorKind,
    /// The global PM QoS CPU latency limit (`/dev/cpu_dma_latency`), ns.
    /// Absent: none.
    #[serde(default, deserialize_with = "opt_duration")]
    pub cpu_latency_limit: Option<u64>,
    /// The per-device CPU latency limit of Kristo's blk-mq proposal
    /// (`cpu_lat_limit_us`; a proposal, not merged: linux-block RFC
    /// 2024-08-29, v2 2024-10-18), ns, holding on a core for
    /// `device_latency_timeout` after its last I/O. Absent: none.
    #[serde(default, deserialize_with = "opt_duration")]
    pub device_latency_limit: Option<u64>,
    /// The proposal's `cpu_lat_timeout_ms`. Default 3ms, its RFC cover
    /// letter's example.
    #[serde(
        default = "default_device_latency_timeout",
        deserialize_with = "duration"
    )]
    pub device_latency_timeout: u64,
    /// haltpoll's `guest_halt_poll_ns`: the longest its poll window grows.
    /// Default 200us, drivers/cpuidle/governors/haltpoll.c's; this VM
    /// reads 0 (`/sys/module/haltpoll/parameters/guest_halt_poll_ns`).
    #[serde(default = "default_guest_halt_poll_ns", deserialize_with = "duration")]
    pub guest_halt_poll_ns: u64,
    /// IRQ suspension of each completion queue (issue 40,
    /// `host::irq_suspend`): `off` (default) or its timeout (Linux 6.13's
    /// napi `irq_suspend_timeout`, carried to NVMe queues).
    #[serde(default = "default_irq_suspend", deserialize_with = "irq_suspend")]
    pub irq_suspend: host::irq_suspend::IrqSuspend,
}

/// [`HostProfile::irq_suspend`]'s default: off, as Linux's 0.
fn default_irq_suspend() -> host::irq_suspend::IrqSuspend {
    host::irq_suspend::IrqSuspend::Off
}

/// A host key's IRQ suspension, as `--irq-suspend` reads it.
fn irq_suspend<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<host::irq_suspend::IrqSuspend, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    s.parse().map_err(serde::de::Error::custom)
}

/// [`HostProfile::device_latency_timeout`]'s default: 3 ms, the
/// `cpu_lat_timeout_ms = 3` of Kristo's RFC cover letter (2024-08-29).
fn default_device_latency_timeout() -> u64 {
    3_000_000
}

/// [`HostProfile::guest_halt_poll_ns`]'s default: haltpoll.c's 200000.
fn default_guest_halt_poll_ns() -> u64 {
    200_000
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

/// Shipped host profiles: (name, repository path, text).
const HOSTS: &[(&str, &str, &str)] = &[
    (
        "xeon-e5-2660v4",
        "profiles/hosts/xeon-e5-2660v4.toml",
        include_str!("../../../profiles/hosts/xeon-e5-2660v4.toml"),
    ),
    (
        "xeon-e5-2660v4-linux-6.12",
        "profiles/hosts/xeon-e5-2660v4-linux-6.12.toml",
        include_str!("../../../profiles/hosts/xeon-e5-2660v4-linux-6.12.toml"),
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
    (
        "vm-native",
        "profiles/hosts/vm-native.toml",
        include_str!("../../../profiles/hosts/vm-native.toml"),
    ),
];

impl HostProfile {
    /// The mechanisms `s` sets, over the profile's own (the one place a
    /// command line's or an experiment's host settings reach a profile).
    pub fn apply(&mut self, s: &host::mechanism::Settings) {
        self.explicit.merge(s);
        if let Some(b) = &s.block_scheduler {
            self.block_scheduler = b.clone();
        }
        if let Some(c) = s.completion {
            self.completion = c;
        }
        if let Some(d) = s.io_poll_delay {
            self.io_poll_delay = d;
        }
        if let Some(w) = s.wakeup {
            self.wakeup_rule = w;
        }
        if let Some(j) = s.journal {
            self.journal = j;
        }
        if let Some(c) = s.jbd2_critical {
            self.jbd2_critical = c;
        }
        if let Some(p) = s.fsync_io_polls {
            self.fsync_io_polls = p;
        }
        if let Some(u) = s.uring {
            self.uring = u;
        }
        if let Some(v) = s.irq_suspend {
            self.irq_suspend = v;
        }
    }

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
        let mut p: HostProfile = service::toml_file::parse(text, origin)?;
        p.validate(text, origin)?;
        p.explicit = Box::new(explicit(text, origin)?);
        if let Some(k) = p.kernel {
            if let Some(a) = p.explicit.anachronism(k) {
                let shown = match a.value.as_str() {
                    "" => "on".to_string(),
                    v => v.to_string(),
                };
                return Err(bad_value(
                    text,
                    origin,
                    a.row.key,
                    &format!(
                        "{shown}: {}; this profile's kernel = \"{k}\" is outside it",
                        a.era
                    ),
                ));
            }
        }
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
        for name in &self.idle_disabled {
            let states = self.idle_states.states();
            if !states.iter().any(|s| s.name == name.as_str()) {
                let names: Vec<&str> = states.iter().map(|s| s.name).collect();
                return bad(
                    "idle_disabled",
                    &format!(
                        "no state `{name}` in idle_states `{}` ({})",
                        self.idle_states.name(),
                        if names.is_empty() {
                            "off: none".to_string()
                        } else {
                            names.join(", ")
                        }
                    ),
                );
            }
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
            ("cpu_latency_limit", self.cpu_latency_limit.unwrap_or(0)),
            (
                "device_latency_limit",
                self.device_latency_limit.unwrap_or(0),
            ),
            ("device_latency_timeout", self.device_latency_timeout),
            ("guest_halt_poll_ns", self.guest_halt_poll_ns),
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

/// The host mechanisms `text` sets itself (a key of
/// `host::mechanism::MECHANISMS` present in the file), read by each row's
/// own parser; a flag's `true` is on.
fn explicit(text: &str, origin: &str) -> Result<host::mechanism::Settings, ProfileError> {
    let mut own = host::mechanism::Settings::default();
    let Ok(table) = text.parse::<toml::Table>() else {
        return Ok(own); // serde's parse above has already said why
    };
    for m in host::mechanism::MECHANISMS {
        let value = match table.get(m.key) {
            None => continue,
            Some(toml::Value::String(v)) => v.clone(),
            Some(toml::Value::Boolean(b)) => if *b { "on" } else { "off" }.to_string(),
            Some(other) => other.to_string(),
        };
        (m.set)(&mut own, &value).map_err(|e| bad_value(text, origin, m.key, &e))?;
    }
    Ok(own)
}

/// The `kernel` key: a Linux release as a string (`"5.0.8"`).
fn kernel_release<'de, D: Deserializer<'de>>(d: D) -> Result<Option<host::era::Kernel>, D::Error> {
    let s = String::deserialize(d)?;
    s.parse().map(Some).map_err(serde::de::Error::custom)
}

fn opt_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    duration(d).map(Some)
}

/// A host key's idle-state table (`host::cpuidle::Table::parse`).
fn idle_table<'de, D: serde::Deserializer<'de>>(d: D) -> Result<host::cpuidle::Table, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    host::cpuidle::Table::parse(&s).map_err(serde::de::Error::custom)
}

/// A host key's idle governor (`host::cpuidle::GovernorKind::parse`).
fn idle_governor<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<host::cpuidle::GovernorKind, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    host::cpuidle::GovernorKind::parse(&s).map_err(serde::de::Error::custom)
}

/// A host key's io_uring strategy, as `host::uring::parse` reads it.
fn uring_strategy<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<host::uring::Strategy, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    host::uring::parse(&s).map_err(serde::de::Error::custom)
}
