//! `exec`'s text report (`--output-format normal`, on stderr or `-o
//! FILE`): the lines the binary printed (issue 39 item 4: the report
//! lives with what it reports, the binary only wires arguments).

use crate::run::{Options, Outcome, Status};
use crate::watch::NotRouted;

/// The text report (`--output-format normal`), for a terminal: how the
/// program ended, what was not routed and why, the rules, then what the
/// device, the driver and the library counted.
pub fn text(name: &str, opts: &Options, out: &Outcome, warnings: &[String]) -> String {
    let c = &out.counts;
    let status = match out.status {
        Status::Exited(code) => format!("exited with status {code}"),
        Status::Signalled(s) => format!("was killed by {} ({s})", crate::signals::name(s)),
    };
    let mut s = format!(
        "\ncinterrupts (exec): {name} {status}; {} process(es) reported; default_marks={}\n",
        out.processes.len(),
        opts.default_marks
    );
    if let Some(sig) = out.interrupted {
        s += &format!(
            "  partial: exec received {} and passed it on to {name}\n",
            crate::signals::name(sig)
        );
    }
    if let Some(e) = &out.escalated {
        s += &format!(
            "  killed: {name} had not ended {} ms after the signal ({}): SIGKILL to {} process(es)\n",
            e.after_ms, e.why, e.killed
        );
    }
    for l in &out.limits {
        s += &format!("  limit: {l}\n");
    }
    for l in not_routed_lines(&out.not_routed, true) {
        s += &format!("  not routed: {l}\n");
    }
    for w in warnings {
        s += &format!("  warning: {w}\n");
    }
    for r in &opts.rules {
        s += &format!("  rule: {}\n", r.to_line());
    }
    for r in &opts.critical {
        s += &format!("  critical: {}\n", r.to_line());
    }
    report::cpu::write_counters(&mut s, &out.counters);
    match &out.routed {
        None => s += "  direct I/O seen (observed only: every call reached the kernel as made)\n",
        Some(r) => {
            s += &format!("  routed: policy {}, device {}\n", r.policy, r.backend);
            s += &format!(
                "  interrupts: {} raised, {} merged, {} taken ({} urgent-only); {} completions, {:.2} per interrupt\n",
                r.interrupts_raised,
                r.interrupts_merged,
                r.interrupts,
                r.urgent_only,
                r.completions_reaped,
                r.completions_per_interrupt
            );
            for l in r.fires.iter().flat_map(|f| f.lines()) {
                s += &format!("  by mark, as the device's strategy saw them: {l}\n");
            }
            let d = r.delivery.unwrap_or_default();
            s += &format!(
                "  delivery latency: mean {:.1} us, p50 {:.1} us, p99 {:.1} us; handler CPU {:.1} ms\n",
                d.mean / 1e3,
                d.p50 as f64 / 1e3,
                d.p99 as f64 / 1e3,
                r.handler_cpu_ns as f64 / 1e6
            );
            for l in r.cost.lines() {
                s += &format!("  {l}\n");
            }
            s += &format!(
                "  completion {}: {} completion(s) polled (poll queue, no interrupt); {} request(s) critical, {} polled, {} asked RWF_HIPRI\n",
                r.completion, r.completions_polled, c.critical, c.polled, c.hipri
            );
            let h = &c.hybrid;
            if h.sleeps + h.spun > 0 {
                s += &format!(
                    "  hybrid polling: {} timer sleep(s) (asked {} on average, slept {}), {} spun from the start (sleep not longer than the timer's overshoot)\n",
                    h.sleeps,
                    policy::format_nanos(h.asked_ns.checked_div(h.sleeps).unwrap_or(0)),
                    policy::format_nanos(h.slept_ns.checked_div(h.sleeps).unwrap_or(0)),
                    h.spun
                );
            }
            if let Some(b) = &r.block {
                s += &format!(
                    "  block scheduler {}: {} request(s) ({} critical) went to the device as {} piece(s), at most {} non-critical piece(s) in flight ({} with critical ones; the host's count, from dispatch to reap, which bounds the device's); mean block-layer wait (submit to first dispatch, FastResponse's T_Blk) {}\n",
                    b.scheduler,
                    b.requests,
                    b.critical,
                    b.pieces,
                    b.max_noncritical_in_flight,
                    b.max_in_flight,
                    policy::format_nanos(b.t_blk_mean_ns)
                );
            }
        }
    }
    if let Some(st) = &out.staging {
        s += &format!(
            "  staged: {} on {} ({}, {} MiB, mounted at {}); O_DIRECT 4 KiB read p50 {:.1} us there; {}\n",
            st.dir,
            st.device,
            st.fs,
            st.size_bytes >> 20,
            st.mount,
            st.read_4k_ns_p50 as f64 / 1e3,
            if st.restored {
                "copied back, device removed"
            } else {
                "NOT copied back (see the error line)"
            }
        );
    }
    if opts.boost != emu::Boost::None {
        let boosted: Vec<&crate::Boosted> = out.processes.iter().flat_map(|p| &p.boosted).collect();
        s += &format!(
            "  critical boost {}: {} thread(s) boosted at their first critical request{}\n",
            opts.boost.as_str(),
            boosted.iter().filter(|b| b.error.is_none()).count(),
            boosted
                .iter()
                .map(|b| match &b.error {
                    None => format!(" {}[{}]", b.name, b.tid),
                    Some(e) => format!(" {}[{}] refused: {e}", b.name, b.tid),
                })
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    s += &format!(
        "  {:<9} {:>10} {:>10} {:>10}\n",
        "requests", "urgent", "barrier", "unmarked"
    );
    for (k, m) in [
        ("reads", &c.reads),
        ("writes", &c.writes),
        ("flushes", &c.flushes),
    ] {
        s += &format!(
            "  {k:<9} {:>10} {:>10} {:>10}\n",
            m.urgent, m.barrier, m.unmarked
        );
    }
    s += &format!(
        "  calls: pread family {}, read/write {}, io_submit {}, fsync/fdatasync {}, io_uring submissions {}\n",
        c.calls.positioned, c.calls.plain, c.calls.io_submit, c.calls.flush, c.calls.io_uring
    );
    s
}

/// What `exec` says on stderr beside a report that is not there (`-o
/// FILE`, `--quiet`, JSON): each warning, each limit, and what did not
/// pass through the library (the statically linked program was said
/// before it ran), each line without the `cinterrupts: exec: ` it is
/// printed after.
pub fn notices(out: &Outcome, warnings: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = warnings.iter().map(|w| format!("warning: {w}")).collect();
    lines.extend(out.limits.iter().map(|l| format!("limit: {l}")));
    lines.extend(
        not_routed_lines(&out.not_routed, false)
            .into_iter()
            .map(|l| format!("not routed: {l}")),
    );
    lines
}

/// One line per kind of what did not pass through the library (the
/// statically linked program only with `with_static`: on stderr it is said
/// before it runs), each naming the processes and their calls.
pub fn not_routed_lines(all: &[NotRouted], with_static: bool) -> Vec<String> {
    let mut kinds: Vec<&str> = Vec::new();
    for n in all {
        if !kinds.contains(&n.what.as_str())
            && (with_static || n.what != "statically linked program")
        {
            kinds.push(&n.what);
        }
    }
    kinds
        .into_iter()
        .map(|k| {
            let who: Vec<String> = all
                .iter()
                .filter(|n| n.what == k)
                .map(|n| {
                    let mut w = format!("{}[{}]", n.comm, n.pid);
                    if let Some(c) = n.calls {
                        w += &format!(" {c} call(s)");
                    }
                    if let Some(u) = n.uid {
                        w += &format!(" uid {u}");
                    }
                    if let Some(why) = &n.why {
                        w += &format!(" ({why})");
                    }
                    w
                })
                .collect();
            format!("{k}: {}", who.join(", "))
        })
        .collect()
}
