//! `--marks-from` (issue 41 item 5) end to end: a generated blkparse trace
//! with plug and unplug events (an `io_submit` batcher, a blocking
//! reader, asynchronous writeback) through `coalesce --trace` and
//! `sim --trace`, each rule's counts checked against what the generator
//! made, the floor and cint against Table 1's.

mod common;

use std::fmt::Write as _;

use common::{bin, stderr, stdout};

const BATCHES: u64 = 50;
const BATCH: u64 = 8;
const READS: u64 = 100;
const WRITES: u64 = 20;

/// The trace: process 100 ("db") submits `BATCHES` batches of `BATCH`
/// reads, each under one plug, completed before the next (one burst per
/// batch); process 200 ("reader") `READS` synchronous reads one at a time,
/// each under a plug of one (as ext4's direct I/O does); process 300
/// ("bg") `WRITES` asynchronous writes, one at a time, no plug.
fn trace() -> String {
    let mut ev: Vec<(u64, u32, &str, &str, String)> = Vec::new();
    let mut sector = 0u64;
    for k in 0..READS {
        let t = k * 1_000_000;
        if k < BATCHES {
            for j in 0..BATCH {
                sector += 8;
                let s = sector;
                ev.push((t + j * 1_000, 100, "Q", "R", format!("{s} + 8 [db]")));
                if j == 0 {
                    ev.push((t + 500, 100, "P", "N", "[db]".into()));
                }
                ev.push((t + 20_000 + j * 100, 100, "D", "R", format!("{s} + 8 [db]")));
                ev.push((t + 100_000 + j * 5_000, 0, "C", "R", format!("{s} + 8 [0]")));
            }
            ev.push((t + 10_000, 100, "U", "N", format!("[db] {BATCH}")));
        }
        sector += 8;
        let s = sector;
        let r = t + 500_000;
        ev.push((r, 200, "Q", "RS", format!("{s} + 8 [reader]")));
        ev.push((r + 100, 200, "P", "N", "[reader]".into()));
        ev.push((r + 200, 200, "UT", "N", "[reader] 1".into()));
        ev.push((r + 300, 200, "D", "RS", format!("{s} + 8 [reader]")));
        ev.push((r + 80_000, 0, "C", "RS", format!("{s} + 8 [0]")));
        if k < WRITES {
            sector += 8;
            let s = sector;
            let w = t + 700_000;
            ev.push((w, 300, "Q", "W", format!("{s} + 8 [bg]")));
            ev.push((w + 300, 300, "D", "W", format!("{s} + 8 [bg]")));
            ev.push((w + 90_000, 0, "C", "W", format!("{s} + 8 [0]")));
        }
    }
    ev.sort_by_key(|e| e.0);
    let mut text = String::new();
    for (i, (t, pid, act, rwbs, tail)) in ev.iter().enumerate() {
        let _ = writeln!(
            text,
            "  8,0    0 {:>8} {:>5}.{:09} {pid:>5} {act:>2} {rwbs:>3} {tail}",
            i + 1,
            t / 1_000_000_000,
            t % 1_000_000_000
        );
    }
    text
}

fn coalesce(path: &std::path::Path, extra: &[&str]) -> String {
    let o = bin()
        .args(["coalesce", "--policy", "all", "--trace"])
        .arg(path)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

/// (Urgent, Barrier, none, the rest of the line) of the marks line.
fn counts(out: &str) -> (u64, u64, u64, String) {
    let l = out
        .lines()
        .find(|l| l.starts_with("marks from "))
        .unwrap_or_else(|| panic!("no marks line: {out}"));
    let (_, tail) = l.split_once("): ").unwrap();
    let n: Vec<u64> = tail
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(3)
        .map(|s| s.parse().unwrap())
        .collect();
    (n[0], n[1], n[2], tail.to_string())
}

fn floor(out: &str) -> u64 {
    out.lines()
        .find_map(|l| l.strip_prefix("oracle floor: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap()
}

fn interrupts(out: &str, strategy: &str) -> u64 {
    out.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.first() == Some(&strategy)).then(|| f[1].parse().unwrap())
        })
        .unwrap()
}

#[test]
fn each_rule_marks_what_the_trace_shows_and_plug_lowers_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("batches.blkparse");
    std::fs::write(&path, trace()).unwrap();
    let total = BATCHES * BATCH + READS + WRITES;

    let table1 = coalesce(&path, &[]);
    assert!(
        table1.starts_with(&format!("{}: {total} requests", path.display())),
        "{table1}"
    );
    assert!(
        !table1.contains("marks from"),
        "the default says nothing new: {table1}"
    );
    let named = coalesce(&path, &["--marks-from", "table1"]);
    let (u, b, n, _) = counts(&named);
    assert_eq!((u, b, n), (BATCHES * BATCH + READS, 0, WRITES), "{named}");
    assert_eq!(floor(&named), floor(&table1));

    let plug = coalesce(&path, &["--marks-from", "plug"]);
    let (u, b, n, _) = counts(&plug);
    assert_eq!(
        (u, b, n),
        (READS, BATCHES, BATCHES * (BATCH - 1) + WRITES),
        "{plug}"
    );
    // A batch's completions need one interrupt, not eight.
    assert!(floor(&plug) < floor(&table1), "{plug}\n{table1}");
    assert!(floor(&plug) <= READS + BATCHES + WRITES, "{plug}");
    assert!(
        interrupts(&plug, "cint") < interrupts(&table1, "cint"),
        "{plug}\n{table1}"
    );
    assert_eq!(interrupts(&plug, "default"), total);

    let process = coalesce(&path, &["--marks-from", "process"]);
    let (u, b, n, tail) = counts(&process);
    assert_eq!(
        (u, b, n),
        (READS, BATCHES, BATCHES * (BATCH - 1) + WRITES),
        "{process}"
    );
    assert!(tail.contains("2 blocking processes, 1 batchers"), "{tail}");

    // A blkparse trace has no service class: Table 1 for every request,
    // and the line says so.
    let class = coalesce(&path, &["--marks-from", "class"]);
    let (_, _, _, tail) = counts(&class);
    assert!(
        tail.contains(&format!("{total} lacked the rule's fact")),
        "{tail}"
    );

    let none = coalesce(&path, &["--marks-from", "none"]);
    let (u, b, n, _) = counts(&none);
    assert_eq!((u, b, n), (0, 0, total), "{none}");

    // A --mark rule decides first; the line counts it.
    let ruled = coalesce(
        &path,
        &["--marks-from", "plug", "--mark", "comm=bg => urgent"],
    );
    let (u, _, _, tail) = counts(&ruled);
    assert_eq!(u, READS + WRITES);
    assert!(
        tail.contains(&format!("{WRITES} of them by --mark rules")),
        "{tail}"
    );
}

#[test]
fn sim_trace_reports_the_rule_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("batches.blkparse");
    std::fs::write(&path, trace()).unwrap();
    let o = bin()
        .args([
            "sim",
            "--policy",
            "cint",
            "--marks-from",
            "plug",
            "--output-format",
            "json",
            "--trace",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let m = &doc["marks"];
    assert_eq!(m["rule"], "plug");
    assert_eq!(
        (
            m["urgent"].as_u64(),
            m["barrier"].as_u64(),
            m["none"].as_u64()
        ),
        (
            Some(READS),
            Some(BATCHES),
            Some(BATCHES * (BATCH - 1) + WRITES)
        )
    );
    let by_mark = &doc["cinterrupts"]["completions_by_mark"];
    assert_eq!(by_mark["barrier"].as_u64(), Some(BATCHES), "{by_mark}");
    let text = bin()
        .args(["sim", "--policy", "cint", "--trace"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        !stdout(&text).contains("marks from"),
        "unchanged without the flag"
    );
    let bad = bin()
        .args(["coalesce", "--marks-from", "batch", "--trace"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let e = stderr(&bad);
    assert!(
        e.contains("--marks-from")
            && e.contains("'batch' is not one of table1, plug, class, process, none"),
        "{e}"
    );
}
