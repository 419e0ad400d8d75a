//! `exec --stage DIR`: the program's data directory on a memory-speed
//! block device for the run (issue 24, "The principle": a modelled device
//! faster than this VM's disk needs data the kernel serves at memory
//! speed, and that refuses misaligned O_DIRECT as a disk does; tmpfs
//! accepts it, so tmpfs will not do).
//!
//! Before the program starts: a new zram device (`hot_add`), ext4 made on
//! it, mounted at `/run/cinterrupts/stage-zramN`, DIR's contents copied
//! there (`cp -a`: owners, modes, times, xattrs), an O_DIRECT 4 KiB read
//! loop timed on it, then that file system bind-mounted over DIR, so the
//! program's paths stay the same. During the run the staged copy *is* the
//! data. After the program ends: the bind is unmounted, the staged copy
//! is copied back over DIR (`rsync -aHAXS --delete --ignore-times`: every
//! file rewritten, files the program removed removed), the staging fs
//! unmounted and the device removed (`hot_remove`). On any failure after
//! the program started, nothing is deleted: the staged copy stays mounted
//! where an error line says, with the commands that finish the job.
//!
//! The zram interface is the kernel's `Documentation/admin-guide/blockdev/
//! zram.rst`: reading `/sys/class/zram-control/hot_add` adds a device and
//! returns its id; `disksize` sets its size before first use; writing the
//! id to `hot_remove` removes it (EBUSY while it is open or mounted).

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

const ZRAM_CONTROL: &str = "/sys/class/zram-control";
/// Where the staged file systems are mounted, one directory per device.
const MOUNTS: &str = "/run/cinterrupts";
const MIB: u64 = 1 << 20;
/// Our sizing rule without `--stage-size`: twice the data DIR holds (room
/// for the program to write as much again) plus this, which covers
/// ext4's own metadata on a small file system (mke2fs's journal is 4-16
/// MiB below 1 GiB, `mke2fs.conf`'s sizes; the inode tables 256 bytes per
/// inode) and a program that starts from an empty DIR.
const HEADROOM: u64 = 256 * MIB;
/// The O_DIRECT read loop timed at the start: reads, and the file they
/// read (4 MiB: 1024 blocks, larger than any cache a device model keeps).
const PROBE_READS: usize = 2000;
const PROBE_BYTES: usize = 4 << 20;
const BLOCK: usize = 4096;
const PROBE_NAME: &str = ".cinterrupts-stage-probe";
/// How long an unmount or `hot_remove` that finds the target busy is
/// retried (a process of the program that exits late), 100 ms apart.
const BUSY_RETRIES: u32 = 50;

#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error("--stage needs root (it adds a zram device and mounts it); run exec as root, or without --stage")]
    NotRoot,
    #[error("--stage {0}: not a directory")]
    NotADirectory(String),
    #[error("--stage: {0}")]
    Setup(String),
    #[error("--stage-size {size}: too small for DIR's {data} bytes, the O_DIRECT probe's file and ext4's own metadata (at least {least} bytes, {} MiB)", least.div_ceil(MIB))]
    TooSmall { size: u64, least: u64, data: u64 },
}

/// `--stage DIR [--stage-size SIZE]`.
#[derive(Clone, Debug)]
pub struct StageOptions {
    pub dir: PathBuf,
    /// The zram device's size in bytes; `None`: our rule (twice DIR's
    /// data plus `HEADROOM`, 256 MiB).
    pub size: Option<u64>,
}

/// Where the data lived, and what an O_DIRECT 4 KiB read cost there
/// (`cinterrupts.exec.staging` in the JSON report).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageReport {
    pub dir: String,
    pub device: String,
    pub fs: String,
    pub mount: String,
    /// The device's size, and the bytes DIR's files took when staged.
    pub size_bytes: u64,
    pub data_bytes: u64,
    /// Median of 2000 (`PROBE_READS`) O_DIRECT 4 KiB `pread`s at random
    /// aligned offsets on the staged fs, timed one by one, ns.
    pub read_4k_ns_p50: u64,
    /// The staged copy was copied back over DIR and the device removed.
    pub restored: bool,
    /// Why not, with where the data is and what finishes the job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A staged directory, live until [`Staged::finish`] (or its drop, which
/// finishes it and prints what it could not do).
pub struct Staged {
    id: u32,
    device: PathBuf,
    mount: PathBuf,
    dir: PathBuf,
    mounted: bool,
    bound: bool,
    report: StageReport,
    finished: bool,
}

/// Stages `opts.dir`. `say` gets one line naming the device and the mount
/// as soon as they exist, with the commands that undo them if `exec` is
/// killed. On an error nothing is left behind and DIR is untouched.
pub fn stage(opts: &StageOptions, say: &dyn Fn(&str)) -> Result<Staged, StageError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(StageError::NotRoot);
    }
    let dir = std::fs::canonicalize(&opts.dir)
        .ok()
        .filter(|d| d.is_dir())
        .ok_or_else(|| StageError::NotADirectory(opts.dir.display().to_string()))?;
    let (data_bytes, entries) = usage(&dir).map_err(|e| setup(&dir, "reading it", e))?;
    let size = opts
        .size
        .unwrap_or(data_bytes.saturating_mul(2).saturating_add(HEADROOM))
        .next_multiple_of(BLOCK as u64);
    // Checked before any device exists (issue 38 item 5: a too-small
    // size was said "mounted" before mkfs.ext4 failed).
    let least = least_size(data_bytes, entries);
    if size < least {
        return Err(StageError::TooSmall {
            size,
            least,
            data: data_bytes,
        });
    }
    if !Path::new(ZRAM_CONTROL).is_dir() {
        return Err(StageError::Setup(format!(
            "{ZRAM_CONTROL} is missing: this kernel has no zram (CONFIG_ZRAM)"
        )));
    }
    let id: u32 = std::fs::read_to_string(Path::new(ZRAM_CONTROL).join("hot_add"))
        .map_err(|e| setup(Path::new(ZRAM_CONTROL), "hot_add", e))?
        .trim()
        .parse()
        .map_err(|e| StageError::Setup(format!("hot_add gave no device id: {e}")))?;
    let mount = Path::new(MOUNTS).join(format!("stage-zram{id}"));
    let mut s = Staged {
        id,
        device: PathBuf::from(format!("/dev/zram{id}")),
        mount: mount.clone(),
        dir: dir.clone(),
        mounted: false,
        bound: false,
        report: StageReport {
            dir: dir.display().to_string(),
            device: format!("/dev/zram{id}"),
            fs: "ext4".into(),
            mount: mount.display().to_string(),
            size_bytes: size,
            data_bytes,
            ..StageReport::default()
        },
        finished: false,
    };
    match s.set_up(size, entries, say) {
        Ok(()) => Ok(s),
        Err(e) => {
            // The program has not run: DIR is as it was; undo the rest.
            let _ = s.release();
            s.finished = true;
            Err(e)
        }
    }
}

fn setup(path: &Path, what: &str, e: impl std::fmt::Display) -> StageError {
    StageError::Setup(format!("{}: {what}: {e}", path.display()))
}

impl Staged {
    fn set_up(&mut self, size: u64, entries: u64, say: &dyn Fn(&str)) -> Result<(), StageError> {
        let sys = PathBuf::from(format!("/sys/block/zram{}", self.id));
        std::fs::write(sys.join("disksize"), size.to_string())
            .map_err(|e| setup(&sys, "disksize", e))?;
        wait_for(&self.device)?;
        // One inode per entry twice over, at least mke2fs's own count for
        // a small fs: a DIR of many small files must fit as its bytes do.
        let inodes = inodes(entries);
        run(Command::new("mkfs.ext4")
            .args(["-q", "-F", "-E", "nodiscard", "-m", "0", "-N"])
            .arg(inodes.to_string())
            .arg(&self.device))?;
        std::fs::create_dir_all(&self.mount).map_err(|e| setup(&self.mount, "mkdir", e))?;
        mount(&self.device, &self.mount, Some("ext4"), 0)?;
        self.mounted = true;
        // Said once the mount exists (not before mkfs), with the commands
        // that undo it if exec is killed during the copy or the run.
        let (id, dir, at) = (self.id, &self.dir, &self.mount);
        say(&format!(
            "staging {} on /dev/zram{id} (ext4, {} MiB) mounted at {} and over {} for the run; if exec is killed, recover with: umount {}; rsync -aHAX --delete {}/ {}/; umount {}; rmdir {}; echo {id} > {ZRAM_CONTROL}/hot_remove",
            dir.display(),
            size / MIB,
            at.display(),
            dir.display(),
            dir.display(),
            at.display(),
            dir.display(),
            at.display(),
            at.display(),
        ));
        // mke2fs's lost+found is not the program's (MariaDB would take it
        // for a database); DIR's own, if any, comes with the copy.
        let _ = std::fs::remove_dir(self.mount.join("lost+found"));
        let mut src = self.dir.clone().into_os_string();
        src.push("/.");
        run(Command::new("cp").arg("-a").arg(&src).arg(&self.mount))?;
        // The root's owner and mode are DIR's, whatever cp did with ".".
        let m = std::fs::metadata(&self.dir).map_err(|e| setup(&self.dir, "stat", e))?;
        std::os::unix::fs::chown(&self.mount, Some(m.uid()), Some(m.gid()))
            .map_err(|e| setup(&self.mount, "chown", e))?;
        std::fs::set_permissions(&self.mount, m.permissions())
            .map_err(|e| setup(&self.mount, "chmod", e))?;
        self.report.read_4k_ns_p50 = read_4k_p50(&self.mount.join(PROBE_NAME))
            .map_err(|e| setup(&self.mount, "O_DIRECT probe", e))?;
        mount(&self.mount, &self.dir, None, libc::MS_BIND)?;
        self.bound = true;
        Ok(())
    }

    pub fn report(&self) -> &StageReport {
        &self.report
    }

    /// DIR, canonical.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// After the program: the bind off DIR, the staged copy back over DIR,
    /// the device gone. Whatever fails, the data is kept (on the staged
    /// fs, mounted) and the report's `error` says where and what to do.
    pub fn finish(mut self) -> StageReport {
        self.finished = true;
        let r = self.restore();
        self.report.restored = r.is_ok();
        self.report.error = r.err();
        self.report.clone()
    }

    fn restore(&mut self) -> Result<(), String> {
        let keep = |s: &Staged, why: String| {
            format!(
                "{why}; the run's data is kept on {} mounted at {}: when nothing uses {} any more, run: {}rsync -aHAX --delete {}/ {}/; umount {}; rmdir {}; echo {} > {ZRAM_CONTROL}/hot_remove",
                s.device.display(),
                s.mount.display(),
                s.dir.display(),
                if s.bound { format!("umount {}; ", s.dir.display()) } else { String::new() },
                s.mount.display(),
                s.dir.display(),
                s.mount.display(),
                s.mount.display(),
                s.id
            )
        };
        if self.bound {
            unmount(&self.dir).map_err(|e| keep(self, e))?;
            self.bound = false;
        }
        let mut from = self.mount.clone().into_os_string();
        from.push("/");
        let mut to = self.dir.clone().into_os_string();
        to.push("/");
        run(Command::new("rsync")
            .args(["-aHAXS", "--delete", "--ignore-times", "--numeric-ids"])
            .arg(&from)
            .arg(&to))
        .map_err(|e| keep(self, format!("copying back to {}: {e}", self.dir.display())))?;
        self.release().map_err(|e| {
            format!(
                "{e} (the data is back in {}; {} is left to remove: umount {}; rmdir {}; echo {} > {ZRAM_CONTROL}/hot_remove)",
                self.dir.display(),
                self.device.display(),
                self.mount.display(),
                self.mount.display(),
                self.id
            )
        })
    }

    /// Unmounts the staging fs and removes the device (DIR must not be
    /// bound to it any more).
    fn release(&mut self) -> Result<(), String> {
        if self.bound {
            unmount(&self.dir)?;
            self.bound = false;
        }
        if self.mounted {
            unmount(&self.mount)?;
            self.mounted = false;
            let _ = std::fs::remove_dir(&self.mount);
        }
        let remove = Path::new(ZRAM_CONTROL).join("hot_remove");
        retry_busy(|| std::fs::write(&remove, self.id.to_string()))
            .map_err(|e| format!("{}: hot_remove {}: {e}", remove.display(), self.id))
    }
}

impl Drop for Staged {
    /// A panic between staging and [`Staged::finish`]: finished here, its
    /// error on stderr.
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            if let Err(e) = self.restore() {
                eprintln!("cinterrupts: exec: error: staging: {e}");
            }
        }
    }
}

/// Bytes DIR's files take (allocated blocks), and its entries.
/// The smallest device that holds DIR's `data_bytes` in `entries`
/// files, the probe's file and the ext4 that `set_up` makes: its inode
/// tables (`-N`, 256 bytes an inode: mke2fs's default inode size) and the
/// rest of ext4's metadata, [`EXT4_FIXED`]. A lower bound: a size above
/// it may still be too small once ext4 takes a larger journal, and the copy
/// then fails with nothing of DIR changed.
fn least_size(data_bytes: u64, entries: u64) -> u64 {
    data_bytes
        .saturating_add(PROBE_BYTES as u64)
        .saturating_add(inodes(entries).saturating_mul(256))
        .saturating_add(EXT4_FIXED)
        .next_multiple_of(BLOCK as u64)
}

/// ext4's metadata beyond the inode tables on a small device: `mkfs.ext4
/// -q -F -E nodiscard -m 0 -N 16384` (mke2fs 1.47.0, this VM) on a 6 MiB
/// file leaves 803 KiB free, on 16 MiB 10987 KiB (`dumpe2fs -h`): 1.2-1.4
/// MiB beyond the 4 MiB of inode tables (its journal, bitmaps, group
/// descriptors); 4 MiB fails. Rounded up to 2 MiB.
const EXT4_FIXED: u64 = 2 * MIB;

/// The inodes `set_up` asks mkfs for: one per entry twice over, at least
/// mke2fs's own count for a small fs.
fn inodes(entries: u64) -> u64 {
    entries.saturating_mul(2).max(16384)
}

fn usage(dir: &Path) -> std::io::Result<(u64, u64)> {
    let (mut bytes, mut entries) = (0, 0);
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let m = e.metadata()?;
            entries += 1;
            bytes += m.blocks() * 512;
            if m.is_dir() {
                todo.push(e.path());
            }
        }
    }
    Ok((bytes, entries))
}

/// Runs a helper, its output ours on failure; in its own process group, so
/// a terminal's Ctrl-C (sent to our group) cannot cut a copy short.
fn run(cmd: &mut Command) -> Result<(), StageError> {
    use std::os::unix::process::CommandExt;
    let name = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            StageError::Setup(format!(
                "{name}: {e} (run scripts/setup: apt-get install e2fsprogs rsync)"
            ))
        })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(StageError::Setup(format!(
        "{name} failed ({}): {}",
        out.status,
        err.trim().replace('\n', "; ")
    )))
}

fn c_path(p: &Path) -> std::ffi::CString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(p.as_os_str().as_bytes()).expect("a path has no NUL")
}

fn mount(
    src: &Path,
    target: &Path,
    fs: Option<&str>,
    flags: libc::c_ulong,
) -> Result<(), StageError> {
    let (s, t) = (c_path(src), c_path(target));
    let fs = fs.map(|f| std::ffi::CString::new(f).expect("no NUL"));
    // SAFETY: NUL-terminated strings that outlive the call; no data.
    let r = unsafe {
        libc::mount(
            s.as_ptr(),
            t.as_ptr(),
            fs.as_ref().map_or(std::ptr::null(), |f| f.as_ptr()),
            flags,
            std::ptr::null(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(StageError::Setup(format!(
            "mount {} on {}: {}",
            src.display(),
            target.display(),
            std::io::Error::last_os_error()
        )))
    }
}

fn unmount(target: &Path) -> Result<(), String> {
    let t = c_path(target);
    retry_busy(|| {
        // SAFETY: a NUL-terminated path.
        if unsafe { libc::umount2(t.as_ptr(), 0) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    })
    .map_err(|e| format!("umount {}: {e}", target.display()))
}

fn retry_busy(mut f: impl FnMut() -> std::io::Result<()>) -> std::io::Result<()> {
    let mut tries = 0;
    loop {
        match f() {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < BUSY_RETRIES => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            r => return r,
        }
    }
}

/// The device node appears when udev or devtmpfs makes it.
fn wait_for(dev: &Path) -> Result<(), StageError> {
    let start = Instant::now();
    while !dev.exists() {
        if start.elapsed() > Duration::from_secs(5) {
            return Err(StageError::Setup(format!(
                "{} did not appear",
                dev.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// A 4 KiB-aligned buffer for O_DIRECT.
struct Aligned(*mut u8, std::alloc::Layout);

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = std::alloc::Layout::from_size_align(len, BLOCK).expect("a valid layout");
        // SAFETY: a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!p.is_null(), "out of memory");
        Aligned(p, layout)
    }

    fn slice(&mut self) -> &mut [u8] {
        // SAFETY: the allocation is `self.1.size()` bytes, owned.
        unsafe { std::slice::from_raw_parts_mut(self.0, self.1.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { std::alloc::dealloc(self.0, self.1) }
    }
}

/// Writes a [`PROBE_BYTES`] file at `path`, times [`PROBE_READS`]
/// O_DIRECT 4 KiB `pread`s of it at random aligned offsets, one by one,
/// removes it, and gives the median, ns.
fn read_4k_p50(path: &Path) -> std::io::Result<u64> {
    {
        let mut f = std::fs::File::create(path)?;
        let block = vec![0x5a_u8; BLOCK];
        for _ in 0..PROBE_BYTES / BLOCK {
            f.write_all(&block)?;
        }
        f.sync_all()?;
    }
    let result = (|| {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)?;
        let mut buf = Aligned::new(BLOCK);
        let blocks = (PROBE_BYTES / BLOCK) as u64;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut ns = Vec::with_capacity(PROBE_READS);
        use std::os::unix::fs::FileExt;
        for _ in 0..PROBE_READS {
            // xorshift64: offsets spread over the file, the same each run.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let off = (x % blocks) * BLOCK as u64;
            let t = Instant::now();
            let n = f.read_at(buf.slice(), off)?;
            ns.push(t.elapsed().as_nanos() as u64);
            if n != BLOCK {
                return Err(std::io::Error::other(format!("short O_DIRECT read: {n}")));
            }
        }
        ns.sort_unstable();
        Ok(ns[ns.len() / 2])
    })();
    std::fs::remove_file(path)?;
    result
}
