//! The completion-stream format and its replay (`cinterrupts coalesce`),
//! on streams small enough to work out by hand.

use policy::stream::{
    comparison_table, parse, replay, Outcome, Reader, Replayer, MAX_IN_FLIGHT, MAX_LINE,
};
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

#[test]
fn a_deadline_past_u64_max_is_refused_not_saturated_into_a_short_delay() {
    // nvme100 at 2^64 - 616 ns: its 100 us timer saturated at u64::MAX and
    // the summary reported a 615 ns delay (issue 12, item 10).
    let text = "time_ns,id,flags,event\n18446744073709551000,1,-,complete\n";
    let rows = parse(text, "s.csv").unwrap();
    let e = replay(&rows, &PolicySpec::named("nvme100"), "s.csv", false)
        .err()
        .expect("a saturated deadline was accepted");
    assert_eq!(
        e.to_string(),
        "s.csv:2: column 'time_ns': 18446744073709551000 leaves no room for the policy's deadline after it below 2^64 ns, the latest time a stream can hold"
    );
    // Just below the edge, the delay is the policy's own.
    let edge = u64::MAX - 100_001;
    let text = format!("time_ns,id,flags,event\n{edge},1,-,complete\n");
    let o = replay(
        &parse(&text, "s.csv").unwrap(),
        &PolicySpec::named("nvme100"),
        "s.csv",
        false,
    )
    .unwrap();
    assert_eq!(o.max_delay, 100_000);
}

#[test]
fn a_stream_with_a_utf8_byte_order_mark_is_read_as_a_job_file_is() {
    let o = run(&format!("\u{feff}{THREE}"), "default");
    assert_eq!(o.completions, 3);
    // Only at the very start: elsewhere it is a bad row.
    let late = "time_ns,id,flags,event\n\u{feff}1,1,-,complete\n";
    assert!(parse(late, "s.csv").is_err());
}

#[test]
fn binary_input_is_refused_on_its_first_line_without_reading_it_all() {
    // /dev/zero: no newline ever; read up to the line bound, then refused.
    let zeros = std::io::BufReader::new(std::io::repeat(0));
    let e = Reader::new(zeros, "/dev/zero").next().unwrap().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "/dev/zero:1: line longer than {MAX_LINE} bytes (a row is one short line of CSV text)"
        )
    );
    let e = parse("time_ns,id,flags,event\n5,\u{0}\u{0},-\n", "s.csv");
    assert!(e.is_err());
    let bytes = b"time_ns,id,flags,event\n1,1,-,compl\xffete\n";
    let e = Reader::new(&bytes[..], "s.csv")
        .collect::<Result<Vec<_>, _>>()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "s.csv:2: not valid UTF-8 (a completion stream is CSV text)"
    );
}

/// Gives its bytes, then fails: a live pipe whose writer has not finished.
struct Live(&'static [u8]);

impl std::io::Read for Live {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() {
            return Err(std::io::Error::other("no more yet"));
        }
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn rows_are_replayed_as_they_arrive_not_after_the_stream_ends() {
    let input = std::io::BufReader::new(Live(b"time_ns,id,flags,event\n1000,1,-,complete\n"));
    let mut reader = Reader::new(input, "<stdin>");
    let mut csv = Vec::new();
    let mut r = Replayer::new(&PolicySpec::named("default"), "<stdin>", Some(&mut csv)).unwrap();
    let row = reader.next_row().unwrap().unwrap();
    r.feed(&row).unwrap();
    r.flush_csv().unwrap();
    drop(r);
    assert_eq!(csv, b"time_ns,kind,ids\n1000,full,1\n");
    // The next read is where the pipe stands: an error naming the line.
    let e = reader.next_row().unwrap_err();
    assert_eq!(e.to_string(), "<stdin>:3: cannot read: no more yet");
}

#[test]
fn commands_outstanding_beyond_an_nvme_queue_are_refused() {
    let mut text = String::from("time_ns,id,flags,event\n");
    for id in 0..=MAX_IN_FLIGHT as u64 {
        text.push_str(&format!("{id},{id},-,submit\n"));
    }
    let rows = parse(&text, "s.csv").unwrap();
    let e = replay(&rows, &PolicySpec::named("cint"), "s.csv", false)
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "s.csv:{}: more than 65536 commands outstanding at once; one NVMe queue holds at most 64Ki entries (NVMe 1.4 CAP.MQES)",
            MAX_IN_FLIGHT + 2
        )
    );
    // Completions a strategy never delivers (an hour's delta, no thr) too.
    let mut text = String::from("time_ns,id,flags,event\n");
    for id in 0..=MAX_IN_FLIGHT as u64 {
        text.push_str(&format!("{id},{id},-,complete\n"));
    }
    let spec = PolicySpec {
        delta: Some(3_600_000_000_000),
        thr: Some(u32::MAX),
        ..PolicySpec::named("adaptive")
    };
    let e = replay(&parse(&text, "s.csv").unwrap(), &spec, "s.csv", false)
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("commands completed and not delivered at once"),
        "{e}"
    );
}

/// Found by the fuzzer (crates/fuzz): a field with a carriage return, or
/// a few thousand bytes long, was echoed as it was, so the error spanned
/// lines or ran to kilobytes.
#[test]
fn a_bad_field_is_echoed_cut_and_escaped_on_one_line() {
    let long = "A".repeat(3000);
    for row in [
        "5,1,-,compl\rete".to_string(),
        format!("5,1,-,comple{long}"),
        format!("5,{long},-,complete"),
        format!("{long}5,1,-,complete"),
        format!("5,1,{long},complete"),
    ] {
        let e = policy::stream::parse(&format!("time_ns,id,flags,event\n{row}\n"), "s.csv")
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\r') && !e.contains('\n'), "{e:?}");
        assert!(e.len() < 200, "{} bytes", e.len());
        assert!(e.starts_with("s.csv:2: column '"), "{e}");
    }
}
