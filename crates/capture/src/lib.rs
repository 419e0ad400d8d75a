//! `cinterrupts capture` (issue 27 item 2): the real kernel's block-layer
//! issue and completion events, and the interrupts, recorded while a
//! program runs (or for a time) and written as blkparse's default text
//! output, which the trace readers and `coalesce` take like a real
//! `blkparse`'s (`blkparse`'s module says the layout).
//!
//! The recorder is `perf record -a` on the tracepoints
//! `block:block_rq_issue` (the request handed to the driver, blkparse's
//! `D`), `block:block_rq_complete` (`C`) and `irq:irq_handler_entry`,
//! with nanosecond timestamps (`perf script --ns`; tracefs's own text
//! prints microseconds). The program starts once perf acknowledges a
//! `ping` on its control FIFO (`--control`), which it answers from its
//! main loop, with its events on: nothing of the program's is missed. It
//! runs in its own process group, so the terminal's SIGINT reaches the
//! program, not the recorder.
//!
//! **A gap, measured and not explained** (Linux 6.18, perf 6.1, virtio-blk,
//! fio psync QD1, 3,000 4 KiB reads, 2026-11-28, `perf report --stats`
//! counting no lost events): with `block_rq_complete` and
//! `irq_handler_entry` alone perf recorded 3,093 completions and 2,983
//! interrupts; with `block_rq_issue` beside them, 15 and 14 (in other runs
//! 20-209 of 3,000, and once 3,444), while `/proc/interrupts` counted
//! 3,010 interrupts of the disk's line in the same run: the events were
//! not lost by perf's buffer (no LOST records, the data file held 14
//! samples of the irq tracepoint), they were not written. So a capture's
//! completions and interrupts can be few: its summary line gives the
//! recorded count beside the kernel's own (`/proc/interrupts`), and a
//! request without a completion is taken by `coalesce` as issue +
//! `--service`.
//! Started with its events off (`-D -1`) and enabled through the FIFO,
//! perf did no better.
//!
//! It needs root (system-wide tracepoints) and says so. It leaves tracefs
//! as it found it: mounted by capture only if it was not, and unmounted
//! after; a watcher process forked first does the cleanup (the recorder
//! stopped, tracefs unmounted if capture mounted it, the temporary files
//! gone) if capture itself is killed. The output appears whole or not at
//! all (written beside, then renamed).

mod blkparse;

pub use blkparse::{blkparse_line, parse, Event};

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Where tracefs lives (Documentation/trace/ftrace.rst).
const TRACEFS: &str = "/sys/kernel/tracing";
/// The recorder's events. The bio events are there for bio-based drivers
/// (zram, device mapper), which make no requests (measured: `dd
/// oflag=direct` of 100 4 KiB blocks to a zram device gave 100
/// `block_bio_complete` and no request event).
const EVENTS: [&str; 5] = [
    "block:block_bio_queue",
    "block:block_bio_complete",
    "block:block_rq_issue",
    "block:block_rq_complete",
    "irq:irq_handler_entry",
];
/// How long perf may take to answer a control command.
const ACK: Duration = Duration::from_secs(20);

/// What to record.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The blkparse-text output; interrupts go to `OUT.irq.csv`.
    pub out: PathBuf,
    /// Only these block devices (`/dev/...`); none: every device.
    pub devices: Vec<PathBuf>,
    /// Record this long (without a program), or stop the program after it.
    pub duration: Option<Duration>,
    /// The program and its arguments (empty: record for `duration`).
    pub program: Vec<OsString>,
}

/// One device's recorded events, and the kernel's own count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Bios queued (`Q`, `block_bio_queue`): a bio-based driver's (zram's)
    /// issues.
    pub queued: u64,
    /// Requests issued to the driver (`D`, `block_rq_issue`).
    pub issued: u64,
    /// Completions (`C`, `block_rq_complete` or `block_bio_complete`).
    pub completed: u64,
    /// Of them, those recorded while the program ran (the time `counted`
    /// was counted in).
    pub completed_while_running: u64,
    /// The I/Os the kernel counted completed on the device while the
    /// program ran (`/sys/dev/block/MAJ:MIN/stat`, see [`disk_completions`]):
    /// beside `completed`, it shows how many the recording missed.
    pub counted: u64,
}

/// What was recorded.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// The program's exit status (`None` without a program).
    pub status: Option<ExitStatus>,
    /// Per device (major, minor).
    pub per_device: BTreeMap<(u32, u32), Counts>,
    pub interrupts: u64,
    /// The interrupts the kernel counted in the same time on its numbered
    /// lines (`/proc/interrupts`, see [`interrupts_counted`]): beside
    /// `interrupts`, it shows how many the recording missed.
    pub interrupts_counted: u64,
    /// Per numbered line (IRQ): (recorded while the program ran, counted
    /// by the kernel in that time), for the lines with either.
    pub per_irq: BTreeMap<u32, (u64, u64)>,
    pub out: PathBuf,
    pub irq_out: PathBuf,
}

/// The kernel's interrupt counts of its numbered lines, all CPUs
/// (`/proc/interrupts`). Only these pass `irq_handler_entry` (the
/// tracepoint is in `__handle_irq_event_percpu`, kernel/irq/handle.c);
/// the architecture's own lines (LOC, RES, CAL, TLB, IWI, ...) do not,
/// so they are left out (counting them, a capture of 3,000 reads on
/// virtio-blk showed 3,025 recorded beside 6,532 "counted", a gap that
/// was not one).
pub fn interrupts_counted() -> BTreeMap<u32, u64> {
    let Ok(text) = std::fs::read_to_string("/proc/interrupts") else {
        return BTreeMap::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let (irq, rest) = l.trim_start().split_once(':')?;
            let irq: u32 = irq.parse().ok()?;
            let n = rest
                .split_whitespace()
                .map_while(|f| f.parse::<u64>().ok())
                .sum::<u64>();
            Some((irq, n))
        })
        .collect()
}

/// The I/Os each block device completed so far (`/sys/dev/block/*/stat`,
/// Documentation/block/stat.rst: fields 1, 5, 12 and 16 are the read,
/// write, discard and flush I/Os completed; the last two only on newer
/// kernels). A request-based driver counts requests (one
/// `block_rq_complete` each), a bio-based one (zram) bios (one
/// `block_bio_complete` each).
pub fn disk_completions() -> BTreeMap<(u32, u32), u64> {
    let Ok(dir) = std::fs::read_dir("/sys/dev/block") else {
        return BTreeMap::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let (ma, mi) = name.to_str()?.split_once(':')?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let f: Vec<u64> = stat
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            let n = [0, 4, 11, 15].iter().filter_map(|&i| f.get(i)).sum();
            Some(((ma.parse().ok()?, mi.parse().ok()?), n))
        })
        .collect()
}

/// One line for the user.
#[derive(Debug)]
pub struct CaptureError(pub String);

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CaptureError {}

fn err(s: impl Into<String>) -> CaptureError {
    CaptureError(s.into())
}

/// A block device's (major, minor).
fn device_numbers(p: &Path) -> Result<(u32, u32), CaptureError> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).map_err(|e| err(format!("--device {}: {e}", p.display())))?;
    if !m.file_type().is_block_device() {
        return Err(err(format!("--device {}: not a block device", p.display())));
    }
    let rdev = m.rdev();
    Ok((libc::major(rdev), libc::minor(rdev)))
}

/// The cleanup capture owes, done by `Drop` on any return and by the
/// watcher process if capture is killed.
struct Cleanup {
    perf: Option<Child>,
    mounted: bool,
    dir: PathBuf,
    /// The watcher's pipe (capture's end): closed without "done", the
    /// watcher cleans up.
    watcher: Option<File>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(p) = &mut self.perf {
            let _ = p.kill();
            let _ = p.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        if self.mounted {
            unmount();
        }
        if let Some(w) = &mut self.watcher {
            let _ = w.write_all(b"done\n");
        }
    }
}

fn unmount() {
    let c = std::ffi::CString::new(TRACEFS).expect("no NUL");
    // SAFETY: a NUL-terminated path.
    unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
}

/// Mounts tracefs if it is not (perf reads the tracepoints' formats
/// there); whether capture mounted it.
fn mount_tracefs() -> Result<bool, CaptureError> {
    if Path::new(TRACEFS).join("events").is_dir() {
        return Ok(false);
    }
    let (src, dst, fs) = (
        c"nodev",
        std::ffi::CString::new(TRACEFS).expect("no NUL"),
        c"tracefs",
    );
    // SAFETY: NUL-terminated strings.
    let r = unsafe { libc::mount(src.as_ptr(), dst.as_ptr(), fs.as_ptr(), 0, std::ptr::null()) };
    if r != 0 {
        return Err(err(format!(
            "cannot mount tracefs on {TRACEFS}: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(true)
}

/// Forks the watcher: it reads capture's pipe until "done" or the end (capture
/// gone), and on the end without "done" stops the recorder (its pid, sent
/// as "perf PID"), unmounts tracefs if "mounted" was sent, and removes
/// `dir`. Capture's end of the pipe.
fn fork_watcher(dir: &Path) -> Result<File, CaptureError> {
    let mut fds = [0; 2];
    // SAFETY: a new pipe.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(err("cannot make the watcher's pipe"));
    }
    let dir = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).expect("no NUL");
    // SAFETY: the child only reads, signals, unmounts and removes, then
    // _exits; capture runs no other thread yet.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(err("cannot fork the watcher"));
    }
    if pid == 0 {
        // SAFETY: the child's own descriptors.
        unsafe {
            libc::close(fds[1]);
            libc::setsid();
        }
        let mut text = Vec::new();
        let mut buf = [0u8; 256];
        loop {
            // SAFETY: our buffer.
            let n = unsafe { libc::read(fds[0], buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            if n <= 0 {
                break;
            }
            text.extend_from_slice(&buf[..n as usize]);
        }
        let text = String::from_utf8_lossy(&text);
        if !text.lines().any(|l| l == "done") {
            for l in text.lines() {
                if let Some(p) = l.strip_prefix("perf ").and_then(|p| p.parse::<i32>().ok()) {
                    // SAFETY: the recorder's process group, ours to stop.
                    unsafe { libc::kill(-p, libc::SIGKILL) };
                }
            }
            if text.lines().any(|l| l == "mounted") {
                unmount();
            }
            let d: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(dir.as_bytes());
            let _ = std::fs::remove_dir_all(d);
        }
        // SAFETY: ends the watcher without running capture's exit handlers.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the parent's copy of the read end.
    unsafe { libc::close(fds[0]) };
    // SAFETY: the write end, ours.
    Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) })
}

/// Reads "ack" from perf's acknowledgement FIFO within [`ACK`].
fn await_ack(ack: &mut File) -> Result<(), CaptureError> {
    use std::os::fd::AsRawFd;
    let deadline = Instant::now() + ACK;
    let mut got = Vec::new();
    // perf writes "ack\n" with its NUL (sizeof, tools/perf/util/evlist.c).
    while !got.windows(4).any(|w| w == b"ack\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(err("perf did not acknowledge its control command"));
        }
        let mut p = libc::pollfd {
            fd: ack.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd.
        unsafe { libc::poll(&mut p, 1, left.as_millis() as i32) };
        let mut b = [0u8; 16];
        match ack.read(&mut b) {
            // No writer yet (perf opens its end when it starts), or none
            // any more: looked at again until the deadline.
            Ok(0) => std::thread::sleep(Duration::from_millis(1)),
            Ok(n) => got.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(err(format!("perf's control FIFO: {e}"))),
        }
    }
    Ok(())
}

/// Opens perf's control FIFO for writing once perf has opened it (ENXIO
/// until then), or fails with perf's own words if it exits first.
fn open_ctl(ctl: &Path, perf: &mut Child) -> Result<File, CaptureError> {
    let deadline = Instant::now() + ACK;
    loop {
        match std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(ctl)
        {
            Ok(f) => return Ok(f),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => return Err(err(format!("perf's control FIFO: {e}"))),
        }
        if let Ok(Some(st)) = perf.try_wait() {
            let mut why = String::new();
            if let Some(e) = perf.stderr.as_mut() {
                let _ = e.read_to_string(&mut why);
            }
            return Err(err(format!("perf record exited ({st}): {}", why.trim())));
        }
        if Instant::now() >= deadline {
            return Err(err("perf record did not start"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// CLOCK_MONOTONIC in nanoseconds: perf's clock too (`-k monotonic`), so
/// a recorded event's time says whether it fell while the program ran.
fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn mkfifo(p: &Path) -> Result<(), CaptureError> {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("no NUL");
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(err(format!("cannot make {}", p.display())));
    }
    Ok(())
}

/// Records as `o` says and writes the files.
pub fn run(o: &Options) -> Result<Summary, CaptureError> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(err(
            "capture needs root: perf records the kernel's block and irq tracepoints system-wide",
        ));
    }
    if o.program.is_empty() && o.duration.is_none() {
        return Err(err("capture: give a program after -- or --duration"));
    }
    let ok = Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return Err(err(
            "capture needs perf (Debian: linux-perf): run scripts/setup",
        ));
    }
    let wanted: Vec<(u32, u32)> = o
        .devices
        .iter()
        .map(|d| device_numbers(d))
        .collect::<Result<_, _>>()?;
    let parent = o
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(err(format!("-o {}: no such directory", o.out.display())));
    }
    let dir = std::env::temp_dir().join(format!("cinterrupts-capture.{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
    let mut clean = Cleanup {
        perf: None,
        mounted: false,
        dir: dir.clone(),
        watcher: None,
    };
    let mut watcher = fork_watcher(&dir)?;
    clean.mounted = mount_tracefs()?;
    if clean.mounted {
        let _ = watcher.write_all(b"mounted\n");
    }
    clean.watcher = Some(watcher);
    let (ctl, ack, data) = (dir.join("ctl"), dir.join("ack"), dir.join("perf.data"));
    mkfifo(&ctl)?;
    mkfifo(&ack)?;
    let mut perf = Command::new("perf");
    // 16 MiB of ring buffer per CPU (perf's default is 512 KiB): a
    // burst of block events must not be lost.
    // Times on CLOCK_MONOTONIC (perf-record(1) `-k`), the clock the
    // program's start and end are read on.
    perf.args(["record", "-q", "-a", "-m", "16M", "-k", "monotonic"])
        .arg(format!(
            "--control=fifo:{},{}",
            ctl.display(),
            ack.display()
        ))
        .arg("-o")
        .arg(&data);
    for e in EVENTS {
        perf.args(["-e", e]);
    }
    perf.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = perf
        .spawn()
        .map_err(|e| err(format!("cannot start perf: {e}")))?;
    if let Some(w) = &mut clean.watcher {
        let _ = writeln!(w, "perf {}", child.id());
    }
    clean.perf = Some(child);
    let mut ctl_f = open_ctl(&ctl, clean.perf.as_mut().expect("started"))?;
    let mut ack_f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&ack)
        .map_err(|e| err(format!("perf's acknowledgement FIFO: {e}")))?;
    let command = |f: &mut File, a: &mut File, c: &str| -> Result<(), CaptureError> {
        f.write_all(format!("{c}\n").as_bytes())
            .map_err(|e| err(format!("perf's control FIFO: {e}")))?;
        await_ack(a)
    };
    // perf answers its control FIFO from its main loop, which it enters
    // once its events are on: the ping's acknowledgement says it records.
    command(&mut ctl_f, &mut ack_f, "ping")?;
    let (irq_before, disk_before) = (interrupts_counted(), disk_completions());
    let start = monotonic_ns();
    let status = if o.program.is_empty() {
        std::thread::sleep(o.duration.unwrap_or_default());
        None
    } else {
        let mut p = Command::new(&o.program[0])
            .args(&o.program[1..])
            .spawn()
            .map_err(|e| err(format!("{}: {e}", o.program[0].to_string_lossy())))?;
        let status = match o.duration {
            None => p.wait(),
            Some(d) => {
                let end = Instant::now() + d;
                loop {
                    if let Some(s) = p.try_wait().map_err(|e| err(e.to_string()))? {
                        break Ok(s);
                    }
                    if Instant::now() >= end {
                        let _ = p.kill();
                        break p.wait();
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        .map_err(|e| err(e.to_string()))?;
        Some(status)
    };
    let end = monotonic_ns();
    let (irq_after, disk_after) = (interrupts_counted(), disk_completions());
    let child = clean.perf.take().expect("started");
    // SAFETY: SIGINT to the recorder: it writes its data and exits.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().map_err(|e| err(e.to_string()))?;
    if !data.is_file() {
        return Err(err(format!(
            "perf recorded nothing: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let mut s = convert(&data, o, &wanted, (start, end))?;
    s.status = status;
    for (irq, n) in irq_after {
        let d = n.saturating_sub(irq_before.get(&irq).copied().unwrap_or(0));
        s.interrupts_counted += d;
        if d > 0 {
            s.per_irq.entry(irq).or_default().1 = d;
        }
    }
    for (dev, n) in disk_after {
        let d = n.saturating_sub(disk_before.get(&dev).copied().unwrap_or(0));
        if d > 0 && (wanted.is_empty() || wanted.contains(&dev)) {
            s.per_device.entry(dev).or_default().counted = d;
        }
    }
    Ok(s)
}

/// `perf script` of the data, rewritten (blkparse text, interrupts CSV)
/// into temporaries renamed over the outputs.
/// `window` is the program's run (CLOCK_MONOTONIC ns), in which the
/// recorded counts set beside the kernel's are taken.
fn convert(
    data: &Path,
    o: &Options,
    wanted: &[(u32, u32)],
    window: (u64, u64),
) -> Result<Summary, CaptureError> {
    let running = |t: u64| window.0 <= t && t <= window.1;
    let mut script = Command::new("perf")
        .args([
            "script",
            "--ns",
            "-F",
            "comm,tid,cpu,time,event,trace",
            "-i",
        ])
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| err(format!("perf script: {e}")))?;
    let irq_out = PathBuf::from(format!("{}.irq.csv", o.out.display()));
    let tmp = PathBuf::from(format!("{}.tmp", o.out.display()));
    let irq_tmp = PathBuf::from(format!("{}.tmp", irq_out.display()));
    let io = |p: &Path, e: std::io::Error| err(format!("{}: {e}", p.display()));
    let mut w = std::io::BufWriter::new(File::create(&tmp).map_err(|e| io(&tmp, e))?);
    let mut wi = std::io::BufWriter::new(File::create(&irq_tmp).map_err(|e| io(&irq_tmp, e))?);
    writeln!(wi, "time_ns,cpu,irq,name").map_err(|e| io(&irq_tmp, e))?;
    let mut s = Summary {
        out: o.out.clone(),
        irq_out: irq_out.clone(),
        ..Summary::default()
    };
    let mut since: Option<u64> = None;
    let mut seq: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    let stdout = script.stdout.take().expect("piped");
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| err(format!("perf script: {e}")))?;
        let Some(e) = parse(&line) else { continue };
        if let Event::Irq { time_ns, irq, .. } = &e {
            if running(*time_ns) {
                s.per_irq.entry(*irq).or_default().0 += 1;
            }
        }
        // The time base is the first block event's, as blkparse's (its
        // first trace); interrupts before it are not the program's.
        let base = match &e {
            Event::Block { time_ns, .. } => *since.get_or_insert(*time_ns),
            Event::Irq { time_ns, .. } => match since {
                Some(b) if *time_ns >= b => b,
                _ => continue,
            },
        };
        match &e {
            Event::Block {
                major,
                minor,
                action,
                ..
            } => {
                let dev = (*major, *minor);
                if !wanted.is_empty() && !wanted.contains(&dev) {
                    continue;
                }
                let n = seq.entry(dev).or_insert(0);
                *n += 1;
                let text = blkparse_line(&e, base, *n).expect("a block event");
                writeln!(w, "{text}").map_err(|e| io(&tmp, e))?;
                let c = s.per_device.entry(dev).or_default();
                match action {
                    'Q' => c.queued += 1,
                    'D' => c.issued += 1,
                    _ => {
                        c.completed += 1;
                        c.completed_while_running += u64::from(running(e.time_ns()));
                    }
                }
            }
            Event::Irq {
                time_ns,
                cpu,
                irq,
                name,
            } => {
                s.interrupts += 1;
                writeln!(wi, "{},{cpu},{irq},{name}", time_ns.saturating_sub(base))
                    .map_err(|e| io(&irq_tmp, e))?;
            }
        }
    }
    let _ = script.wait();
    w.flush().map_err(|e| io(&tmp, e))?;
    wi.flush().map_err(|e| io(&irq_tmp, e))?;
    drop((w, wi));
    std::fs::rename(&tmp, &o.out).map_err(|e| io(&o.out, e))?;
    std::fs::rename(&irq_tmp, &irq_out).map_err(|e| io(&irq_out, e))?;
    Ok(s)
}
