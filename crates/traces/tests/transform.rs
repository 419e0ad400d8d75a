//! The replay transforms (`traces::transform`) on generated traces: what
//! each keeps, how it moves times, the sampler's ratio and determinism,
//! and the merge's order and iteration offsets.

use std::io::Write;

use traces::transform::{MergeInput, Sample, Shape, Skip, Step, Window, PID_SPAN};
use traces::{read, Format, Request, Requests};

const MS: u64 = 1_000_000;

/// The requests as a reader gives them, through an Alibaba CSV (device,
/// direction, offset, size and issue to the microsecond; no completion).
fn stream(reqs: Vec<Request>) -> Requests {
    let csv: String = reqs
        .iter()
        .map(|r| {
            format!(
                "{},{},{},{},{}\n",
                r.device.as_deref().unwrap_or("0"),
                if r.write { "W" } else { "R" },
                r.offset,
                r.bytes,
                r.issue_ns / 1000
            )
        })
        .collect();
    read(std::io::Cursor::new(csv), "gen.csv", Format::Alibaba)
}

fn req(issue_ns: u64, offset: u64, write: bool, device: &str) -> Request {
    Request {
        issue_ns,
        offset,
        bytes: 4096,
        write,
        device: Some(device.to_string()),
        ..Default::default()
    }
}

fn run(shape: &Shape, input: Requests) -> (Vec<Request>, Vec<Step>) {
    let (out, outcome) = shape.apply(input, "gen.csv").unwrap();
    let reqs = out.collect::<Result<Vec<_>, _>>().unwrap();
    (reqs, outcome.steps())
}

/// The requests with their completions, through blkparse text (a `D`
/// and a `C` line each; a `Requests` comes only from a reader).
fn with_completions(reqs: Vec<Request>) -> Requests {
    let mut text = String::new();
    for (i, r) in reqs.iter().enumerate() {
        let sector = r.offset / 512;
        let secs = |ns: u64| format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
        let rw = if r.write { "W" } else { "R" };
        text += &format!(
            "  8,0    0 {:>8} {} {:>5}  D   {rw} {sector} + 8 [fio]\n",
            2 * i + 1,
            secs(r.issue_ns),
            100
        );
        text += &format!(
            "  8,0    0 {:>8} {} {:>5}  C   {rw} {sector} + 8 [0]\n",
            2 * i + 2,
            secs(r.complete_ns.unwrap()),
            0
        );
    }
    read(std::io::Cursor::new(text), "gen.blkparse", Format::Blkparse)
}

#[test]
fn time_scale_is_fios_rate_percentage_and_keeps_each_latency() {
    // 1,000 requests 1 ms apart, each 100 us long, from 5 s; addresses
    // distinct so blkparse pairs each issue with its own completion.
    let reqs: Vec<Request> = (0..1000u64)
        .map(|i| Request {
            complete_ns: Some(5_000 * MS + i * MS + 100_000),
            ..req(5_000 * MS + i * MS, i * 4096, false, "8,0")
        })
        .collect();
    for (pct, gap) in [(200u32, MS / 2), (50, 2 * MS), (100, MS)] {
        let shape = Shape {
            time_scale: Some(pct),
            ..Shape::default()
        };
        let (out, steps) = run(&shape, with_completions(reqs.clone()));
        assert_eq!(out.len(), 1000);
        for (i, r) in out.iter().enumerate() {
            let issue = 5_000 * MS + i as u64 * gap;
            assert_eq!(r.issue_ns, issue, "{pct}%: request {i}");
            assert_eq!(r.complete_ns, Some(issue + 100_000), "{pct}%: latency kept");
        }
        assert_eq!(steps.len(), 1);
        let s = &steps[0];
        assert_eq!((s.name, s.seen, s.kept), ("time-scale", 1000, 1000));
        assert_eq!(s.span_in_ns, 999 * MS + 100_000);
        assert_eq!(s.span_out_ns, 999 * gap + 100_000);
    }
}

#[test]
fn skip_drops_the_operations_named_as_fio_spells_them() {
    let mut reqs = Vec::new();
    for i in 0..400u64 {
        let mut r = req(i * 1000, i * 4096, i % 4 == 1, "0");
        r.discard = i % 4 == 2;
        r.flush = i % 4 == 3;
        reqs.push(r);
    }
    let skip = Skip::parse("write,sync").unwrap();
    assert!(skip.write && skip.flush && !skip.read && !skip.trim);
    let kept: Vec<Request> = reqs.iter().filter(|r| !skip.skips(r)).cloned().collect();
    assert_eq!(kept.len(), 200, "reads and trims");
    assert!(kept.iter().all(|r| !r.flush && (!r.write || r.discard)));
    // Through the stream (the CSV carries reads and writes only).
    let shape = Shape {
        skip: Skip::parse("read").unwrap(),
        ..Shape::default()
    };
    let (out, steps) = run(&shape, stream(reqs));
    assert_eq!(out.len(), 100);
    assert!(out.iter().all(|r| r.write));
    assert_eq!((steps[0].seen, steps[0].kept), (400, 100));
    let e = Skip::parse("read,erase").unwrap_err();
    assert!(e.contains("'erase'"), "{e}");
}

#[test]
fn window_keeps_the_requests_issued_in_it_from_the_first_issue() {
    let reqs: Vec<Request> = (0..100u64)
        .map(|i| req(7_000 * MS + i * MS, i * 4096, false, "0"))
        .collect();
    let shape = Shape {
        window: Some(Window::new(10 * MS, 20 * MS).unwrap()),
        ..Shape::default()
    };
    let (out, steps) = run(&shape, stream(reqs));
    let times: Vec<u64> = out.iter().map(|r| (r.issue_ns - 7_000 * MS) / MS).collect();
    assert_eq!(times, (10..20).collect::<Vec<u64>>());
    assert_eq!((steps[0].seen, steps[0].kept), (100, 10));
    assert_eq!(
        (steps[0].span_in_ns, steps[0].span_out_ns),
        (99 * MS, 9 * MS)
    );
    assert!(Window::new(5, 5).is_err());
}

#[test]
fn sample_keeps_about_its_ratio_and_the_same_blocks_every_time() {
    let n = 100_000u64;
    let reqs: Vec<Request> = (0..n)
        .map(|i| req(i * 1000, i * 4096, false, "0"))
        .collect();
    let sample = Sample::parse("0.01").unwrap();
    assert_eq!((sample.inv, sample.block), (100, 4096));
    let shape = Shape {
        sample: Some(sample),
        ..Shape::default()
    };
    let (out, steps) = run(&shape, stream(reqs.clone()));
    // Binomial(100K, 0.01): mean 1,000, sd 31.5; five sd either side.
    let (mean, sd) = (n as f64 * 0.01, (n as f64 * 0.01 * 0.99).sqrt());
    let kept = out.len() as f64;
    assert!((kept - mean).abs() < 5.0 * sd, "kept {kept} of {n}");
    assert_eq!(steps[0].kept, out.len() as u64);
    // The same addresses again (other times, another offset in the same
    // block): the same decisions.
    let again: Vec<Request> = (0..n)
        .map(|i| req(9 * i * 1000, i * 4096 + 512, true, "1"))
        .collect();
    let (out2, _) = run(&shape, stream(again));
    let blocks = |v: &[Request]| v.iter().map(|r| r.offset / 4096).collect::<Vec<_>>();
    assert_eq!(blocks(&out), blocks(&out2));
    // libCacheSim's hash: XXH3_64bits over the 8 bytes of obj_id. These
    // values are from the reference C implementation (libxxhash 0.8.4
    // through Python's xxhash: xxh3_64_intdigest(struct.pack('<Q', id))).
    let reference: [(u64, u64); 3] = [
        (0, 14374147212387527897),
        (1, 3439722301264460078),
        (12345, 11234342765698724289),
    ];
    for inv in [2u64, 3, 7, 100] {
        let s = Sample {
            ratio: 1.0 / inv as f64,
            inv,
            block: 1,
        };
        for (id, h) in reference {
            assert_eq!(s.keeps(id), h % inv == 0, "obj_id {id}, 1 in {inv}");
        }
    }
    // libCacheSim's range: (0, 0.5] or 1; (int)(1 / 0.3) is 3.
    assert_eq!(Sample::parse("0.3").unwrap().inv, 3);
    assert_eq!(Sample::parse("0.01:512").unwrap().block, 512);
    for bad in ["0", "0.7", "2", "x", "0.1:0"] {
        assert!(Sample::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn volumes_keep_only_the_named_devices() {
    let reqs: Vec<Request> = (0..90u64)
        .map(|i| req(i * 1000, i * 4096, false, &(i % 3).to_string()))
        .collect();
    let shape = Shape {
        volumes: vec!["2".into(), "0".into()],
        ..Shape::default()
    };
    let (out, steps) = run(&shape, stream(reqs));
    assert_eq!(out.len(), 60);
    assert!(out.iter().all(|r| r.device.as_deref() != Some("1")));
    assert_eq!(steps[0].name, "volume");
}

fn csv_file(dir: &std::path::Path, name: &str, rows: &[(&str, u64)]) -> std::path::PathBuf {
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    for (i, (dev, us)) in rows.iter().enumerate() {
        writeln!(f, "{dev},R,{},4096,{us}", i * 4096).unwrap();
    }
    path
}

#[test]
fn merge_orders_by_time_and_lays_iterations_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    // A: 0, 10, 20, 30 us (from an epoch origin); B: 0, 100, 200 us.
    let a = csv_file(
        dir.path(),
        "a.csv",
        &[
            ("1", 1_000_000),
            ("1", 1_000_010),
            ("1", 1_000_020),
            ("1", 1_000_030),
        ],
    );
    let b = csv_file(dir.path(), "b.csv", &[("2", 500), ("2", 600), ("2", 700)]);
    let spec = format!("{}:50:2", b.display());
    let m = MergeInput::parse(&spec).unwrap();
    assert_eq!((m.path.clone(), m.scalar, m.iters), (b.clone(), 50, 2));
    let shape = Shape {
        merge: vec![m],
        ..Shape::default()
    };
    let primary = traces::open(&a, None).unwrap();
    let (out, steps) = run(&shape, primary);
    let got: Vec<(String, u64)> = out
        .iter()
        .map(|r| (r.device.clone().unwrap(), r.issue_ns / 1000))
        .collect();
    // B at 50%: 0, 50, 100 us; its second iteration offset by its length
    // (200 us) before scaling: (0 + 200) / 2 = 100, 150, 200. A's 0 us
    // ties B's 0 us: the input named first goes first.
    let want: Vec<(String, u64)> = [
        ("1", 0),
        ("2", 0),
        ("1", 10),
        ("1", 20),
        ("1", 30),
        ("2", 50),
        ("2", 100),
        ("2", 100),
        ("2", 150),
        ("2", 200),
    ]
    .iter()
    .map(|&(d, t)| (d.to_string(), t))
    .collect();
    assert_eq!(got, want);
    // B's pid-less requests take input 1's pid range; A's stay pid-less.
    assert!(out.iter().all(|r| match r.device.as_deref() {
        Some("2") => r.pid == Some(PID_SPAN),
        _ => r.pid.is_none(),
    }));
    assert_eq!((steps[0].name, steps[0].kept), ("merge", 10));
    assert_eq!(steps[0].span_out_ns, 200_000);
    // Defaults and a bad spelling.
    let plain = MergeInput::parse("x.csv").unwrap();
    assert_eq!((plain.scalar, plain.iters), (100, 1));
    assert_eq!(MergeInput::parse("x.csv:25").unwrap().scalar, 25);
    assert!(MergeInput::parse("x.csv:0:1").is_err());
    // A merged input that is not there: one error naming it.
    let gone = Shape {
        merge: vec![MergeInput::parse("/nonexistent/t.csv").unwrap()],
        ..Shape::default()
    };
    let e = gone
        .apply(traces::open(&a, None).unwrap(), "a.csv")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("/nonexistent/t.csv"), "{e}");
}

#[test]
fn steps_report_in_order_once_the_stream_ends() {
    let reqs: Vec<Request> = (0..100u64)
        .map(|i| req(i * MS, i * 4096, i % 2 == 0, "0"))
        .collect();
    let shape = Shape {
        window: Some(Window::new(0, 50 * MS).unwrap()),
        skip: Skip::parse("write").unwrap(),
        time_scale: Some(200),
        ..Shape::default()
    };
    let (out, outcome) = shape.apply(stream(reqs), "gen.csv").unwrap();
    let mut out = out;
    assert!(outcome.steps().is_empty(), "published at the end");
    let n = out.by_ref().count();
    assert_eq!(n, 25);
    let steps = outcome.steps();
    let names: Vec<&str> = steps.iter().map(|s| s.name).collect();
    assert_eq!(names, ["window", "skip", "time-scale"]);
    assert_eq!(
        steps.iter().map(|s| (s.seen, s.kept)).collect::<Vec<_>>(),
        [(100, 50), (50, 25), (25, 25)]
    );
    let text = outcome.render();
    assert!(
        text.contains("transform window 0ns,50ms: kept 50 of 100 requests (50 dropped)"),
        "{text}"
    );
    assert!(
        text.contains("transform time-scale 200% (gaps x0.5)"),
        "{text}"
    );
}
