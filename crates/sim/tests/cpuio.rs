//! fio's `cpuio` engine in the simulator (engines/cpu.c): a thread that
//! spins `cpuchunks` us of user time and sleeps the rest of each cycle to
//! hold `cpuload` percent of its core, through the core's scheduler (CFS
//! and the `--wakeup` rule), doing no I/O.

mod common;

use common::{config, lat_us};
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::{Audit, Wakeup};

fn run(text: &str, wakeup: Wakeup) -> (RunReport, Audit) {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs;
    let mut cfg = config("optane", PolicySpec::named("default"), 300 * MS, 1);
    cfg.host.wakeup_rule = wakeup;
    let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    assert_eq!(
        (a.duplicates, a.stranded, a.unfinished_threads),
        (0, 0, 0),
        "{a:?}"
    );
    (r, a)
}

/// A job's user time as a share of the window.
fn usr(r: &RunReport, job: &str) -> f64 {
    let j = r.jobs.iter().find(|j| j.name == job).unwrap();
    r.share_of_window(j.usr_ns)
}

const READER: &str = "[reader]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\n\
                      time_based\nruntime=1\n";

#[test]
fn cpuio_holds_its_load_on_an_idle_core_and_does_no_io() {
    let text = format!(
        "{READER}cpus_allowed=1\n[burn]\nioengine=cpuio\ncpuload=50\ncpuchunks=1000\n\
         cpus_allowed=0\ntime_based\nruntime=1\n"
    );
    let (r, _) = run(&text, Wakeup::Plain);
    let burn = r.jobs.iter().find(|j| j.name == "burn").unwrap();
    assert_eq!(burn.read.io_ops + burn.write.io_ops, 0);
    // 1 ms spins, 1 ms sleeps: half the core, less a cycle's edge.
    let share = usr(&r, "burn");
    assert!((0.47..=0.51).contains(&share), "{share}");
}

#[test]
fn cpuio_at_full_load_takes_what_the_other_thread_leaves() {
    let text = format!(
        "{READER}cpus_allowed=0\n[burn]\nioengine=cpuio\ncpuload=100\n\
         cpus_allowed=0\ntime_based\nruntime=1\n"
    );
    let (r, _) = run(&text, Wakeup::Plain);
    let cpu = |job: &str| {
        let j = r.jobs.iter().find(|j| j.name == job).unwrap();
        r.share_of_window(j.usr_ns + j.sys_ns)
    };
    let reader = r.jobs.iter().find(|j| j.name == "reader").unwrap();
    // The core is never idle: what the reader (which sleeps in every
    // pread, and preempts the burner at each wake-up) and the interrupts
    // leave, the burner takes (its switches in count as its system time).
    assert!(
        cpu("burn") + cpu("reader") > 0.9,
        "{} {}",
        cpu("burn"),
        cpu("reader")
    );
    assert!(usr(&r, "burn") > 0.2, "{}", usr(&r, "burn"));
    assert!(reader.read.io_ops > 1_000, "{}", reader.read.io_ops);
}

#[test]
fn the_wakeup_rule_decides_how_long_a_reader_waits_behind_a_burner() {
    // A paced critical reader (its vruntime lags, so CFS places it behind)
    // and a burner on core 0.
    let text = "[ls]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\ncritical\n\
                rate_iops=2000\ncpus_allowed=0\ntime_based\nruntime=1\n\
                [burn]\nioengine=cpuio\ncpuload=100\ncpus_allowed=0\ntime_based\nruntime=1\n";
    let alone = "[ls]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\ncritical\n\
                 rate_iops=2000\ncpus_allowed=0\ntime_based\nruntime=1\n";
    let (a, _) = run(alone, Wakeup::Vanilla);
    let (v, _) = run(text, Wakeup::Vanilla);
    let (b, _) = run(text, Wakeup::Boost);
    // The burner can only delay the reader (a switch from it is a process
    // switch, and it may hold the CPU in a segment), never speed it up;
    // the boost takes no more than vanilla.
    assert!(
        lat_us(&v, "ls") >= lat_us(&a, "ls"),
        "{} {}",
        lat_us(&v, "ls"),
        lat_us(&a, "ls")
    );
    assert!(lat_us(&b, "ls") <= lat_us(&v, "ls") * 1.01);
}

#[test]
fn exit_on_io_done_ends_the_burner_with_the_io_jobs() {
    let text = "[reader]\nrw=randread\nbs=4k\nsize=4m\nioengine=psync\ndirect=1\ncpus_allowed=1\n\
                [burn]\nioengine=cpuio\ncpuload=100\ncpuchunks=1000\nexit_on_io_done=1\n\
                cpus_allowed=0\ntime_based\nruntime=10\n";
    let (r, _) = run(text, Wakeup::Plain);
    // 1,024 reads of ~10 us: the run ends with them, not after 300 ms.
    assert!(r.duration_ns < 50 * MS, "{}", r.duration_ns);
    let burn = usr(&r, "burn");
    assert!(burn > 0.9, "{burn}");
}
