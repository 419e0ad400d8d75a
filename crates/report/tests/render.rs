//! Both renderings on hand-built reports: fio's keys and units, the numbers
//! derived from the window, and reports with nothing in them.

use hdrhistogram::Histogram;
use policy::Value as Param;
use policy::SEC;
use report::{CoreUtil, DirReport, Gaps, JobReport, LatencyStats, Mode, PolicyInfo, RunReport};
use serde_json::Value;

/// Latencies spread evenly over `lo..=hi` ns.
fn clat(lo: u64, hi: u64, n: u64) -> LatencyStats {
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600 * SEC, 3).unwrap();
    for i in 0..n {
        h.record(lo + (hi - lo) * i / (n - 1)).unwrap();
    }
    LatencyStats::from_histogram(&h)
}

fn reads(io_ops: u64, lat: LatencyStats) -> DirReport {
    DirReport {
        io_ops,
        io_bytes: io_ops * 4096,
        clat: lat,
        errors: 0,
        run_ns: None,
    }
}

/// Ten seconds of a blocking reader beside a batch reader that also writes.
fn sample() -> RunReport {
    RunReport {
        mode: Some(Mode::Sim),
        policy: PolicyInfo {
            name: "cint".into(),
            params: vec![("delta", Param::Time(6_000)), ("thr", Param::Count(32))],
        },
        device: "optane".into(),
        host: "xeon-e5-2660v4".into(),
        seed: Some(7),
        duration_ns: 10 * SEC,
        jobs: vec![
            JobReport {
                name: "sync".into(),
                engine: "psync".into(),
                cpus: vec![1],
                read: reads(1_000_000, clat(8_000, 21_000, 1_000)),
                usr_ns: 2 * SEC,
                sys_ns: 4 * SEC,
                ctx: 95_211,
                ..Default::default()
            },
            JobReport {
                name: "async".into(),
                engine: "libaio".into(),
                cpus: vec![1],
                read: reads(500_000, clat(150_000, 400_000, 1_000)),
                write: DirReport {
                    errors: 3,
                    ..reads(250_000, clat(20_000, 60_000, 100))
                },
                usr_ns: SEC,
                sys_ns: SEC / 2,
                ctx: 10,
                ..Default::default()
            },
        ],
        interrupts: 400_000,
        urgent_only_interrupts: 1_234,
        completions: 1_750_000,
        irq_line: None,
        delivery: None,
        completions_by_mark: None,
        context_switches: 45_678,
        // 1 to 10 us in steps of 1 us, ten of each.
        completion_gaps: Gaps::from_values((1..=100u64).map(|i| i.div_ceil(10) * 1_000)),
        cores: vec![CoreUtil {
            core: 1,
            user: 0.25,
            kernel: 0.375,
            irq: 0.125,
            idle: 0.25,
        }],
        notes: vec!["sample note".into()],
        default_marks: None,
        io_path: None,
        apps: None,
        uring: None,
        cpu_parts: None,
        counters: None,
        idle: None,
        wakeups: None,
        clat_all: None,
        oracle: None,
        made_by: None,
    }
}

fn json(r: &RunReport) -> Value {
    report::json::render(r)
}

#[test]
fn percentile_keys_are_fios_and_in_order() {
    let v = json(&sample());
    let p = v["jobs"][0]["read"]["clat_ns"]["percentile"]
        .as_object()
        .unwrap();
    let keys: Vec<&str> = p.keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 17);
    assert_eq!(keys[0], "1.000000");
    assert_eq!(keys[16], "99.990000");
    for k in ["50.000000", "99.000000", "99.900000", "99.950000"] {
        assert!(p.contains_key(k), "{k} missing from {keys:?}");
    }
    let stats = &sample().jobs[0].read.clat;
    assert_eq!(p["99.000000"], stats.percentile(99.0));
    assert_eq!(p["50.000000"], stats.percentile(50.0));
    // The middle of 8..21 us, not a key mix-up with another percentile.
    let median = p["50.000000"].as_u64().unwrap();
    assert!((14_000..=15_100).contains(&median), "{median}");
    assert_eq!(v["jobs"][0]["read"]["clat_ns"]["N"], 1_000);
}

#[test]
fn rates_come_from_the_window() {
    let v = json(&sample());
    let read = &v["jobs"][0]["read"];
    assert_eq!(read["iops"].as_f64(), Some(100_000.0));
    assert_eq!(read["io_ops"], 1_000_000);
    assert_eq!(read["total_ios"], 1_000_000);
    assert_eq!(read["io_bytes"], 4_096_000_000u64);
    assert_eq!(read["io_kbytes"], 4_000_000);
    assert_eq!(read["bw_bytes"], 409_600_000);
    assert_eq!(read["bw"], 400_000);
    assert_eq!(read["runtime"], 10_000);
    assert_eq!(v["jobs"][0]["job_runtime"], 10_000);
    // A direction without I/O is there, with a runtime of 0, as in fio.
    let write = &v["jobs"][0]["write"];
    assert_eq!(write["iops"].as_f64(), Some(0.0));
    assert_eq!(write["runtime"], 0);
    assert!(write["clat_ns"].get("percentile").is_none());
    assert_eq!(v["jobs"][1]["write"]["errors"], 3);
    assert_eq!(v["jobs"][1]["write"]["iops"].as_f64(), Some(25_000.0));
}

#[test]
fn cpu_is_percent_per_job_and_fractions_per_core() {
    let v = json(&sample());
    assert_eq!(v["jobs"][0]["usr_cpu"].as_f64(), Some(20.0));
    assert_eq!(v["jobs"][0]["sys_cpu"].as_f64(), Some(40.0));
    assert_eq!(v["jobs"][0]["ctx"], 95_211);
    let core = &v["cinterrupts"]["run"]["cpu_util"][0];
    assert_eq!(core["core"], 1);
    assert_eq!(core["user"].as_f64(), Some(0.25));
    assert_eq!(core["kernel"].as_f64(), Some(0.375));
    assert_eq!(core["irq"].as_f64(), Some(0.125));
    assert_eq!(core["idle"].as_f64(), Some(0.25));
}

#[test]
fn the_cinterrupts_object_carries_the_run() {
    let v = json(&sample());
    let c = &v["cinterrupts"];
    assert_eq!(c["mode"], "sim");
    assert_eq!(c["policy"]["name"], "cint");
    assert_eq!(c["policy"]["delta"], "6us");
    assert_eq!(c["policy"]["thr"], "32");
    assert_eq!(c["device"], "optane");
    assert_eq!(c["run"]["seed"], 7);
    assert_eq!(c["duration_ns"], 10 * SEC);
    assert_eq!(c["interrupts"], 400_000);
    assert_eq!(c["urgent_only_interrupts"], 1_234);
    assert_eq!(c["interrupts_per_sec"].as_f64(), Some(40_000.0));
    assert_eq!(c["completions_per_interrupt"].as_f64(), Some(4.375));
    assert_eq!(c["run"]["context_switches"], 45_678);
    assert_eq!(c["notes"][0], "sample note");
    let gaps = &c["run"]["completion_gaps"];
    assert_eq!(gaps["N"], 100);
    assert_eq!(
        (gaps["min"].as_u64(), gaps["max"].as_u64()),
        (Some(1_000), Some(10_000))
    );
    let p = &gaps["percentile"];
    assert_eq!(p["50.000000"], 5_000);
    assert_eq!(p["90.000000"], 9_000);
    assert_eq!(p["99.000000"], 10_000);
    let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["50.000000", "90.000000", "99.000000"]);
    // Without gaps (a front end that does not record them) there is no key
    // and no text line.
    let mut none = sample();
    none.completion_gaps = None;
    assert!(json(&none)["cinterrupts"]["run"]
        .get("completion_gaps")
        .is_none());
    assert!(!report::text::render(&none).contains("completion gaps"));
    // Emulator-only keys appear only when measured.
    assert!(v["jobs"][0].get("ctx_voluntary").is_none());
    let mut emu = sample();
    emu.mode = Some(Mode::Emu);
    emu.seed = None;
    emu.jobs[0].ctx_voluntary = Some(5);
    emu.jobs[0].ctx_involuntary = Some(6);
    let v = json(&emu);
    assert_eq!(v["cinterrupts"]["mode"], "emu");
    assert!(v["cinterrupts"]["run"].get("seed").is_none());
    assert_eq!(v["jobs"][0]["ctx_voluntary"], 5);
    assert_eq!(v["jobs"][0]["ctx_involuntary"], 6);
}

#[test]
fn same_report_same_bytes() {
    let a = serde_json::to_string_pretty(&json(&sample())).unwrap();
    let b = serde_json::to_string_pretty(&json(&sample())).unwrap();
    assert_eq!(a, b);
    // fio's order, not alphabetical: jobname first, read before write.
    let job = a.find("\"jobname\"").unwrap();
    assert!(job < a.find("\"groupid\"").unwrap());
    assert!(a.find("\"read\"").unwrap() < a.find("\"write\"").unwrap());
}

/// Every number in `v` is a number: no null where NaN or inf would have been.
fn assert_no_nulls(v: &Value, path: &str) {
    match v {
        Value::Null => panic!("null at {path}"),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| assert_no_nulls(x, &format!("{path}[{i}]"))),
        Value::Object(o) => o
            .iter()
            .for_each(|(k, x)| assert_no_nulls(x, &format!("{path}.{k}"))),
        _ => {}
    }
}

#[test]
fn empty_reports_have_no_nan_or_infinity() {
    let empty = RunReport {
        mode: Some(Mode::Sim),
        ..Default::default()
    };
    let v = json(&empty);
    assert_no_nulls(&v, "");
    assert_eq!(
        v["cinterrupts"]["completions_per_interrupt"].as_f64(),
        Some(0.0)
    );
    assert_eq!(v["cinterrupts"]["interrupts_per_sec"].as_f64(), Some(0.0));
    assert_eq!(v["jobs"].as_array().unwrap().len(), 0);

    // A zero-length window with I/O in it, and ratios that are already NaN.
    let mut odd = sample();
    odd.duration_ns = 0;
    odd.interrupts = 0;
    odd.jobs[0].read.clat.mean = f64::NAN;
    odd.jobs[0].read.clat.stddev = f64::INFINITY;
    odd.cores[0].irq = f64::NAN;
    let v = json(&odd);
    assert_no_nulls(&v, "");
    assert_eq!(v["jobs"][0]["read"]["iops"].as_f64(), Some(0.0));
    assert_eq!(v["jobs"][0]["usr_cpu"].as_f64(), Some(0.0));
    assert_eq!(
        v["cinterrupts"]["completions_per_interrupt"].as_f64(),
        Some(0.0)
    );
    let text = report::text::render(&odd);
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");

    let text = report::text::render(&RunReport::default());
    assert!(text.contains("interrupts: 0 (0/s)"), "{text}");
    assert!(text.contains("completions per interrupt 0.00"), "{text}");
}

#[test]
fn text_shows_jobs_iops_and_fios_layout() {
    let text = report::text::render(&sample());
    assert!(
        text.contains("sync: (groupid=0, jobs=1): engine=psync, cpus=1\n"),
        "{text}"
    );
    assert!(text.contains("async: (groupid=0, jobs=1): engine=libaio"));
    assert!(
        text.contains("  read: IOPS=100k, BW=391MiB/s (410MB/s)(3906MiB/10000msec)\n"),
        "{text}"
    );
    assert!(text.contains("  read: IOPS=50.0k,"), "{text}");
    assert!(text.contains("  write: IOPS=25.0k,"), "{text}");
    assert!(text.contains("msec), errors=3\n"), "{text}");
    assert_eq!(text.matches("errors=").count(), 1, "only where nonzero");
    // sync has no writes: no write block in its section.
    let sync = &text[..text.find("async:").unwrap()];
    assert!(!sync.contains("write:"), "{sync}");
    assert!(
        sync.contains("  cpu          : usr=20.00%, sys=40.00%, ctx=95211\n"),
        "{sync}"
    );
    // 8..21 us stays in nsec; 150..400 us moves to usec, both lines.
    assert!(sync.contains("    clat (nsec): min=8000, max=21"), "{sync}");
    assert!(sync.contains("    clat percentiles (nsec):\n     |  1.00th=["));
    let asynch = &text[text.find("async:").unwrap()..];
    assert!(
        asynch.contains("    clat (usec): min=150, max=400,"),
        "{asynch}"
    );
    // Rounded alike, the percentiles never read above the max.
    assert!(asynch.contains("99.99th=[  400]"), "{asynch}");
    assert!(
        asynch.contains("    clat percentiles (usec):\n"),
        "{asynch}"
    );
    // 17 percentiles, four to a line: five lines, the last with one.
    let lines: Vec<&str> = sync.lines().filter(|l| l.starts_with("     |")).collect();
    assert_eq!(lines.len(), 5, "{sync}");
    assert!(lines[0].ends_with(','), "{}", lines[0]);
    assert_eq!(lines[1].matches("th=[").count(), 4);
    assert!(lines[4].starts_with("     | 99.99th=[") && lines[4].ends_with(']'));
}

#[test]
fn text_summary_names_the_run() {
    let text = report::text::render(&sample());
    assert!(
        text.contains(
            "cinterrupts (sim): policy=cint delta=6us thr=32, device=optane, host=xeon-e5-2660v4, seed=7\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  interrupts: 400000 (40.0k/s), urgent-only 1234; completions per interrupt 4.38\n"
        ),
        "{text}"
    );
    assert!(text.contains("  context switches: 45678\n"));
    assert!(
        text.contains("  completion gaps (per CQ): p50=5.00us p90=9.00us p99=10.00us over 100\n"),
        "{text}"
    );
    assert!(text.contains("  cpu 1: user=25.0% kernel=37.5% irq=12.5% idle=25.0%\n"));
    assert!(text.contains("  note: sample note\n"));
    assert!(!text.contains("ctx_voluntary"));
    let mut emu = sample();
    emu.jobs[1].ctx_voluntary = Some(11);
    emu.jobs[1].ctx_involuntary = Some(12);
    let text = report::text::render(&emu);
    assert!(
        text.contains("ctx=10, ctx_voluntary=11, ctx_involuntary=12\n"),
        "{text}"
    );
}

#[test]
fn clones_of_a_section_are_told_apart() {
    let mut r = sample();
    r.jobs[1].name = "sync".into();
    r.jobs[1].clone_index = 1;
    let text = report::text::render(&r);
    assert!(text.contains("sync: (groupid=0, jobs=1): engine=psync, clone=0"));
    assert!(text.contains("sync: (groupid=0, jobs=1): engine=libaio, clone=1"));
    assert!(!report::text::render(&sample()).contains("clone="));
}

#[test]
fn failures_name_each_job_with_errors() {
    let r = sample();
    let failed = r.failures();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].ends_with("': 3 I/O errors, 0 verify mismatches"),
        "{failed:?}"
    );
    assert!(RunReport::default().failures().is_empty());
}

#[test]
fn json_document_is_pretty_whole_and_ends_a_line() {
    let r = RunReport {
        mode: Some(Mode::Sim),
        ..Default::default()
    };
    let s = report::json::document(&r);
    assert!(s.ends_with("}\n") && s.contains("\n  \"jobs\": []"), "{s}");
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["cinterrupts"]["mode"], "sim");
}

#[test]
fn the_emulators_interrupt_line_is_shown_in_text_and_json() {
    let mut r = sample();
    assert!(
        json(&r)["cinterrupts"]["run"].get("irq_line").is_none(),
        "sim: none"
    );
    assert!(!report::text::render(&r).contains("interrupt line"));
    r.irq_line = Some(report::IrqLineReport {
        delivery: "ipi".into(),
        raised: 400_000,
        merged: 0,
        slot_waits: 1_000,
        slot_wait_ns: SEC / 2,
    });
    let l = &json(&r)["cinterrupts"]["run"]["irq_line"];
    assert_eq!(l["delivery"], "ipi");
    assert_eq!(l["raised"], 400_000);
    assert_eq!(l["delivered"], r.interrupts, "delivered: the interrupts");
    assert_eq!(
        (l["merged"].as_u64(), l["slot_waits"].as_u64()),
        (Some(0), Some(1_000))
    );
    assert_eq!(l["slot_wait_ns"], SEC / 2);
    let text = report::text::render(&r);
    assert!(
        text.contains("  interrupt line (ipi): raised 400000, delivered 400000, merged 0; the device waited for the call slot 1000 times, 500.0 ms (5.0% of the window)\n"),
        "{text}"
    );
}

#[test]
fn default_marks_is_said_in_text_and_json() {
    // Issue 13: every run says which kernel's default marks it used.
    let r = RunReport {
        default_marks: Some("basis".into()),
        ..sample()
    };
    assert!(report::text::render(&r).contains(", default_marks=basis\n"));
    assert_eq!(json(&r)["cinterrupts"]["default_marks"], "basis");
    let none = sample();
    assert!(!report::text::render(&none).contains("default_marks"));
    assert!(json(&none)["cinterrupts"].get("default_marks").is_none());
}

/// An application run's operations and cores (sim::simulate_app): in JSON
/// under `cinterrupts.apps` and `cinterrupts.cores`, in the text after the
/// run's summary; absent from a job file's run.
#[test]
fn app_runs_show_their_operations_and_cores() {
    assert!(json(&sample())["cinterrupts"]["run"].get("apps").is_none());
    assert!(json(&sample())["cinterrupts"]["run"].get("cores").is_none());
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 100_000_000_000, 3).unwrap();
    for ns in [10_000u64, 20_000, 30_000, 1_000_000] {
        h.record(ns).unwrap();
    }
    let mut r = sample();
    r.apps = Some(report::AppsReport {
        ops: vec![report::OpReport {
            instance: 0,
            name: "kv".into(),
            kind: "read".into(),
            background: false,
            ops: 4,
            items: 8,
            ops_per_sec: 400.0,
            items_per_sec: 800.0,
            lat: report::LatencyStats::from_histogram(&h),
            cdf: report::latency::cdf(&h),
        }],
        cores: vec![report::CoreReport {
            core: 1,
            user: 0.5,
            kernel: 0.25,
            irq: 0.125,
            idle: 0.125,
            interrupts: 42,
            context_switches: 7,
        }],
    });
    let v = json(&r);
    let op = &v["cinterrupts"]["run"]["apps"][0];
    assert_eq!(op["kind"], "read");
    assert_eq!(op["items"], 8);
    // The histogram's 3 significant digits: within 0.1%.
    let p50 = op["lat_us"]["p50"].as_f64().unwrap();
    assert!((p50 - 20.0).abs() < 0.02, "{p50}");
    assert!(op["lat_us"]["max"].as_f64().unwrap() > 999.0);
    let cdf = op["cdf"].as_array().unwrap();
    assert_eq!(cdf.len(), report::latency::CDF_PERCENTILES.len());
    assert_eq!(cdf[0][0].as_f64(), Some(0.0));
    assert!((cdf[0][1].as_f64().unwrap() - 10.0).abs() < 0.01, "{cdf:?}");
    assert_eq!(v["cinterrupts"]["run"]["cores"][0]["interrupts"], 42);
    assert_no_nulls(&v, "");
    let text = report::text::render(&r);
    assert!(
        text.contains("    kv read: ops=4 (400/s), items=8 (800/s); mean="),
        "{text}"
    );
    assert!(
        text.contains("  cpu 1: interrupts=42, context switches=7"),
        "{text}"
    );
}
