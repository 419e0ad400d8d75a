//! fio's `cpuio` engine (engines/cpu.c, fio 3.33): a job that burns
//! `cpuload` percent of one core in cycles of `cpuchunks` microseconds and
//! does no I/O. `fio_cpuio_init` turns the load into a think time after
//! every "I/O": `cpuchunks * (100 - cpuload) / cpuload` us.

use jobs::{Decision, Engine, Issuer, Job, Waiter};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn parsed(text: &str) -> jobs::JobFile {
    jobs::parse_str(&format!("[a]\n{text}"), "t.fio", &|_| None).unwrap_or_else(|e| panic!("{e}"))
}

fn job(text: &str) -> Job {
    parsed(text).jobs.remove(0)
}

fn refusal(text: &str) -> String {
    jobs::parse_str(&format!("[a]\n{text}"), "t.fio", &|_| None)
        .unwrap_err()
        .to_string()
}

#[test]
fn cpuio_defaults_to_fifty_ms_chunks_and_thinks_the_rest_of_each_cycle() {
    let j = job("ioengine=cpuio\ncpuload=25\nruntime=1\ntime_based\n");
    assert_eq!(j.ioengine, Engine::Cpuio);
    assert!(j.ioengine.is_sync() && j.ioengine.is_noio());
    assert_eq!(Waiter::of(j.ioengine), Waiter::Blocking);
    assert_eq!(j.cpuload, Some(25));
    assert_eq!(j.cpuchunks, 50_000);
    // 50000 * 75 / 25 = 150000 us after every 50 ms spin: 25% of a core.
    assert_eq!(j.thinktime, 150_000 * 1_000);
    assert_eq!(j.thinktime_blocks, 1);
}

#[test]
fn cpuio_at_full_load_never_thinks() {
    let j = job("ioengine=cpuio\ncpuload=100\ncpuchunks=1000\nruntime=1\ntime_based\n");
    assert_eq!(j.thinktime, 0);
    assert_eq!(j.cpuchunks, 1_000);
}

#[test]
fn cpuio_think_time_is_whole_microseconds_as_fio_computes_it() {
    // 1000 * 67 / 33 = 2030.3 us: fio's integer division keeps 2030.
    let j = job("ioengine=cpuio\ncpuload=33\ncpuchunks=1000\nruntime=1\n");
    assert_eq!(j.thinktime, 2_030_000);
}

#[test]
fn cpuio_needs_a_load() {
    let e = refusal("ioengine=cpuio\nruntime=1\n");
    assert!(
        e.contains("cpuload") && e.contains("cpu thread needs rate"),
        "{e}"
    );
    let e = refusal("ioengine=cpuio\ncpuload=0\nruntime=1\n");
    assert!(e.contains("cpuload"), "{e}");
}

#[test]
fn cpuio_load_above_100_is_capped_with_a_note() {
    let f = parsed("ioengine=cpuio\ncpuload=150\nruntime=1\n");
    assert_eq!(f.jobs[0].cpuload, Some(100));
    assert_eq!(f.jobs[0].thinktime, 0);
    assert!(f.notes.iter().any(|n| n.message.contains("capped at 100")));
}

#[test]
fn cpuio_replaces_the_jobs_own_think_time_with_a_note() {
    let f = parsed(
        "ioengine=cpuio\ncpuload=50\ncpuchunks=100\nthinktime=7\nthinktime_blocks=4\nruntime=1\n",
    );
    assert_eq!(f.jobs[0].thinktime, 100_000);
    assert_eq!(f.jobs[0].thinktime_blocks, 1);
    assert!(f.notes.iter().any(|n| n.message.contains("replaced")));
}

#[test]
fn cpuio_options_belong_to_the_cpuio_engine() {
    for opt in ["cpuload=50", "cpuchunks=10", "exit_on_io_done=1"] {
        let e = refusal(&format!("ioengine=psync\n{opt}\nsize=1m\n"));
        assert!(e.contains("needs ioengine cpuio"), "{opt}: {e}");
    }
    assert!(refusal("ioengine=cpuio\ncpuload=5\ncpumode=bogus\nruntime=1\n").contains("cpumode"));
    let j = job("ioengine=cpuio\ncpuload=5\ncpumode=qsort\nexit_on_io_done=1\nruntime=1\n");
    assert!(j.exit_on_io_done);
}

#[test]
fn cpuio_issuer_alternates_one_spin_and_one_think() {
    let j = job("ioengine=cpuio\ncpuload=50\ncpuchunks=1000\nruntime=1\ntime_based\n");
    let mut iss = Issuer::new(&j, j.bounds(None).unwrap(), 0);
    let mut rng = StdRng::seed_from_u64(1);
    let mut now = 0;
    let mut spins = 0;
    for _ in 0..6 {
        match iss.next(now, 0, &mut rng) {
            Decision::Issue(mut b) => {
                assert_eq!(b.len(), 1, "one chunk at a time (FIO_SYNCIO)");
                while iss.take(&mut b, &mut rng).is_some() {}
                spins += 1;
                now += 1_000_000; // the 1 ms spin
            }
            Decision::SleepUntil(t) => {
                assert_eq!(t - now, 1_000_000, "think 1000 * 50 / 50 us");
                now = t;
            }
            d => panic!("unexpected {d:?}"),
        }
    }
    assert_eq!(spins, 3);
}

#[test]
fn cinterrupts_jobs_shows_a_cpuio_job_by_its_load_not_by_marks() {
    let d = job("ioengine=cpuio\ncpuload=25\ncpuchunks=1000\nruntime=1\n").describe();
    assert!(
        d.starts_with("a: ioengine=cpuio cpuload=25% cpuchunks=1.000ms thinktime=3.000ms"),
        "{d}"
    );
    assert!(!d.contains("marks"), "{d}");
}
