//! The completion-stream format and its replay (`cinterrupts coalesce`),
//! on streams small enough to work out by hand.

use policy::stream::{comparison_table, parse, replay, Outcome};
use policy::PolicySpec;

fn run(text: &str, policy: &str) -> Outcome {
    let rows = parse(text, "s.csv").unwrap();
    replay(&rows, &PolicySpec::named(policy), "s.csv", true).unwrap()
}

/// Three unmarked completions 1 us apart.
const THREE: &str =
    "time_ns,id,flags,event\n1000,1,-,complete\n2000,2,-,complete\n3000,3,-,complete\n";

#[test]
fn default_interrupts_once_per_completion_with_no_delay() {
    let o = run(THREE, "default");
    assert_eq!((o.full, o.urgent_only, o.interrupts()), (3, 0, 3));
    assert_eq!(o.completions, 3);
    assert_eq!(o.per_interrupt(), 1.0);
    assert_eq!(o.max_delay, 0);
    assert_eq!(
        o.csv,
        "time_ns,kind,ids\n1000,full,1\n2000,full,2\n3000,full,3\n"
    );
}

#[test]
fn adaptive_waits_a_quiet_delta_after_the_last_and_reports_the_delays() {
    // TOS Alg. 1 with delta 6 us: the burst ends 6 us after the completion
    // at 3 us, so one interrupt at 9 us delivers delays of 8, 7 and 6 us.
    let o = run(THREE, "adaptive");
    assert_eq!((o.full, o.interrupts()), (1, 1));
    assert_eq!(o.per_interrupt(), 3.0);
    assert_eq!(o.max_delay, 8_000);
    // The histogram holds 3 significant digits: within 0.1%.
    assert!(
        (o.delays.mean() - 7_000.0).abs() <= 7.0,
        "{}",
        o.delays.mean()
    );
    assert_eq!(o.last_delivery, 9_000);
    assert_eq!(o.input_end, 3_000);
    assert_eq!(o.csv, "time_ns,kind,ids\n9000,full,1 2 3\n");
    let s = o.summary();
    assert!(s.contains("completions:  3 (0 in error)"), "{s}");
    assert!(s.contains("interrupts:   1 (1 full, 0 urgent-only)"), "{s}");
    assert!(s.contains("per interrupt: 3.00 completions"), "{s}");
    assert!(
        s.contains("delay (completion to delivery): mean 7.00us, p99 8.00us, max 8.00us"),
        "{s}"
    );
    assert!(
        s.contains("input ended at 3.00us; pending completions were delivered by 9.00us"),
        "{s}"
    );
}

#[test]
fn an_error_is_counted_and_delivered_at_once() {
    let text = "time_ns,id,flags,event\n1000,1,-,complete\n2000,2,-,error\n";
    let o = run(text, "adaptive");
    assert_eq!((o.completions, o.errors), (2, 1));
    // The error flushes what is pending with it, without waiting for delta.
    assert_eq!(o.csv, "time_ns,kind,ids\n2000,full,1 2\n");
    assert!(o.summary().contains("completions:  2 (1 in error)"));
}

#[test]
fn nothing_delivered_shows_dashes_and_no_rate() {
    let o = run("time_ns,id,flags,event\n", "adaptive");
    assert_eq!((o.interrupts(), o.per_interrupt()), (0, 0.0));
    assert!(
        o.summary().contains("mean -, p99 -, max -"),
        "{}",
        o.summary()
    );
}

#[test]
fn an_id_submitted_twice_while_outstanding_names_its_line() {
    let text = "time_ns,id,flags,event\n1000,1,-,submit\n2000,1,-,submit\n";
    let rows = parse(text, "s.csv").unwrap();
    let Err(e) = replay(&rows, &PolicySpec::named("cint"), "s.csv", false) else {
        panic!("a second submit while outstanding was accepted");
    };
    assert!(e.to_string().starts_with("s.csv:3"), "{e}");
    // Completed in between, it may be submitted again.
    let text = "time_ns,id,flags,event\n1000,1,-,submit\n1500,1,-,complete\n2000,1,-,submit\n";
    let rows = parse(text, "s.csv").unwrap();
    assert!(replay(&rows, &PolicySpec::named("cint"), "s.csv", false).is_ok());
}

#[test]
fn the_comparison_has_a_row_per_strategy() {
    let t = comparison_table(&[run(THREE, "default"), run(THREE, "adaptive")]);
    let lines: Vec<Vec<&str>> = t.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(
        lines[0],
        [
            "policy",
            "interrupts",
            "full",
            "urgent",
            "per-irq",
            "mean",
            "p99",
            "max"
        ]
    );
    assert_eq!(lines[1][..5], ["default", "3", "3", "0", "1.00"]);
    assert_eq!(lines[2][..5], ["adaptive", "1", "1", "0", "3.00"]);
    assert_eq!(lines[2][5..], ["7.00us", "8.00us", "8.00us"]);
    assert_eq!(lines.len(), 4, "{t}");
    assert!(
        t.lines()
            .nth(3)
            .unwrap()
            .starts_with("3 completions (0 in error)"),
        "{t}"
    );
}

#[test]
fn an_urgent_completion_is_reaped_out_of_order_and_both_kinds_count() {
    // cint with OOO (TOS 3.5): the Urgent one at 2 us gets an urgent-only
    // interrupt at once; the unmarked one waits for delta after it.
    let text = "time_ns,id,flags,event\n1000,1,-,complete\n2000,2,U,complete\n";
    let o = run(text, "cint");
    assert_eq!(o.csv, "time_ns,kind,ids\n2000,urgent,2\n8000,full,1\n");
    assert_eq!((o.full, o.urgent_only, o.interrupts()), (1, 1, 2));
    assert_eq!(o.per_interrupt(), 1.0);
    assert!(o
        .summary()
        .contains("interrupts:   2 (1 full, 1 urgent-only)"));
}
