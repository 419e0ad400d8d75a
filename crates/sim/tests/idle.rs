//! Idle states (issue 37 item 2, `sim::idle`, `host::cpuidle`): a wake-up
//! on an idle core pays its state's exit latency; off, a run is what it
//! was; a CPU latency limit caps the state the governor picks.

mod common;

use common::{config, lat_us};
use host::cpuidle::{GovernorKind, Table};
use policy::{PolicySpec, MS, US};
use report::RunReport;
use sim::SimConfig;

const READER: &str = "[reader]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\n\
                      cpus_allowed=0\ntime_based\nruntime=1\n";

/// The reader with a 2 ms think time after each I/O: a timer sleep the
/// core knows of, long enough for C6's 600 us target residency.
const THINKER: &str = "[reader]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\n\
                       cpus_allowed=0\nthinktime=2000\ntime_based\nruntime=1\n";

fn cfg() -> SimConfig {
    config("optane", PolicySpec::named("default"), 200 * MS, 1)
}

fn run(text: &str, cfg: &SimConfig) -> RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs;
    let (r, a) = sim::simulate_audited(&jobs, cfg, &mut |_, _| {}).unwrap();
    assert_eq!((a.duplicates, a.stranded), (0, 0), "{a:?}");
    assert_eq!(a.delivered, a.submitted, "{a:?}");
    r
}

fn ios(r: &RunReport) -> f64 {
    r.jobs.iter().map(|j| j.read.io_ops).sum::<u64>() as f64
}

fn entries(r: &RunReport, state: &str) -> u64 {
    let idle = r.idle.as_ref().expect("idle states on");
    idle.by_state
        .iter()
        .find(|s| s.name == state)
        .map_or(0, |s| s.entries)
}

#[test]
fn off_is_todays_run_byte_for_byte() {
    let plain = cfg();
    let mut off = cfg();
    // Off, a limit or a governor changes nothing.
    off.host.idle_states = Table::Off;
    off.host.idle_governor = GovernorKind::Teo;
    off.host.cpu_latency_limit = Some(10 * US);
    let (a, b) = (run(READER, &plain), run(READER, &off));
    assert!(a.idle.is_none());
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn a_halted_vcpu_pays_its_exit_on_every_io() {
    // This VM's table (POLL, then `haltpoll idle`, 1 us) with its
    // guest_halt_poll_ns of 0: the poll window never opens, every idle
    // period halts, and every completion interrupt pays 1 us.
    let off = run(READER, &cfg());
    let mut c = cfg();
    c.host.idle_states = Table::Haltpoll;
    c.host.idle_governor = GovernorKind::Haltpoll;
    c.host.guest_halt_poll_ns = 0;
    let on = run(READER, &c);
    let rise = lat_us(&on, "reader") - lat_us(&off, "reader");
    assert!((0.8..=1.2).contains(&rise), "+{rise} us");
    let idle = on.idle.as_ref().unwrap();
    let per_io = idle.idle_exit_ns as f64 / ios(&on) / 1e3;
    assert!((0.9..=1.1).contains(&per_io), "{per_io} us of exit per I/O");
    assert_eq!(entries(&on, "POLL"), 0);
}

#[test]
fn the_latency_rise_is_the_exit_latency_paid() {
    // Ice Lake-SP under menu: whatever states it picks, the reader's mean
    // latency rises by the exit latency paid per I/O.
    let off = run(READER, &cfg());
    for gov in [GovernorKind::Menu, GovernorKind::Teo] {
        let mut c = cfg();
        c.host.idle_states = Table::Icx;
        c.host.idle_governor = gov;
        let on = run(READER, &c);
        let idle = on.idle.as_ref().unwrap();
        assert!(idle.idle_exit_ns > 0, "{gov:?}: {idle:?}");
        let per_io = idle.idle_exit_ns as f64 / ios(&on) / 1e3;
        let rise = lat_us(&on, "reader") - lat_us(&off, "reader");
        assert!(
            (rise - per_io).abs() <= 0.1 * per_io + 0.2,
            "{gov:?}: +{rise} us against {per_io} us paid per I/O"
        );
    }
}

#[test]
fn long_sleeps_reach_c6_and_a_latency_limit_keeps_them_out() {
    let mut c = cfg();
    c.host.idle_states = Table::Icx;
    let deep = run(THINKER, &c);
    assert!(entries(&deep, "C6") > 0, "{:?}", deep.idle);
    c.host.cpu_latency_limit = Some(10 * US);
    let capped = run(THINKER, &c);
    assert_eq!(entries(&capped, "C6"), 0, "{:?}", capped.idle);
    let idle = capped.idle.as_ref().unwrap();
    assert_eq!(idle.latency_limit_ns, Some(10 * US));
    // Only C1E and shallower: at most 4 us per wake-up.
    assert!(idle.idle_exit_ns <= 4 * US * idle.exits.max(1), "{idle:?}");
    // Kristo's per-device limit (a proposal) does the same while I/O runs.
    c.host.cpu_latency_limit = None;
    c.host.device_latency_limit = Some(10 * US);
    let device = run(THINKER, &c);
    assert_eq!(entries(&device, "C6"), 0, "{:?}", device.idle);
}

#[test]
fn bad_idle_keys_are_one_line_errors() {
    let base = std::fs::read_to_string(format!(
        "{}/../../profiles/hosts/xeon-e5-2660v4.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let ok = format!(
        "{base}\nidle_states = \"spr\"\nidle_governor = \"teo\"\ncpu_latency_limit = \"10us\"\n"
    );
    let h = sim::HostProfile::parse(&ok, "h.toml").unwrap();
    assert_eq!(
        (h.idle_states, h.idle_governor, h.cpu_latency_limit),
        (Table::Spr, GovernorKind::Teo, Some(10 * US))
    );
    let bad = format!("{base}\nidle_states = \"icelake\"\n");
    let e = sim::HostProfile::parse(&bad, "h.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("h.toml") && e.contains("icelake") && e.contains("icx"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}
