//! Whether another emulation runs on the same CPUs: each run holds an
//! advisory lock (flock) per CPU it spins or runs jobs on, for its whole
//! length. A run that finds one held says so (issue 12: two runs at once
//! both exited 0 with latencies 70x too high, each device thread taking the
//! other's CPU). Warned, not refused: the user may mean it, and the lock
//! is advisory.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use report::human::cpu_list;

use crate::backend::path::under_dev;

/// The CPU locks this run holds, released when dropped (or when the
/// process dies: flock goes with the descriptor).
pub(crate) struct Claims {
    _held: Vec<File>,
    /// CPUs another process holds.
    pub(crate) busy: Vec<usize>,
    pub(crate) dir: PathBuf,
}

impl Claims {
    /// The warning for the report and stderr, if another run holds a CPU.
    pub(crate) fn warning(&self) -> Option<String> {
        (!self.busy.is_empty()).then(|| {
            format!(
                "contention: another emulation holds CPU {} (locks in {}): busy-polling device threads take each other's CPU, so these latencies are not this device's; run one at a time",
                cpu_list(&self.busy),
                self.dir.display()
            )
        })
    }
}

/// Where the locks live: the user's runtime directory, else the system's
/// lock directory, else /tmp; never under /dev.
fn lock_dir() -> Option<PathBuf> {
    let candidates = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/run/lock"), std::env::temp_dir()]);
    candidates
        .filter(|d| d.is_absolute() && d.is_dir() && !under_dev(d))
        .find(|d| {
            // Writable by this process: a lock file can be created there.
            std::fs::metadata(d).is_ok_and(|m| !m.permissions().readonly())
        })
}

/// Takes a lock per CPU in `cpus`; those another process holds are `busy`.
/// Without anywhere to put locks, nothing is claimed and nothing said.
pub(crate) fn claim(cpus: &[usize]) -> Claims {
    let Some(dir) = lock_dir() else {
        return Claims {
            _held: Vec::new(),
            busy: Vec::new(),
            dir: PathBuf::new(),
        };
    };
    let mut held = Vec::new();
    let mut busy = Vec::new();
    for &cpu in cpus {
        let path = dir.join(format!("cinterrupts-cpu{cpu}.lock"));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .or_else(|_| File::open(&path));
        let Ok(file) = file else { continue };
        // SAFETY: a valid descriptor; a non-blocking exclusive lock.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            held.push(file);
        } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK) {
            busy.push(cpu);
        }
    }
    Claims {
        _held: held,
        busy,
        dir,
    }
}

/// The first of `cpus` whose lock (the same per-CPU lock a run takes) this
/// process gets, with the lock, held until dropped: `cinterrupts exec`'s
/// device core (issue 38 item 3: two execs at once pinned their device
/// threads to one CPU without a word). `None` when another process holds
/// every one, or there is nowhere to put locks.
pub fn claim_first(cpus: &[usize]) -> Option<(usize, File)> {
    let dir = lock_dir()?;
    cpus.iter().find_map(|&cpu| {
        let path = dir.join(format!("cinterrupts-cpu{cpu}.lock"));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .or_else(|_| File::open(&path))
            .ok()?;
        // SAFETY: a valid descriptor; a non-blocking exclusive lock.
        (unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0)
            .then_some((cpu, file))
    })
}

#[cfg(test)]
mod claim_first_tests {
    use super::claim_first;

    #[test]
    fn each_claim_takes_a_cpu_no_other_holds_and_gives_it_back_when_dropped() {
        // CPU numbers no machine has, so no real run or exec holds them.
        let cpus = [900_001, 900_002];
        let (a, first) = claim_first(&cpus).expect("a lock directory");
        let (b, _second) = claim_first(&cpus).expect("the other CPU");
        assert_ne!(a, b, "two claims, two CPUs");
        assert!(claim_first(&cpus).is_none(), "every one held");
        drop(first);
        assert_eq!(claim_first(&cpus).map(|(c, _)| c), Some(a), "given back");
    }
}
