//! The typed job: one fio job (one clone of it, after `numjobs`) with fio's
//! defaults filled in.

use std::fmt;
use std::sync::Arc;

/// fio's `rw` (alias `readwrite`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RwMode {
    /// Sequential reads (fio's default).
    #[default]
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (`rw` or `readwrite`).
    ReadWrite,
    RandRw,
}

impl RwMode {
    /// Parses fio's spelling. `trim`, `randtrim`, `trimwrite` are real fio
    /// modes but unsupported (no trims are modelled).
    pub fn parse(s: &str) -> Option<RwMode> {
        Some(match s {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "rw" | "readwrite" => RwMode::ReadWrite,
            "randrw" => RwMode::RandRw,
            _ => return None,
        })
    }

    /// Random offsets rather than sequential.
    pub fn is_random(self) -> bool {
        matches!(self, RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw)
    }

    /// Issues reads.
    pub fn reads(self) -> bool {
        !matches!(self, RwMode::Write | RwMode::RandWrite)
    }

    /// Issues writes.
    pub fn writes(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }

    /// Reads and writes mixed by `rwmixread`.
    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::ReadWrite | RwMode::RandRw)
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
        })
    }
}

/// The I/O engines whose system calls TOS Table 1 covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// `read(2)`/`write(2)` (fio's `sync`).
    Sync,
    /// `pread(2)`/`pwrite(2)`; fio's default on Linux.
    #[default]
    Psync,
    /// `readv(2)`/`writev(2)`.
    Vsync,
    /// `preadv(2)`/`pwritev(2)`.
    Pvsync,
    /// `preadv2(2)`/`pwritev2(2)`, which take RWF flags.
    Pvsync2,
    /// `io_submit(2)` / `io_getevents(2)`.
    Libaio,
    /// `io_uring_enter(2)`.
    IoUring,
    /// fio's `null` engine: no system call and no device; every request
    /// completes at once (engines/null.c: `null_queue` queues it,
    /// `null_commit` turns every queued request into an event,
    /// `null_getevents` returns them). It queues and commits like an
    /// asynchronous engine, so `iodepth` holds (at iodepth 1 fio marks it
    /// FIO_SYNCIO, the same loop at depth one). Here its requests go to a
    /// device that completes them at once: the emulator's null backend with
    /// no latency, and in the simulator the run's device profile (the
    /// simulator has one device per run).
    Null,
    /// fio's `cpuio` engine: no I/O at all; the job burns CPU
    /// (engines/cpu.c). Each of its "I/Os" spins `cpuchunks` microseconds
    /// of user time (`usec_spin`), and fio's `fio_cpuio_init` makes it
    /// think `cpuchunks * (100 - cpuload) / cpuload` microseconds after
    /// every one (`thinktime_blocks = 1`, sleeping, not spinning): the
    /// thread keeps `cpuload` percent of a core busy in cycles of
    /// `cpuchunks` (HOWTO: "cpuload only loads a single CPU at the desired
    /// rate"). The engine is FIO_SYNCIO | FIO_DISKLESSIO | FIO_NOIO.
    Cpuio,
}

/// fio's default `cpuchunks` (engines/cpu.c: `.def = "50000"`, in
/// microseconds).
pub const CPUCHUNKS_DEFAULT_US: u64 = 50_000;

impl Engine {
    /// Names accepted by `ioengine=`, in the order error messages list them.
    pub const NAMES: &'static str =
        "sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, null, cpuio";

    pub fn parse(s: &str) -> Option<Engine> {
        Some(match s {
            "sync" => Engine::Sync,
            "psync" => Engine::Psync,
            "vsync" => Engine::Vsync,
            "pvsync" => Engine::Pvsync,
            "pvsync2" => Engine::Pvsync2,
            "libaio" => Engine::Libaio,
            "io_uring" => Engine::IoUring,
            "null" => Engine::Null,
            "cpuio" => Engine::Cpuio,
            _ => return None,
        })
    }

    /// The caller blocks in each I/O system call; fio caps iodepth at 1.
    pub fn is_sync(self) -> bool {
        !self.is_async()
    }

    /// Submission and completion are separate calls (libaio, io_uring; fio's
    /// null engine queues, commits and gets events the same way).
    pub fn is_async(self) -> bool {
        matches!(self, Engine::Libaio | Engine::IoUring | Engine::Null)
    }

    /// The engine can pass per-request RWF flags (`nowait`, and in the
    /// authors' kernel RWF_URGENT / RWF_BARRIER).
    /// The job does no I/O (fio's FIO_NOIO engines: `cpuio`).
    pub fn is_noio(self) -> bool {
        self == Engine::Cpuio
    }

    pub fn takes_rwf_flags(self) -> bool {
        matches!(self, Engine::Pvsync2 | Engine::Libaio | Engine::IoUring)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Engine::Sync => "sync",
            Engine::Psync => "psync",
            Engine::Vsync => "vsync",
            Engine::Pvsync => "pvsync",
            Engine::Pvsync2 => "pvsync2",
            Engine::Libaio => "libaio",
            Engine::IoUring => "io_uring",
            Engine::Null => "null",
            Engine::Cpuio => "cpuio",
        })
    }
}

/// One entry of fio's `bssplit`: a block size and the percent of I/Os
/// that take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BsSplit {
    pub bs: u64,
    pub perc: u32,
}

/// How a direction's block size is chosen per I/O (fio's `min_bs`,
/// `max_bs`, `bssplit`; io_u.c `get_next_buflen`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockSizes {
    /// `bs`: every I/O the same size.
    Fixed(u64),
    /// `bsrange=MIN-MAX`.
    Range { min: u64, max: u64 },
    /// `bssplit`, sorted by percent as fio sorts it (options.c `bs_cmp`).
    Split(Arc<[BsSplit]>),
}

impl BlockSizes {
    /// fio's `min_bs`.
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { min, .. } => *min,
            BlockSizes::Split(s) => s.iter().map(|e| e.bs).min().unwrap_or(0),
        }
    }

    /// fio's `max_bs`.
    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { max, .. } => *max,
            BlockSizes::Split(s) => s.iter().map(|e| e.bs).max().unwrap_or(0),
        }
    }
}

/// fio's `random_distribution` (HOWTO `random_distribution`; io_u.c
/// `get_next_rand_offset`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Distribution {
    /// Uniform (fio's default).
    #[default]
    Random,
    /// `zipf:THETA[:CENTER]` (lib/zipf.c); THETA defaults to 1.1 (fio.h
    /// `FIO_DEF_ZIPF`).
    Zipf { theta: f64, center: Option<f64> },
    /// `pareto:H[:CENTER]` (lib/zipf.c); H defaults to 0.2 (fio.h
    /// `FIO_DEF_PARETO`).
    Pareto { h: f64, center: Option<f64> },
    /// `normal:DEV[:CENTER]` (alias `gauss`; lib/gauss.c); DEV in percent of
    /// the file, default 0.
    Normal { dev: f64, center: Option<f64> },
    /// `zoned:A/S:...`: A percent of accesses to the next S percent of the
    /// file (io_u.c `__get_next_rand_offset_zoned`).
    Zoned(Arc<[(u32, u32)]>),
    /// `sequence:B,B,...`: these block indices in turn (io_u.c
    /// `__get_next_rand_offset_sequence`); with
    /// [`Job::random_sequence_stride`] the pattern moves on by its length
    /// each cycle.
    Sequence(Arc<[u64]>),
}

impl Eq for Distribution {}

impl std::hash::Hash for Distribution {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
    }
}

/// fio's `cpus_allowed_policy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpusAllowedPolicy {
    /// Every clone may run on every CPU of the set (fio's default).
    #[default]
    Shared,
    /// Each clone gets one CPU of the set, round robin.
    Split,
}

/// Data verification. Only crc32c is modelled (its cost is a checksum over
/// each block read back).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verify {
    Crc32c,
}

/// fio's `rate_process` (HOWTO `rate_process`; backend.c `usec_for_io`):
/// how `rate` and `rate_iops` space a direction's I/Os.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RateProcess {
    /// Evenly: the next I/O is due once the bytes issued so far would have
    /// taken their time at the rate (fio's default).
    #[default]
    Linear,
    /// A Poisson process: each I/O is due an exponentially distributed time
    /// after the one before it in its direction, with mean 1/IOPS (fio's
    /// `last_usec += (1000000 / iops) * -log(U)`, IOPS = bytes per second /
    /// the direction's minimum block size).
    Poisson,
}

impl RateProcess {
    pub fn parse(s: &str) -> Option<RateProcess> {
        Some(match s {
            "linear" => RateProcess::Linear,
            "poisson" => RateProcess::Poisson,
            _ => return None,
        })
    }
}

impl fmt::Display for RateProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RateProcess::Linear => "linear",
            RateProcess::Poisson => "poisson",
        })
    }
}

/// Our per-job override of the marks the application controls (TOS
/// 4.1.2), defined with the marks it gives (`marks::fio`).
pub use marks::CintFlags;

/// One job (one clone after `numjobs`), with every option merged from the
/// `[global]` sections before it and its own section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The section name, or the job's own `name=`.
    pub name: String,
    /// 0..numjobs: which clone of the section this is.
    pub clone_index: usize,
    /// The line of the job's `[section]` header.
    pub section_line: usize,
    /// `numjobs`: how many clones the section produced.
    pub numjobs: u32,

    pub rw: RwMode,
    /// Percent of mixed I/O that reads (`rwmixwrite=x` sets 100-x). Default 50.
    pub rwmixread: u32,
    /// `bs=4k` sets both; `bs=4k,8k` sets read,write. Default 4096.
    pub bs_read: u64,
    pub bs_write: u64,
    /// `bsrange=MIN-MAX[,MIN-MAX]` (read, write): wins over `bs` (fio sets
    /// `min_bs`/`max_bs` from `bs` only where they are unset).
    pub bsrange: [Option<(u64, u64)>; 2],
    /// `bssplit` (read, write): wins over `bsrange` and `bs`.
    pub bssplit: [Option<Arc<[BsSplit]>>; 2],
    /// `blockalign` (alias `ba`; read, write): random offsets are multiples
    /// of it; `None` is the direction's minimum block size (fio's default).
    pub blockalign: [Option<u64>; 2],
    /// `random_distribution`.
    pub distribution: Distribution,
    /// `random_sequence_stride` (default off).
    pub random_sequence_stride: bool,
    /// `rw=randread:N`: a new random offset every N I/Os, sequential in
    /// between (fio's `ddir_seq_nr`, default 1).
    pub rw_seq_nr: u32,
    /// `rw=read:N`: N bytes skipped (or, negative, stepped back) after each
    /// sequential I/O (fio's `ddir_seq_add`).
    pub rw_seq_add: i64,
    /// `nrfiles`: files per job; `size` is divided between them.
    pub nrfiles: u32,
    /// `stonewall` (alias `wait_for_previous`): the job starts once every
    /// job of the sections before it has finished. fio clears it on a
    /// section's clones (init.c, `td_new->o.stonewall = 0`), which start
    /// together; here every clone of the section carries it and
    /// [`crate::serial_order`] waits on earlier sections only.
    pub stonewall: bool,
    /// `wait_for=NAME`: the job starts once every clone of the job NAME,
    /// defined before it, has finished.
    pub wait_for: Option<String>,
    /// `rate` (read, write) in bytes per second; 0 = none. Wins over
    /// `rate_iops` in its direction (init.c `__setup_rate`).
    pub rate: Option<(u64, u64)>,
    /// `size` (alias `filesize`): bytes of the file/device region used.
    pub size: Option<u64>,
    pub offset: u64,
    /// `io_size` (alias `io_limit`): bytes of I/O before the job stops.
    pub io_size: Option<u64>,
    pub number_ios: Option<u64>,
    /// Default 1.
    pub loops: u32,
    pub filename: Option<String>,
    pub directory: Option<String>,

    pub ioengine: Engine,
    /// Default 1; capped at 1 for synchronous engines (with a note).
    pub iodepth: u32,
    /// `iodepth_batch_submit` (alias `iodepth_batch`). Default 1; `0` means
    /// iodepth (fio).
    pub iodepth_batch_submit: u32,
    /// `iodepth_batch_complete_min` (alias `iodepth_batch_complete`).
    /// Default 1; `0` means reap without blocking (fio).
    pub iodepth_batch_complete_min: u32,
    /// Default: `iodepth_batch_complete_min`, as fio does; raised to the
    /// minimum if set below it.
    pub iodepth_batch_complete_max: u32,
    /// `None`: refill as soon as below iodepth (fio's default, = iodepth).
    pub iodepth_low: Option<u32>,

    /// O_DIRECT (`buffered` is the inverse). Default false.
    pub direct: bool,
    /// O_SYNC writes.
    pub sync: bool,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    /// fdatasync after every N writes (0 = never).
    pub fdatasync: u32,
    /// fsync when the job's writes are done.
    pub end_fsync: bool,
    /// RWF_NOWAIT / IOCB nowait (pvsync2, libaio, io_uring).
    pub nowait: bool,
    /// fio's `thread`: the job's clones are threads of fio's own process
    /// (pthread_create), not forked processes (fio's default). The
    /// simulator charges a switch between processes more than one between
    /// threads of a process (a new address space).
    pub thread: bool,

    /// ns; `None` = until the I/O is done (fio's default unit: seconds).
    pub runtime: Option<u64>,
    pub time_based: bool,
    /// ns (default unit seconds).
    pub ramp_time: u64,
    /// ns (default unit seconds).
    pub startdelay: u64,
    /// ns (fio's default unit: microseconds).
    pub thinktime: u64,
    /// Think after every N blocks. Default 1.
    pub thinktime_blocks: u32,
    /// IOPS caps (read, write); 0 in one direction = no cap there.
    pub rate_iops: Option<(u64, u64)>,
    /// `rate_process`: how `rate`/`rate_iops` space the I/Os (default
    /// linear).
    pub rate_process: RateProcess,

    /// Shared by the clones of a section: a 0-8191 list 4,096 times over
    /// would be 256 MiB (issue 12's 200 MB bound).
    pub cpus_allowed: Option<Arc<[usize]>>,
    pub cpus_allowed_policy: CpusAllowedPolicy,

    pub verify: Option<Verify>,
    /// Default true.
    pub do_verify: bool,

    /// The authors' patched-fio libaio option: mark the last request of each
    /// submitted batch Barrier (and the others explicitly unmarked).
    pub barrier: bool,
    pub cint_flags: CintFlags,
    /// Ours: which kernel's default marks apply (`default_marks=`).
    pub default_marks: marks::DefaultMarks,
    /// Ours: marking rules (`mark=RULE`, one a line, in order; the syntax
    /// is the `marks` crate's, as `exec --mark` and `coalesce --mark`
    /// take it). They stand for the application's own patches, after its
    /// flags (`cint_flags`, `barrier`) and before the kernel's defaults.
    pub mark: Vec<marks::Rule>,
    /// Ours, not fio's (`critical=1`, or bare `critical`): the job is
    /// latency-sensitive, FastResponse's criticality tag (Gyawali et al.,
    /// Sec. 3.2: a per-thread flag, `REQ_CRITICAL` on each request it
    /// submits; issue 15). Every request of the job carries it
    /// ([`crate::Io::critical`]). Default false. fio has no such option and
    /// refuses a file that sets it: such files are for cinterrupts only.
    pub critical: bool,
    /// fio's `hipri` (an option of the `pvsync2` and `io_uring` engines,
    /// fio HOWTO): completions are polled, not interrupted. pvsync2 passes
    /// RWF_HIPRI per call; io_uring sets up the ring with IORING_SETUP_IOPOLL.
    /// Linux polls the request's hardware queue while the caller waits
    /// (block/blk-mq.c `blk_poll`); how a front end polls (classic or
    /// hybrid) is its host setting. Default false.
    pub hipri: bool,
    /// fio's cpuio options (engines/cpu.c): `cpuload` percent of a core
    /// (required with `ioengine=cpuio`, at most 100), `cpuchunks` the burn
    /// cycle in microseconds (default 50000), `exit_on_io_done` (stop once
    /// every job that does I/O has finished). `None` unless set.
    pub cpuload: Option<u32>,
    pub cpuchunks: u64,
    pub exit_on_io_done: bool,
    /// fio's io_uring engine options beside `hipri` and `nowait`
    /// ([`Uring`]); every field at fio 3.33's default unless set.
    pub uring: Uring,
}

/// fio 3.33's io_uring engine options (axboe/fio `fio-3.33`,
/// engines/io_uring.c `options[]`; `fio --enghelp=io_uring` lists the same
/// names on this machine). `hipri` (IORING_SETUP_IOPOLL) and `nowait`
/// (RWF_NOWAIT) are [`Job::hipri`] and [`Job::nowait`], shared with the
/// engines that also take them. `cmdprio*` (I/O priorities), `uncached`
/// (RWF_UNCACHED) and `force_async` (IOSQE_ASYNC: an io-wq worker thread
/// issues the request) are refused by the option table: no front end
/// models a request's priority or io-wq. fio accepts these options only
/// with `ioengine=io_uring` ("Bad option" otherwise); so does the parser.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Uring {
    /// `sqthread_poll` (FIO_OPT_STR_SET, default off): the ring is set up
    /// with IORING_SETUP_SQPOLL; a kernel thread takes the SQEs from the
    /// ring, and fio's commit only wakes it when the ring says
    /// IORING_SQ_NEED_WAKEUP, its getevents never calls io_uring_enter
    /// (`fio_ioring_commit`, `fio_ioring_getevents`: `if
    /// (!o->sqpoll_thread) io_uring_enter(...)`): it spins on the CQ ring.
    pub sqthread_poll: bool,
    /// `sqthread_poll_cpu` (FIO_OPT_INT, no default: unset leaves the
    /// thread unpinned; set, IORING_SETUP_SQ_AFF with `sq_thread_cpu`).
    pub sqthread_poll_cpu: Option<u32>,
    /// `registerfiles` (FIO_OPT_STR_SET, default off):
    /// IORING_REGISTER_FILES, each SQE names its file by index with
    /// IOSQE_FIXED_FILE (the kernel's `io_file_get_fixed` instead of an
    /// `fget`/`fput` per request).
    pub registerfiles: bool,
    /// `fixedbufs` (FIO_OPT_STR_SET, default off): IORING_REGISTER_BUFFERS
    /// at setup, READ_FIXED/WRITE_FIXED (no page pinning per request).
    pub fixedbufs: bool,
    /// `nonvectored` (FIO_OPT_INT, `.def = "-1"`): `None` is fio's -1,
    /// "probe" (`fio_ioring_probe`: IORING_OP_READ/WRITE when the kernel
    /// has them, else READV/WRITEV); `Some(true)` READ/WRITE, `Some(false)`
    /// READV/WRITEV. The opcode only: the same request reaches the device.
    pub nonvectored: Option<bool>,
}

impl Default for Job {
    /// fio's defaults.
    fn default() -> Self {
        Job {
            name: String::new(),
            clone_index: 0,
            section_line: 0,
            numjobs: 1,
            rw: RwMode::Read,
            rwmixread: 50,
            bs_read: 4096,
            bs_write: 4096,
            bsrange: [None, None],
            bssplit: [None, None],
            blockalign: [None, None],
            distribution: Distribution::Random,
            random_sequence_stride: false,
            rw_seq_nr: 1,
            rw_seq_add: 0,
            nrfiles: 1,
            rate: None,
            stonewall: false,
            wait_for: None,
            size: None,
            offset: 0,
            io_size: None,
            number_ios: None,
            loops: 1,
            filename: None,
            directory: None,
            ioengine: Engine::Psync,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 1,
            iodepth_low: None,
            direct: false,
            sync: false,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            nowait: false,
            thread: false,
            runtime: None,
            time_based: false,
            ramp_time: 0,
            startdelay: 0,
            thinktime: 0,
            thinktime_blocks: 1,
            rate_iops: None,
            rate_process: RateProcess::Linear,
            cpus_allowed: None,
            cpus_allowed_policy: CpusAllowedPolicy::Shared,
            verify: None,
            do_verify: true,
            barrier: false,
            cint_flags: CintFlags::Default,
            default_marks: marks::DefaultMarks::Table1,
            mark: Vec::new(),
            critical: false,
            hipri: false,
            cpuload: None,
            cpuchunks: CPUCHUNKS_DEFAULT_US,
            exit_on_io_done: false,
            uring: Uring::default(),
        }
    }
}

impl Job {
    /// Percent of I/Os that read: `rwmixread` for mixed modes, else 100 or 0.
    pub fn read_percent(&self) -> u32 {
        match self.rw {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::Write | RwMode::RandWrite => 0,
            RwMode::ReadWrite | RwMode::RandRw => self.rwmixread,
        }
    }

    /// How the block size of an I/O in this direction is chosen: `bssplit`,
    /// else `bsrange`, else `bs` (fio's precedence: fixup_options fills
    /// `min_bs`/`max_bs` from `bs` only where nothing set them).
    pub fn block_sizes(&self, write: bool) -> BlockSizes {
        let d = usize::from(write);
        if let Some(split) = &self.bssplit[d] {
            return BlockSizes::Split(split.clone());
        }
        if let Some((min, max)) = self.bsrange[d] {
            return BlockSizes::Range { min, max };
        }
        BlockSizes::Fixed(if write { self.bs_write } else { self.bs_read })
    }

    /// The largest I/O this job issues in either direction: what a buffer
    /// must hold.
    pub fn max_block_size(&self) -> u64 {
        self.block_sizes(false)
            .max()
            .max(self.block_sizes(true).max())
    }

    /// The CPUs this clone may run on, after `cpus_allowed_policy=split`.
    pub fn cpus(&self) -> Option<Vec<usize>> {
        let set = self.cpus_allowed.as_ref()?;
        match self.cpus_allowed_policy {
            CpusAllowedPolicy::Shared => Some(set.to_vec()),
            CpusAllowedPolicy::Split if set.is_empty() => Some(Vec::new()),
            CpusAllowedPolicy::Split => Some(vec![set[self.clone_index % set.len()]]),
        }
    }
}
