//! The slowest 1% of each job's requests (`io_path`'s `tail`) from records
//! kept on a guess (issue 26 item 8): the same report as keeping every
//! record, whether the guess holds or falls short and the run is made
//! again, for job files and application threads. Its own test binary:
//! `CINTERRUPTS_IOPATH_RECORDS`, which keeps every record, is the
//! process's.

mod common;

use common::*;
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::{Audit, RECORDS_ENV};

/// `runtime_ms`: every job's, as `sim --runtime`; `None`, each job's own.
fn run(text: &str, runtime_ms: Option<u64>) -> (RunReport, Audit) {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let mut cfg = config("optane", PolicySpec::named("cint"), 0, 1);
    cfg.runtime = runtime_ms.map(|ms| ms * MS);
    sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap()
}

/// The report kept on a guess and the one keeping every record (the
/// variable set: the records are written too).
fn guessed_and_all(text: &str, runtime_ms: Option<u64>) -> (RunReport, Audit, RunReport, Audit) {
    let (guessed, a) = run(text, runtime_ms);
    let file = std::env::temp_dir().join(format!("iopath-tail-{}.csv", std::process::id()));
    std::env::set_var(RECORDS_ENV, &file);
    let (all, b) = run(text, runtime_ms);
    std::env::remove_var(RECORDS_ENV);
    std::fs::remove_file(&file).unwrap();
    (guessed, a, all, b)
}

/// The tests of this binary one at a time: one of them sets the variable.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn json(r: &RunReport) -> String {
    serde_json::to_string(r).unwrap()
}

// TOS Fig 10's mixed workload: a blocking reader beside a libaio one on a
// core, latencies that do not drift.
const MIXED: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\ntime_based\n\
                     [sync]\nioengine=psync\n\
                     [async]\nioengine=libaio\niodepth=16\niodepth_batch_submit=16\n\
                     iodepth_batch_complete_min=16\n";

// A reader whose first 300 ms share its core with a 256-deep burst: its
// slowest 1% all come from then, further down that phase's latencies
// than the guess kept while it lasted.
const DRIFT: &str = "[global]\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=0\ntime_based\n\
                     [burst]\nioengine=libaio\niodepth=256\niodepth_batch_submit=16\n\
                     iodepth_batch_complete_min=16\nruntime=300ms\n\
                     [reader]\nioengine=psync\nruntime=1500ms\n";

#[test]
fn the_slowest_percent_kept_on_a_guess_is_what_keeping_every_record_gives() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // A run that does not drift: the guess holds, keeps a few percent of
    // the records, and the report is the one keeping them all.
    let (guessed, a, all, b) = guessed_and_all(MIXED, Some(1_500));
    assert_eq!(json(&guessed), json(&all));
    assert_eq!((a.tail_reruns, b.tail_reruns), (0, 0));
    assert_eq!(a.records_measured, b.records_measured);
    assert_eq!(b.records_kept, b.records_measured);
    assert!(a.records_measured > 20_000, "{}", a.records_measured);
    // The first 16,384 of each of the two threads, and a few percent of
    // the rest.
    assert!(
        a.records_kept * 3 < a.records_measured,
        "kept {} of {}",
        a.records_kept,
        a.records_measured
    );
    let tails = guessed.io_path.as_ref().unwrap().jobs.iter();
    assert!(tails
        .clone()
        .all(|j| j.tail.is_some_and(|t| t.requests > 0)));

    // A run that drifts: the guess falls short, the run is made again from
    // the first one's cuts, and the report is still the one keeping all.
    let (guessed, a, all, b) = guessed_and_all(DRIFT, None);
    assert_eq!(a.tail_reruns, 1);
    assert_eq!(b.tail_reruns, 0);
    assert_eq!(json(&guessed), json(&all));
    assert!(a.records_kept < a.records_measured);
}

#[test]
fn an_application_run_made_again_keeps_a_few_percent_and_reports_the_same() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // bench sim --apps' threads: 16 closed-loop threads on a 24-core host.
    let ops = 150_000;
    let mut cfg = config("optane", PolicySpec::named("cint"), 1_000 * MS, 1);
    cfg.host.cores = sim::bench::APP_CORES;
    let (once, a) = sim::simulate_app(sim::bench::app_threads(ops), &cfg, &mut |_, _| {}).unwrap();
    let mut made = 0;
    let mut again = || {
        made += 1;
        Ok(sim::bench::app_threads(ops))
    };
    let threads = sim::bench::app_threads(ops);
    let (guessed, b) = sim::simulate_app_with(threads, &mut again, &cfg, &mut |_, _| {}).unwrap();
    assert_eq!(json(&once), json(&guessed));
    // Made again only for a second run, which this one does not need.
    assert_eq!((made, b.tail_reruns), (0, 0));
    assert_eq!(a.records_kept, a.records_measured);
    assert_eq!(b.records_measured, a.records_measured);
    // 16 threads of about 23,000 records each: each keeps its first
    // 16,384 and a few percent of the rest.
    assert!(
        b.records_kept < b.records_measured,
        "kept {} of {}",
        b.records_kept,
        b.records_measured
    );
}
