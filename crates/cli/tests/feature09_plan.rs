//! `cinterrupts coalesce --trace FILE --plan feature09` (issue 40): a
//! Feature 09h plan derived from a captured trace prints the `nvme
//! set-feature` commands that would apply it. The commands' values decode
//! back to the plan the table states (Feature 09h: CD bit 16, IV bits
//! 15:00; Feature 08h: time bits 15:08, threshold 0's based bits 07:00),
//! and a trace of synchronous reads gets another plan than one of
//! asynchronous batches. Bad input is one line.

mod common;

use std::path::Path;

use common::{assert_one_line_error, bin, stderr, stdout, write};
use policy::feature09::decode_vector_config;
use policy::nvme::Aggregation;
use policy::US;

/// blkparse text: each request `(cpu, dispatch ns, completion ns)`, a 4 KiB
/// read at its own sector, its `Q` and `D` at the dispatch; events in time
/// order, numbered per CPU as blkparse does.
fn blkparse(requests: &[(u32, u64, u64)]) -> String {
    let mut events: Vec<(u64, u32, &str, u64)> = Vec::new();
    for (i, &(cpu, d, c)) in requests.iter().enumerate() {
        let sector = 8 * i as u64;
        events.push((d, cpu, "Q", sector));
        events.push((d, cpu, "D", sector));
        events.push((c, cpu, "C", sector));
    }
    events.sort_by_key(|e| (e.0, e.2 == "C"));
    let mut seq = std::collections::HashMap::new();
    let mut out = String::new();
    for (t, cpu, act, sector) in events {
        let n = seq.entry(cpu).or_insert(0u64);
        *n += 1;
        let pid = if act == "C" { 0 } else { 100 + cpu };
        out += &format!(
            "259,0 {cpu:>4} {n:>8} {:>5}.{:09} {pid:>5}  {act}   R {sector} + 8 [fio]\n",
            t / 1_000_000_000,
            t % 1_000_000_000
        );
    }
    out
}

/// A blocking reader on `cpu`: one read at a time, 10 us each.
fn sync_reads(cpu: u32, n: u64) -> Vec<(u32, u64, u64)> {
    (0..n)
        .map(|i| (cpu, i * 12 * US, i * 12 * US + 10 * US))
        .collect()
}

/// A batcher on `cpu`: batches of 32 reads dispatched together, completed
/// 50 us later.
fn batches(cpu: u32, n: u64) -> Vec<(u32, u64, u64)> {
    (0..n)
        .flat_map(|b| {
            (0..32).map(move |i| {
                let t = b * 60 * US + i * 100;
                (cpu, t, t + 50 * US)
            })
        })
        .collect()
}

/// The plan as printed: the table's (vector, CD, mean depth), the 08h
/// line's (time, threshold) and the commands' decoded values.
struct Printed {
    rows: Vec<(u16, bool, f64)>,
    stated: Aggregation,
    set_08h: Vec<Aggregation>,
    set_09h: Vec<(u16, bool)>,
    sim: String,
}

fn value_of(line: &str) -> u32 {
    let v = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("--value=0x"))
        .unwrap_or_else(|| panic!("no value in {line}"));
    u32::from_str_radix(v, 16).unwrap()
}

fn parse(out: &str) -> Printed {
    let rows = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("vector"))
        .skip(1)
        .take_while(|l| !l.starts_with("08h:"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].parse().unwrap(),
                l.contains("coalescing disabled"),
                f[4].parse().unwrap(),
            )
        })
        .collect();
    let line08 = out.lines().find(|l| l.starts_with("08h:")).unwrap();
    let words: Vec<&str> = line08.split_whitespace().collect();
    let time = jobs::units::parse_duration(words[3], None).unwrap();
    let at = words.iter().position(|w| *w == "threshold").unwrap();
    let threshold = words[at + 1].parse().unwrap();
    let cmds = |fid: &str| -> Vec<u32> {
        out.lines()
            .filter(|l| l.starts_with("nvme set-feature /dev/nvme0 ") && l.contains(fid))
            .map(value_of)
            .collect()
    };
    Printed {
        rows,
        stated: Aggregation { time, threshold },
        set_08h: cmds("--feature-id=0x08")
            .into_iter()
            .map(|v| Aggregation::from_feature(v).unwrap())
            .collect(),
        set_09h: cmds("--feature-id=0x09")
            .into_iter()
            .map(|v| decode_vector_config(v).unwrap())
            .collect(),
        sim: out
            .lines()
            .find_map(|l| l.strip_prefix("sim: "))
            .unwrap()
            .to_string(),
    }
}

fn plan(trace: &Path) -> Printed {
    let o = bin()
        .args(["coalesce", "--plan", "feature09", "--trace"])
        .arg(trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let p = parse(&stdout(&o));
    // The commands are the plan: one 08h with the stated values, one 09h
    // per vector of the table with its decision.
    assert_eq!(p.set_08h, [p.stated]);
    let stated: Vec<(u16, bool)> = p.rows.iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(p.set_09h, stated);
    // Derived, the threshold is the shallowest aggregated vector's depth.
    if let Some(d) = p.rows.iter().filter(|r| !r.1).map(|r| r.2).reduce(f64::min) {
        assert_eq!(p.stated.threshold, d.floor() as u32);
    }
    p
}

#[test]
fn a_plan_from_a_trace_decodes_back_and_follows_what_the_trace_shows() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = dir.path();
    let sync = plan(Path::new(&write(
        dir,
        "sync",
        &blkparse(&sync_reads(0, 50)),
    )));
    let batch = plan(Path::new(&write(dir, "batch", &blkparse(&batches(0, 4)))));
    // The same CPU, another plan: a synchronous reader gets Coalescing
    // Disable, a batcher 08h's coalescing.
    assert_eq!(sync.set_09h, [(1, true)]);
    assert_eq!(batch.set_09h, [(1, false)]);
    assert!(batch.stated.threshold > 1);
    assert_ne!(sync.sim, batch.sim);
    // Both on one trace, each on its CPU's vector.
    let mut both = sync_reads(0, 50);
    both.extend(batches(3, 4));
    let mixed = plan(Path::new(&write(dir, "mixed", &blkparse(&both))));
    assert_eq!(mixed.set_09h, [(1, true), (4, false)]);
    assert_eq!(mixed.stated.threshold, batch.stated.threshold);
    assert!(
        mixed.sim.starts_with("--policy feature09 --cd 1 "),
        "{}",
        mixed.sim
    );
    // The shipped sample trace plans too.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    plan(&repo.join("examples/traces/sample.blkparse"));
}

#[test]
fn the_printed_sim_options_run_the_same_plan_in_the_simulator() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let trace = write(dir.path(), "batch", &blkparse(&batches(1, 4)));
    let p = plan(Path::new(&trace));
    let job = write(
        dir.path(),
        "j.fio",
        "[j]\nioengine=libaio\niodepth=32\nrw=randread\nbs=4k\nsize=16m\ncpus_allowed=1\n",
    );
    let mut cmd = bin();
    cmd.args(["sim", &job, "--runtime", "5ms"]);
    cmd.args(p.sim.split_whitespace());
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("policy=feature09 cd=none"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn bad_input_is_one_line() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let run = |args: &[&str]| bin().args(args).output().unwrap();
    let biosnoop = repo.join("examples/traces/sample.biosnoop");
    let o = run(&[
        "coalesce",
        "--plan",
        "feature09",
        "--trace",
        biosnoop.to_str().unwrap(),
    ]);
    assert_one_line_error(&o, "only blkparse and blktrace record");
    let blk = repo.join("examples/traces/sample.blkparse");
    let blk = blk.to_str().unwrap();
    let o = run(&["coalesce", "--plan", "feature10", "--trace", blk]);
    assert_one_line_error(&o, "--plan");
    let o = run(&[
        "coalesce",
        "--plan",
        "feature09",
        "--trace",
        blk,
        "--thr",
        "300",
    ]);
    assert_one_line_error(&o, "--aggr-time/--thr");
    let o = run(&[
        "coalesce",
        "--plan",
        "feature09",
        "--trace",
        blk,
        "--cd",
        "1",
    ]);
    assert_one_line_error(&o, "option --plan");
    let o = run(&["sim", "x.fio", "--policy", "feature09", "--cd", "0"]);
    assert_one_line_error(&o, "admin queue");
}
