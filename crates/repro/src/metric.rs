//! The numbers a panel or a claim reads off a run, named the way the claims
//! file writes them: `irq_rate`, `iops:sync`, `lat_us:sync`, `cpu`.

use std::fmt;

use report::RunReport;

#[derive(Clone, Debug, PartialEq)]
pub enum Metric {
    /// All jobs' IOPS.
    TotalIops,
    /// IOPS of the jobs with this name (all clones).
    Iops(String),
    /// Mean completion latency of the jobs with this name, us.
    LatUs(String),
    /// 99th-percentile completion latency of the jobs with this name, us
    /// (the worst clone's).
    P99Us(String),
    /// Interrupts per second.
    IrqRate,
    /// Interrupt CPU time per interrupt, ns (TOS 2, Figs 3 and 4; the
    /// calibration's own reading, `sim::calibrate::irq_ns`).
    IrqNs,
    /// The busiest core's interrupt time over its busy time, percent (TOS
    /// 2, Fig 3; `sim::calibrate::irq_share`).
    IrqShare,
    /// Busy share of the workload cores (user + kernel + irq), percent.
    Cpu,
    /// Share of the window the jobs with this name ran (user + kernel),
    /// percent of one core (TOS Fig 21).
    CpuShare(String),
    /// The jobs with this name's part of all jobs' CPU time (user +
    /// kernel), percent: how the processes split the core between them.
    /// TOS Fig 21 reads it so: the authors' kernel has
    /// CONFIG_IRQ_TIME_ACCOUNTING=y (artifact linux-kernel/config-file), so
    /// a process's time leaves the interrupts out, and "a fair schedule
    /// would enable each thread to get nearly 50%" is the split.
    CpuSplit(String),
    /// Completion inter-arrival at this fraction (0.9 = p90), us.
    GapUs(f64),
    /// 99.9th-percentile completion latency of the jobs with this name, us
    /// (the worst clone's; FR Figs 4, 12).
    P999Us(String),
    /// All jobs' bytes per second, MB/s (10^6; FR Fig 6).
    TotalMbs,
    /// FastResponse's T_Dev of the jobs with this name: mean time at the
    /// device per request, us (FR 2.2 Fig 5a, 4.4 Fig 15a).
    TDevUs(String),
    /// FastResponse's T_Sched: mean wait from the wake-up to running per
    /// request, us (0 for polled requests).
    TSchedUs(String),
    /// Requests at the device, time-weighted over the window: mean, p99
    /// and max (FR Fig 16).
    QdMean,
    QdP99,
    QdMax,
    /// fio's `sync` latency of the jobs with this name (the fsync call
    /// alone): mean, p99, p99.9 (the worst clone's), us (FR Fig 13).
    SyncLatUs(String),
    SyncP99Us(String),
    SyncP999Us(String),
    /// A put's mean response time, us: the mean write (the page cache's
    /// time) plus the mean fsync, as FR's fillsync puts are a write and an
    /// fsync (FR Figs 4b, 13).
    PutUs(String),
    /// FR's fsync breakdown of the jobs with this name (FR Figs 5b, 15b),
    /// per fsync, from the simulator's `cinterrupts.fsync[]`.
    Fsync(FsyncPart, String),
    /// An application run's operations (issue 16, `report::AppsReport`),
    /// selected by `INSTANCE` (its foreground operations of every kind) or
    /// `INSTANCE/KIND` (`kvell/scan`, `rocks/read`, `dump/background`):
    /// operations per second, items per second (a scan's keys, a batch's
    /// keys), mean, p50 and p99 latency in us.
    OpsPerSec(String),
    ItemsPerSec(String),
    OpLatUs(String),
    OpP50Us(String),
    OpP99Us(String),
    /// Idle share of these cores (`0-1`, `0,2`) in the window, percent,
    /// averaged over them (TOS 5.4.2's idleness).
    IdlePct(String),
    /// Median completion latency of the jobs with this name, us (the worst
    /// clone's).
    P50Us(String),
    /// The jobs with this name's CPU time (user + kernel, spinning
    /// included) per I/O they completed, us.
    CpuUsPerIo(String),
    /// An io_uring job's wake-ups per I/O (issue 25): the simulator's
    /// io_uring note counts them (`sim::uring`, `job 'NAME' STRATEGY: N
    /// wake-ups`); over the job's I/Os in the window. None without the
    /// note (the emulator's runs, other engines).
    WakeupsPerIo(String),
    /// The largest completion latency of the jobs with this name, us (the
    /// worst clone's; fio's clat `max`; Kristo's cover letters, issue 37).
    MaxUs(String),
    /// Idle-state exit latency paid per I/O of every job, us (the
    /// simulator's `idle.idle_exit_ns` over the window's I/Os; 0 with idle
    /// states off, none from the emulator).
    IdleExitUsPerIo,
    /// Idle-state exit latency per wake-up that paid one, us (how deep
    /// the cores slept; none with idle states off).
    IdleExitUsPerWakeup,
    /// One of the field's metrics of the whole run (`report::field`,
    /// issue 40 item 4).
    Field(FieldPart),
}

/// The field's metrics (`report::Field`), each of the whole run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldPart {
    /// Operations per second (I/Os, or an application's operations).
    OpsPerSec,
    /// Operations per second per CPU busy (DPAS's).
    OpsPerCpu,
    /// The workload cores' busy time in cores.
    Cpus,
    CyclesPerIo,
    P50Us,
    P99Us,
    P999Us,
    WakeupsPerIo,
}

impl FieldPart {
    const ALL: [FieldPart; 8] = [
        FieldPart::OpsPerSec,
        FieldPart::OpsPerCpu,
        FieldPart::Cpus,
        FieldPart::CyclesPerIo,
        FieldPart::P50Us,
        FieldPart::P99Us,
        FieldPart::P999Us,
        FieldPart::WakeupsPerIo,
    ];

    /// The metric's name: `field_ops_per_s`, `field_ops_per_cpu`,
    /// `field_cpus`, `field_cycles_per_io`, `field_p50_us`,
    /// `field_p99_us`, `field_p999_us`, `field_wakeups_per_io`.
    pub fn name(self) -> &'static str {
        match self {
            FieldPart::OpsPerSec => "field_ops_per_s",
            FieldPart::OpsPerCpu => "field_ops_per_cpu",
            FieldPart::Cpus => "field_cpus",
            FieldPart::CyclesPerIo => "field_cycles_per_io",
            FieldPart::P50Us => "field_p50_us",
            FieldPart::P99Us => "field_p99_us",
            FieldPart::P999Us => "field_p999_us",
            FieldPart::WakeupsPerIo => "field_wakeups_per_io",
        }
    }

    fn of(self, f: &report::Field) -> Option<f64> {
        match self {
            FieldPart::OpsPerSec => Some(f.ops_per_sec),
            FieldPart::OpsPerCpu => f.ops_per_sec_per_cpu,
            FieldPart::Cpus => Some(f.cpus_busy),
            FieldPart::CyclesPerIo => f.cycles_per_io,
            FieldPart::P50Us => f.p50_us,
            FieldPart::P99Us => f.p99_us,
            FieldPart::P999Us => f.p99_9_us,
            FieldPart::WakeupsPerIo => f.wakeups_per_io,
        }
    }

    fn unit(self) -> &'static str {
        match self {
            FieldPart::OpsPerSec => "operations/s",
            FieldPart::OpsPerCpu => "operations/s per CPU",
            FieldPart::Cpus => "CPUs busy",
            FieldPart::CyclesPerIo => "cycles per I/O",
            FieldPart::P50Us | FieldPart::P99Us | FieldPart::P999Us => "us",
            FieldPart::WakeupsPerIo => "wake-ups per I/O",
        }
    }
}

/// The wake-ups the simulator's io_uring note gives the job `name` (its
/// clones together): `io_uring (host::uring): job 'NAME' STRATEGY: N
/// wake-ups (...)`.
fn uring_wakeups(r: &RunReport, name: &str) -> Option<u64> {
    // The emulator's (`run --uring`): its io_uring jobs' wake-ups together
    // (the experiments that read this have one io_uring job).
    if let Some(u) = &r.uring {
        return Some(u.wakeups);
    }
    let note = r
        .notes
        .iter()
        .find_map(|n| n.strip_prefix("io_uring (host::uring): "))?;
    let at = note.find(&format!("job '{name}' "))?;
    let rest = &note[at..];
    let colon = rest.find(": ")?;
    let count = rest[colon + 2..].split(' ').next()?;
    rest[colon + 2..]
        .strip_prefix(count)?
        .starts_with(" wake-ups")
        .then(|| count.parse().ok())?
}

/// The operations of an application run a selector names (see
/// [`Metric::OpsPerSec`]): one kind, or every foreground kind of an
/// instance (its `all` entry, which the simulator adds beside the kinds,
/// carries their joint percentiles).
fn ops_of<'a>(r: &'a RunReport, sel: &str) -> Vec<&'a report::OpReport> {
    let Some(apps) = r.apps.as_ref() else {
        return Vec::new();
    };
    match sel.split_once('/') {
        Some((inst, kind)) => apps
            .ops
            .iter()
            .filter(|o| o.name == inst && o.kind == kind)
            .collect(),
        None => apps
            .ops
            .iter()
            .filter(|o| o.name == sel && !o.background && o.kind != "all")
            .collect(),
    }
}

/// The joint entry of an instance's foreground operations (`all`), or the
/// one kind when there is one.
fn joint<'a>(r: &'a RunReport, sel: &str) -> Option<&'a report::OpReport> {
    if sel.contains('/') {
        let v = ops_of(r, sel);
        return (v.len() == 1).then(|| v[0]);
    }
    let apps = r.apps.as_ref()?;
    apps.ops
        .iter()
        .find(|o| o.name == sel && o.kind == "all" && !o.background)
        .or_else(|| {
            let v = ops_of(r, sel);
            (v.len() == 1).then(|| v[0])
        })
}

/// `0-1` or `0,2,3` as a list of cores.
fn cores_of(sel: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in sel.split(',') {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.trim().parse::<usize>().ok()?..=b.trim().parse().ok()?),
            None => out.push(part.trim().parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// One field of FR's per-fsync breakdown (`report::FsyncBreakdown`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsyncPart {
    /// T_D1: the file's own data, us.
    D1,
    /// T_D2: other files' data in the compound transaction, us.
    D2,
    /// T_JD: the journal blocks, us.
    Jd,
    /// T_JC: the commit block, us.
    Jc,
    /// T_Sched: wake-ups of JBD2 or the caller to their getting the CPU, us.
    Sched,
    /// Context switches per fsync.
    Switches,
    /// Device I/Os per fsync.
    Ios,
}

impl FsyncPart {
    const ALL: [FsyncPart; 7] = [
        FsyncPart::D1,
        FsyncPart::D2,
        FsyncPart::Jd,
        FsyncPart::Jc,
        FsyncPart::Sched,
        FsyncPart::Switches,
        FsyncPart::Ios,
    ];

    /// The metric's name: `t_d1_us`, ..., `fsync_sched_us`,
    /// `switches_per_fsync`, `ios_per_fsync`.
    pub fn name(self) -> &'static str {
        match self {
            FsyncPart::D1 => "t_d1_us",
            FsyncPart::D2 => "t_d2_us",
            FsyncPart::Jd => "t_jd_us",
            FsyncPart::Jc => "t_jc_us",
            FsyncPart::Sched => "fsync_sched_us",
            FsyncPart::Switches => "switches_per_fsync",
            FsyncPart::Ios => "ios_per_fsync",
        }
    }

    fn of(self, b: &report::FsyncBreakdown) -> f64 {
        match self {
            FsyncPart::D1 => b.d1_us,
            FsyncPart::D2 => b.d2_us,
            FsyncPart::Jd => b.jd_us,
            FsyncPart::Jc => b.jc_us,
            FsyncPart::Sched => b.sched_us,
            FsyncPart::Switches => b.switches_per_fsync,
            FsyncPart::Ios => b.ios_per_fsync,
        }
    }
}

impl Metric {
    /// `irq_rate`, `total_iops`, `cpu`, `iops:JOB`, `lat_us:JOB`,
    /// `p99_us:JOB`, `cpu_share:JOB`, `cpu_split:JOB`, `gap_us:90`,
    /// `p999_us:JOB`, `total_mbs`, `t_dev_us:JOB`, `t_sched_us:JOB`,
    /// `qd_mean`, `qd_p99`, `qd_max`, `sync_lat_us:JOB`, `sync_p99_us:JOB`,
    /// `sync_p999_us:JOB`, `put_us:JOB`, and the fsync breakdown's
    /// `t_d1_us:JOB`, `t_d2_us:JOB`, `t_jd_us:JOB`, `t_jc_us:JOB`,
    /// `fsync_sched_us:JOB`, `switches_per_fsync:JOB`, `ios_per_fsync:JOB`;
    /// `p50_us:JOB`, `cpu_us_per_io:JOB` and the io_uring job's
    /// `wakeups_per_io:JOB` (issue 25).
    pub fn parse(s: &str) -> Result<Metric, String> {
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let job = || {
            arg.filter(|a| !a.is_empty())
                .map(str::to_string)
                .ok_or_else(|| format!("metric '{s}' needs a job: {name}:JOB"))
        };
        Ok(match name {
            "total_iops" => Metric::TotalIops,
            "irq_rate" => Metric::IrqRate,
            "irq_ns" => Metric::IrqNs,
            "irq_share" => Metric::IrqShare,
            "cpu" => Metric::Cpu,
            "iops" => Metric::Iops(job()?),
            "lat_us" => Metric::LatUs(job()?),
            "p99_us" => Metric::P99Us(job()?),
            "cpu_share" => Metric::CpuShare(job()?),
            "cpu_split" => Metric::CpuSplit(job()?),
            "p999_us" => Metric::P999Us(job()?),
            "total_mbs" => Metric::TotalMbs,
            "t_dev_us" => Metric::TDevUs(job()?),
            "t_sched_us" => Metric::TSchedUs(job()?),
            "qd_mean" => Metric::QdMean,
            "qd_p99" => Metric::QdP99,
            "qd_max" => Metric::QdMax,
            "sync_lat_us" => Metric::SyncLatUs(job()?),
            "sync_p99_us" => Metric::SyncP99Us(job()?),
            "sync_p999_us" => Metric::SyncP999Us(job()?),
            "put_us" => Metric::PutUs(job()?),
            "ops_per_s" => Metric::OpsPerSec(job()?),
            "items_per_s" => Metric::ItemsPerSec(job()?),
            "op_lat_us" => Metric::OpLatUs(job()?),
            "op_p50_us" => Metric::OpP50Us(job()?),
            "op_p99_us" => Metric::OpP99Us(job()?),
            "p50_us" => Metric::P50Us(job()?),
            "cpu_us_per_io" => Metric::CpuUsPerIo(job()?),
            "wakeups_per_io" => Metric::WakeupsPerIo(job()?),
            "max_us" => Metric::MaxUs(job()?),
            "idle_exit_us_per_io" => Metric::IdleExitUsPerIo,
            "idle_exit_us_per_wakeup" => Metric::IdleExitUsPerWakeup,
            "idle" => {
                let cores = job()?;
                cores_of(&cores).ok_or_else(|| format!("metric '{s}': cores as 0-1 or 0,2"))?;
                Metric::IdlePct(cores)
            }
            n if FieldPart::ALL.iter().any(|p| p.name() == n) => {
                let part = FieldPart::ALL.into_iter().find(|p| p.name() == n);
                Metric::Field(part.expect("found above"))
            }
            n if FsyncPart::ALL.iter().any(|p| p.name() == n) => {
                let part = FsyncPart::ALL.into_iter().find(|p| p.name() == n);
                Metric::Fsync(part.expect("found above"), job()?)
            }
            "gap_us" => {
                let p: f64 = job()?
                    .parse()
                    .map_err(|_| format!("metric '{s}': the percentile is not a number"))?;
                if !(0.0..=100.0).contains(&p) {
                    return Err(format!("metric '{s}': the percentile is outside 0..100"));
                }
                Metric::GapUs(p / 100.0)
            }
            _ => return Err(format!("unknown metric '{s}'")),
        })
    }

    /// The axis label.
    pub fn unit(&self) -> &'static str {
        match self {
            Metric::TotalIops | Metric::Iops(_) => "IOPS",
            Metric::LatUs(_)
            | Metric::P50Us(_)
            | Metric::CpuUsPerIo(_)
            | Metric::P99Us(_)
            | Metric::P999Us(_)
            | Metric::GapUs(_)
            | Metric::TDevUs(_)
            | Metric::TSchedUs(_)
            | Metric::SyncLatUs(_)
            | Metric::SyncP99Us(_)
            | Metric::SyncP999Us(_)
            | Metric::PutUs(_)
            | Metric::OpLatUs(_)
            | Metric::OpP50Us(_)
            | Metric::OpP99Us(_)
            | Metric::MaxUs(_) => "us",
            Metric::IdleExitUsPerIo => "us of idle exit per I/O",
            Metric::IdleExitUsPerWakeup => "us of idle exit per wake-up",
            Metric::OpsPerSec(_) => "operations/s",
            Metric::WakeupsPerIo(_) => "wake-ups per I/O",
            Metric::ItemsPerSec(_) => "items/s",
            Metric::IdlePct(_) => "% idle",
            Metric::Fsync(FsyncPart::Switches, _) => "context switches per fsync",
            Metric::Fsync(FsyncPart::Ios, _) => "device I/Os per fsync",
            Metric::Fsync(..) => "us",
            Metric::TotalMbs => "MB/s",
            Metric::QdMean | Metric::QdP99 | Metric::QdMax => "requests at the device",
            Metric::IrqRate => "interrupts/s",
            Metric::Field(p) => p.unit(),
            Metric::IrqNs => "ns of interrupt CPU per interrupt",
            Metric::IrqShare => "% of the busiest core's busy time in interrupts",
            Metric::Cpu | Metric::CpuShare(_) | Metric::CpuSplit(_) => "% CPU",
        }
    }

    /// The value in one run; `None` where the run has no such job (or
    /// recorded no gaps).
    pub fn of(&self, r: &RunReport) -> Option<f64> {
        let secs = r.duration_ns as f64 / 1e9;
        // The clones of the job `name`; none means the run has no such job.
        let jobs = |name: &str| -> Vec<&report::JobReport> {
            r.jobs.iter().filter(|j| j.name == name).collect()
        };
        match self {
            Metric::TotalIops => Some(r.total_iops()),
            Metric::Field(p) => p.of(&report::Field::of(r)),
            Metric::IrqRate => Some(r.interrupts_per_sec()),
            Metric::IrqNs => (r.interrupts > 0).then(|| sim::calibrate::irq_ns(r)),
            Metric::IrqShare => (!r.cores.is_empty()).then(|| sim::calibrate::irq_share(r)),
            Metric::Cpu => {
                let n = r.cores.len();
                (n > 0)
                    .then(|| 100.0 * r.cores.iter().map(|c| 1.0 - c.idle).sum::<f64>() / n as f64)
            }
            Metric::Iops(name) => {
                let js = jobs(name);
                let ops: u64 = js.iter().map(|j| j.read.io_ops + j.write.io_ops).sum();
                (!js.is_empty() && secs > 0.0).then(|| ops as f64 / secs)
            }
            Metric::LatUs(name) => {
                let (mut n, mut sum) = (0u64, 0.0);
                for j in jobs(name) {
                    for d in [&j.read, &j.write] {
                        n += d.io_ops;
                        sum += d.clat.mean * d.io_ops as f64;
                    }
                }
                (n > 0).then(|| sum / n as f64 / 1e3)
            }
            Metric::P99Us(name) => jobs(name)
                .into_iter()
                .flat_map(|j| [&j.read, &j.write])
                .filter(|d| d.io_ops > 0)
                .map(|d| d.clat.percentile(99.0) as f64 / 1e3)
                .reduce(f64::max),
            Metric::P50Us(name) => jobs(name)
                .into_iter()
                .flat_map(|j| [&j.read, &j.write])
                .filter(|d| d.io_ops > 0)
                .map(|d| d.clat.percentile(50.0) as f64 / 1e3)
                .reduce(f64::max),
            Metric::CpuUsPerIo(name) | Metric::WakeupsPerIo(name) => {
                let js = jobs(name);
                let ios: u64 = js.iter().map(|j| j.read.io_ops + j.write.io_ops).sum();
                let per = match self {
                    Metric::CpuUsPerIo(_) => {
                        js.iter().map(|j| j.usr_ns + j.sys_ns).sum::<u64>() as f64 / 1e3
                    }
                    _ => uring_wakeups(r, name)? as f64,
                };
                (ios > 0).then(|| per / ios as f64)
            }
            Metric::MaxUs(name) => jobs(name)
                .into_iter()
                .flat_map(|j| [&j.read, &j.write])
                .filter(|d| d.io_ops > 0)
                .map(|d| d.clat.max as f64 / 1e3)
                .reduce(f64::max),
            Metric::IdleExitUsPerIo => {
                let ios: u64 = r.jobs.iter().map(|j| j.read.io_ops + j.write.io_ops).sum();
                let exit = match (&r.idle, r.mode) {
                    (Some(i), _) => i.idle_exit_ns,
                    (None, Some(report::Mode::Sim)) => 0,
                    (None, _) => return None,
                };
                (ios > 0).then(|| exit as f64 / 1e3 / ios as f64)
            }
            Metric::IdleExitUsPerWakeup => r
                .idle
                .as_ref()
                .filter(|i| i.exits > 0)
                .map(|i| i.idle_exit_ns as f64 / 1e3 / i.exits as f64),
            Metric::P999Us(name) => jobs(name)
                .into_iter()
                .flat_map(|j| [&j.read, &j.write])
                .filter(|d| d.io_ops > 0)
                .map(|d| d.clat.percentile(99.9) as f64 / 1e3)
                .reduce(f64::max),
            Metric::TotalMbs => {
                let bytes: u64 = r
                    .jobs
                    .iter()
                    .map(|j| j.read.io_bytes + j.write.io_bytes)
                    .sum();
                (secs > 0.0).then(|| bytes as f64 / secs / 1e6)
            }
            Metric::TDevUs(name) | Metric::TSchedUs(name) => {
                let path = r.io_path.as_ref()?;
                let (mut n, mut sum) = (0u64, 0.0);
                for (j, p) in r.jobs.iter().zip(&path.jobs) {
                    if j.name == *name {
                        let v = match self {
                            Metric::TDevUs(_) => p.t_dev_mean_ns,
                            _ => p.t_sched_mean_ns,
                        };
                        n += p.requests;
                        sum += v * p.requests as f64;
                    }
                }
                (n > 0).then(|| sum / n as f64 / 1e3)
            }
            Metric::SyncLatUs(name) => {
                let (mut n, mut sum) = (0u64, 0.0);
                for s in jobs(name).into_iter().filter_map(|j| j.sync.as_ref()) {
                    n += s.lat.samples;
                    sum += s.lat.mean * s.lat.samples as f64;
                }
                (n > 0).then(|| sum / n as f64 / 1e3)
            }
            Metric::SyncP99Us(name) | Metric::SyncP999Us(name) => {
                let p = if matches!(self, Metric::SyncP99Us(_)) {
                    99.0
                } else {
                    99.9
                };
                jobs(name)
                    .into_iter()
                    .filter_map(|j| j.sync.as_ref())
                    .filter(|s| s.lat.samples > 0)
                    .map(|s| s.lat.percentile(p) as f64 / 1e3)
                    .reduce(f64::max)
            }
            Metric::PutUs(name) => {
                let write = {
                    let (mut n, mut sum) = (0u64, 0.0);
                    for j in jobs(name) {
                        n += j.write.io_ops;
                        sum += j.write.clat.mean * j.write.io_ops as f64;
                    }
                    (n > 0).then(|| sum / n as f64 / 1e3)
                };
                Some(write? + Metric::SyncLatUs(name.clone()).of(r)?)
            }
            Metric::Fsync(part, name) => {
                let (mut n, mut sum) = (0u64, 0.0);
                for s in jobs(name).into_iter().filter_map(|j| j.sync.as_ref()) {
                    n += s.breakdown.fsyncs;
                    sum += part.of(&s.breakdown) * s.breakdown.fsyncs as f64;
                }
                (n > 0).then(|| sum / n as f64)
            }
            Metric::QdMean => r.io_path.as_ref().map(|p| p.device_queue.mean),
            Metric::QdP99 => r.io_path.as_ref().map(|p| p.device_queue.p99 as f64),
            Metric::QdMax => r.io_path.as_ref().map(|p| p.device_queue.max as f64),
            Metric::CpuShare(name) => {
                let js = jobs(name);
                let ns: u64 = js.iter().map(|j| j.usr_ns + j.sys_ns).sum();
                (!js.is_empty() && r.duration_ns > 0).then(|| 100.0 * r.share_of_window(ns))
            }
            Metric::CpuSplit(name) => {
                let cpu = |j: &&report::JobReport| (j.usr_ns + j.sys_ns) as f64;
                let all: f64 = r.jobs.iter().map(|j| cpu(&j)).sum();
                let js = jobs(name);
                (!js.is_empty() && all > 0.0).then(|| 100.0 * js.iter().map(cpu).sum::<f64>() / all)
            }
            Metric::OpsPerSec(sel) => {
                let v = ops_of(r, sel);
                (!v.is_empty()).then(|| v.iter().map(|o| o.ops_per_sec).sum())
            }
            Metric::ItemsPerSec(sel) => {
                let v = ops_of(r, sel);
                (!v.is_empty()).then(|| v.iter().map(|o| o.items_per_sec).sum())
            }
            Metric::OpLatUs(sel) => {
                let (mut n, mut sum) = (0u64, 0.0);
                for o in ops_of(r, sel) {
                    n += o.ops;
                    sum += o.lat.mean * o.ops as f64;
                }
                (n > 0).then(|| sum / n as f64 / 1e3)
            }
            Metric::OpP50Us(sel) | Metric::OpP99Us(sel) => {
                let p = if matches!(self, Metric::OpP50Us(_)) {
                    50.0
                } else {
                    99.0
                };
                joint(r, sel)
                    .filter(|o| o.ops > 0)
                    .map(|o| o.lat.percentile(p) as f64 / 1e3)
            }
            Metric::IdlePct(sel) => {
                let apps = r.apps.as_ref()?;
                let want = cores_of(sel)?;
                let idle: Vec<f64> = apps
                    .cores
                    .iter()
                    .filter(|c| want.contains(&c.core))
                    .map(|c| c.idle)
                    .collect();
                (idle.len() == want.len())
                    .then(|| 100.0 * idle.iter().sum::<f64>() / idle.len() as f64)
            }
            Metric::GapUs(p) => r
                .completion_gaps
                .as_ref()
                .filter(|g| g.count > 0)
                .map(|g| g.value_at(*p) as f64 / 1e3),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::TotalIops => write!(f, "total_iops"),
            Metric::IrqRate => write!(f, "irq_rate"),
            Metric::IrqNs => write!(f, "irq_ns"),
            Metric::IrqShare => write!(f, "irq_share"),
            Metric::Cpu => write!(f, "cpu"),
            Metric::Iops(j) => write!(f, "iops:{j}"),
            Metric::LatUs(j) => write!(f, "lat_us:{j}"),
            Metric::P99Us(j) => write!(f, "p99_us:{j}"),
            Metric::CpuShare(j) => write!(f, "cpu_share:{j}"),
            Metric::CpuSplit(j) => write!(f, "cpu_split:{j}"),
            Metric::GapUs(p) => write!(f, "gap_us:{}", p * 100.0),
            Metric::P999Us(j) => write!(f, "p999_us:{j}"),
            Metric::TotalMbs => write!(f, "total_mbs"),
            Metric::TDevUs(j) => write!(f, "t_dev_us:{j}"),
            Metric::TSchedUs(j) => write!(f, "t_sched_us:{j}"),
            Metric::QdMean => write!(f, "qd_mean"),
            Metric::QdP99 => write!(f, "qd_p99"),
            Metric::QdMax => write!(f, "qd_max"),
            Metric::SyncLatUs(j) => write!(f, "sync_lat_us:{j}"),
            Metric::SyncP99Us(j) => write!(f, "sync_p99_us:{j}"),
            Metric::SyncP999Us(j) => write!(f, "sync_p999_us:{j}"),
            Metric::PutUs(j) => write!(f, "put_us:{j}"),
            Metric::Fsync(p, j) => write!(f, "{}:{j}", p.name()),
            Metric::OpsPerSec(j) => write!(f, "ops_per_s:{j}"),
            Metric::ItemsPerSec(j) => write!(f, "items_per_s:{j}"),
            Metric::OpLatUs(j) => write!(f, "op_lat_us:{j}"),
            Metric::OpP50Us(j) => write!(f, "op_p50_us:{j}"),
            Metric::OpP99Us(j) => write!(f, "op_p99_us:{j}"),
            Metric::IdlePct(c) => write!(f, "idle:{c}"),
            Metric::P50Us(j) => write!(f, "p50_us:{j}"),
            Metric::CpuUsPerIo(j) => write!(f, "cpu_us_per_io:{j}"),
            Metric::WakeupsPerIo(j) => write!(f, "wakeups_per_io:{j}"),
            Metric::MaxUs(j) => write!(f, "max_us:{j}"),
            Metric::IdleExitUsPerIo => write!(f, "idle_exit_us_per_io"),
            Metric::IdleExitUsPerWakeup => write!(f, "idle_exit_us_per_wakeup"),
            Metric::Field(p) => write!(f, "{}", p.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use report::{CoreUtil, DirReport, JobReport, LatencyStats};

    fn job(name: &str, ops: u64, mean_ns: f64, usr: u64) -> JobReport {
        JobReport {
            name: name.into(),
            read: DirReport {
                io_ops: ops,
                clat: LatencyStats {
                    mean: mean_ns,
                    ..LatencyStats::default()
                },
                ..DirReport::default()
            },
            usr_ns: usr,
            ..JobReport::default()
        }
    }

    fn run() -> RunReport {
        RunReport {
            duration_ns: 500_000_000,
            jobs: vec![
                job("sync", 1000, 10_000.0, 100_000_000),
                job("sync", 3000, 20_000.0, 50_000_000),
                job("async", 6000, 90_000.0, 0),
            ],
            interrupts: 2000,
            cores: vec![CoreUtil {
                idle: 0.25,
                ..CoreUtil::default()
            }],
            ..RunReport::default()
        }
    }

    #[test]
    fn names_round_trip() {
        for s in [
            "total_iops",
            "irq_rate",
            "irq_ns",
            "irq_share",
            "cpu",
            "iops:sync",
            "lat_us:a b",
            "p99_us:x",
            "cpu_share:sync",
            "gap_us:90",
            "p999_us:ls",
            "total_mbs",
            "t_dev_us:ls",
            "t_sched_us:ls",
            "qd_mean",
            "qd_p99",
            "qd_max",
            "sync_lat_us:ls",
            "sync_p99_us:ls",
            "sync_p999_us:ls",
            "put_us:ls",
            "t_d1_us:ls",
            "t_d2_us:ls",
            "t_jd_us:ls",
            "t_jc_us:ls",
            "fsync_sched_us:ls",
            "switches_per_fsync:ls",
            "ios_per_fsync:ls",
            "p50_us:psync",
            "cpu_us_per_io:io_uring",
            "wakeups_per_io:io_uring",
            "max_us:sync",
            "idle_exit_us_per_io",
            "idle_exit_us_per_wakeup",
        ] {
            assert_eq!(Metric::parse(s).unwrap().to_string(), s);
        }
        for bad in [
            "iops",
            "iops:",
            "latency",
            "gap_us:x",
            "gap_us:101",
            "t_d2_us",
            "put_us:",
        ] {
            assert!(Metric::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn values_come_from_the_jobs_named() {
        let r = run();
        let v = |s: &str| Metric::parse(s).unwrap().of(&r);
        assert_eq!(v("total_iops"), Some(20_000.0));
        assert_eq!(v("iops:sync"), Some(8_000.0));
        // Weighted by ops: (1000*10 + 3000*20) / 4000 us.
        assert_eq!(v("lat_us:sync"), Some(17.5));
        assert_eq!(v("irq_rate"), Some(4_000.0));
        assert_eq!(v("cpu"), Some(75.0));
        assert_eq!(v("cpu_share:sync"), Some(30.0));
        assert_eq!(v("iops:nosuch"), None);
        assert_eq!(v("lat_us:nosuch"), None);
        // (100 + 50 ms) / 4000 I/Os.
        assert_eq!(v("cpu_us_per_io:sync"), Some(37.5));
        // No io_uring note: no wake-ups to read.
        assert_eq!(v("wakeups_per_io:sync"), None);
        // The field's (report::field): 20,000 I/Os/s over the cores' busy
        // time in cores.
        let cpus: f64 = r.cores.iter().map(|c| 1.0 - c.idle).sum();
        assert_eq!(v("field_ops_per_s"), Some(20_000.0));
        assert_eq!(v("field_cpus"), Some(cpus));
        assert_eq!(v("field_ops_per_cpu"), Some(20_000.0 / cpus));
        assert_eq!(
            Metric::parse("field_ops_per_cpu").unwrap().to_string(),
            "field_ops_per_cpu"
        );
    }

    #[test]
    fn wakeups_come_from_the_simulators_io_uring_note() {
        let mut r = run();
        r.notes.push(
            "io_uring (host::uring): job 'sync' min-complete: 0 wake-ups (0.000 per I/O), 9 context \
             switches (0.002 per I/O), CPU 1.00us per I/O; job 'async' min-wait=50us: 1500 wake-ups \
             (0.250 per I/O), 3000 context switches (0.500 per I/O), CPU 2.00us per I/O"
                .into(),
        );
        let v = |s: &str| Metric::parse(s).unwrap().of(&r);
        assert_eq!(v("wakeups_per_io:async"), Some(0.25));
        assert_eq!(v("wakeups_per_io:sync"), Some(0.0));
        assert_eq!(v("wakeups_per_io:nosuch"), None);
    }

    #[test]
    fn fsync_metrics_come_from_the_sync_report() {
        use report::{FsyncBreakdown, SyncReport};
        let lat = |mean: f64, samples: u64, p99: u64, p999: u64| LatencyStats {
            samples,
            mean,
            percentiles: vec![(99.0, p99), (99.9, p999)],
            ..LatencyStats::default()
        };
        let put = |fsyncs: u64, mean_ns: f64, d2: f64| JobReport {
            name: "ls".into(),
            write: DirReport {
                io_ops: fsyncs,
                clat: lat(2_000.0, fsyncs, 3_000, 4_000),
                ..DirReport::default()
            },
            sync: Some(SyncReport {
                lat: lat(mean_ns, fsyncs, 100_000, 200_000 * fsyncs),
                breakdown: FsyncBreakdown {
                    journal: "ordered".into(),
                    fsyncs,
                    d1_us: 7.0,
                    d2_us: d2,
                    switches_per_fsync: 5.0,
                    ios_per_fsync: 3.0,
                    ..FsyncBreakdown::default()
                },
            }),
            ..JobReport::default()
        };
        let r = RunReport {
            duration_ns: 1_000_000_000,
            jobs: vec![
                put(100, 30_000.0, 0.0),
                put(300, 50_000.0, 20.0),
                job("to", 10, 1.0, 0),
            ],
            ..RunReport::default()
        };
        let v = |s: &str| Metric::parse(s).unwrap().of(&r);
        // Weighted by fsyncs: (100*30 + 300*50) / 400 us.
        assert_eq!(v("sync_lat_us:ls"), Some(45.0));
        assert_eq!(v("put_us:ls"), Some(47.0));
        assert_eq!(v("sync_p99_us:ls"), Some(100.0));
        assert_eq!(v("sync_p999_us:ls"), Some(60_000.0));
        assert_eq!(v("t_d1_us:ls"), Some(7.0));
        assert_eq!(v("t_d2_us:ls"), Some(15.0));
        assert_eq!(v("switches_per_fsync:ls"), Some(5.0));
        assert_eq!(v("ios_per_fsync:ls"), Some(3.0));
        // A job that never fsyncs has none of them.
        assert_eq!(v("sync_lat_us:to"), None);
        assert_eq!(v("put_us:to"), None);
        assert_eq!(v("t_d2_us:to"), None);
    }
}
