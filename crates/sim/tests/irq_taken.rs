//! Polled interrupt delivery (`irq_taken = "poll"`, the emulator's
//! `Delivery::Poll` that `cinterrupts exec` runs with): a device interrupt
//! waits while a thread runs a segment on its core, and is taken when the
//! core idles, at the segment's end, or after `irq_poll_fallback`.

mod common;

use common::{config, lat_us};
use policy::{PolicySpec, MS};
use report::RunReport;
use sim::IrqTaken;

fn run(text: &str, taken: IrqTaken, fallback_us: u64) -> RunReport {
    let jobs = jobs::parse_str(text, "t.fio", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs;
    let mut cfg = config("optane", PolicySpec::named("default"), 200 * MS, 1);
    cfg.host.irq_taken = taken;
    cfg.host.irq_poll_fallback = fallback_us * 1_000;
    let (r, a) = sim::simulate_audited(&jobs, &cfg, &mut |_, _| {}).unwrap();
    assert_eq!(
        (a.duplicates, a.stranded, a.unfinished_threads),
        (0, 0, 0),
        "every request completes exactly once: {a:?}"
    );
    assert_eq!(a.delivered, a.submitted, "{a:?}");
    r
}

const READER: &str = "[reader]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\n\
                      cpus_allowed=0\ntime_based\nruntime=1\n";

#[test]
fn on_an_idle_core_the_poller_takes_the_interrupt_at_once() {
    let at_once = run(READER, IrqTaken::AtOnce, 50);
    let polled = run(READER, IrqTaken::Poll, 50);
    let (a, p) = (lat_us(&at_once, "reader"), lat_us(&polled, "reader"));
    assert!((p - a).abs() < 0.01 * a, "at once {a} us, polled {p} us");
}

#[test]
fn behind_a_busy_core_the_interrupt_waits_for_the_fallback() {
    // A burner holding core 0 in 1 ms spins: the reader's completion finds
    // it running, and waits for the fallback (the burner's segment is far
    // longer), where a hardware interrupt is taken at once.
    let text = format!("{READER}[burn]\nioengine=cpuio\ncpuload=100\ncpuchunks=1000\ncpus_allowed=0\ntime_based\nruntime=1\n");
    let at_once = lat_us(&run(&text, IrqTaken::AtOnce, 50), "reader");
    let fifty = lat_us(&run(&text, IrqTaken::Poll, 50), "reader");
    let ten = lat_us(&run(&text, IrqTaken::Poll, 10), "reader");
    let (d50, d10) = (fifty - at_once, ten - at_once);
    assert!(
        (35.0..=60.0).contains(&d50),
        "+{d50} us with a 50 us fallback ({at_once} at once)"
    );
    assert!(
        (3.0..=20.0).contains(&d10),
        "+{d10} us with a 10 us fallback ({at_once} at once)"
    );
}

#[test]
fn a_thread_takes_the_interrupt_at_its_next_step() {
    // A burner that never idles the core, in 20 us chunks (each chunk one
    // user segment): the reader's completion is taken at the end of the
    // burner's chunk, within 20 us, long before a 1 ms fallback.
    let text = format!(
        "{READER}[burn]\nioengine=cpuio\ncpuload=100\ncpuchunks=20\ncpus_allowed=0\ntime_based\nruntime=1\n"
    );
    let at_once = lat_us(&run(&text, IrqTaken::AtOnce, 1_000), "reader");
    let polled = lat_us(&run(&text, IrqTaken::Poll, 1_000), "reader");
    let d = polled - at_once;
    assert!(
        (0.0..=25.0).contains(&d),
        "+{d} us ({at_once} us at once): a chunk's end, not the fallback"
    );
}

#[test]
fn a_profile_names_the_mode_and_refuses_others() {
    let base = include_str!("../../../profiles/hosts/xeon-e5-2660v4.toml");
    let poll = format!("{base}\nirq_taken = \"poll\"\nirq_poll_fallback = \"20us\"\n");
    let h = sim::HostProfile::parse(&poll, "h.toml").unwrap();
    assert_eq!((h.irq_taken, h.irq_poll_fallback), (IrqTaken::Poll, 20_000));
    let h = sim::HostProfile::parse(base, "h.toml").unwrap();
    assert_eq!(
        (h.irq_taken, h.irq_poll_fallback),
        (IrqTaken::AtOnce, 50_000)
    );
    let bad = format!("{base}\nirq_taken = \"later\"\n");
    let e = sim::HostProfile::parse(&bad, "h.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("h.toml") && e.contains("irq_taken"), "{e}");
}
