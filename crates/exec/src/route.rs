//! The device's side of `exec`'s routing (issue 14 items 1, 3, 4): the
//! emulator's device and driver run here, in `cinterrupts exec`, and serve
//! every process of the program through the shared-memory slots of the
//! `shm` crate, as one NVMe drive serves every process of a host.
//!
//! - **Submission**: the device fetches what the program's waiters posted
//!   at the start of each pass ([`emu::Ingress`]), into the one queue pair
//!   of the target core, while it has free tags.
//! - **Timing**: the program moves the data itself (its own system call on
//!   the file, before it posts the command); the device times the command
//!   as a `--device` profile says (`emu::backend::ModelBackend`, the device model of crate `service`), or completes it at once
//!   (`null:0`) when the program's real I/O was the device.
//! - **Interrupts**: the policy decides when to raise the target core's
//!   line; the driver's handler (the emulator's default delivery: an idle
//!   poller on the core, a SCHED_FIFO fallback that preempts whatever runs
//!   there when the line stays pending) reaps the CQ and leaves each
//!   completion in its waiter's slot, waking it with one futex call on
//!   memory the program shares.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, OnceLock};

use emu::backend::BackendSpec;
use emu::driver::{BlockLayer, Poller};
use emu::{
    Clock, Delivered, Delivery, DeviceConfig, DeviceHandle, Driver, DriverConfig, Inboxes, Ingress,
    QueuePair, Recording, Request,
};
use policy::{Nanos, PolicySpec};
use serde::Serialize;
use shm::{Cmd, Done, Region, SLOTS};
use wire::marks_from_bits;

/// At most this many commands of one waiter are fetched per pass, so one
/// deep libaio context does not hold the others back for a whole pass.
const FETCH: usize = 64;

/// How the device is run.
#[derive(Clone, Debug)]
pub struct RouteOptions {
    pub policy: PolicySpec,
    /// `--device`: a modelled device's timing. `None`: the program's own
    /// system call is the device (completed at once, `null:0`).
    pub device: Option<BackendSpec>,
    /// The device thread's CPU; the program runs on the others.
    pub device_cpu: usize,
    /// The target core: its queue pair, its interrupt handler.
    pub target: usize,
    /// Tags of the queue pair (commands in flight on the device).
    pub tags: u32,
    /// FastResponse's LD between the program's requests and the queue
    /// pairs (`--block-scheduler ld[,...]`).
    pub block: Option<host::ld::LdConfig>,
    /// `--completion`: with `poll` or `select-isr` the target core has a
    /// second queue pair, a poll queue (interrupts off), for the requests
    /// whose waiters spin.
    pub polling: crate::config::Polling,
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the set it is given; CPU_ISSET reads it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0
    {
        return vec![0];
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

impl RouteOptions {
    /// The device on the highest allowed CPU (or `device_cpu`), the target
    /// core the lowest other one (the program runs on all the others; on
    /// this 2-vCPU VM, the device on CPU 1 and the program on CPU 0).
    pub fn placed(
        policy: PolicySpec,
        device: Option<BackendSpec>,
        device_cpu: Option<usize>,
    ) -> Result<RouteOptions, String> {
        let cpus = allowed_cpus();
        let device_cpu = match device_cpu {
            Some(c) if cpus.contains(&c) => c,
            Some(c) => {
                return Err(format!(
                    "--device-cpu {c}: not one of this process's CPUs {cpus:?}"
                ))
            }
            None => *cpus.last().unwrap_or(&0),
        };
        let target = cpus
            .iter()
            .copied()
            .find(|&c| c != device_cpu)
            .unwrap_or(device_cpu);
        Ok(RouteOptions {
            policy,
            device,
            device_cpu,
            target,
            tags: 1024,
            block: None,
            polling: crate::config::Polling::Interrupt,
        })
    }
}

/// The device, the driver and the region, running.
pub struct Router {
    region: Arc<Region>,
    fd: OwnedFd,
    device: Option<DeviceHandle>,
    driver: Option<Driver>,
    backend: String,
    policy: String,
    completion: String,
    fires: crate::fires::FireLog,
}

/// What the device and the driver did. The keys every report shares
/// (policy, device, interrupts, completions, delivery) are the report's
/// top-level ones (`report::Cinterrupts`), skipped here; the rest is
/// `exec.routing` in the JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Routed {
    #[serde(skip)]
    pub policy: String,
    #[serde(skip)]
    pub backend: String,
    /// Commands the device fetched and completed.
    pub commands: u64,
    #[serde(skip)]
    pub completions_reaped: u64,
    pub errors: u64,
    /// Interrupts the policy raised, those merged into one still pending,
    /// and those the handler took.
    pub interrupts_raised: u64,
    pub interrupts_merged: u64,
    #[serde(skip)]
    pub interrupts: u64,
    #[serde(skip)]
    pub urgent_only: u64,
    #[serde(skip)]
    pub completions_per_interrupt: f64,
    /// Device raise to handler start, ns (`None` without interrupts).
    #[serde(skip)]
    pub delivery: Option<report::Delivery>,
    /// Handler time, ns (the interrupt's CPU on the target core).
    pub handler_cpu_ns: u64,
    /// Completions of a tag not in flight: must be 0.
    pub duplicates: u64,
    /// `--completion`: interrupt, poll or select-isr.
    pub completion: String,
    /// Completions reaped from the poll queue (no interrupt): each one's
    /// waiter spun on its slot's completion ring.
    pub completions_polled: u64,
    /// What LD did, with `--block-scheduler ld`.
    pub block: Option<BlockNote>,
    /// Per mark, what the strategy was handed and delivered, and why it
    /// fired (`crate::fires`, issue 38 item 4).
    pub fires: Option<crate::fires::Fires>,
}

/// LD's figures under exec, as `run`'s block note gives them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BlockNote {
    /// `ld,tokens=N,split=SIZE[,opportunistic]`.
    pub scheduler: String,
    pub requests: u64,
    pub critical: u64,
    /// Commands the device got for them.
    pub pieces: u64,
    /// The most non-critical pieces in flight at once (dispatch to reap),
    /// and the most with critical ones.
    pub max_noncritical_in_flight: u64,
    pub max_in_flight: u64,
    /// Mean block-layer wait (submit to first dispatch, FR's T_Blk) over
    /// every request, ns.
    pub t_blk_mean_ns: u64,
}

struct SlotIngress {
    region: Arc<Region>,
    /// The target core's queue pair, then its poll queue if any.
    queues: Vec<Arc<QueuePair>>,
    /// Set once the driver runs (it is started after the device).
    late: Arc<OnceLock<Late>>,
    cmds: Vec<Cmd>,
    reqs: Vec<Request>,
}

/// What the ingress needs of the driver.
struct Late {
    block: Option<Arc<BlockLayer>>,
    poller: Option<Poller>,
}

impl Ingress for SlotIngress {
    fn poll(&mut self, _now: Nanos) {
        let Some(late) = self.late.get() else {
            return;
        };
        // The poll queue's completions into their slots, where their
        // waiters spin: the slot's ring is the poll queue's CQ as the
        // program sees it (no interrupt, no wake-up).
        if let Some(p) = &late.poller {
            p.poll();
        }
        let polled_queue = self.queues.len() > 1;
        for i in 0..self.region.high() {
            let slot = self.region.slot(i);
            self.cmds.clear();
            slot.peek(FETCH, &mut self.cmds);
            if self.cmds.is_empty() {
                continue;
            }
            let mut taken = 0;
            for c in &self.cmds {
                let req = Request {
                    cookie: c.cookie,
                    write: c.write,
                    offset: c.offset,
                    len: c.len,
                    // The data moved in the program: no backend here reads it.
                    buf: 0,
                    marks: marks_from_bits(c.marks),
                };
                let q = usize::from(c.polled && polled_queue);
                match &late.block {
                    // LD takes every request; its pieces wait for tokens.
                    Some(b) => b.submit_nowait(q, i as u32, c.critical, &[req]),
                    None => {
                        self.reqs.clear();
                        self.reqs.push(req);
                        if self.queues[q].try_submit(i as u32, &self.reqs) == 0 {
                            break;
                        }
                    }
                }
                taken += 1;
            }
            slot.fetched(taken);
        }
    }
}

struct SlotInboxes {
    region: Arc<Region>,
    scratch: std::sync::Mutex<Vec<Done>>,
}

impl Inboxes for SlotInboxes {
    fn deliver(&self, waiter: usize, done: &[Delivered]) -> bool {
        let mut s = self.scratch.lock().expect("inbox scratch");
        s.clear();
        s.extend(done.iter().map(|d| Done {
            cookie: d.cookie,
            result: d.result,
            error: d.error,
        }));
        self.region.slot(waiter).deliver(&s)
    }

    fn wake(&self, waiters: &[usize]) {
        // One futex word per waiter: each sleeps in its own process.
        for &w in waiters {
            self.region.slot(w).wake();
        }
    }
}

impl Router {
    pub fn start(opts: &RouteOptions) -> Result<Router, String> {
        let (region, fd) = Region::create().map_err(|e| format!("shared memory: {e}"))?;
        let region = Arc::new(region);
        let mut queues = vec![Arc::new(QueuePair::new(opts.target, opts.tags, opts.tags))];
        if opts.polling != crate::config::Polling::Interrupt {
            queues.push(Arc::new(QueuePair::new_polled(
                opts.target,
                opts.tags,
                opts.tags,
            )));
        }
        let late = Arc::new(OnceLock::new());
        let spec = opts
            .device
            .clone()
            .unwrap_or_else(|| BackendSpec::parse("null:0").expect("a valid spec"));
        let opened = spec.open(None, opts.tags)?;
        let clock = Clock::new();
        // The whole run is measured: the recordings are open from the start.
        let recording = Recording::default();
        recording.set(true);
        let ingress = SlotIngress {
            region: region.clone(),
            queues: queues.clone(),
            late: late.clone(),
            cmds: Vec::with_capacity(FETCH),
            reqs: Vec::with_capacity(FETCH),
        };
        let fires = crate::fires::FireLog::default();
        let device = emu::Device::start_with_ingress_wrapped(
            &DeviceConfig {
                cpu: opts.device_cpu,
                policy: opts.policy.clone(),
                irq_delivery: Default::default(),
                recording: recording.clone(),
            },
            clock,
            opened.backend,
            queues.clone(),
            Box::new(ingress),
            &|p| fires.watch(p),
        )
        .map_err(|e| e.to_string())?;
        let inboxes = Arc::new(SlotInboxes {
            region: region.clone(),
            scratch: Default::default(),
        });
        let driver = Driver::start_remote(
            &DriverConfig {
                delivery: Delivery::Poll,
                realtime_handler: true,
                handler_delay: 0,
                recording,
                block: opts.block.clone(),
            },
            clock,
            queues.clone(),
            &[0; SLOTS],
            inboxes,
        )
        .map_err(|e| e.to_string())?;
        let _ = late.set(Late {
            block: driver.block_handle(),
            poller: (queues.len() > 1).then(|| driver.poller(1)),
        });
        Ok(Router {
            completion: opts.polling.as_str().to_string(),
            backend: device.describe().to_string(),
            policy: policy::describe(&opts.policy),
            region,
            fd,
            device: Some(device),
            driver: Some(driver),
            fires,
        })
    }

    /// The program's way to the region: `/proc/OUR_PID/fd/N`.
    pub fn path(&self) -> String {
        format!("/proc/{}/fd/{}", std::process::id(), self.fd.as_raw_fd())
    }

    /// The region's descriptor, which the program inherits, as
    /// [`shm::ENV_SHM_FD`] names it (`N:INODE`), and its number.
    pub fn inherited(&self) -> (String, std::os::fd::RawFd) {
        let fd = self.fd.as_raw_fd();
        // SAFETY: fstat of our own descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        unsafe { libc::fstat(fd, &mut st) };
        (format!("{fd}:{}", st.st_ino), fd)
    }

    /// Waits (briefly) for what the device still holds, then stops the
    /// device and the driver. A program that died with commands in flight
    /// leaves them to complete here, into slots nobody reads.
    pub fn finish(mut self) -> Routed {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while (0..self.region.high()).any(|i| self.region.slot(i).in_flight() > 0)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let driver = self.driver.take().expect("running");
        let device = self.device.take().expect("running");
        let h = driver.counts();
        let line = driver.line_counts();
        let lat = driver.delivery_latency();
        let handler_cpu_ns = driver.handler_cpu_ns();
        let block = driver.block().map(|b| {
            let c = b.count();
            let (sum, n) = b
                .waits()
                .iter()
                .fold((0, 0), |(s, k), &(w, m)| (s + w, k + m));
            BlockNote {
                scheduler: b.name().to_string(),
                requests: c.requests,
                critical: c.critical,
                pieces: c.pieces,
                max_noncritical_in_flight: c.max_noncritical_in_flight,
                max_in_flight: c.max_in_flight,
                t_blk_mean_ns: sum.checked_div(n).unwrap_or(0),
            }
        });
        let stats = device.stop().map(|r| r.stats).unwrap_or_default();
        driver.stop();
        Routed {
            policy: self.policy.clone(),
            backend: self.backend.clone(),
            commands: stats.completed,
            completions_reaped: h.reaped,
            errors: h.errors,
            interrupts_raised: line.raised,
            interrupts_merged: line.merged,
            interrupts: h.interrupts,
            urgent_only: h.urgent_only,
            completions_per_interrupt: report::schema::per_interrupt(h.reaped, h.interrupts),
            delivery: report::Delivery::of(&lat),
            handler_cpu_ns,
            duplicates: h.duplicates,
            completion: self.completion.clone(),
            completions_polled: h.polled,
            block,
            // Complete now: the device thread dropped its strategies.
            fires: Some(self.fires.fires(&stats, h.reaped - h.polled.min(h.reaped))),
        }
    }
}
