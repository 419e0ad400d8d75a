//! tracefs `trace` lines (or `perf script` lines) of the block and irq
//! tracepoints, rewritten as
//! blkparse's default output (blktrace's blkparse_fmt.c `process_default`,
//! blktrace 1.2.0): the header `"%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s "`
//! (device, CPU, sequence, seconds.nanoseconds since the first event, pid,
//! action, RWBS), then for an issue (`D`) `"%llu + %u [%s]"` (sector,
//! sectors, command name) and for a completion (`C`) `"%llu + %u [%d]"`
//! (sector, sectors, error). So a capture is read by the same reader as a
//! real `blkparse` output. Interrupts (`irq:irq_handler_entry`) have no
//! blkparse action: they go to a CSV beside it, `time_ns,cpu,irq,name`,
//! on the same time base.
//!
//! The tracepoints' own layout (Linux 6.18, `events/block/*/format`):
//! `block_rq_issue: "%d,%d %s %u (%s) %llu + %u %s,%u,%u [%s]"` (device,
//! RWBS, bytes, command, sector, sectors, ioprio, comm) and
//! `block_rq_complete: "%d,%d %s (%s) %llu + %u %s,%u,%u [%d]"` (... error).
//! `block_bio_queue: "%d,%d %s %llu + %u [%s]"` (a bio entering the
//! block layer, blkparse's `Q`: a bio-based driver such as zram has no
//! request, so no `D`) and `block_bio_complete: "%d,%d %s %llu + %u [%d]"`
//! (its `C`). A tracefs instance's `trace` puts before each `COMM-PID
//! [CPU] FLAGS SECONDS.MICROS: EVENT: `; `perf script -F
//! comm,tid,cpu,time,event,trace --ns` puts `COMM TID [CPU] SECONDS.NANOS:
//! SYSTEM:EVENT: `.
//!
//! `block_plug: "[%s]"` (comm) and `block_unplug: "[%s] %d"` (comm,
//! `nr_rq`: the requests the unplug releases to one queue; Linux 6.18
//! block/blk-mq.c `blk_mq_dispatch_plug_list`) are blkparse's `P` and `U`
//! (`HEADER "[%C]"` and `HEADER "[%C] %U"`, blkparse_fmt.c; RWBS `N`).
//! Neither tracepoint records a device or whether the unplug was explicit
//! (`U`) or from the scheduler (`UT`, which blkparse prints apart): every
//! unplug is written `U`, under the device of the last bio its process
//! queued ([`PlugDevices`]): a plug is the task's own (`current->plug`)
//! and its first request's `Q` comes before the plug event
//! (`blk_add_rq_to_plug` fires `block_plug` after the bio is queued). A
//! plug whose process queued nothing yet is not written; a plug spanning
//! two devices is written under the last one's.

/// One event read from a tracefs or `perf script` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A bio queued (`Q`), an issue to the driver (`D`) or a completion
    /// (`C`).
    Block {
        action: char,
        time_ns: u64,
        cpu: u32,
        pid: u32,
        major: u32,
        minor: u32,
        rwbs: String,
        sector: u64,
        sectors: u32,
        /// The command name (D) or the error (C), as blkparse prints it.
        tail: String,
    },
    /// A plug (`P`, `depth` none) or an unplug (`U`, `depth` the
    /// requests it released), which records no device.
    Plug {
        time_ns: u64,
        cpu: u32,
        pid: u32,
        comm: String,
        depth: Option<u32>,
    },
    /// `irq_handler_entry: irq=N name=NAME`.
    Irq {
        time_ns: u64,
        cpu: u32,
        irq: u32,
        name: String,
    },
}

impl Event {
    /// The event's time (the tracer's clock), in nanoseconds.
    pub fn time_ns(&self) -> u64 {
        match self {
            Event::Block { time_ns, .. }
            | Event::Plug { time_ns, .. }
            | Event::Irq { time_ns, .. } => *time_ns,
        }
    }
}

/// `SECONDS.NANOS` (perf) or `SECONDS.MICROS` (tracefs's text, which
/// prints microseconds: `trace_print_context`, kernel/trace/trace_output.c)
/// to nanoseconds.
fn time_ns(s: &str) -> Option<u64> {
    let (sec, frac) = s.split_once('.')?;
    let scale = match frac.len() {
        9 => 1,
        6 => 1_000,
        _ => return None,
    };
    Some(sec.parse::<u64>().ok()? * 1_000_000_000 + frac.parse::<u64>().ok()? * scale)
}

/// Reads one line of a tracefs instance's `trace` (`COMM-PID [CPU] FLAGS
/// SECONDS.MICROS: EVENT: BODY`) or of `perf script` (`COMM PID [CPU]
/// SECONDS.NANOS: SYSTEM:EVENT: BODY`); `None` for a line of another
/// event, a comment, or one it cannot read.
pub fn parse(line: &str) -> Option<Event> {
    // The prefix: COMM may hold spaces, so read from the " [CPU] ".
    let open = line.find(" [")?;
    let close = open + line[open..].find("] ")?;
    let cpu: u32 = line[open + 2..close].trim().parse().ok()?;
    let task = line[..open].trim_end().rsplit(' ').next()?;
    let pid: u32 = match task.parse() {
        Ok(p) => p,
        Err(_) => task.rsplit_once('-')?.1.parse().ok()?,
    };
    let rest = line[close + 2..].trim_start();
    let (time, rest) = rest.split_once(": ")?;
    // tracefs puts the context flags ("d.h..") before the time.
    let t = time_ns(time.split_whitespace().last()?)?;
    let (event, body) = rest.split_once(": ")?;
    let event = event.trim();
    match event.rsplit(':').next()? {
        // (action, has bytes, has "(cmd) ... ioprio"): the layouts above.
        "block_bio_queue" => block(body, t, cpu, pid, 'Q', false, false),
        "block_bio_complete" => block(body, t, cpu, pid, 'C', false, false),
        "block_rq_issue" => block(body, t, cpu, pid, 'D', true, true),
        "block_rq_complete" => block(body, t, cpu, pid, 'C', false, true),
        "block_plug" | "block_unplug" => {
            let (comm, depth) = body.trim().strip_prefix('[')?.rsplit_once(']')?;
            let depth = match (event.ends_with("block_unplug"), depth.trim()) {
                (true, d) => Some(d.parse().ok()?),
                (false, "") => None,
                (false, _) => return None,
            };
            Some(Event::Plug {
                time_ns: t,
                cpu,
                pid,
                comm: comm.to_string(),
                depth,
            })
        }
        "irq_handler_entry" => {
            let irq = body.split_whitespace().next()?.strip_prefix("irq=")?;
            let name = body.split_once("name=")?.1.trim().to_string();
            Some(Event::Irq {
                time_ns: t,
                cpu,
                irq: irq.parse().ok()?,
                name,
            })
        }
        _ => None,
    }
}

/// One block tracepoint's body: `"MAJ,MIN RWBS [BYTES] [(CMD) ]SECTOR + N
/// [IOPRIO ][TAIL]"`, the request events with the bytes (issue only), the
/// command and the priority, the bio events without.
fn block(
    body: &str,
    t: u64,
    cpu: u32,
    pid: u32,
    action: char,
    bytes: bool,
    request: bool,
) -> Option<Event> {
    let mut f = body.split_whitespace();
    let (major, minor) = f.next()?.split_once(',')?;
    let rwbs = f.next()?.to_string();
    if bytes {
        f.next()?;
    }
    if request {
        // The command, "(...)": empty for a file system's request.
        let mut cmd = f.next()?;
        while !cmd.ends_with(')') {
            cmd = f.next()?;
        }
    }
    let sector: u64 = f.next()?.parse().ok()?;
    if f.next()? != "+" {
        return None;
    }
    let sectors: u32 = f.next()?.parse().ok()?;
    if request {
        f.next()?; // the I/O priority
    }
    let tail = body.rsplit_once('[')?.1.strip_suffix(']')?.to_string();
    Some(Event::Block {
        action,
        time_ns: t,
        cpu,
        pid,
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        rwbs,
        sector,
        sectors,
        tail,
    })
}

/// A block event as blkparse prints it: `since` is the trace's first
/// event's time, `seq` the device's sequence number.
pub fn blkparse_line(e: &Event, since: u64, seq: u64) -> Option<String> {
    let Event::Block {
        action,
        time_ns,
        cpu,
        pid,
        major,
        minor,
        rwbs,
        sector,
        sectors,
        tail,
    } = e
    else {
        return None;
    };
    let rel = time_ns.saturating_sub(since);
    Some(format!(
        "{major:>3},{minor:<3} {cpu:>2} {seq:>8} {:>5}.{:09} {pid:>5} {action:>2} {rwbs:>3} {sector} + {sectors} [{tail}]",
        rel / 1_000_000_000,
        rel % 1_000_000_000
    ))
}

/// A plug or unplug as blkparse prints it, under `device`.
pub fn plug_line(e: &Event, device: (u32, u32), since: u64, seq: u64) -> Option<String> {
    let Event::Plug {
        time_ns,
        cpu,
        pid,
        comm,
        depth,
    } = e
    else {
        return None;
    };
    let rel = time_ns.saturating_sub(since);
    let (major, minor) = device;
    let (action, tail) = match depth {
        None => ('P', format!("[{comm}]")),
        Some(d) => ('U', format!("[{comm}] {d}")),
    };
    Some(format!(
        "{major:>3},{minor:<3} {cpu:>2} {seq:>8} {:>5}.{:09} {pid:>5} {action:>2} {:>3} {tail}",
        rel / 1_000_000_000,
        rel % 1_000_000_000,
        "N"
    ))
}

/// Which device a plug event goes under: the device of the last bio its
/// process queued (the module's comment). Remembers at most [`Self::MAX`]
/// processes; past that it starts again (a plug missed is not written,
/// never written under a wrong device).
#[derive(Debug, Default)]
pub struct PlugDevices {
    last: std::collections::HashMap<u32, (u32, u32)>,
}

impl PlugDevices {
    /// Processes remembered at once (ours: a capture's programs have far
    /// fewer threads).
    pub const MAX: usize = 4096;

    /// The device a plug event goes under (`None`: its process queued
    /// nothing yet), after noting a queued bio's device.
    pub fn device_of(&mut self, e: &Event) -> Option<(u32, u32)> {
        match e {
            Event::Block {
                action: 'Q',
                pid,
                major,
                minor,
                ..
            } => {
                if self.last.len() >= Self::MAX {
                    self.last.clear();
                }
                self.last.insert(*pid, (*major, *minor));
                None
            }
            Event::Plug { pid, .. } => self.last.get(pid).copied(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE: &str = "             fio 16642 [000] 18923.014553836:    block:block_rq_issue: 254,0 RA 4096 () 20898904 + 8 0x2,0,4 [fio]";
    const DONE: &str = "          <idle>     0 [001] 18923.014653837:    block:block_rq_complete: 254,0 RA () 20898904 + 8 be,0,4 [0]";
    const IRQ: &str = "          <idle>     0 [001] 18923.014640000:    irq:irq_handler_entry: irq=36 name=virtio1-req.0";

    #[test]
    fn reads_the_three_events() {
        let Some(Event::Block {
            action: 'D',
            time_ns,
            cpu: 0,
            pid: 16642,
            major: 254,
            minor: 0,
            rwbs,
            sector: 20898904,
            sectors: 8,
            tail,
        }) = parse(ISSUE)
        else {
            panic!("{:?}", parse(ISSUE));
        };
        assert_eq!(
            (time_ns, rwbs.as_str(), tail.as_str()),
            (18_923_014_553_836, "RA", "fio")
        );
        let Some(Event::Block {
            action: 'C',
            tail,
            cpu: 1,
            ..
        }) = parse(DONE)
        else {
            panic!("{:?}", parse(DONE));
        };
        assert_eq!(tail, "0");
        assert_eq!(
            parse(IRQ),
            Some(Event::Irq {
                time_ns: 18_923_014_640_000,
                cpu: 1,
                irq: 36,
                name: "virtio1-req.0".into()
            })
        );
    }

    #[test]
    fn a_command_name_with_spaces_and_a_passthrough_command_are_read() {
        let l = "  kworker/1:1H-kb 31883 [001] 18906.700811747:    block:block_rq_issue: 254,0 W 4096 (28 00 00) 17 + 8 none,0,0 [kworker/1:1H]";
        let Some(Event::Block {
            pid, sector, tail, ..
        }) = parse(l)
        else {
            panic!("{:?}", parse(l));
        };
        assert_eq!((pid, sector, tail.as_str()), (31883, 17, "kworker/1:1H"));
    }

    #[test]
    fn bio_events_are_queues_and_completions() {
        let q = "              dd  1912 [000] 20762.814093000:    block:block_bio_queue: 253,1 WS 0 + 8 [dd]";
        let c = "              dd  1912 [000] 20762.814103000: block:block_bio_complete: 253,1 WS 0 + 8 [0]";
        let Some(Event::Block {
            action: 'Q',
            major: 253,
            minor: 1,
            sectors: 8,
            tail,
            ..
        }) = parse(q)
        else {
            panic!("{:?}", parse(q));
        };
        assert_eq!(tail, "dd");
        let Some(Event::Block {
            action: 'C', tail, ..
        }) = parse(c)
        else {
            panic!("{:?}", parse(c));
        };
        assert_eq!(tail, "0");
    }

    #[test]
    fn tracefs_lines_are_read_with_microseconds() {
        let d = "     lto cgu.0-25075   [001] ..... 29441.454300: block_rq_issue: 254,0 RS 4096 () 236091680 + 8 be,0,4 [fio]";
        let c = "          <idle>-0       [001] ..s1. 29441.454466: block_rq_complete: 254,0 RS () 236091680 + 8 be,0,4 [0]";
        let q = "              dd-1912    [000] ..... 20762.814093: block_bio_queue: 253,1 R 0 + 8 [dd]";
        let i = "           rustc-25830   [001] d.h.. 29441.523705: irq_handler_entry: irq=36 name=virtio1-req.0";
        let Some(Event::Block {
            action: 'D',
            time_ns: 29_441_454_300_000,
            cpu: 1,
            pid: 25075,
            sector: 236091680,
            tail,
            ..
        }) = parse(d)
        else {
            panic!("{:?}", parse(d));
        };
        assert_eq!(tail, "fio");
        assert!(matches!(
            parse(c),
            Some(Event::Block {
                action: 'C',
                pid: 0,
                ..
            })
        ));
        assert!(matches!(
            parse(q),
            Some(Event::Block {
                action: 'Q',
                major: 253,
                minor: 1,
                pid: 1912,
                ..
            })
        ));
        assert_eq!(
            parse(i),
            Some(Event::Irq {
                time_ns: 29_441_523_705_000,
                cpu: 1,
                irq: 36,
                name: "virtio1-req.0".into()
            })
        );
        for l in [
            "# tracer: nop",
            "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
        ] {
            assert_eq!(parse(l), None, "{l}");
        }
    }

    #[test]
    fn plug_events_are_written_under_their_process_s_last_queued_device() {
        let p = "        db_bench-4242    [001] ..... 29441.454300: block_plug: [db_bench]";
        let u = "        db_bench-4242    [001] ..... 29441.454310: block_unplug: [db_bench] 3";
        let q = "        db_bench-4242    [001] ..... 29441.454290: block_bio_queue: 254,0 R 8 + 8 [db_bench]";
        let perf = "db_bench 4243 [000] 29441.454320001: block:block_unplug: [rocksdb:low] 12";
        let (p, u, q) = (parse(p).unwrap(), parse(u).unwrap(), parse(q).unwrap());
        assert_eq!(
            u,
            Event::Plug {
                time_ns: 29_441_454_310_000,
                cpu: 1,
                pid: 4242,
                comm: "db_bench".into(),
                depth: Some(3)
            }
        );
        assert!(
            matches!(parse(perf), Some(Event::Plug { pid: 4243, depth: Some(12), ref comm, .. }) if comm == "rocksdb:low")
        );
        let mut devices = PlugDevices::default();
        // Nothing queued by 4242 yet: the plug has no device.
        assert_eq!(devices.device_of(&p), None);
        assert_eq!(devices.device_of(&q), None);
        let dev = devices.device_of(&u).unwrap();
        assert_eq!(dev, (254, 0));
        let since = 29_441_454_300_000;
        assert_eq!(
            plug_line(&p, dev, since, 4).unwrap(),
            "254,0    1        4     0.000000000  4242  P   N [db_bench]"
        );
        assert_eq!(
            plug_line(&u, dev, since, 5).unwrap(),
            "254,0    1        5     0.000010000  4242  U   N [db_bench] 3"
        );
        // A block event is no plug line.
        assert_eq!(plug_line(&q, dev, since, 6), None);
        for bad in [
            "x-1 [000] ..... 1.000001: block_unplug: [x]",
            "x-1 [000] ..... 1.000001: block_plug: [x] 3",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn other_lines_are_not_events() {
        for l in [
            "",
            "garbage",
            "x 1 [000] 1.5: block:block_rq_issue: 254,0",
            "a 1 [000] 1.000000001: sched:sched_switch: x",
        ] {
            assert_eq!(parse(l), None, "{l}");
        }
    }

    #[test]
    fn writes_blkparse_default_lines() {
        let d = parse(ISSUE).unwrap();
        let c = parse(DONE).unwrap();
        let since = 18_923_014_553_836;
        assert_eq!(
            blkparse_line(&d, since, 1).unwrap(),
            "254,0    0        1     0.000000000 16642  D  RA 20898904 + 8 [fio]"
        );
        assert_eq!(
            blkparse_line(&c, since, 2).unwrap(),
            "254,0    1        2     0.000100001     0  C  RA 20898904 + 8 [0]"
        );
        assert_eq!(blkparse_line(&parse(IRQ).unwrap(), since, 3), None);
    }
}
