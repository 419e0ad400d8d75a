//! `hostcal::measure` on this machine, once (a quick run, shared by the
//! tests: two at once would disturb each other's rounds), and the profile
//! it writes. Bounds are physical, wide enough to hold under load.

use std::path::Path;
use std::sync::OnceLock;

use hostcal::{Derived, HostMeasurement, Options};

/// The tracefs mounts of the machine's namespace (/proc/1/mountinfo: init's,
/// not a namespace of ours), and whether an instance of ours is there.
fn tracefs_state() -> (Vec<String>, bool) {
    let mounts = std::fs::read_to_string("/proc/1/mountinfo")
        .or_else(|_| std::fs::read_to_string("/proc/self/mountinfo"))
        .unwrap()
        .lines()
        .filter(|l| l.contains(" - tracefs "))
        .map(String::from)
        .collect();
    let ours = Path::new("/sys/kernel/tracing/instances")
        .join(format!("cinterrupts-hostcal.{}", std::process::id()))
        .exists();
    (mounts, ours)
}

struct Run {
    m: HostMeasurement,
    before: (Vec<String>, bool),
    after: (Vec<String>, bool),
}

fn run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        // SAFETY: geteuid cannot fail.
        assert_eq!(
            unsafe { libc::geteuid() },
            0,
            "hostcal's tests need root (tracefs's interrupt tracepoints)"
        );
        // Another program (another agent's `capture`) may mount or unmount
        // tracefs in the machine's namespace while we measure: a change
        // that is not ours does not last, so a run that saw one is
        // repeated, up to three times.
        let mut tries = 0;
        loop {
            let before = tracefs_state();
            let m = hostcal::measure(&Options::quick()).unwrap();
            let after = tracefs_state();
            tries += 1;
            if before == after || tries == 3 {
                break Run { m, before, after };
            }
        }
    })
}

#[test]
fn tracefs_is_left_as_found() {
    let r = run();
    assert_eq!(r.before, r.after);
    assert!(!r.after.1, "our tracefs instance is left");
    // And it was used: the handlers were recorded.
    let d = r.m.disk.as_ref().unwrap();
    let irq = d.irq.as_ref().unwrap();
    assert!(irq.handlers > 0 && irq.softirqs > 0, "{irq:?}");
}

#[test]
fn the_profile_written_loads_in_sim() {
    let r = run();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.toml");
    hostcal::write_profile(&r.m, &path).unwrap();
    let p = sim::HostProfile::load(path.to_str().unwrap()).unwrap();
    let d = Derived::of(&r.m);
    assert_eq!(p.syscall, d.syscall);
    assert_eq!(p.context_switch, d.context_switch);
    assert_eq!(p.per_completion, d.per_completion);
    assert_eq!(p.submit_per_request, d.submit_per_request);
    assert_eq!(p.cores, r.m.cores);
    // Written whole: nothing but the profile in the directory.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("host.toml")]);
}

#[test]
fn every_key_carries_a_provenance_comment() {
    let text = hostcal::render(&run().m);
    let lines: Vec<&str> = text.lines().collect();
    let mut keys = 0;
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let key = l.split(" = ").next().unwrap();
        // The comment block right above the key.
        let block: Vec<&str> = lines[..i]
            .iter()
            .rev()
            .take_while(|c| c.starts_with('#'))
            .copied()
            .collect();
        assert!(!block.is_empty(), "{key} has no comment");
        let block = block.join(" ");
        keys += 1;
        // A measured key names its benchmark, median, spread, rounds, date
        // and load; any other says where its value comes from.
        if block.contains("Measured:") {
            if key != "tick" {
                for w in ["median", "min", "max", "rounds", &run().m.date, "load"] {
                    assert!(block.contains(w), "{key}: no {w:?} in {block}");
                }
            }
        } else {
            assert!(
                [
                    "Not measured",
                    "Not measurable",
                    "MAPPING",
                    "Not a model input",
                    "Inside",
                    "`nproc`",
                    "/proc/",
                    "`uname",
                    "MSI-X",
                    "(above)",
                ]
                .iter()
                .any(|w| block.contains(w)),
                "{key}: no source in {block}"
            );
        }
    }
    assert!(keys >= 20, "{keys} keys");
    // The measured ones are the ones this machine can measure.
    for k in [
        "syscall",
        "context_switch",
        "per_completion",
        "buffered_write_per_kib",
    ] {
        let at = lines
            .iter()
            .position(|l| l.starts_with(&format!("{k} =")))
            .unwrap();
        assert!(lines[at - 1..at].iter().all(|l| l.starts_with('#')));
        let block: String = lines[..at]
            .iter()
            .rev()
            .take_while(|c| c.starts_with('#'))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(block.contains("Measured:"), "{k}: {block}");
    }
}

#[test]
fn values_are_within_physical_bounds() {
    let m = &run().m;
    let within = |what: &str, x: f64, lo: f64, hi: f64| {
        assert!((lo..=hi).contains(&x), "{what} = {x}, not in {lo}..{hi}");
    };
    // A system call: above 10 ns (a few dozen cycles at 5 GHz), below
    // 100 us (a loaded VM's).
    within("syscall", m.syscall.median, 10.0, 100_000.0);
    within("syscall min", m.syscall.min, 10.0, m.syscall.median);
    let rt = m.switch_round_trip.as_ref().unwrap().median;
    // Four system calls and two switches at least; under 10 ms.
    within("pipe round trip", rt, 4.0 * 10.0, 10_000_000.0);
    within(
        "io_uring NOP",
        m.uring_nop.as_ref().unwrap().median,
        10.0,
        1_000_000.0,
    );
    for (asked, s) in &m.sleep_overshoot {
        // A sleep never ends early (POSIX); a tick and more late is wrong.
        within(
            &format!("{asked} ns sleep overshoot"),
            s.as_ref().unwrap().median,
            0.0,
            100_000_000.0,
        );
    }
    // 1 KiB: faster than 10 MB/s, slower than 1 TB/s.
    within("memcpy per KiB", m.copy_64k_per_kib.median, 1.0, 100_000.0);
    within(
        "buffered write per KiB",
        m.buffered_write_per_kib.as_ref().unwrap().median,
        1.0,
        100_000.0,
    );
    let d = m.disk.as_ref().unwrap();
    // A 4 KiB read: above 1 us (no disk answers faster through a system
    // call), below 100 ms.
    within("pread", d.read_latency.median, 1_000.0, 100_000_000.0);
    within(
        "disk per read",
        d.device_per_read.median,
        0.0,
        d.read_latency.max * 2.0,
    );
    within(
        "interrupts per read",
        d.interrupts_per_read.median,
        0.01,
        10.0,
    );
    let irq = d.irq.as_ref().unwrap();
    within("irq handler", irq.handler.median, 10.0, 1_000_000.0);
    within(
        "per completion",
        irq.per_completion.median,
        10.0,
        10_000_000.0,
    );
    let dv = Derived::of(m);
    // The path's residual is never charged below zero.
    assert!(dv.submit_per_request <= dv.host_path.unwrap().max(1) * 10);
    assert!(
        matches!(dv.tick, 1_000_000 | 3_333_333 | 4_000_000 | 10_000_000),
        "{}",
        dv.tick
    );
}

#[test]
fn a_bad_output_path_is_refused_before_measuring_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("host.toml");
    let e = hostcal::check_output(&missing).unwrap_err().to_string();
    assert!(
        e.starts_with("-o ") && e.contains("no such directory"),
        "{e}"
    );
    assert!(!e.contains('\n'));
    let e = hostcal::check_output(dir.path()).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
    // write_profile refuses the same, and leaves nothing behind.
    assert!(hostcal::write_profile(&run().m, &missing).is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
