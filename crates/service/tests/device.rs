//! The device model every front end applies (issue 26 item 1): units in
//! arrival order, the ceilings over the starts, the draws, the faults.

use service::{Command, Device, DeviceProfile, Distribution, ServiceTime, Started};

fn constant(service: u64, parallelism: u32) -> DeviceProfile {
    DeviceProfile::constant_service(&format!("{service}ns"), parallelism, 10_000_000).unwrap()
}

fn cmd(tag: u32) -> Command<u32> {
    Command {
        tag,
        write: false,
        bytes: 4096,
    }
}

/// Serves every command to completion in due order, as a front end does:
/// each unit frees at the due time of the command it served. Returns
/// (tag, start, due) in completion order.
fn serve(d: &mut Device<u32>, arrivals: &[(u64, u32)]) -> Vec<(u32, u64, u64)> {
    let mut serving: Vec<Started<u32>> = Vec::new();
    let mut done = Vec::new();
    let mut next = 0;
    loop {
        let first_due = serving.iter().map(|s| s.due).min();
        match arrivals.get(next) {
            // An arrival before the next completion (or with none due).
            Some(&(t, tag)) if first_due.map_or(true, |due| due > t) => {
                next += 1;
                serving.extend(d.submit(t, cmd(tag)));
            }
            _ => {
                let Some(due) = first_due else {
                    return done;
                };
                let i = serving.iter().position(|s| s.due == due).unwrap();
                let s = serving.remove(i);
                done.push((s.tag, s.start, s.due));
                serving.extend(d.unit_freed(due));
            }
        }
    }
}

#[test]
fn a_free_unit_starts_a_command_at_once_and_the_rest_wait_in_arrival_order() {
    let mut d = Device::new(&constant(10_000, 2), 1);
    let got = serve(&mut d, &[(0, 1), (0, 2), (0, 3), (5_000, 4)]);
    assert_eq!(
        got,
        [
            (1, 0, 10_000),
            (2, 0, 10_000),
            (3, 10_000, 20_000),
            (4, 10_000, 20_000)
        ]
    );
    assert_eq!(d.in_flight(), 0);
}

#[test]
fn a_waiting_command_starts_when_it_arrived_if_its_unit_was_free_by_then() {
    // One unit: the second command arrives at 15 us, after the unit freed
    // at 10 us, and starts at its arrival.
    let mut d = Device::new(&constant(10_000, 1), 1);
    assert_eq!(
        serve(&mut d, &[(0, 1), (15_000, 2)]),
        [(1, 0, 10_000), (2, 15_000, 25_000)]
    );
}

#[test]
fn a_null_device_takes_exactly_its_latency_even_zero() {
    let mut d: Device<u32> = Device::null(0, 1);
    let s = d.submit(7, cmd(1)).unwrap();
    assert_eq!((s.start, s.due), (7, 7));
    assert!(d.submit(7, cmd(2)).is_none(), "one unit: the second waits");
    let s = d.unit_freed(7).unwrap();
    assert_eq!((s.tag, s.start, s.due), (2, 7, 7));

    // A drawn service time is at least 1 ns: a command never completes at
    // the instant it starts.
    let mut d = Device::new(&constant(1, 1), 1);
    let s = d.submit(7, cmd(1)).unwrap();
    assert_eq!(s.due, 8);
}

#[test]
fn the_iops_ceiling_spaces_starts_beyond_a_burst_of_the_units() {
    // 100K IOPS: a start every 10 us once the 2 units' tokens are spent.
    let p = DeviceProfile::constant_service("1us", 2, 100_000).unwrap();
    let mut d = Device::new(&p, 1);
    let arrivals: Vec<(u64, u32)> = (0..6).map(|t| (0, t)).collect();
    let starts: Vec<u64> = serve(&mut d, &arrivals).iter().map(|x| x.1).collect();
    assert_eq!(starts, [0, 0, 10_000, 20_000, 30_000, 40_000]);
}

#[test]
fn every_nth_command_fails_and_only_those() {
    let mut d = Device::new(&constant(1_000, 64), 1).failing_every(3);
    let failed: Vec<u32> = (1..=9)
        .filter_map(|t| d.submit(0, cmd(t)))
        .filter(|s| s.failed)
        .map(|s| s.tag)
        .collect();
    assert_eq!(failed, [3, 6, 9]);
    // A waiting command keeps the fate it was given at submission.
    let mut d = Device::new(&constant(1_000, 1), 1).failing_every(2);
    assert!(!d.submit(0, cmd(1)).unwrap().failed);
    assert!(d.submit(0, cmd(2)).is_none());
    assert!(d.unit_freed(1_000).unwrap().failed);
}

#[test]
fn the_same_seed_gives_the_same_draws_and_another_seed_others() {
    let p = DeviceProfile::load("optane").unwrap();
    let run = |seed| {
        let mut d = Device::new(&p, seed);
        let arrivals: Vec<(u64, u32)> = (0..500).map(|t| (u64::from(t) * 300, t)).collect();
        serve(&mut d, &arrivals)
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

#[test]
fn writes_draw_from_the_write_distribution() {
    let mut p = constant(50_000, 4);
    p.write = ServiceTime {
        distribution: Distribution::Normal,
        mean: 5_000,
        stddev: 0,
        floor: 0,
        per_kib: 0,
    };
    let mut d = Device::new(&p, 1);
    let r = d.submit(0, cmd(1)).unwrap();
    let w = d
        .submit(
            0,
            Command {
                tag: 2,
                write: true,
                bytes: 4096,
            },
        )
        .unwrap();
    assert_eq!((r.due, w.due), (50_000, 5_000));
}

#[test]
fn the_watchdogs_bound_covers_a_round_per_unit() {
    let m = constant(10_000, 2);
    // 5 commands need 3 rounds of 10 us, plus 5 spacings of 100 ns.
    assert_eq!(m.hold_bound(5, 4096), 30_500);
    // And, with a bandwidth ceiling, their bytes at the slower way's
    // rate: 5 x 4 KiB at 1 GB/s is 20,480 ns.
    let m = DeviceProfile {
        max_read_bw: Some(2_000_000_000),
        max_write_bw: Some(1_000_000_000),
        ..m
    };
    assert_eq!(m.hold_bound(5, 4096), 30_500 + 20_480);
}

#[test]
fn the_device_has_its_profiles_units_and_a_null_one_at_least_one() {
    assert_eq!(Device::<u32>::new(&constant(1_000, 3), 1).units(), 3);
    // `hw_queue_depth = 0` is no device: null_blk serves on at least one.
    assert_eq!(Device::<u32>::null(1_000, 0).units(), 1);
    assert_eq!(Device::<u32>::null(1_000, 5).units(), 5);
}

#[test]
fn in_flight_counts_the_commands_in_service_and_those_waiting() {
    let mut d = Device::new(&constant(10_000, 2), 1);
    for tag in 1..=5 {
        d.submit(0, cmd(tag));
    }
    // Two on the units, three waiting for them.
    assert_eq!(d.in_flight(), 5);
    d.unit_freed(10_000);
    assert_eq!(d.in_flight(), 4);
}

#[test]
fn memory_counts_the_waiting_queue_at_least_a_command_each() {
    // A front end's memory accounting (issue 12: no profile makes a front
    // end take unbounded memory): nothing waits on a free unit, and each
    // waiting command holds at least its `Command`.
    let mut d = Device::new(&constant(10_000, 1), 1);
    d.submit(0, cmd(0));
    assert_eq!(d.memory(), 0);
    for tag in 1..=100 {
        d.submit(0, cmd(tag));
    }
    let each = std::mem::size_of::<Command<u32>>();
    assert!(d.memory() >= 100 * each, "{}", d.memory());
}

#[test]
fn the_watchdogs_bound_adds_the_transfer_time_of_the_kib_beyond_four() {
    // One unit, 10 us for 4 KiB and 100 ns a KiB beyond it (the profile's
    // `per_kib`): a 64 KiB command may take 10 us + 60 x 100 ns, plus one
    // spacing of the 10M IOPS ceiling (100 ns).
    let mut m = constant(10_000, 1);
    m.read.per_kib = 100;
    assert_eq!(m.hold_bound(1, 64 * 1024), 10_000 + 6_000 + 100);
    // At most 4 KiB, no transfer time beyond the 4 KiB draw.
    assert_eq!(m.hold_bound(1, 4096), 10_100);
}
