//! The interrupt handler's and the block softirq's times, from the
//! kernel's own tracepoints: `irq:irq_handler_entry`/`irq_handler_exit`
//! (kernel/irq/handle.c, around each action of the vector) filtered to the
//! disk's vectors, and `irq:softirq_entry`/`softirq_exit` filtered to
//! `vec == 4` (BLOCK_SOFTIRQ, include/linux/interrupt.h), where a
//! single-queue device's completions run (`blk_mq_complete_request_remote`
//! raises it, block/blk-mq.c).
//!
//! Recorded in a tracefs instance of our own
//! (`instances/cinterrupts-hostcal.PID`, Documentation/trace/ftrace.rst
//! "Instances"), as `crates/capture` records, with `trace_clock` mono (so
//! event times compare with CLOCK_MONOTONIC) and `options/raw`, whose lines
//! carry the time in nanoseconds (`print_raw_fmt`, kernel/trace/trace.c)
//! where the default text rounds to microseconds, too coarse for a handler
//! of a few.
//!
//! **tracefs is left as found, even with other programs beside.** The
//! recorder is one thread in a mount namespace of its own
//! (`unshare(CLONE_NEWNS)` is per thread: it unshares the thread's
//! `fs_struct`, kernel/fork.c `ksys_unshare`), with every mount made
//! private first so nothing propagates out. There it mounts tracefs if
//! the copy it inherited has none; the mount dies with the thread's
//! namespace. So the machine's mount table never changes, and a `capture`
//! running at the same time, which mounts and unmounts tracefs in the
//! machine's namespace, is not disturbed (unmounting there would pull
//! tracefs from under it). The instance itself is global (tracefs has one
//! tracing state): it is removed at the end, and an instance left by a
//! killed run (its PID gone) is removed by the next.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

// Removing an instance and reading its lost events are capture's, one
// copy of each.
use capture::{lost, remove_instance};

const TRACEFS: &str = "/sys/kernel/tracing";
/// Instance names: this prefix and the process's PID.
const PREFIX: &str = "cinterrupts-hostcal.";
/// The instance's buffer per CPU, KiB: a raw event line is ~40 bytes in
/// the buffer's binary form less (capture measured 57 bytes an event with
/// longer records); 8 MiB a CPU holds some 150,000 events, the full run's
/// ~30,000 (4 per read) with room.
const BUFFER_KB: u32 = 8192;

/// What a recorded event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    IrqEntry,
    IrqExit,
    SoftirqEntry,
    SoftirqExit,
    /// `block:block_rq_complete` of the disk (in `blk_update_request`,
    /// before `blk_mq_end_request`'s accounting: where the disk's read
    /// time in its stat file ends, block/blk-mq.c).
    RqComplete,
}

/// One recorded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub cpu: u32,
    /// CLOCK_MONOTONIC, ns.
    pub time_ns: u64,
    pub kind: Kind,
}

/// What the instance recorded.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub events: Vec<Event>,
    /// Events the buffer could not keep (`per_cpu/cpuN/stats` "overrun" and
    /// "dropped events"): 0, or the recording is not whole.
    pub lost: u64,
}

/// The recording thread.
pub struct Tracer {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<Result<Trace, String>>,
}

impl Tracer {
    /// Starts recording the handlers of `irqs` and the block softirq;
    /// returns once the instance records. Needs root (CAP_SYS_ADMIN).
    /// `dev` is the disk's (major, minor), for its request completions.
    pub fn start(irqs: &[u32], dev: (u32, u32)) -> Result<Tracer, String> {
        if irqs.is_empty() {
            return Err("no interrupt vector to record".into());
        }
        let filter = irqs
            .iter()
            .map(|i| format!("irq == {i}"))
            .collect::<Vec<_>>()
            .join(" || ");
        let (ready_tx, ready_rx) = mpsc::channel();
        let (stop, stop_rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let mut instance = match setup(&filter, dev) {
                Ok(i) => i,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.clone()));
                    return Err(e);
                }
            };
            let _ = ready_tx.send(Ok(()));
            let _ = stop_rx.recv();
            instance.read()
        });
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Tracer { stop, thread }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err("the tracing thread ended".into()),
        }
    }

    /// Stops recording and returns the events, the instance removed.
    pub fn stop(self) -> Result<Trace, String> {
        let _ = self.stop.send(());
        self.thread
            .join()
            .map_err(|_| "the tracing thread panicked".to_string())?
    }
}

/// Our instance, removed when dropped.
struct Instance {
    dir: PathBuf,
    ids: [(u32, Kind); 5],
}

impl Drop for Instance {
    fn drop(&mut self) {
        remove_instance(&self.dir);
    }
}

impl Instance {
    fn read(&mut self) -> Result<Trace, String> {
        set(&self.dir, "tracing_on", "0")?;
        let path = self.dir.join("trace");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut t = parse(&text, &self.ids);
        t.lost += lost(&self.dir);
        Ok(t)
    }
}

/// The recorded lines (`options/raw`: "PID CPU TIME_NS type: ID"), the
/// events of `ids` kept; "[LOST N EVENTS]" lines counted.
pub fn parse(text: &str, ids: &[(u32, Kind)]) -> Trace {
    let mut t = Trace::default();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.split("[LOST ").nth(1) {
            t.lost += rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(1);
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(cpu), Some(time_ns)) = (
            f.get(1).and_then(|c| c.parse().ok()),
            f.get(2).and_then(|c| c.parse().ok()),
        ) else {
            continue;
        };
        let Some(id) = f
            .iter()
            .position(|w| *w == "type:")
            .and_then(|i| f.get(i + 1))
            .and_then(|w| w.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some((_, kind)) = ids.iter().find(|(i, _)| *i == id) {
            t.events.push(Event {
                cpu,
                time_ns,
                kind: *kind,
            });
        }
    }
    t
}

fn set(dir: &Path, file: &str, value: &str) -> Result<(), String> {
    std::fs::write(dir.join(file), value).map_err(|e| format!("{}/{file}: {e}", dir.display()))
}

fn syscall_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// In the calling thread: a private mount namespace with tracefs in it,
/// stale instances removed, ours made and recording.
fn setup(filter: &str, dev: (u32, u32)) -> Result<Instance, String> {
    // SAFETY: unshare affects the calling thread only (see the module).
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(syscall_err(
            "unshare(CLONE_NEWNS) for a private tracefs mount (needs root)",
        ));
    }
    // SAFETY: NUL-terminated strings; MS_REC|MS_PRIVATE changes only the
    // propagation of our namespace's copies.
    let r = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(syscall_err("making our mounts private"));
    }
    let root = Path::new(TRACEFS);
    if !root.join("instances").is_dir() {
        // SAFETY: NUL-terminated strings.
        let r = unsafe {
            libc::mount(
                c"nodev".as_ptr(),
                c"/sys/kernel/tracing".as_ptr(),
                c"tracefs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(syscall_err("mount -t tracefs nodev /sys/kernel/tracing"));
        }
    }
    remove_stale(&root.join("instances"));
    let dir = root
        .join("instances")
        .join(format!("{PREFIX}{}", std::process::id()));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let id = |e: &str| -> Result<u32, String> {
        let p = dir.join("events").join(e).join("id");
        std::fs::read_to_string(&p)
            .map_err(|e| format!("{}: {e}", p.display()))?
            .trim()
            .parse()
            .map_err(|_| format!("{}: not a number", p.display()))
    };
    let mut inst = Instance {
        ids: [
            (0, Kind::IrqEntry),
            (0, Kind::IrqExit),
            (0, Kind::SoftirqEntry),
            (0, Kind::SoftirqExit),
            (0, Kind::RqComplete),
        ],
        dir: dir.clone(),
    };
    for (slot, e) in inst.ids.iter_mut().zip([
        "irq/irq_handler_entry",
        "irq/irq_handler_exit",
        "irq/softirq_entry",
        "irq/softirq_exit",
        "block/block_rq_complete",
    ]) {
        slot.0 = id(e)?;
    }
    set(&dir, "tracing_on", "0")?;
    set(&dir, "buffer_size_kb", &BUFFER_KB.to_string())?;
    set(&dir, "trace_clock", "mono")?;
    for (opt, v) in [
        ("overwrite", "0"),
        ("raw", "1"),
        ("context-info", "1"),
        ("latency-format", "0"),
    ] {
        set(&dir, &format!("options/{opt}"), v)?;
    }
    // The kernel's dev_t in a tracepoint: MKDEV, major << 20 | minor
    // (include/linux/kdev_t.h).
    let dev_filter = format!("dev == {}", (dev.0 << 20) | dev.1);
    for (e, f) in [
        ("irq/irq_handler_entry", filter),
        ("irq/irq_handler_exit", filter),
        // BLOCK_SOFTIRQ (include/linux/interrupt.h).
        ("irq/softirq_entry", "vec == 4"),
        ("irq/softirq_exit", "vec == 4"),
        ("block/block_rq_complete", &dev_filter),
    ] {
        set(&dir, &format!("events/{e}/filter"), f)?;
        set(&dir, &format!("events/{e}/enable"), "1")?;
    }
    set(&dir, "tracing_on", "1")?;
    Ok(inst)
}

/// Removes instances of ours whose process is gone (a killed run's).
fn remove_stale(instances: &Path) {
    let Ok(dir) = std::fs::read_dir(instances) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            remove_instance(&e.path());
        }
    }
}

/// Durations (exit - entry) of the `entry`/`exit` pairs on each CPU whose
/// entry falls in `[from, to)`, ns. An entry without its exit (the
/// recording's edge) is dropped.
pub fn durations(events: &[Event], entry: Kind, exit: Kind, from: u64, to: u64) -> Vec<u64> {
    let mut open: std::collections::BTreeMap<u32, u64> = Default::default();
    let mut out = Vec::new();
    for e in events {
        if e.kind == entry {
            open.insert(e.cpu, e.time_ns);
        } else if e.kind == exit {
            if let Some(t) = open.remove(&e.cpu) {
                if (from..to).contains(&t) {
                    out.push(e.time_ns.saturating_sub(t));
                }
            }
        }
    }
    out
}

/// For each BLOCK softirq on a CPU whose entry falls in `[from, to)` and
/// which completed a request of the disk: (entry to the first
/// `block_rq_complete`, the last `block_rq_complete` to exit), ns: the
/// softirq's part inside the disk's accounted time and its part after.
pub fn softirq_split(events: &[Event], from: u64, to: u64) -> Vec<(u64, u64)> {
    let mut open: std::collections::BTreeMap<u32, (u64, Option<(u64, u64)>)> = Default::default();
    let mut out = Vec::new();
    for e in events {
        match e.kind {
            Kind::SoftirqEntry => {
                open.insert(e.cpu, (e.time_ns, None));
            }
            Kind::RqComplete => {
                if let Some((_, c)) = open.get_mut(&e.cpu) {
                    let first = c.map_or(e.time_ns, |(f, _)| f);
                    *c = Some((first, e.time_ns));
                }
            }
            Kind::SoftirqExit => {
                if let Some((t, Some((first, last)))) = open.remove(&e.cpu) {
                    if (from..to).contains(&t) {
                        out.push((first.saturating_sub(t), e.time_ns.saturating_sub(last)));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: [(u32, Kind); 5] = [
        (225, Kind::IrqEntry),
        (224, Kind::IrqExit),
        (223, Kind::SoftirqEntry),
        (222, Kind::SoftirqExit),
        (300, Kind::RqComplete),
    ];

    #[test]
    fn raw_lines_give_nanosecond_times() {
        // As this kernel printed them (Linux 6.18, options/raw, 2026-12-07).
        let text = "# tracer: nop\n#\n\
            10651 1 9458509872625 type: 225\n\
            10651 1 9458509876461 type: 224\n\
            10651 1 9458509877523 type: 223\n\
            10651 1 9458509900367 type: 222\n\
            CPU:1 [LOST 3 EVENTS]\n\
            10651 0 9458509900999 type: 99\n";
        let t = parse(text, &IDS);
        assert_eq!(t.lost, 3);
        assert_eq!(t.events.len(), 4);
        assert_eq!(
            durations(&t.events, Kind::IrqEntry, Kind::IrqExit, 0, u64::MAX),
            vec![3_836]
        );
        assert_eq!(
            durations(
                &t.events,
                Kind::SoftirqEntry,
                Kind::SoftirqExit,
                0,
                u64::MAX
            ),
            vec![22_844]
        );
        // Outside the window: none.
        assert!(durations(&t.events, Kind::IrqEntry, Kind::IrqExit, 0, 9458509872625).is_empty());
    }

    #[test]
    fn a_softirq_splits_at_its_request_completion() {
        let e = |cpu, time_ns, kind| Event { cpu, time_ns, kind };
        let ev = [
            e(1, 100, Kind::SoftirqEntry),
            e(0, 105, Kind::RqComplete), // another CPU's: not this softirq's
            e(1, 110, Kind::RqComplete),
            e(1, 150, Kind::SoftirqExit),
            // A softirq with no request of the disk: none.
            e(1, 200, Kind::SoftirqEntry),
            e(1, 220, Kind::SoftirqExit),
        ];
        assert_eq!(softirq_split(&ev, 0, 1_000), vec![(10, 40)]);
    }

    #[test]
    fn pairs_are_taken_per_cpu() {
        let e = |cpu, time_ns, kind| Event { cpu, time_ns, kind };
        let ev = [
            e(0, 100, Kind::IrqEntry),
            e(1, 110, Kind::IrqEntry),
            e(1, 115, Kind::IrqExit),
            e(0, 130, Kind::IrqExit),
            e(0, 200, Kind::IrqExit),
        ];
        assert_eq!(
            durations(&ev, Kind::IrqEntry, Kind::IrqExit, 0, 1_000),
            vec![5, 30]
        );
    }
}
