//! The measurement as a table for the terminal: one row a benchmark, its
//! median and spread, and the profile key it feeds.

use std::fmt::Write as _;

use crate::profile::Derived;
use crate::stats::num;
use crate::{HostMeasurement, Measured, Spread};

fn row(out: &mut String, what: &str, m: &Measured, unit: &str, key: &str) {
    let _ = match m {
        Ok(s) => writeln!(
            out,
            "  {what:<34} {:>10} {:>10} {:>10}  {unit:<10} {key}",
            num(s.median),
            num(s.min),
            num(s.max)
        ),
        Err(e) => writeln!(
            out,
            "  {what:<34} {:>32}  {unit:<10} {key}: {e}",
            "not measured"
        ),
    };
}

fn ok(s: &Spread) -> Measured {
    Ok(*s)
}

impl HostMeasurement {
    /// The table `calibrate --host` prints.
    pub fn table(&self) -> String {
        let d = Derived::of(self);
        let mut o = String::new();
        let _ = writeln!(
            o,
            "calibrate --host: {} ({} CPUs, Linux {}), {}, {} rounds{} in {}, {:.1} s; load {} -> {}",
            self.hostname,
            self.cores,
            self.kernel,
            self.date,
            self.rounds,
            if self.quick { " (quick)" } else { "" },
            self.policy,
            self.elapsed_ms as f64 / 1000.0,
            self.load_before,
            self.load_after
        );
        let _ = writeln!(
            o,
            "  {:<34} {:>10} {:>10} {:>10}  {:<10} profile key",
            "benchmark", "median", "min", "max", "unit"
        );
        row(
            &mut o,
            "syscall (getppid)",
            &ok(&self.syscall),
            "ns",
            "syscall",
        );
        row(
            &mut o,
            "pipe round trip, one CPU",
            &self.switch_round_trip,
            "ns",
            "context_switch",
        );
        row(
            &mut o,
            "pipe round trip, two CPUs",
            &self.cross_core_round_trip,
            "ns",
            "-",
        );
        for (asked, s) in &self.sleep_overshoot {
            row(
                &mut o,
                &format!("nanosleep {} us: overshoot", asked / 1000),
                s,
                "ns",
                "-",
            );
        }
        row(
            &mut o,
            "io_uring NOP round trip",
            &self.uring_nop,
            "ns",
            "-",
        );
        row(
            &mut o,
            "memcpy 4 KiB",
            &ok(&self.copy_4k_per_kib),
            "ns/KiB",
            "-",
        );
        row(
            &mut o,
            "memcpy 64 KiB",
            &ok(&self.copy_64k_per_kib),
            "ns/KiB",
            "-",
        );
        row(
            &mut o,
            "buffered pwrite 128 KiB",
            &self.buffered_write_per_kib,
            "ns/KiB",
            "buffered_write_per_kib",
        );
        match &self.disk {
            Ok(dm) => {
                let name = &dm.disk.name;
                row(
                    &mut o,
                    &format!("{name}: O_DIRECT 4 KiB pread"),
                    &ok(&dm.read_latency),
                    "ns",
                    "-",
                );
                row(
                    &mut o,
                    &format!("{name}: disk time per read"),
                    &ok(&dm.device_per_read),
                    "ns",
                    "-",
                );
                row(
                    &mut o,
                    "QD1 host path (pread - disk)",
                    &ok(&dm.host_path),
                    "ns",
                    "submit_per_request (residual)",
                );
                row(
                    &mut o,
                    &format!("{name}: interrupts per read"),
                    &ok(&dm.interrupts_per_read),
                    "count",
                    "-",
                );
                match &dm.irq {
                    Ok(i) => {
                        row(&mut o, "irq handler (tracefs)", &ok(&i.handler), "ns", "-");
                        row(
                            &mut o,
                            "BLOCK softirq (tracefs)",
                            &ok(&i.softirq),
                            "ns",
                            "-",
                        );
                        row(
                            &mut o,
                            "  to block_rq_complete (in disk time)",
                            &ok(&i.softirq_before_complete),
                            "ns",
                            "-",
                        );
                        row(
                            &mut o,
                            "  after block_rq_complete",
                            &ok(&i.softirq_after_complete),
                            "ns",
                            "-",
                        );
                        row(
                            &mut o,
                            "handler + softirq per completion",
                            &ok(&i.per_completion),
                            "ns",
                            "per_completion",
                        );
                    }
                    Err(e) => row(
                        &mut o,
                        "irq handler (tracefs)",
                        &Err(e.clone()),
                        "ns",
                        "per_completion",
                    ),
                }
            }
            Err(e) => row(
                &mut o,
                "QD1 host path",
                &Err(e.clone()),
                "ns",
                "submit_per_request",
            ),
        }
        let _ = writeln!(
            o,
            "  idle: driver {}, governor {}, states {} (declared, not measured)",
            if self.idle.driver.is_empty() {
                "none"
            } else {
                &self.idle.driver
            },
            if self.idle.governor.is_empty() {
                "none"
            } else {
                &self.idle.governor
            },
            self.idle
                .states
                .iter()
                .map(|s| format!("{} {} us", s.name, s.latency_us))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            o,
            "profile: syscall {} ns, context_switch {} ns, per_completion {} ns, \
             submit_per_request {} ns (path {} ns less the parts; irq_entry {} and \
             reap_per_completion {} carried over), tick {} ns",
            d.syscall,
            d.context_switch,
            d.per_completion,
            d.submit_per_request,
            d.host_path.map_or("-".into(), |p| p.to_string()),
            d.irq_entry,
            d.reap_per_completion,
            d.tick
        );
        o
    }
}
