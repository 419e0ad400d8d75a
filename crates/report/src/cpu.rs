//! CPU per I/O (issue 37 item 3): the simulator's breakdown of the
//! workload cores' busy time by what it was spent on ([`CpuParts`]), and
//! the hardware and software counters `run` and `exec` read from
//! `perf_event_open` ([`Counters`]). Both are shown per I/O, in ns and in
//! cycles.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Simulator only: the workload cores' busy time (user + kernel + irq,
/// the cores of `RunReport::cores`) in the measured window, ns, by the
/// host-profile cost it was spent on. The parts sum to `busy_ns`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuParts {
    /// The host profile's clock, GHz: cycles = ns x ghz.
    pub ghz: f64,
    /// The cores' busy time, summed from their user, kernel and irq time
    /// (not from the parts).
    pub busy_ns: u64,
    /// The workload's own user-space work (`user_per_io`, an application's
    /// compute).
    pub user_ns: u64,
    /// System call entry and exit (`syscall`).
    pub syscall_ns: u64,
    /// Submission: block layer and driver (`submit_per_request`).
    pub submit_ns: u64,
    /// Interrupt entry and exit (`irq_entry`), device and timer interrupts.
    pub irq_ns: u64,
    /// Completion: each completion's handling, in the handler or by a
    /// poller (`per_completion`), and the call's own part of it
    /// (`reap_per_completion`).
    pub completion_ns: u64,
    /// Context switches (`context_switch`, `process_switch`).
    pub switch_ns: u64,
    /// Wake-ups (`wakeup`).
    pub wakeup_ns: u64,
    /// Spinning on a polled queue.
    pub poll_ns: u64,
    /// The page cache's copy of buffered writes.
    pub copy_ns: u64,
    /// Idle-state exit latency paid on waking an idle core (the cpuidle
    /// model, issue 37 item 2). `None` with idle states off (the papers'
    /// hosts, every shipped profile's default): nothing charges one.
    #[serde(default)]
    pub idle_exit_ns: Option<u64>,
}

impl CpuParts {
    /// The parts as (name, ns), in the order reports show them; the idle
    /// exit only when it is charged.
    pub fn parts(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("user", self.user_ns),
            ("syscall", self.syscall_ns),
            ("submit", self.submit_ns),
            ("irq", self.irq_ns),
            ("completion", self.completion_ns),
            ("switch", self.switch_ns),
            ("wakeup", self.wakeup_ns),
            ("poll", self.poll_ns),
            ("copy", self.copy_ns),
        ];
        if let Some(ns) = self.idle_exit_ns {
            v.push(("idle_exit", ns));
        }
        v
    }

    /// The parts' sum, ns (equal to `busy_ns` when the books balance).
    pub fn sum_ns(&self) -> u64 {
        self.parts().iter().map(|p| p.1).sum()
    }
}

/// `ns` over `ios`, and in cycles at `ghz`.
fn per_io(ns: u64, ios: u64, ghz: f64) -> (f64, f64) {
    if ios == 0 {
        return (0.0, 0.0);
    }
    let per = ns as f64 / ios as f64;
    (per, per * ghz)
}

/// The text lines of the breakdown over `ios` I/Os.
pub fn write_parts(out: &mut String, p: &CpuParts, ios: u64) {
    use std::fmt::Write;
    let (ns, cyc) = per_io(p.busy_ns, ios, p.ghz);
    let _ = writeln!(
        out,
        "  cpu per I/O: {ns:.0} ns = {cyc:.0} cycles at {} GHz (the cores' busy time over {ios} I/Os), by cause:",
        p.ghz
    );
    let mut line = String::from("   ");
    for (name, part) in p.parts() {
        let (ns, cyc) = per_io(part, ios, p.ghz);
        let _ = write!(line, " {name}={ns:.0}ns/{cyc:.0}c");
    }
    if p.idle_exit_ns.is_none() {
        line.push_str(" (idle exit: idle states off)");
    }
    out.push_str(&line);
    out.push('\n');
}

/// The breakdown as JSON: totals, and per I/O in ns and cycles.
pub fn parts_json(p: &CpuParts, ios: u64) -> Value {
    let (ns, cyc) = per_io(p.busy_ns, ios, p.ghz);
    let mut parts = Map::new();
    for (name, part) in p.parts() {
        let (n, c) = per_io(part, ios, p.ghz);
        parts.insert(
            name.into(),
            json!({"ns": part, "ns_per_io": finite(n), "cycles_per_io": finite(c)}),
        );
    }
    json!({
        "ghz": finite(p.ghz),
        "ios": ios,
        "busy_ns": p.busy_ns,
        "ns_per_io": finite(ns),
        "cycles_per_io": finite(cyc),
        "parts": parts,
    })
}

fn finite(x: f64) -> f64 {
    crate::human::finite(x)
}

/// What `perf_event_open` counted over a real run (`run`, `exec`): the
/// process and its threads, user and kernel. A counter the machine does
/// not expose is `None`, and `unsupported` says which, once.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// The I/Os completed in what was counted (the divisor per I/O).
    pub ios: u64,
    /// What was counted (`the job threads in their measured part`).
    pub scope: String,
    /// Hardware: CPU cycles and instructions retired.
    pub cycles: Option<u64>,
    pub instructions: Option<u64>,
    /// Software: the task clock (CPU time), ns.
    pub task_clock_ns: Option<u64>,
    /// Why a hardware counter is missing (`cycles: not supported by this
    /// machine (perf_event_open: ENOENT)`); `None` when all were read.
    pub unsupported: Option<String>,
}

/// The counters' line over `ios` I/Os; the missing ones said once.
pub fn write_counters(out: &mut String, c: &Counters) {
    use std::fmt::Write;
    let ios = c.ios;
    let per = |x: u64| {
        if ios == 0 {
            0.0
        } else {
            x as f64 / ios as f64
        }
    };
    let mut parts = Vec::new();
    if let Some(x) = c.cycles {
        parts.push(format!("cycles={:.0}", per(x)));
    }
    if let Some(x) = c.instructions {
        parts.push(format!("instructions={:.0}", per(x)));
    }
    if let (Some(cy), Some(ins)) = (c.cycles, c.instructions) {
        if cy > 0 {
            parts.push(format!("IPC={:.2}", ins as f64 / cy as f64));
        }
    }
    if let Some(x) = c.task_clock_ns {
        parts.push(format!("task-clock={:.0}ns", per(x)));
    }
    if !parts.is_empty() {
        let _ = writeln!(
            out,
            "  counters per I/O (perf_event_open; {}, {ios} I/Os): {}",
            c.scope,
            parts.join(", ")
        );
    }
    if let Some(why) = &c.unsupported {
        let _ = writeln!(out, "  counters: {why}");
    }
}

/// The counters as JSON: totals and per I/O; no nulls (a missing counter is
/// absent, and `unsupported` says why).
pub fn counters_json(c: &Counters) -> Value {
    let ios = c.ios;
    let mut m = Map::new();
    m.insert("scope".into(), json!(c.scope));
    m.insert("ios".into(), json!(ios));
    let mut put = |name: &str, x: Option<u64>| {
        if let Some(x) = x {
            m.insert(name.into(), json!(x));
            let per = if ios == 0 { 0.0 } else { x as f64 / ios as f64 };
            m.insert(format!("{name}_per_io"), json!(finite(per)));
        }
    };
    put("cycles", c.cycles);
    put("instructions", c.instructions);
    put("task_clock_ns", c.task_clock_ns);
    if let Some(why) = &c.unsupported {
        m.insert("unsupported".into(), json!(why));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> CpuParts {
        CpuParts {
            ghz: 2.0,
            busy_ns: 1_000,
            user_ns: 100,
            syscall_ns: 200,
            submit_ns: 300,
            irq_ns: 400,
            ..CpuParts::default()
        }
    }

    #[test]
    fn parts_show_per_io_in_ns_and_cycles() {
        let p = parts();
        assert_eq!(p.sum_ns(), p.busy_ns);
        let mut out = String::new();
        write_parts(&mut out, &p, 10);
        assert!(out.contains("100 ns = 200 cycles at 2 GHz"), "{out}");
        assert!(out.contains("irq=40ns/80c"), "{out}");
        assert!(out.contains("idle exit: idle states off"), "{out}");
        let v = parts_json(&p, 10);
        assert_eq!(v["cycles_per_io"], 200.0);
        assert_eq!(v["parts"]["submit"]["cycles_per_io"], 60.0);
        assert!(v["parts"].get("idle_exit").is_none(), "{v}");
    }

    #[test]
    fn missing_counters_are_said_once_and_give_no_numbers() {
        let c = Counters {
            ios: 5,
            scope: "test".into(),
            task_clock_ns: Some(5_000),
            unsupported: Some("cycles, instructions: not supported".into()),
            ..Counters::default()
        };
        let mut out = String::new();
        write_counters(&mut out, &c);
        assert_eq!(out.matches("not supported").count(), 1, "{out}");
        assert!(!out.contains("cycles="), "{out}");
        assert!(out.contains("task-clock=1000ns"), "{out}");
        let v = counters_json(&c);
        assert!(v.get("cycles").is_none(), "{v}");
        assert_eq!(v["task_clock_ns_per_io"], 1000.0);
    }
}
