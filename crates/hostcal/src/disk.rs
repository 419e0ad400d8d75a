//! The root disk's part: which disk holds a directory, its interrupt
//! vectors by name in `/proc/interrupts`, its completed reads and read time
//! (`/sys/dev/block/MAJ:MIN/stat`, the same counters as `/proc/diskstats`,
//! Documentation/block/stat.rst), and a scratch file read with O_DIRECT
//! 4 KiB `pread`s at random aligned offsets, as fio's psync randread.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::cpu::now_ns;

/// A read's size: 4 KiB, the QD1 path's shape (vm-native.toml's fio job).
pub const BLOCK: usize = 4096;

/// The disk under a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disk {
    /// The whole disk's name (`vda`).
    pub name: String,
    /// Its (major, minor).
    pub dev: (u32, u32),
    /// Its statistics file (the whole disk's, as vm-native.toml read
    /// `/proc/diskstats`' vda line).
    pub stat: PathBuf,
    /// Its completion vectors: (IRQ, name in /proc/interrupts).
    pub vectors: Vec<(u32, String)>,
}

/// The disk holding `dir`: its device numbers (`stat`), the whole disk if
/// they name a partition (a partition's sysfs directory is inside its
/// disk's and holds a `partition` file, Documentation/ABI/testing/sysfs-block),
/// and the vectors of its driver's device.
pub fn disk_of(dir: &Path) -> Result<Disk, String> {
    let m = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dev = m.dev();
    let (ma, mi) = (libc::major(dev), libc::minor(dev));
    let sys = Path::new("/sys/dev/block").join(format!("{ma}:{mi}"));
    let mut sys = sys.canonicalize().map_err(|_| {
        format!(
            "{} is on device {ma}:{mi}, which is not a block device (no {})",
            dir.display(),
            sys.display()
        )
    })?;
    if sys.join("partition").exists() {
        sys.pop();
    }
    let dev = std::fs::read_to_string(sys.join("dev"))
        .ok()
        .and_then(|t| {
            let (a, b) = t.trim().split_once(':')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((ma, mi));
    let name = sys
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{}: no disk name", sys.display()))?
        .to_string();
    let driver = sys
        .join("device")
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(String::from));
    let text = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    // The short path for the reader, where sysfs has it.
    let short = Path::new("/sys/block").join(&name).join("stat");
    Ok(Disk {
        vectors: vectors(&text, &name, driver.as_deref()),
        stat: if short.exists() {
            short
        } else {
            sys.join("stat")
        },
        name,
        dev,
    })
}

/// The completion vectors of disk `name` whose driver's device is
/// `driver`, from `/proc/interrupts`' text, by the names drivers give
/// them: virtio-blk `virtioN-req.Q` (drivers/block/virtio_blk.c,
/// `init_vq`'s "req.%u"), NVMe `nvmeXqN` with N >= 1 (q0 is the admin
/// queue, drivers/nvme/host/pci.c); otherwise any vector named after the
/// disk.
pub fn vectors(text: &str, name: &str, driver: Option<&str>) -> Vec<(u32, String)> {
    let nvme = name
        .strip_prefix("nvme")
        .and_then(|r| r.split_once('n'))
        .map(|(c, _)| format!("nvme{c}q"));
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let (irq, rest) = l.trim_start().split_once(':')?;
            let irq: u32 = irq.parse().ok()?;
            let vname = rest.split_whitespace().last()?.to_string();
            let ours = match (driver, &nvme) {
                (_, Some(q)) => vname
                    .strip_prefix(q.as_str())
                    .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n >= 1)),
                (Some(d), None) if d.starts_with("virtio") => {
                    vname.starts_with(&format!("{d}-req"))
                }
                _ => vname.starts_with(name),
            };
            ours.then_some((irq, vname))
        })
        .collect()
}

/// Per vector, its interrupts so far on each CPU (`/proc/interrupts`).
pub fn irq_counts(vectors: &[(u32, String)]) -> BTreeMap<u32, Vec<u64>> {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let (irq, rest) = l.trim_start().split_once(':')?;
            let irq: u32 = irq.parse().ok()?;
            vectors.iter().any(|(v, _)| *v == irq).then(|| {
                let per_cpu = rest
                    .split_whitespace()
                    .map_while(|f| f.parse::<u64>().ok())
                    .collect();
                (irq, per_cpu)
            })
        })
        .collect()
}

/// (reads completed, ms spent reading): fields 1 and 4 of the disk's
/// `stat` (Documentation/block/stat.rst; `/proc/diskstats` fields 4 and 7).
/// The time is the kernel's nanosecond sum truncated to ms
/// (`part_stat_read(..., nsecs[STAT_READ])` / NSEC_PER_MSEC,
/// block/genhd.c), from each request's start to its completion.
pub fn read_stat(stat: &Path) -> Result<(u64, u64), String> {
    let t = std::fs::read_to_string(stat).map_err(|e| format!("{}: {e}", stat.display()))?;
    let f: Vec<u64> = t
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    match (f.first(), f.get(3)) {
        (Some(&r), Some(&ms)) => Ok((r, ms)),
        _ => Err(format!("{}: fewer than 4 fields", stat.display())),
    }
}

/// A scratch directory with a data file, removed when dropped.
pub struct Scratch {
    pub dir: PathBuf,
    pub data: PathBuf,
    pub size: u64,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Scratch {
    /// `size` bytes of non-zero data (so no layer can skip reading zeros)
    /// in `parent/cinterrupts-hostcal.PID/data`, written and synced.
    pub fn new(parent: &Path, size: u64) -> Result<Scratch, String> {
        remove_stale(parent);
        let dir = parent.join(format!("cinterrupts-hostcal.{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let s = Scratch {
            data: dir.join("data"),
            dir,
            size,
        };
        let io = |e: std::io::Error| format!("{}: {e}", s.data.display());
        let mut f = File::create(&s.data).map_err(io)?;
        let mut chunk = vec![0u8; 1 << 20];
        let mut x = 0x9e37_79b9_u32;
        for b in chunk.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *b = x as u8;
        }
        for _ in 0..size.div_ceil(chunk.len() as u64) {
            f.write_all(&chunk).map_err(io)?;
        }
        f.sync_all().map_err(io)?;
        Ok(s)
    }
}

/// Removes scratch directories of ours whose process is gone (a killed
/// run's), as the tracefs instances are (`tracefs::remove_stale`).
fn remove_stale(parent: &Path) {
    let Ok(dir) = std::fs::read_dir(parent) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("cinterrupts-hostcal."))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A 4 KiB buffer aligned for O_DIRECT.
struct Aligned(*mut u8);

impl Aligned {
    fn new() -> Aligned {
        let l = std::alloc::Layout::from_size_align(BLOCK, BLOCK).expect("a valid layout");
        // SAFETY: a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(l) };
        assert!(!p.is_null(), "out of memory for 4 KiB");
        Aligned(p)
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        let l = std::alloc::Layout::from_size_align(BLOCK, BLOCK).expect("a valid layout");
        // SAFETY: allocated with this layout in new().
        unsafe { std::alloc::dealloc(self.0, l) };
    }
}

/// The scratch file opened for O_DIRECT reads, and the offsets' generator.
pub struct Reader {
    file: File,
    blocks: u64,
    buf: Aligned,
    x: u64,
}

impl Reader {
    pub fn open(s: &Scratch) -> Result<Reader, String> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&s.data)
            .map_err(|e| format!("{} (O_DIRECT): {e}", s.data.display()))?;
        Ok(Reader {
            file,
            blocks: (s.size / BLOCK as u64).max(1),
            buf: Aligned::new(),
            x: 0x2545_f491_4f6c_dd1d,
        })
    }

    /// `n` reads; the mean time a `pread` took, ns (each timed alone, as
    /// fio's `lat` is).
    pub fn reads(&mut self, n: u64) -> Result<f64, String> {
        let mut total = 0u64;
        for _ in 0..n {
            self.x ^= self.x << 13;
            self.x ^= self.x >> 7;
            self.x ^= self.x << 17;
            let off = (self.x % self.blocks) * BLOCK as u64;
            let t = now_ns();
            // SAFETY: a 4 KiB aligned buffer of ours.
            let r = unsafe {
                libc::pread(
                    self.file.as_raw_fd(),
                    self.buf.0 as *mut libc::c_void,
                    BLOCK,
                    off as libc::off_t,
                )
            };
            total += now_ns() - t;
            if r != BLOCK as isize {
                return Err(format!(
                    "O_DIRECT pread of 4 KiB at {off}: {}",
                    if r < 0 {
                        std::io::Error::last_os_error().to_string()
                    } else {
                        format!("{r} bytes")
                    }
                ));
            }
        }
        Ok(total as f64 / n as f64)
    }
}

/// `n` buffered `pwrite`s of 128 KiB into the page cache, cycling over the
/// first 4 MiB of `path` (pages already cached after the first pass), as
/// the `buffered_write_per_kib` default's `dd bs=128k` (sim's
/// profile.rs); ns per KiB.
pub fn buffered_write_per_kib(path: &Path, n: u64) -> Result<f64, String> {
    const CHUNK: usize = 128 * 1024;
    const REGION: u64 = 4 << 20;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let buf = vec![0xa5u8; CHUNK];
    let t = now_ns();
    for i in 0..n {
        let off = (i * CHUNK as u64) % REGION;
        // SAFETY: our buffer, our descriptor.
        let r = unsafe {
            libc::pwrite(
                f.as_raw_fd(),
                buf.as_ptr() as *const libc::c_void,
                CHUNK,
                off as libc::off_t,
            )
        };
        if r != CHUNK as isize {
            return Err(format!(
                "{}: buffered pwrite: {}",
                path.display(),
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok((now_ns() - t) as f64 / (n as f64 * (CHUNK / 1024) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERRUPTS: &str = "           CPU0       CPU1
 35:          0          1 PCI-MSIX-0000:00:02.0   0-edge      virtio1-config
 36:          0     779609 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
 38:          0       4608 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 50:          3          0 PCI-MSI 0-edge      nvme0q0
 51:         10          0 PCI-MSI 1-edge      nvme0q1
 52:          0         12 PCI-MSI 2-edge      nvme0q2
NMI:          0          0   Non-maskable interrupts
";

    #[test]
    fn virtio_blk_vectors_are_its_request_queues() {
        // This VM's /proc/interrupts (2026-12-07): vda is virtio1.
        assert_eq!(
            vectors(INTERRUPTS, "vda", Some("virtio1")),
            vec![(36, "virtio1-req.0".to_string())]
        );
    }

    #[test]
    fn nvme_vectors_are_its_io_queues_not_the_admin_queue() {
        let v: Vec<u32> = vectors(INTERRUPTS, "nvme0n1", Some("nvme0"))
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(v, vec![51, 52]);
    }

    #[test]
    fn a_disk_without_named_vectors_has_none() {
        assert!(vectors(INTERRUPTS, "sda", None).is_empty());
    }

    #[test]
    fn the_root_disk_is_found_with_its_statistics() {
        let d = disk_of(Path::new("/var/tmp")).unwrap();
        let (reads, _) = read_stat(&d.stat).unwrap();
        assert!(reads > 0, "{d:?}");
    }
}
