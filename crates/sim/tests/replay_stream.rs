//! Issue 41 item 3: a replay reads its trace as a stream, in memory
//! bounded by its windows (`sim::replay::feed`), not by the trace's
//! length. The one test of this binary, so that the process's peak
//! resident set (`VmHWM`) is this replay's: 500K then 2.5M generated requests
//! (an iterator, no file), the peak under 200 MiB and flat between the
//! two (the 200M-request run is the example `replay_stream`, its figures
//! in crates/sim/README.md).

mod common;

use policy::{PolicySpec, US};
use sim::replay::generate::{peak_rss, steady};
use sim::replay::{simulate_stream, Loop};

const MIB: u64 = 1 << 20;

/// The bound the issue asks for ("e.g. 200 MiB").
const BOUND: u64 = 200 * MIB;

#[test]
fn a_2_5m_request_stream_replays_within_its_memory_bound() {
    let mut cfg = common::config("optane", PolicySpec::named("cint"), 0, 1);
    cfg.runtime = None;
    let mut peaks = Vec::new();
    // 500K and 2.5M (not 1M and 5M): the suite runs unoptimised, where
    // 6M requests took 58 s; the slope between the two is the check.
    for n in [500_000u64, 2_500_000] {
        // Four processes, a request every 10 us, each 20 us: 100k IOPS,
        // two in flight.
        let (r, a, d) = simulate_stream(
            steady(n, 4, 10 * US, 20 * US),
            Loop::Open,
            &cfg,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!((a.submitted, d.requests, d.issued), (n, n, n));
        assert_eq!(r.completed_ios(), n);
        peaks.push(peak_rss().expect("Linux's /proc/self/status"));
    }
    let (one, five) = (peaks[0], peaks[1]);
    assert!(five < BOUND, "peak {} MiB", five / MIB);
    // Five times the requests, the same memory: at most 16 MiB more (a
    // run holding 32 bytes a request would take 64 MiB more).
    assert!(
        five < one + 16 * MIB,
        "500K: {} MiB, 2.5M: {} MiB",
        one / MIB,
        five / MIB
    );
}
