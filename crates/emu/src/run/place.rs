//! Where everything runs, checked before any thread starts: the device
//! thread's CPU, each job thread's core (and so its queue pair), the
//! backend, and the part of the file each job addresses.

use jobs::Job;
use policy::{cid, format_nanos, Nanos};
use report::human::cpu_list;

use crate::backend::path::{free_bytes, inspect, Found};
use crate::backend::{BackendSpec, Kind};
use crate::config::EmuConfig;
use crate::error::EmuError;
use crate::run::target::{self, StandIn};
use crate::sys;
use crate::worker::WorkerSpec;

#[derive(Clone, Debug)]
pub(crate) struct Placement {
    pub(crate) device_cpu: usize,
    /// The target cores, one queue pair each, ascending.
    pub(crate) cores: Vec<usize>,
    /// Each job's core, by job index.
    pub(crate) core_of: Vec<usize>,
    /// Each job's completion: `None` for interrupts, else how it polls.
    pub(crate) polls: Vec<Option<host::poll::Mode>>,
    /// The cores with a poll queue pair (interrupts off), ascending; their
    /// queue pairs follow those of `cores`.
    pub(crate) poll_cores: Vec<usize>,
    pub(crate) backend: BackendSpec,
    /// Why the backend is not the device the job file names.
    pub(crate) stand_in: Option<StandIn>,
    /// Bytes the jobs address (the largest `offset + size`), if any says.
    pub(crate) need: Option<u64>,
}

impl Placement {
    /// Job `job`'s queue pair: the index of its core in `cores`.
    pub(crate) fn queue_of(&self, job: usize) -> usize {
        let core = self.core_of[job];
        if self.polls[job].is_some() {
            return self.cores.len()
                + self
                    .poll_cores
                    .iter()
                    .position(|&c| c == core)
                    .expect("a poll queue per polling core");
        }
        self.interrupt_queue_of(core)
    }

    /// The queue pair (with interrupts) of `core`.
    pub(crate) fn interrupt_queue_of(&self, core: usize) -> usize {
        self.cores
            .iter()
            .position(|&c| c == core)
            .expect("a queue per core")
    }
}

/// How job `job` learns of its completions under `mode` (`None`:
/// interrupts). As the simulator (`crates/sim/src/world/completion.rs`), the
/// run's mode applies to blocking engines only; `hipri=1` (fio's polled
/// I/O, pvsync2 and io_uring) polls on any engine that takes it: hybrid
/// when the run is hybrid, else classic. The sleep strategies as the
/// simulator applies them: PAS, DPAS and EHP on blocking engines and
/// pvsync2's `hipri` (the DPAS artifact patches the synchronous paths
/// only), HYBRID_IOPOLL on an io_uring `hipri` job's ring (a blocking
/// engine then takes interrupts); the other `hipri` jobs poll classically.
pub(crate) fn polls(job: &Job, mode: host::poll::Mode) -> Option<host::poll::Mode> {
    use host::poll::Mode;
    let waiter = jobs::Waiter::of(job.ioengine);
    let blocking = waiter == jobs::Waiter::Blocking;
    match mode {
        Mode::Pas | Mode::Dpas | Mode::Ehp if blocking => Some(mode),
        Mode::HybridIopoll if job.hipri && waiter == jobs::Waiter::IoUring => Some(mode),
        Mode::Hybrid if job.hipri || blocking => Some(Mode::Hybrid),
        Mode::Poll if blocking => Some(Mode::Poll),
        Mode::SelectIsr if blocking && job.critical => Some(Mode::Poll),
        _ if job.hipri => Some(Mode::Poll),
        _ => None,
    }
}

fn job_error(job: &Job, reason: impl Into<String>) -> EmuError {
    EmuError::Job(jobs::Refused::new(job, reason))
}

/// The shortest run the emulator measures: the thread that cuts the
/// measured window looks every millisecond (`run/window.rs`), so a shorter
/// window is below its resolution (issue 12: `--runtime 1ns` gave IOPS=0
/// and exit 0).
pub const MIN_RUNTIME: Nanos = 1_000_000;

/// Bytes of data buffers all the job threads may hold (one per request in
/// flight, iodepth x bs each): issue 12 bounds a command at 200 MB, and a
/// run's own memory besides its buffers is about 10 MB here (`/usr/bin/time
/// -f %M cinterrupts run examples/mixed-16.fio --backend null:10us`: 9 MB).
pub const MAX_BUFFER_BYTES: u64 = 128 << 20;

pub(crate) fn place(jobs: &[Job], cfg: &EmuConfig) -> Result<Placement, EmuError> {
    if jobs.is_empty() {
        return Err(EmuError::Config("the job file has no jobs".into()));
    }
    if let Some(r) = cfg.runtime.filter(|&r| r < MIN_RUNTIME) {
        return Err(EmuError::Config(format!(
            "--runtime {}: shorter than {}, the emulator's window resolution; nothing could be measured",
            format_nanos(r),
            format_nanos(MIN_RUNTIME)
        )));
    }
    // Tags per queue pair: the CID's tag bits (`policy::cid`), whatever the
    // caller asked.
    let queue_depth = cfg.queue_depth.clamp(1, cid::MAX_TAGS as u32);
    let mut buffers = 0u64;
    for job in jobs {
        if job.fsync > 0 || job.fdatasync > 0 || job.end_fsync {
            return Err(job_error(job, "fsync/fdatasync are not emulated yet"));
        }
        let bounds = job.bounds(cfg.runtime).map_err(|r| job_error(job, r))?;
        if let Some(r) = bounds.runtime.filter(|&r| r < MIN_RUNTIME) {
            return Err(job_error(
                job,
                format!(
                    "option 'runtime': {} is shorter than {}, the emulator's window resolution; nothing could be measured",
                    format_nanos(r),
                    format_nanos(MIN_RUNTIME)
                ),
            ));
        }
        let depth = job.io_loop().iodepth;
        if depth > queue_depth {
            return Err(job_error(job, depth_error(depth, queue_depth)));
        }
        buffers = buffers.saturating_add(
            u64::from(depth).saturating_mul(job.max_block_size().div_ceil(4096) * 4096),
        );
        if buffers > MAX_BUFFER_BYTES {
            return Err(job_error(
                job,
                format!(
                    "option 'iodepth': iodepth={depth} with bs={} brings the jobs' data buffers (one per request in flight) over {}, the emulator's bound",
                    job.max_block_size(),
                    report::human::num2str(MAX_BUFFER_BYTES, 3, true, "B")
                ),
            ));
        }
        if job.verify.is_some() && job.do_verify && !job.rw.writes() {
            return Err(job_error(
                job,
                "verify=crc32c checks what the job writes, and this job only reads",
            ));
        }
    }
    let target::Target {
        spec: backend,
        stand_in,
    } = target::choose(jobs, cfg)?;
    if let Kind::File { .. } = backend.kind {
        for job in jobs {
            // Every size the job can draw: a range's are multiples of its
            // minimum, a split's are its entries.
            let sizes = |write: bool| -> Vec<u64> {
                match job.block_sizes(write) {
                    jobs::BlockSizes::Fixed(b) => vec![b],
                    jobs::BlockSizes::Range { min, .. } => vec![min],
                    jobs::BlockSizes::Split(s) => s.iter().map(|e| e.bs).collect(),
                }
            };
            let all = sizes(false)
                .into_iter()
                .map(|b| ("bs (read)", b))
                .chain(sizes(true).into_iter().map(|b| ("bs (write)", b)));
            for (name, bs) in all {
                if bs % 512 != 0 {
                    return Err(job_error(
                        job,
                        format!("{name}={bs} is not a multiple of 512, which O_DIRECT needs"),
                    ));
                }
            }
            if job.offset % 4096 != 0 {
                return Err(job_error(job, "offset= must be 4 KiB aligned for O_DIRECT"));
            }
        }
    }
    for job in jobs {
        if job.verify.is_some() && job.do_verify && !backend.keeps_data() {
            return Err(job_error(
                job,
                format!(
                    "verify=crc32c needs data, and {} keeps none; use --backend file:PATH",
                    match backend.kind {
                        Kind::Timed { .. } => "a modelled device (--device)",
                        _ => "the null backend",
                    }
                ),
            ));
        }
    }
    let allowed = sys::allowed_cpus();
    if allowed.len() < 2 {
        return Err(EmuError::Config(format!(
            "the emulator needs 2 CPUs (one for the device thread), and this process may use {}",
            allowed.len()
        )));
    }
    let named: Vec<usize> = jobs.iter().filter_map(|j| j.cpus()).flatten().collect();
    let device_cpu = match cfg.device_cpu {
        Some(c) if !allowed.contains(&c) => {
            return Err(EmuError::Config(format!(
                "--device-cpu {c}: not a CPU this process may use ({})",
                cpu_list(&allowed)
            )))
        }
        Some(c) => c,
        None => *allowed
            .iter()
            .rev()
            .find(|c| !named.contains(c))
            .unwrap_or(allowed.last().expect("two CPUs")),
    };
    let mut load = vec![0usize; allowed.iter().max().map_or(0, |m| m + 1)];
    let mut core_of = Vec::with_capacity(jobs.len());
    for job in jobs {
        let set = job.cpus().unwrap_or_else(|| allowed.clone());
        if let Some(bad) = set.iter().find(|c| !allowed.contains(c)) {
            return Err(job_error(
                job,
                format!(
                    "cpus_allowed: CPU {bad} is not available here ({})",
                    cpu_list(&allowed)
                ),
            ));
        }
        let usable: Vec<usize> = set.into_iter().filter(|&c| c != device_cpu).collect();
        // No migration: the least-loaded CPU of the set, as the simulator.
        let Some(&core) = usable.iter().min_by_key(|&&c| (load[c], c)) else {
            return Err(job_error(
                job,
                format!(
                    "cpus_allowed leaves no CPU beside the device thread's CPU {device_cpu}; pick another with --device-cpu"
                ),
            ));
        };
        load[core] += 1;
        core_of.push(core);
    }
    let mut cores = core_of.clone();
    cores.sort_unstable();
    cores.dedup();
    let polls: Vec<_> = jobs.iter().map(|j| polls(j, cfg.completion)).collect();
    let mut poll_cores: Vec<usize> = core_of
        .iter()
        .zip(&polls)
        .filter(|(_, p)| p.is_some())
        .map(|(&c, _)| c)
        .collect();
    poll_cores.sort_unstable();
    poll_cores.dedup();
    let largest = jobs
        .iter()
        .filter_map(|j| j.size.map(|s| (j.offset.saturating_add(s), j)))
        .max_by_key(|&(n, _)| n);
    let need = largest.map(|(n, _)| n);
    if let (Kind::File { path }, Some((n, job))) = (&backend.kind, largest) {
        room_for(path, n).map_err(|r| job_error(job, format!("option 'size': {r}")))?;
    }
    Ok(Placement {
        device_cpu,
        cores,
        core_of,
        polls,
        poll_cores,
        backend,
        stand_in,
        need,
    })
}

/// A job deeper than its queue pair could never have its depth in flight:
/// it would wait for tags and lose throughput without a word (issue 12:
/// iodepth=1025 to 32768), or, past the buffers it can hold, do nothing.
/// Refused as the simulator refuses a depth over its device's queue.
fn depth_error(depth: u32, queue_depth: u32) -> String {
    if depth as usize > cid::MAX_TAGS {
        format!(
            "option 'iodepth': {depth} is more than the emulator's {} commands per queue (the tag bits of the 16-bit command id, beside Urgent, Barrier and reaped; NVMe itself allows at most 65536 entries per queue, CAP.MQES)",
            cid::MAX_TAGS
        )
    } else {
        format!(
            "option 'iodepth': {depth} is more than the queue depth {queue_depth}, so the job could never have that many in flight; pass --queue-depth {depth} (at most {})",
            cid::MAX_TAGS
        )
    }
}

/// Refuses a layout the filesystem has no room for before a byte is
/// written (issue 12: `size=100p` wrote 13.8 GB, and filled a small
/// filesystem to ENOSPC).
fn room_for(path: &std::path::Path, need: u64) -> Result<(), String> {
    let len = match inspect(path) {
        Ok(Found::Regular { len }) => len,
        Ok(Found::Missing) => 0,
        // Devices have their size; the rest fails when opened.
        _ => return Ok(()),
    };
    if need <= len {
        return Ok(());
    }
    let free = free_bytes(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if need - len > free {
        let b = |n: u64| report::human::num2str(n, 3, true, "B");
        return Err(format!(
            "laying out {} of {} takes {} more, and its filesystem has {} free",
            b(need),
            path.display(),
            b(need - len),
            b(free)
        ));
    }
    Ok(())
}

/// The job threads, once the backend's size is known.
pub(crate) fn worker_specs(
    jobs: &[Job],
    size: u64,
    cfg: &EmuConfig,
) -> Result<Vec<WorkerSpec>, EmuError> {
    let order = jobs::serial_order(jobs).map_err(|(i, reason)| job_error(&jobs[i], reason))?;
    jobs.iter()
        .zip(order)
        .enumerate()
        .map(|(i, (job, after))| {
            let len = job.size.unwrap_or(size.saturating_sub(job.offset));
            if job.offset + len > size || len < job.max_block_size() {
                return Err(job_error(
                    job,
                    format!(
                        "offset={} size={len} does not fit the {size}-byte device",
                        job.offset
                    ),
                ));
            }
            Ok(WorkerSpec {
                owner: i as u32,
                job: job.clone(),
                bounds: job.bounds(cfg.runtime).map_err(|r| job_error(job, r))?,
                region: (job.offset, len),
                seed: cfg.seed,
                verify: job.verify.is_some() && job.do_verify,
                after: after.into_iter().map(|k| k as u32).collect(),
            })
        })
        .collect()
}
