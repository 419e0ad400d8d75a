//! blk-mq's plug flush in the middle of a submit call (Linux 5.0
//! `blk_mq_make_request`: a plug holding `BLK_MAX_REQUEST_COUNT` = 16
//! requests is flushed to the device when the next one arrives): a batch
//! of more than 16 reaches the device 16 at a time while the call builds
//! the rest; a batch of 16 or fewer when the call ends.

use policy::{PolicySpec, MS};
use report::{PathParts, RunReport};
use sim::{DeviceProfile, HostProfile, SimConfig};

fn run(batch: u32, policy: PolicySpec) -> (RunReport, HostProfile) {
    let text = format!(
        "[a]\nioengine=libaio\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
         iodepth={batch}\niodepth_batch_submit={batch}\niodepth_batch_complete_min={batch}\n\
         time_based\nruntime=1\n"
    );
    let jobs = jobs::parse_str(&text, "t.fio", &|_| None).unwrap().jobs;
    let host = HostProfile::load("xeon-e5-2660v4").unwrap();
    let cfg = SimConfig {
        // Enough units that no request queues in the device.
        device: DeviceProfile::constant_service("10us", 256, 10_000_000).unwrap(),
        host: host.clone(),
        policy,
        seed: 1,
        runtime: Some(20 * MS),
    };
    (sim::simulate(&jobs, &cfg, &mut |_, _| {}).unwrap(), host)
}

fn parts(r: &RunReport) -> PathParts {
    r.io_path.as_ref().expect("io_path").jobs[0]
        .parts
        .expect("parts")
}

/// cint with the delta and thr out of reach: no interrupt comes while the
/// thread is in its submit call, so the call's time is exactly its cost.
fn quiet() -> PolicySpec {
    PolicySpec {
        delta: Some(MS),
        thr: Some(65_535),
        ..PolicySpec::named("cint")
    }
}

/// A batch of 16: every request reaches the device when the call ends,
/// one system call plus 16 requests' submit costs after it began.
#[test]
fn a_batch_of_sixteen_reaches_the_device_when_the_call_ends() {
    let (r, host) = run(16, quiet());
    let p = parts(&r);
    let call = (host.syscall + 16 * host.submit_per_request) as f64;
    assert!(p.requests > 100, "{p:?}");
    assert!((p.submit - call).abs() < 1.0, "{} against {call}", p.submit);
}

/// A batch of 64: four pieces of 16 reach the device after 16, 32, 48 and
/// 64 requests are built, so a request waits on average the mean of the
/// four, not the whole call.
#[test]
fn a_batch_of_sixty_four_reaches_the_device_sixteen_at_a_time() {
    let (r, host) = run(64, quiet());
    let p = parts(&r);
    let (s, per) = (host.syscall as f64, host.submit_per_request as f64);
    let whole = s + 64.0 * per;
    let pieces = s + (16.0 + 32.0 + 48.0 + 64.0) / 4.0 * per;
    assert!(p.requests > 100, "{p:?}");
    assert!(
        (p.submit - pieces).abs() < 1.0,
        "{} against {pieces}",
        p.submit
    );
    assert!(
        p.submit < whole - 10.0 * per,
        "{} against {whole}",
        p.submit
    );
}

/// Under the default strategy the first pieces complete while the call
/// still builds the rest: their interrupts cut the call, which then lasts
/// longer than its own cost (and each request's wait to the device grows
/// past the quiet run's).
#[test]
fn completions_of_the_first_pieces_interrupt_the_call() {
    let (quiet_run, _) = run(64, quiet());
    let (r, _) = run(64, PolicySpec::named("default"));
    let (q, d) = (parts(&quiet_run), parts(&r));
    assert!(
        d.submit > q.submit + 100.0,
        "{} against {}",
        d.submit,
        q.submit
    );
}
