//! CPU per I/O by cause (issue 37 item 3): the cores' busy time split by
//! the host-profile cost each nanosecond was charged for. The parts must
//! sum to the busy time the cores' user, kernel and irq time give, on every
//! path that charges CPU (interrupts, polling, io_uring's SQ thread, the
//! page cache's copy, the fsync path, a measured window that cuts segments
//! at its edges), and a simple job's parts must be its profile's costs.
//! Virtual time, deterministic.

mod common;

use common::config;
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::Completion;

fn run(text: &str, mode: Completion) -> RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", PolicySpec::named("default"), 50 * MS, 1);
    cfg.host.completion = mode;
    sim::simulate(&jobs, &cfg, &mut |_, _| {}).unwrap()
}

/// The parts sum to the busy time, which is the cores' utilisation.
fn check_books(r: &RunReport, what: &str) -> report::CpuParts {
    let p = r.cpu_parts.clone().expect("the simulator breaks CPU down");
    assert_eq!(p.sum_ns(), p.busy_ns, "{what}: {p:?}");
    let busy: f64 = r.cores.iter().map(|c| c.user + c.kernel + c.irq).sum();
    let from_util = busy * r.duration_ns as f64;
    assert!(
        (from_util - p.busy_ns as f64).abs() <= 1e-6 * from_util.max(1.0) + 1.0,
        "{what}: {from_util} against {}",
        p.busy_ns
    );
    assert!(p.busy_ns > 0, "{what}: the cores worked");
    p
}

#[test]
fn the_parts_sum_to_the_busy_time_on_every_path() {
    let cases: [(&str, &str, Completion); 7] = [
        (
            "interrupts, libaio batches, a ramp cutting segments",
            "[a]\nioengine=libaio\niodepth=32\niodepth_batch_submit=8\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\nramp_time=3ms\n\
             [b]\nioengine=psync\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\ncpus_allowed=0\n",
            Completion::Interrupt,
        ),
        (
            "classic polling",
            "[p]\nioengine=pvsync2\nhipri\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\n",
            Completion::Poll,
        ),
        (
            "hybrid polling",
            "[p]\nioengine=pvsync2\nhipri\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\n",
            Completion::Hybrid,
        ),
        (
            "io_uring with an SQ thread",
            "[u]\nioengine=io_uring\niodepth=16\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\nsqthread_poll\n",
            Completion::Interrupt,
        ),
        (
            "buffered writes with fsync, and a rate limit's sleeps",
            "[ls]\nrw=write\nbs=4k\nsize=1g\nioengine=sync\nfsync=1\nrate_iops=1000\ncritical=1\ncpus_allowed=0\ntime_based\n\
             [dirt]\nrw=write\nbs=4k\nsize=1g\nioengine=psync\nrate_iops=20000\ncpus_allowed=1\ntime_based\n",
            Completion::Interrupt,
        ),
        (
            "two threads sharing a core (preemptions)",
            "[a]\nioengine=libaio\niodepth=64\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\nnumjobs=2\ncpus_allowed=0\n",
            Completion::Interrupt,
        ),
        (
            "fio's cpuio beside a reader",
            "[r]\nioengine=psync\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\ncpus_allowed=0\n\
             [c]\nioengine=cpuio\ncpuload=50\ncpuchunks=100\ntime_based\ncpus_allowed=0\n",
            Completion::Interrupt,
        ),
    ];
    for (what, text, mode) in cases {
        let r = run(text, mode);
        let p = check_books(&r, what);
        // Nothing charges an idle-state exit yet: no part, rather than a 0.
        assert_eq!(p.idle_exit_ns, None, "{what}");
        match what {
            "classic polling" => assert!(p.poll_ns > 0, "{what}: {p:?}"),
            "buffered writes with fsync, and a rate limit's sleeps" => {
                assert!(p.copy_ns > 0 && p.wakeup_ns > 0, "{what}: {p:?}")
            }
            _ => {}
        }
    }
}

#[test]
fn with_idle_states_on_the_exit_is_a_part_and_the_books_still_balance() {
    use host::cpuidle::{GovernorKind, Table};
    let jobs = jobs::parse_str(
        "[r]\nioengine=psync\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\nramp_time=2ms\n\
         [t]\nioengine=psync\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\nthinktime=500\ncpus_allowed=1\n",
        "t.fio",
        &|_| None,
    )
    .unwrap()
    .jobs;
    for (table, gov) in [
        (Table::Icx, GovernorKind::Menu),
        (Table::Icx, GovernorKind::Teo),
        (Table::Haltpoll, GovernorKind::Haltpoll),
    ] {
        let mut cfg = config("optane", PolicySpec::named("default"), 50 * MS, 1);
        cfg.host.idle_states = table;
        cfg.host.idle_governor = gov;
        let r = sim::simulate(&jobs, &cfg, &mut |_, _| {}).unwrap();
        let what = format!("{table:?}/{gov:?}");
        let p = check_books(&r, &what);
        let exit = p.idle_exit_ns.expect("idle states on: an idle-exit part");
        assert!(exit > 0, "{what}: {p:?}");
        // The cpuidle model's own total, counted where it charges: the
        // same, but for an exit the window's edges cut.
        let paid = r.idle.as_ref().expect("idle report").idle_exit_ns;
        let diff = exit.abs_diff(paid);
        assert!(
            diff <= paid / 100 + 200_000,
            "{what}: {exit} ns charged against {paid} ns paid"
        );
    }
}

#[test]
fn a_blocking_reads_parts_are_its_profiles_costs() {
    // psync at queue depth 1 with interrupts: every I/O is fio's user work,
    // one system call, one request's submission, one interrupt entry, one
    // completion in the handler and one in the call's return path, one
    // wake-up and one switch back in (the core idles in between).
    let r = run(
        "[r]\nioengine=psync\nrw=randread\nbs=4k\nsize=1g\ndirect=1\ntime_based\n",
        Completion::Interrupt,
    );
    let p = check_books(&r, "psync");
    let h = sim::HostProfile::load("xeon-e5-2660v4").unwrap();
    let ios = r.completed_ios() as f64;
    let per = |ns: u64| ns as f64 / ios;
    let close = |got: f64, want: u64, what: &str| {
        // Within 1%: the window's edges cut an I/O or two.
        assert!(
            (got - want as f64).abs() <= 0.01 * want as f64,
            "{what}: {got:.1} ns per I/O, the profile's {want} ({p:?})"
        );
    };
    close(per(p.user_ns), h.user_per_io, "user");
    close(per(p.syscall_ns), h.syscall, "syscall");
    close(per(p.submit_ns), h.submit_per_request, "submit");
    close(per(p.irq_ns), h.irq_entry, "irq");
    close(
        per(p.completion_ns),
        h.per_completion + h.reap_per_completion,
        "completion",
    );
    close(per(p.wakeup_ns), h.wakeup, "wakeup");
    close(per(p.switch_ns), h.context_switch, "switch");
    assert_eq!((p.poll_ns, p.copy_ns), (0, 0));
    // Cycles are ns at the profile's clock.
    assert_eq!(p.ghz, h.ghz);
}
