//! The examples at the paper's scale (80 M items) for 50 ms of virtual time
//! on the fake front end (every thread on its own core, every I/O 10 us, no
//! device limit): that they set up fast and run, and what they do. Not a
//! result of the paper's: the simulator's device and interrupts are absent.
//!
//!     cargo test --release -p cinterrupts-apps --test scale -- --ignored --nocapture

mod common;

use std::path::Path;

use apps::file::AppFile;

#[test]
#[ignore]
fn the_examples_at_paper_scale() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/apps");
    for f in [
        "kvell-ycsb-a.toml",
        "kvell-ycsb-c.toml",
        "kvell-ycsb-d.toml",
        "kvell-ycsb-e-16.toml",
        "kvell-ycsb-e-256.toml",
    ] {
        let t0 = std::time::Instant::now();
        let threads = AppFile::load(&dir.join(f)).unwrap().threads(1).unwrap();
        let setup = t0.elapsed();
        let trace = common::Run {
            stop_at: Some(50_000_000),
            ..Default::default()
        }
        .run(threads);
        let n = trace.ops.len();
        assert!(n > 0, "{f}: no operation");
        let mut lat: Vec<u64> = trace.ops.iter().map(|o| o.end - o.start).collect();
        lat.sort_unstable();
        let ios: usize = trace.submits.iter().map(|s| s.ios.len()).sum();
        let batch = ios as f64 / trace.submits.len() as f64;
        assert!(batch > 1.0, "{f}: batches of {batch}");
        println!(
            "{f}: setup {setup:?}; {n} ops in {:.1} ms; {ios} I/Os in {} io_submits \
             ({batch:.1} each); latency p50 {} us, p99 {} us; {} parks",
            trace.end as f64 / 1e6,
            trace.submits.len(),
            lat[n / 2] / 1000,
            lat[n * 99 / 100] / 1000,
            trace.parks
        );
    }
}
