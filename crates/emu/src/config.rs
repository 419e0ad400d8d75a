//! What an emulation runs with: the run's options ([`EmuConfig`]), how
//! interrupts reach the target cores ([`Delivery`]), and the parts of them
//! the device ([`DeviceConfig`]) and the host driver ([`DriverConfig`]) each
//! take, so that a host other than the job workers can start the two alone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use policy::{Nanos, PolicySpec};

use crate::backend::BackendSpec;

/// What one emulated run runs on.
#[derive(Clone, Debug)]
pub struct EmuConfig {
    /// `None`: the jobs' `filename=`.
    pub backend: Option<BackendSpec>,
    pub policy: PolicySpec,
    /// Makes every job time-based with this runtime.
    pub runtime: Option<Nanos>,
    /// The device thread's CPU; `None`: one no job names.
    pub device_cpu: Option<usize>,
    /// Commands in flight per queue pair (tags and SQ slots). NVMe's Linux
    /// driver uses 1024.
    pub queue_depth: u32,
    /// CQ slots per queue pair; `None`: the queue depth.
    pub cq_entries: Option<u32>,
    /// Seeds the offsets and read/write mix.
    pub seed: u64,
    /// Run the interrupt handlers at SCHED_FIFO so that an interrupt
    /// preempts the job threads; without the privilege they run at normal
    /// priority, and the report says so.
    pub realtime_handler: bool,
    /// Stop with an error when no request completes for this long while a
    /// job runs; `None`: derived from the jobs and the device
    /// (`run::stall::limit`).
    pub stall_timeout: Option<Nanos>,
    /// How interrupts reach the target cores.
    pub delivery: Delivery,
    /// Whether a fire is its own interrupt (the authors' IPIs) or merges
    /// into one still pending (an APIC's line).
    pub irq_delivery: IrqDelivery,
    /// Let the run use a block device a job file names, and write to a
    /// block device (`--allow-device-write`; fio's `allow_mounted_write`).
    pub allow_device_write: bool,
    /// FastResponse's LD block-layer scheduler (`run --block-scheduler`);
    /// `None`: none (every request to its SQ whole, at once).
    pub block: Option<host::ld::LdConfig>,
    /// How a blocking job's thread learns of its completion (`run
    /// --completion`): interrupt (default), classic or hybrid polling, or
    /// SelectISR (critical jobs poll). A job with `hipri=1` polls whatever
    /// this says (hybrid if this is hybrid, else classic).
    pub completion: host::poll::Mode,
    /// How a critical job's thread asks the kernel to run it first when
    /// it wakes (FastResponse's critical boost, FR 3.5, through this
    /// kernel's own mechanisms): `run --critical-boost`.
    pub boost: Boost,
    /// io_uring's host-side completion strategy for `ioengine=io_uring`
    /// jobs (`run --uring`, `host::uring`): `None` is min-complete, what
    /// the emulator has always done, and reports nothing more; `Some` adds
    /// the jobs' wake-ups to the report. min-wait is applied by the job's
    /// thread; iopoll is the job's `hipri` (its thread polls a poll
    /// queue); the others are refused (`choose_target`).
    pub uring: Option<host::uring::Strategy>,
    /// Told one line each about what the run does on the user's behalf
    /// before it measures: a large layout, another emulation on the same
    /// CPUs. `None`: said only in the report's notes, if at all. (A device
    /// replaced by the null backend is for the caller to say, from
    /// `choose_target`, with the job file's name.)
    pub say: Option<fn(&str)>,
}

impl Default for EmuConfig {
    fn default() -> Self {
        EmuConfig {
            backend: None,
            policy: PolicySpec::named("cint"),
            runtime: None,
            device_cpu: None,
            queue_depth: 1024,
            cq_entries: None,
            seed: 1,
            realtime_handler: true,
            stall_timeout: None,
            delivery: Delivery::Poll,
            irq_delivery: IrqDelivery::Ipi,
            allow_device_write: false,
            block: None,
            completion: host::poll::Mode::Interrupt,
            boost: Boost::None,
            uring: None,
            say: None,
        }
    }
}

impl EmuConfig {
    /// The host mechanisms a run sets (`host::mechanism`, the rows whose
    /// front ends include `run`) over this configuration's: the one place
    /// the emulator reads them, for `run`, `tune`, `sweep` and
    /// `reproduce` alike (issue 39 item 2).
    pub fn apply_host(&mut self, s: &host::mechanism::Settings) {
        if let Some(b) = &s.block_scheduler {
            self.block = b.ld();
        }
        if let Some(c) = s.completion {
            self.completion = c;
        }
        if let Some(u) = s.uring {
            self.uring = Some(u);
        }
    }
}

/// FastResponse's critical wake-up boost: `wire`'s (issue 38 item 1), which
/// the preload library's threads take too.
pub use wire::sys::Boost;

/// How an interrupt reaches the target core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The device wakes a handler thread parked on the core (a futex wake:
    /// on this VM a cross-core wake-up, about 34 us, PLATFORM.md section 3).
    Wake,
    /// Nothing on the core sleeps through an interrupt: a SCHED_IDLE thread
    /// polls the line while the core is otherwise idle (as Linux's haltpoll
    /// idle driver polls instead of halting), and the job threads take it at
    /// their next step, running the handler in their own context as a
    /// hardware interrupt does. Delivery then costs a cache-line transfer
    /// (about 0.2 us here) instead of an IPI. An interrupt still pending
    /// after `POLL_FALLBACK` (50 us: other processes keep the core busy)
    /// wakes a SCHED_FIFO handler thread, as with [`Delivery::Wake`].
    Poll,
    /// No thread on the target core: whoever drives the device runs the
    /// handler after each of its passes (the driver's `servicer`), on
    /// the device's core. For `cinterrupts exec` (issue 38 item 2), whose
    /// program owns the target core: nothing busy-waits there, and a
    /// delivery costs a cache-line transfer to a waiter that spins.
    Inline,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Wake => "wake",
            Delivery::Poll => "poll",
            Delivery::Inline => "inline",
        }
    }
}

/// What the device does when its policy fires while the previous
/// interrupt has not been taken yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IrqDelivery {
    /// As the authors' emulator (artifact, `linux-kernel/cinterrupts-01-basis.patch`,
    /// `irq_poller_fire`): every fire is an IPI sent with
    /// `smp_call_function_single(dst_cpu, nvme_irq_helper, queue, 0)`. With
    /// `wait=0` Linux 5.0 (`kernel/smp.c`) sends it through the sending CPU's
    /// one `csd_data` slot, taken by `csd_lock`, which first spins in
    /// `csd_lock_wait` until the previous call released it; the target
    /// releases it (`csd_unlock`) in `flush_smp_call_function_queue` just
    /// before it runs the function. So the poller waits at a fire until the
    /// target has taken the previous one: nothing merges, and a slow target
    /// holds back the poller's next interrupts. The poller is a thread
    /// apart from the SSD (one per queue, on its own CPU, in the
    /// rocks-addon patch), so the device keeps fetching, executing and
    /// posting while it waits; only the policy's walk of the CQ stops.
    #[default]
    Ipi,
    /// As [`IrqDelivery::Ipi`], but the whole device waits at the fire:
    /// nothing is fetched, executed or posted until the slot is free, as if
    /// the SSD were the poller. Not the authors' arrangement (their SSD
    /// never waits for their poller); for comparison.
    IpiStall,
    /// A real device's MSI-X vector on an APIC: a fire while one is still
    /// pending merges into it (one pending bit per vector), and the device
    /// never waits. For what-ifs about real hardware.
    Apic,
}

impl IrqDelivery {
    pub fn as_str(self) -> &'static str {
        match self {
            IrqDelivery::Ipi => "ipi",
            IrqDelivery::IpiStall => "ipi-stall",
            IrqDelivery::Apic => "apic",
        }
    }

    /// `ipi`, `ipi-stall` or `apic`.
    pub fn parse(s: &str) -> Option<IrqDelivery> {
        match s {
            "ipi" => Some(IrqDelivery::Ipi),
            "ipi-stall" => Some(IrqDelivery::IpiStall),
            "apic" => Some(IrqDelivery::Apic),
            _ => None,
        }
    }
}

/// How long polled delivery may leave an interrupt pending before the
/// device wakes the fallback handler: about one cross-core wake-up here.
pub const POLL_FALLBACK: Nanos = 50_000;

/// Whether the measured window is open: while it is, the device records
/// the gaps between completions and the handlers the delivery latency.
/// Clones share one flag; a new one is closed.
#[derive(Clone, Debug, Default)]
pub struct Recording(Arc<AtomicBool>);

impl Recording {
    pub fn set(&self, open: bool) {
        self.0.store(open, Ordering::Relaxed);
    }

    pub fn is_open(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// What the device thread runs with.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// The CPU the device thread busy-polls on (a core of its own, as the
    /// paper's emulator).
    pub cpu: usize,
    /// The interrupt strategy; each queue pair's CQ gets its own instance.
    pub policy: PolicySpec,
    /// IPIs that wait for the call slot (the authors'), or an APIC line
    /// that merges.
    pub irq_delivery: IrqDelivery,
    pub recording: Recording,
}

/// What the host driver runs with.
#[derive(Clone, Debug)]
pub struct DriverConfig {
    pub delivery: Delivery,
    /// [`Delivery::Wake`]: run the handler threads at SCHED_FIFO (see
    /// [`EmuConfig::realtime_handler`]).
    pub realtime_handler: bool,
    /// Time each interrupt's handler spends before it reaps, busy (0: none).
    /// A what-if for a slower target core, and how the tests make a handler
    /// deliberately slow.
    pub handler_delay: Nanos,
    pub recording: Recording,
    /// FastResponse's LD block-layer scheduler between the waiters and the
    /// queue pairs (`driver/block.rs`); `None`: each request goes to its
    /// SQ whole, at once.
    pub block: Option<host::ld::LdConfig>,
}
