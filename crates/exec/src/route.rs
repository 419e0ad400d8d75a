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
//!   line; the driver's handler runs on the device's own thread right
//!   after the pass that raised it (`emu::Delivery::Inline`, issue 38 item
//!   2: nothing busy-waits on the program's cores), reaps the CQ and
//!   leaves each completion in its waiter's slot. The waiter spins on its
//!   slot for up to [`SPIN_NS`] before it sleeps on its futex; a sleeping
//!   one is woken with one futex call on memory the program shares.
//! - **Idle**: the device thread parks on the region's bell once nothing
//!   has been in flight for [`PARK_AFTER_NS`]; the next post rings it.
//! - **Cost**: every completion's delay is split into the device model's
//!   time, the strategy's hold and this machine's delivery ([`Cost`]).

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

use emu::backend::BackendSpec;
use emu::driver::{BlockLayer, Poller, Servicer};
use emu::{
    Clock, Delivered, Delivery, DeviceConfig, DeviceHandle, Driver, DriverConfig, Inboxes, Ingress,
    QueuePair, Recording, Request,
};
use policy::{Nanos, PolicySpec};
use serde::{Deserialize, Serialize};
use shm::{Cmd, Done, Region, SLOTS};
use wire::marks_from_bits;

/// At most this many commands of one waiter are fetched per pass, so one
/// deep libaio context does not hold the others back for a whole pass.
const FETCH: usize = 64;

/// How long a waiter spins on its slot before it sleeps on its futex, ns.
/// A sleeping waiter costs a futex wake from the device's core: 33-35 us
/// until it runs, and 13-14 us of the waker's CPU (PLATFORM.md section 3,
/// `prim`), about 50 us in all. Spinning for about as long as blocking costs, then blocking,
/// is the 2-competitive rule for spin-then-block waits (Karlin, Li,
/// Manasse, Owicki, "Empirical studies of competitive spinning for a
/// shared-memory multiprocessor", SOSP 1991), as Linux's hybrid polling
/// spins only around the expected completion (block/blk-mq.c,
/// `blk_mq_poll_hybrid`, before 6.6). The spin is counted and reported as
/// the waiters' CPU.
pub const SPIN_NS: u64 = 50_000;

/// The device thread parks after this long with nothing in flight, ns:
/// the same spin-then-block rule, on the cost of the wake that a post to a
/// parked device pays (13 us of the poster's CPU and 34 us until the device
/// runs, PLATFORM.md section 3).
pub const PARK_AFTER_NS: u64 = 50_000;

/// The device thread's nice value: -10, a CFS weight of 9548 against 1024
/// at nice 0 and 110 at nice 10 (kernel/sched/core.c,
/// `sched_prio_to_weight`), so that a build or test beside it does not
/// hold back a fetch by a time slice; it parks when idle, so this costs
/// the others nothing then. Not SCHED_FIFO: a busy program would starve
/// the device core's other work.
const DEVICE_NICE: libc::c_int = -10;

/// The longest a parked device sleeps before it looks at its stop flag
/// and probe: 20 ms (50 looks a second, each a few microseconds).
const PARK_SLICE: std::time::Duration = std::time::Duration::from_millis(20);

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
    /// The device core's lock (`emu::claim_first`), held while the options
    /// live; `None` when every CPU's lock was held by another process.
    pub claim: Option<Arc<std::fs::File>>,
    /// One line when the device core could not be a core of its own.
    pub sharing: Option<String>,
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
    /// The host mechanisms `exec` applies (`host::mechanism`'s rows for
    /// `exec`: the block-layer scheduler and the completion mode) over
    /// these options: the one place `exec` reads them.
    pub fn apply_host(&mut self, s: &host::mechanism::Settings) {
        if let Some(b) = &s.block_scheduler {
            self.block = b.ld();
        }
        if let Some(c) = s.completion {
            self.polling = c;
        }
    }

    /// Why `exec` refuses the completion mode `s` names, if it does: the
    /// "sleep, then poll" strategies (`pas`, `dpas`, `ehp`,
    /// `hybrid-iopoll`; `host::sleep`) are applied by `run` and `sim`, not
    /// yet by the preload library, whose blocking calls would otherwise
    /// poll classically (or, under `hybrid-iopoll`, take interrupts) under
    /// the strategy's name. Applying them there takes a per-thread strategy
    /// in the library's blocking path (its per-command `polled` flag already
    /// routes a request to the interrupt or the poll queue), counters for
    /// its decisions and feedback in `wire`, and, for `hybrid-iopoll`, an
    /// IOPOLL ring's reaping in the library's io_uring.
    pub fn unapplied(s: &host::mechanism::Settings) -> Option<String> {
        use host::poll::Mode;
        let m = s.completion?;
        if m == Mode::Central {
            return Some(
                "'central' (UnICom's central poller) is simulated only (sim); exec takes interrupt, poll, hybrid or select-isr".into(),
            );
        }
        matches!(m, Mode::Pas | Mode::Dpas | Mode::Ehp | Mode::HybridIopoll).then(|| {
            format!(
                "'{m}' is applied by `run` and `sim`, not yet by exec (its blocking calls would not sleep as {m} decides); exec takes interrupt, poll, hybrid or select-isr"
            )
        })
    }

    /// The device on the highest allowed CPU (or `device_cpu`), the target
    /// core the lowest other one (the program runs on all the others; on
    /// this 2-vCPU VM, the device on CPU 1 and the program on CPU 0).
    pub fn placed(
        policy: PolicySpec,
        device: Option<BackendSpec>,
        device_cpu: Option<usize>,
    ) -> Result<RouteOptions, String> {
        let cpus = allowed_cpus();
        let mut claim = None;
        let mut sharing = None;
        let device_cpu = match device_cpu {
            Some(c) if cpus.contains(&c) => {
                claim = emu::claim_first(&[c]).map(|(_, f)| Arc::new(f));
                if claim.is_none() {
                    sharing = Some(format!(
                        "device core: CPU {c} (--device-cpu) is claimed by another emulation: their device threads share it"
                    ));
                }
                c
            }
            Some(c) => {
                return Err(format!(
                    "--device-cpu {c}: not one of this process's CPUs {cpus:?}"
                ))
            }
            // The highest CPU no other exec or run holds (issue 38 item 3).
            None => {
                let order: Vec<usize> = cpus.iter().rev().copied().collect();
                match emu::claim_first(&order) {
                    Some((c, f)) => {
                        claim = Some(Arc::new(f));
                        c
                    }
                    None => {
                        let c = *cpus.last().unwrap_or(&0);
                        sharing = Some(format!(
                            "device core: every CPU ({}) is claimed by another emulation; sharing CPU {c} with it",
                            report::human::cpu_list(&cpus)
                        ));
                        c
                    }
                }
            }
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
            claim,
            sharing,
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
    device_cpu: usize,
    sharing: Option<String>,
    _claim: Option<Arc<std::fs::File>>,
    /// The ingress's measurements: fetch latency sum and count, parks.
    fetch: Arc<FetchCost>,
}

/// What the device's ingress measured (its thread writes, exec reads).
#[derive(Debug, Default)]
struct FetchCost {
    /// Commands fetched, and the sum of their post to fetch, ns.
    n: AtomicU64,
    ns: AtomicU64,
    /// Times the device thread parked.
    parks: AtomicU64,
}

/// What the device and the driver did. The keys every report shares
/// (policy, device, interrupts, completions, delivery) are the report's
/// top-level ones (`report::Cinterrupts`), skipped here; the rest is
/// `exec.routing` in the JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Where a completion's delay went (issue 38 item 3).
    pub cost: Cost,
}

/// A routed completion's delay, split (issue 38 item 3): the device
/// model's time, the strategy's hold, and this machine's delivery, which
/// an NVMe drive and a kernel would not pay as such (the fetch of a
/// command posted in shared memory, the handler run on the device's core,
/// the waiter's wake-up). Means per completion, ns, unless said.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Who runs the handler, and where.
    pub delivered_by: String,
    /// The device core: claimed for this exec alone, or the line saying
    /// it is shared.
    pub device_core: String,
    /// Post (in the program) to the device's fetch: this machine's.
    pub fetch_ns: f64,
    /// Fetch to the completion's post in the CQ: the device model's.
    pub device_model_ns: f64,
    /// CQ post to the raise of the interrupt that covered it: the
    /// strategy's hold.
    pub strategy_hold_ns: f64,
    /// Raise to the handler's start, per interrupt: this machine's.
    pub interrupt_ns: f64,
    /// The handler's time per interrupt: this machine's.
    pub handler_ns: f64,
    /// The slot's delivery to the waiter taking it (spin or wake-up): this
    /// machine's.
    pub wake_ns: f64,
    /// This machine's delivery cost: fetch + interrupt + handler + wake.
    pub machine_ns: f64,
    /// The waiters' spinning, charged to the program's cores: CPU in all,
    /// waits a spin ended, waits that slept.
    pub waiter_spin_cpu_ns: u64,
    pub spin_hits: u64,
    pub sleeps: u64,
    /// Posts that rang a parked device's bell, and times it parked.
    pub device_rings: u64,
    pub device_parks: u64,
}

impl Cost {
    /// The report's text lines.
    pub fn lines(&self) -> Vec<String> {
        let us = |ns: f64| ns / 1e3;
        vec![
            format!(
                "completion delay, mean: device model {:.2} us, strategy's hold {:.2} us, this machine's delivery {:.2} us (fetch {:.2}, interrupt {:.2}, handler {:.2}, waiter wake-up {:.2})",
                us(self.device_model_ns),
                us(self.strategy_hold_ns),
                us(self.machine_ns),
                us(self.fetch_ns),
                us(self.interrupt_ns),
                us(self.handler_ns),
                us(self.wake_ns),
            ),
            format!(
                "delivery: {}; waiters spun {:.1} ms of CPU ({} ended by a completion, {} slept); device parked {} times, woken by {} posts",
                self.delivered_by,
                self.waiter_spin_cpu_ns as f64 / 1e6,
                self.spin_hits,
                self.sleeps,
                self.device_parks,
                self.device_rings,
            ),
            self.device_core.clone(),
        ]
    }
}

/// LD's figures under exec, as `run`'s block note gives them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    fetch: Arc<FetchCost>,
    /// When the device was last seen with something to do.
    busy_at: u64,
    /// Whether the device thread has its nice value yet.
    niced: bool,
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
    /// The target core's handler, run by the device after each pass.
    servicer: Servicer,
}

impl Ingress for SlotIngress {
    fn poll(&mut self, _now: Nanos) {
        if !self.niced {
            self.niced = true;
            // SAFETY: plain system calls on this thread (a thread id is a
            // PRIO_PROCESS target on Linux); refused without privilege,
            // which leaves the nice value as it was.
            unsafe {
                libc::setpriority(
                    libc::PRIO_PROCESS,
                    libc::gettid() as libc::id_t,
                    DEVICE_NICE,
                )
            };
        }
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
            let at = shm::now_ns();
            for (k, c) in self.cmds.iter().enumerate() {
                let posted = slot.posted_ns(k);
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
                self.fetch.ns.fetch_add(at.saturating_sub(posted), Relaxed);
            }
            self.fetch.n.fetch_add(taken as u64, Relaxed);
            slot.fetched(taken);
        }
    }

    fn after_pass(&mut self, now: Nanos, quiet: bool) {
        let Some(late) = self.late.get() else {
            return;
        };
        // The interrupt the pass raised, handled now on this core.
        if late.servicer.pending() {
            late.servicer.service();
        }
        let idle = quiet
            && !late.servicer.pending()
            && (0..self.region.high()).all(|i| self.region.slot(i).in_flight() == 0);
        if !idle {
            self.busy_at = now;
            return;
        }
        if now.saturating_sub(self.busy_at) < PARK_AFTER_NS {
            return;
        }
        let seen = self.region.parking();
        if self.region.any_posted() {
            self.region.unpark();
            return;
        }
        self.fetch.parks.fetch_add(1, Relaxed);
        self.region.park(seen, PARK_SLICE);
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
        region.set_spin(SPIN_NS);
        let region = Arc::new(region);
        let fetch = Arc::new(FetchCost::default());
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
            fetch: fetch.clone(),
            busy_at: 0,
            niced: false,
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
                delivery: Delivery::Inline,
                realtime_handler: false,
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
            servicer: driver.servicer(0),
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
            device_cpu: opts.device_cpu,
            sharing: opts.sharing.clone(),
            _claim: opts.claim.clone(),
            fetch,
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
        let w = self.region.costs();
        let per = |sum: u64, n: u64| if n == 0 { 0.0 } else { sum as f64 / n as f64 };
        let fetch_ns = per(self.fetch.ns.load(Relaxed), self.fetch.n.load(Relaxed));
        let interrupt_ns = if lat.is_empty() { 0.0 } else { lat.mean() };
        let handler_ns = per(handler_cpu_ns, h.interrupts);
        let wake_ns = per(w.wake_ns, w.taken);
        let cost = Cost {
            delivered_by: format!(
                "the device thread (CPU {}) runs the target core's handler after each pass; nothing polls on the program's CPUs",
                self.device_cpu
            ),
            device_core: self.sharing.clone().unwrap_or_else(|| {
                format!("device core: CPU {}, claimed for this exec alone", self.device_cpu)
            }),
            fetch_ns,
            device_model_ns: per(stats.model_ns, stats.posted),
            strategy_hold_ns: per(stats.hold_ns, stats.covered),
            interrupt_ns,
            handler_ns,
            wake_ns,
            machine_ns: fetch_ns + interrupt_ns + handler_ns + wake_ns,
            waiter_spin_cpu_ns: w.spun_ns,
            spin_hits: w.spin_hits,
            sleeps: w.sleeps,
            device_rings: w.rings,
            device_parks: self.fetch.parks.load(Relaxed),
        };
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
            cost,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use host::poll::Mode;

    #[test]
    fn the_sleep_strategies_are_refused_and_the_others_applied() {
        for m in Mode::ALL {
            let s = host::mechanism::Settings {
                completion: Some(m),
                ..Default::default()
            };
            let refused = RouteOptions::unapplied(&s);
            let sleeps = matches!(m, Mode::Pas | Mode::Dpas | Mode::Ehp | Mode::HybridIopoll);
            let central = m == Mode::Central;
            assert_eq!(refused.is_some(), sleeps || central, "{m}: {refused:?}");
            if let Some(e) = refused {
                let names = if central { "sim" } else { "run" };
                assert!(e.contains(m.as_str()) && e.contains(names), "{e}");
            }
        }
        assert_eq!(RouteOptions::unapplied(&Default::default()), None);
    }
}
