//! The request path's parts (`io_path.jobs[].parts`, issue 23): each
//! request's submit, device queue, service, interrupt wait and return, on
//! a device with a constant service time so the parts can be checked by
//! hand.

use policy::{PolicySpec, MS};
use report::{PathParts, RunReport};
use sim::{DeviceProfile, HostProfile, SimConfig};

fn run(text: &str, parallelism: u32, policy: PolicySpec) -> RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs;
    let cfg = SimConfig {
        device: DeviceProfile::constant_service("10us", parallelism, 10_000_000).unwrap(),
        host: HostProfile::load("xeon-e5-2660v4").unwrap(),
        policy,
        seed: 1,
        runtime: Some(20 * MS),
    };
    sim::simulate(&jobs, &cfg, &mut |_, _| {}).unwrap()
}

fn adaptive(delta: u64, thr: u32) -> PolicySpec {
    PolicySpec {
        delta: Some(delta),
        thr: Some(thr),
        ..PolicySpec::named("adaptive")
    }
}

fn parts(r: &RunReport, job: usize) -> (PathParts, PathParts) {
    let p = &r
        .io_path
        .as_ref()
        .expect("the simulator reports io_path")
        .jobs[job];
    (p.parts.expect("parts"), p.tail.expect("tail"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// One psync reader on an idle device: nothing queued, the service is the
/// profile's 10 us, the parts add up to the job's clat.
#[test]
fn a_lone_sync_read_has_no_queue_and_its_parts_add_up() {
    let r = run(
        "[s]\nioengine=psync\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\ntime_based\nruntime=1\n",
        1,
        PolicySpec::named("default"),
    );
    let (p, tail) = parts(&r, 0);
    assert_eq!(p.requests, r.jobs[0].read.io_ops);
    assert_eq!(p.queue, 0.0, "{p:?}");
    assert_eq!(p.service, 10_000.0, "{p:?}");
    assert_eq!(p.depth_at_arrival, 0.0, "{p:?}");
    assert_eq!(p.depth_at_done, 0.0, "{p:?}");
    let sum = p.submit + p.queue + p.service + p.deliver + p.after;
    assert!(close(sum, p.clat, 1e-6), "{sum} against {p:?}");
    // fio's clat mean, from the same requests (its histogram's buckets).
    let fio = r.jobs[0].read.clat.mean;
    assert!(close(p.clat, fio, fio * 0.01), "{p:?} against {fio}");
    assert!(tail.requests >= 1 && tail.clat >= p.clat, "{tail:?}");
}

/// A libaio job at iodepth 8 on one unit: each request finds about 7
/// ahead and waits about 7 services in the device's queue.
#[test]
fn a_deep_queue_on_one_unit_shows_as_queue_and_depth() {
    let r = run(
        "[a]\nioengine=libaio\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
         iodepth=8\ntime_based\nruntime=1\n",
        1,
        PolicySpec::named("default"),
    );
    let (p, _) = parts(&r, 0);
    assert_eq!(p.service, 10_000.0, "{p:?}");
    assert!(
        (6.0..=8.0).contains(&p.depth_at_arrival),
        "{}",
        p.depth_at_arrival
    );
    assert!(
        close(p.queue, 10_000.0 * p.depth_at_arrival, 10_000.0),
        "{p:?}"
    );
    // It leaves about as many behind it as it found ahead.
    assert!((6.0..=8.0).contains(&p.depth_at_done), "{p:?}");
}

/// Under adaptive with thr 4 and a 1 ms delta, a lone request in flight
/// never reaches thr: its completion waits the delta in the CQ, and the
/// wait shows as `deliver`, not as queue or service; default delivers it
/// at once.
#[test]
fn coalescing_shows_as_the_deliver_part() {
    let job = "[a]\nioengine=libaio\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
               iodepth=1\ntime_based\nruntime=1\n";
    let (default, _) = parts(&run(job, 1, PolicySpec::named("default")), 0);
    assert_eq!(default.deliver, 0.0, "{default:?}");
    let (lone, _) = parts(&run(job, 1, adaptive(1_000_000, 4)), 0);
    assert!(close(lone.deliver, 1_000_000.0, 20_000.0), "{lone:?}");
    assert_eq!((lone.queue, lone.service), (0.0, 10_000.0), "{lone:?}");
}
