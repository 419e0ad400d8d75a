//! The device's side of exec with FastResponse's mechanisms, without a
//! program: commands posted into slots as the preload posts them go
//! through LD and the poll queue, and each comes back once. One test (each
//! Router has a device thread spinning on a CPU).

use std::time::Duration;

use cinterrupts_exec::{Polling, RouteOptions, Router};
use shm::{Cmd, Done, Region};

fn cmd(cookie: u32, len: u32, critical: bool, polled: bool) -> Cmd {
    Cmd {
        cookie,
        write: false,
        marks: 0,
        critical,
        polled,
        len,
        offset: u64::from(cookie) * 65536,
    }
}

#[test]
fn ld_and_the_poll_queue_deliver_every_command_once() {
    let mut opts = RouteOptions::placed(
        policy::PolicySpec::named("cint"),
        Some(emu::backend::BackendSpec::parse("null:20us").unwrap()),
        None,
    )
    .unwrap();
    opts.block = Some(host::ld::LdConfig {
        tokens: 2,
        ..host::ld::LdConfig::default()
    });
    opts.polling = Polling::Poll;
    let router = Router::start(&opts).unwrap();
    let region = Region::open(&router.path()).unwrap();
    let me = std::process::id();
    // A libaio-like waiter: 16 non-critical 64 KiB commands at once, on
    // the interrupt queue; a polling waiter: critical 4 KiB commands one
    // at a time, spinning.
    let bulk = region.claim(me).unwrap();
    let poller = region.claim(me).unwrap();
    for c in 0..16 {
        assert!(region.slot(bulk).post(cmd(c, 65536, false, false)));
    }
    let mut got: Vec<Done> = Vec::new();
    for c in 0..50 {
        let s = region.slot(poller);
        assert!(s.post(cmd(c, 4096, true, true)));
        assert!(s.spin(1, Duration::from_secs(10)), "polled completion {c}");
        s.take(1, &mut got);
    }
    assert_eq!(got.len(), 50);
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, d)| d.cookie == i as u32 && !d.error));
    let mut bulk_done = Vec::new();
    while bulk_done.len() < 16 {
        assert!(region.slot(bulk).wait(1, Some(Duration::from_secs(10))));
        region.slot(bulk).take(16, &mut bulk_done);
    }
    let mut cookies: Vec<u32> = bulk_done.iter().map(|d| d.cookie).collect();
    cookies.sort_unstable();
    assert_eq!(cookies, (0..16).collect::<Vec<_>>(), "each request once");
    assert!(bulk_done.iter().all(|d| d.result == 65536), "{bulk_done:?}");
    let r = router.finish();
    let b = r.block.clone().expect("LD ran");
    assert_eq!(b.requests, 66, "{r:?}");
    assert_eq!(b.critical, 50, "{r:?}");
    assert_eq!(b.pieces, 16 * 2 + 50, "{r:?}");
    assert!(b.max_noncritical_in_flight <= 2, "{r:?}");
    assert_eq!(r.commands, b.pieces, "{r:?}");
    assert_eq!(r.completions_reaped, b.pieces, "{r:?}");
    assert_eq!(r.completions_polled, 50, "{r:?}");
    assert_eq!(r.duplicates, 0, "{r:?}");
    assert_eq!(r.completion, "poll");
}
