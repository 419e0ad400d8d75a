//! The three targets made ready before the runs and undone after, and the
//! machine's state a run must leave as it found.
//!
//! - **disk**: a file in a directory of the run's own under /var/tmp, on
//!   the root disk (/dev/vda, virtio-blk, ext4: PLATFORM.md section 2).
//! - **zram**: a zram device of the run's own, added with
//!   `/sys/class/zram-control/hot_add` and removed with `hot_remove`
//!   (Documentation/admin-guide/blockdev/zram.rst, "Add/remove zram
//!   devices"), so a zram0 someone else set up is not touched; used raw
//!   (no file system between fio and the device).
//! - **loop**: a loop device over a file on the root disk, attached with
//!   `losetup --direct-io=on -f --show` and detached with `losetup -d`.
//!
//! Every target's data is written once before it is read (fio, sequential
//! 1 MiB writes): ext4 reads of an unwritten extent and zram reads of a
//! never-written slot return zeros without reaching the device.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::design::Target;
use crate::ValidateError;

/// The undoing, if validate dies before its `Drop` runs (a signal): a
/// shell started first, in its own process group (so the terminal's
/// SIGINT does not reach it), reads what was made from its standard
/// input, one line each; at the end of its input without a `done` line
/// (validate gone) it detaches the loop device, resets and removes the
/// zram device and removes the directory. capture's watcher does the same
/// for its tracefs instance (crates/capture/src/lib.rs).
const WATCHER: &str = r#"L=; Z=; D=
while read -r l; do
  case "$l" in
    done) exit 0 ;;
    loop\ *) L=${l#loop } ;;
    zram\ *) Z=${l#zram } ;;
    dir\ *) D=${l#dir } ;;
  esac
done
[ -n "$L" ] && losetup -d "$L"
[ -n "$Z" ] && { echo 1 > /sys/block/zram$Z/reset; echo $Z > /sys/class/zram-control/hot_remove; }
[ -n "$D" ] && rm -rf "$D"
exit 0"#;

struct Watcher(std::process::Child);

impl Watcher {
    fn start() -> Result<Watcher, ValidateError> {
        use std::os::unix::process::CommandExt;
        Command::new("sh")
            .args(["-c", WATCHER])
            .stdin(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .map(Watcher)
            .map_err(|e| fail(format!("sh: {e}")))
    }

    fn tell(&mut self, line: &str) {
        use std::io::Write;
        if let Some(i) = self.0.stdin.as_mut() {
            let _ = writeln!(i, "{line}");
        }
    }

    /// Validate undid everything itself.
    fn done(mut self) {
        self.tell("done");
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// The targets of one validation, undone on drop.
pub struct Targets {
    /// The run's own directory under /var/tmp (the disk's file, the loop
    /// device's backing file).
    pub dir: PathBuf,
    pub disk_file: PathBuf,
    /// `/dev/zramN`, and N.
    zram: Option<(PathBuf, u32)>,
    /// `/dev/loopN`.
    looped: Option<PathBuf>,
    /// Bytes each target holds.
    pub size: u64,
    watcher: Option<Watcher>,
}

fn fail(what: impl Into<String>) -> ValidateError {
    ValidateError::Setup(what.into())
}

/// Runs a program, its failure one line naming it.
fn run(program: &str, args: &[&str]) -> Result<String, ValidateError> {
    let out = Command::new(program).args(args).output().map_err(|e| {
        fail(format!(
            "{program}: {e} (scripts/setup installs what validate runs)"
        ))
    })?;
    if !out.status.success() {
        return Err(fail(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Writes `size` bytes of fio's (incompressible by default: fio's
/// `scramble_buffers`) data sequentially to `file`, outside any capture.
fn fill(file: &Path, size: u64) -> Result<(), ValidateError> {
    run(
        "fio",
        &[
            "--name=fill",
            &format!("--filename={}", file.display()),
            &format!("--size={size}"),
            "--rw=write",
            "--bs=1M",
            "--direct=1",
            "--ioengine=psync",
            "--output-format=terse",
        ],
    )
    .map(drop)
}

impl Targets {
    /// Makes the three targets of `size` bytes each.
    pub fn make(size: u64) -> Result<Targets, ValidateError> {
        let dir = PathBuf::from(format!(
            "/var/tmp/cinterrupts-validate.{}",
            std::process::id()
        ));
        let mut watcher = Watcher::start()?;
        watcher.tell(&format!("dir {}", dir.display()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| fail(format!("cannot make {}: {e}", dir.display())))?;
        let mut t = Targets {
            disk_file: dir.join("disk.data"),
            dir,
            zram: None,
            looped: None,
            size,
            watcher: Some(watcher),
        };
        fill(&t.disk_file, size)?;
        // zram: a device of our own.
        let n: u32 = std::fs::read_to_string("/sys/class/zram-control/hot_add")
            .map_err(|e| {
                fail(format!(
                    "/sys/class/zram-control/hot_add: {e} (a kernel with CONFIG_ZRAM)"
                ))
            })?
            .trim()
            .parse()
            .map_err(|_| fail("/sys/class/zram-control/hot_add: not a device number"))?;
        t.zram = Some((PathBuf::from(format!("/dev/zram{n}")), n));
        t.tell(&format!("zram {n}"));
        std::fs::write(format!("/sys/block/zram{n}/disksize"), size.to_string())
            .map_err(|e| fail(format!("/sys/block/zram{n}/disksize: {e}")))?;
        let zdev = t.zram.as_ref().expect("set above").0.clone();
        wait_for(&zdev)?;
        fill(&zdev, size)?;
        // loop: over a written file.
        let backing = t.dir.join("loop.data");
        fill(&backing, size)?;
        let dev = run(
            "losetup",
            &[
                "--direct-io=on",
                "-f",
                "--show",
                &backing.display().to_string(),
            ],
        )?;
        t.tell(&format!("loop {dev}"));
        t.looped = Some(PathBuf::from(dev));
        Ok(t)
    }

    fn tell(&mut self, line: &str) {
        if let Some(w) = self.watcher.as_mut() {
            w.tell(line);
        }
    }

    /// Where fio's I/O of `target` goes.
    pub fn filename(&self, target: Target) -> &Path {
        match target {
            Target::Disk => &self.disk_file,
            Target::Zram => &self.zram.as_ref().expect("made").0,
            Target::Loop => self.looped.as_ref().expect("made"),
        }
    }

    /// The block device whose events capture keeps: the loop and zram
    /// devices themselves; the disk file's device is /dev/vda, named by
    /// the file's `st_dev`.
    pub fn block_device(&self, target: Target) -> Result<PathBuf, ValidateError> {
        match target {
            Target::Zram | Target::Loop => Ok(self.filename(target).to_path_buf()),
            Target::Disk => disk_of(&self.disk_file),
        }
    }
}

/// The block device (`/dev/NAME`) a file lives on: its `st_dev` read in
/// /sys/dev/block/MAJ:MIN/uevent's DEVNAME. A partition's events are its
/// disk's in the block tracepoints, so a partition gives its disk.
pub fn disk_of(file: &Path) -> Result<PathBuf, ValidateError> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(file).map_err(|e| fail(format!("{}: {e}", file.display())))?;
    let (ma, mi) = (libc::major(m.dev()), libc::minor(m.dev()));
    let sys = PathBuf::from(format!("/sys/dev/block/{ma}:{mi}"));
    let sys = if sys.join("partition").exists() {
        sys.join("..")
    } else {
        sys
    };
    let uevent = std::fs::read_to_string(sys.join("uevent"))
        .map_err(|e| fail(format!("{}: {e}", sys.display())))?;
    let name = uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .ok_or_else(|| fail(format!("{}/uevent: no DEVNAME", sys.display())))?;
    Ok(PathBuf::from("/dev").join(name))
}

/// The hardware queues blk-mq made for `dev` (`/dev/NAME`): the entries
/// of /sys/block/NAME/mq (block/blk-mq-sysfs.c, one per hctx; vda has one
/// here, its virtio-blk's one request queue). `None` for a bio-based
/// device (zram: no mq directory).
pub fn hw_queues(dev: &Path) -> Option<u32> {
    let name = dev.file_name()?.to_str()?;
    let n = std::fs::read_dir(format!("/sys/block/{name}/mq"))
        .ok()?
        .filter(|e| e.is_ok())
        .count();
    (n > 0).then_some(n as u32)
}

/// udev may be absent (a microVM): the node appears with devtmpfs; wait a
/// little for it.
fn wait_for(dev: &Path) -> Result<(), ValidateError> {
    for _ in 0..100 {
        if dev.exists() {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Err(fail(format!("{}: did not appear", dev.display())))
}

impl Drop for Targets {
    fn drop(&mut self) {
        if let Some(dev) = self.looped.take() {
            let _ = run("losetup", &["-d", &dev.display().to_string()]);
        }
        if let Some((_, n)) = self.zram.take() {
            let _ = std::fs::write(format!("/sys/block/zram{n}/reset"), "1");
            let _ = std::fs::write("/sys/class/zram-control/hot_remove", n.to_string());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(w) = self.watcher.take() {
            w.done();
        }
    }
}

/// What a validation must leave as it found: the zram devices, the loop
/// devices' backing files, whether tracefs is mounted, and its
/// instances.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineState {
    pub zram: Vec<String>,
    pub loops: Vec<(String, String)>,
    pub tracefs_mounted: bool,
    pub tracefs_instances: Vec<String>,
    /// Directories of ours under /var/tmp.
    pub scratch: Vec<String>,
}

fn names(dir: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| keep(n))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The machine's state now.
pub fn machine_state() -> MachineState {
    let loops = names("/sys/block", |n| n.starts_with("loop"))
        .into_iter()
        .filter_map(|l| {
            let f = std::fs::read_to_string(format!("/sys/block/{l}/loop/backing_file")).ok()?;
            Some((l, f.trim().to_string()))
        })
        .collect();
    let tracefs_mounted = std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/sys/kernel/tracing"));
    MachineState {
        zram: names("/sys/block", |n| n.starts_with("zram")),
        loops,
        tracefs_mounted,
        tracefs_instances: if tracefs_mounted {
            names("/sys/kernel/tracing/instances", |_| true)
        } else {
            Vec::new()
        },
        scratch: names("/var/tmp", |n| n.starts_with("cinterrupts-validate.")),
    }
}
