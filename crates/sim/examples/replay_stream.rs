//! The streaming replay's figures (issue 41 item 3): a generated stream of
//! N requests (default 200M; an iterator, never a file) replayed in open
//! loop on optane and the default host, printing the wall time, requests
//! per wall second and the peak resident set.
//!
//!     cargo run --release -p cinterrupts-sim --example replay_stream -- [N] [open|closed]

use policy::catalogue::PolicySpec;
use policy::US;
use sim::replay::generate::{peak_rss, steady};
use sim::replay::{simulate_stream, Loop};
use sim::{DeviceProfile, HostProfile, SimConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(200_000_000, |a| a.parse().expect("N"));
    let mode: Loop = args
        .next()
        .map_or(Loop::Open, |a| a.parse().expect("open|closed"));
    let cfg = SimConfig {
        device: DeviceProfile::load("optane").unwrap(),
        host: HostProfile::load("xeon-e5-2660v4").unwrap(),
        policy: PolicySpec::named("cint"),
        seed: 1,
        runtime: None,
    };
    let t = std::time::Instant::now();
    let (r, a, d) = simulate_stream(steady(n, 4, 10 * US, 20 * US), mode, &cfg, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e}"));
    let wall = t.elapsed().as_secs_f64();
    println!(
        "{n} requests ({} loop): {} submitted, {} completed, {} interrupts; {wall:.1} s wall, {:.0} requests per wall second; peak RSS {} MiB",
        mode.name(),
        a.submitted,
        r.completed_ios(),
        r.interrupts,
        n as f64 / wall,
        peak_rss().unwrap_or(0) >> 20
    );
    println!(
        "virtual {:.1} s; drift: late mean {:.2} us, p99 {:.2} us",
        r.duration_ns as f64 / 1e9,
        d.late_mean_ns / 1e3,
        d.late_p99_ns as f64 / 1e3
    );
}
