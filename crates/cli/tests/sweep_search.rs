//! `cinterrupts sweep search` end to end (issue 42 item 4) on a small spec
//! (adaptive and cint, 6 deltas x 6 thrs, on examples/mixed-16.fio, 10 ms
//! a point): a seed makes the same search; a search stopped after a round
//! and run again ends where an uninterrupted one does, reading the stored
//! points; its points are `sweep run`'s (the same keys); the budget
//! holds; `--compare-grid` prints the recovered fronts; bad options are
//! one line. (That the search finds a grid's exact front is shown on a
//! synthetic space: the sweep crate's `search` tests.)

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::*;

const SMALL: &str = r#"
workloads = ["mixed-16.fio"]
devices = ["optane"]
seeds = [1]
runtime = "10ms"
strategies = [
  { name = "adaptive", grid = { delta = ["2us", "4us", "6us", "10us", "15us", "30us"], thr = [1, 2, 4, 8, 16, 64] } },
  { name = "cint", grid = { delta = ["2us", "4us", "6us", "10us", "15us", "30us"], thr = [1, 2, 4, 8, 16, 64] } },
]
"#;

fn small(dir: &Path) -> String {
    let example = format!("{}/../../examples/mixed-16.fio", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(example, dir.join("mixed-16.fio")).unwrap();
    write(dir, "search.toml", SMALL)
}

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o)
}

fn search(spec: &str, store: &Path, extra: &[&str]) -> String {
    let mut cmd = bin_outside_array();
    cmd.args(["sweep", "search", spec, "-q", "--store"])
        .arg(store)
        .args(extra);
    ok(&cmd.output().unwrap())
}

/// The stored points' keys.
fn keys(store: &Path) -> BTreeSet<String> {
    std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
        .collect()
}

/// `search: R runs in K rounds ... (X run now, Y read from the store, ...`:
/// (R, X, Y).
fn runs(out: &str) -> (u64, u64, u64) {
    let line = out.lines().next().unwrap();
    let num = |after: &str| -> u64 {
        let at = line
            .find(after)
            .unwrap_or_else(|| panic!("{after}: {line}"));
        line[..at]
            .rsplit(|c: char| !c.is_ascii_digit())
            .find(|w| !w.is_empty())
            .unwrap()
            .parse()
            .unwrap()
    };
    (
        num(" runs in "),
        num(" run now"),
        num(" read from the store"),
    )
}

/// Everything but the counts of what ran now and what was read.
fn result(out: &str) -> String {
    let mut lines = out.lines();
    let first = lines.next().unwrap();
    let kept = first.split(" (").next().unwrap();
    std::iter::once(kept)
        .chain(lines)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_seed_makes_the_same_search_and_a_stopped_one_resumes_to_the_same_end() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small(dir.path());
    let a = dir.path().join("a");
    let first = search(&spec, &a, &["--seed", "3"]);
    let (made, run_now, read) = runs(&first);
    assert_eq!((run_now, read), (made, 0), "{first}");
    assert!(made < 72, "fewer runs than the grid's 72: {first}");
    assert_eq!(keys(&a).len() as u64, made);
    // Again on the same store: everything read, nothing run, the same end.
    let again = search(&spec, &a, &["--seed", "3"]);
    assert_eq!(runs(&again), (made, 0, made), "{again}");
    assert_eq!(result(&again), result(&first));
    // Stopped after round 0 (as a task killed after it would leave the
    // store), then run whole: round 0's points are read, the rest run,
    // and the end is the uninterrupted one's.
    let b = dir.path().join("b");
    let round0 = search(&spec, &b, &["--seed", "3", "--round", "0"]);
    assert!(round0.starts_with("round 0: "), "{round0}");
    let after0 = keys(&b);
    assert!(!after0.is_empty() && (after0.len() as u64) < made);
    let resumed = search(&spec, &b, &["--seed", "3"]);
    assert_eq!(
        runs(&resumed),
        (made, made - after0.len() as u64, after0.len() as u64),
        "{resumed}"
    );
    assert_eq!(result(&resumed), result(&first));
    assert_eq!(keys(&b), keys(&a));
    // Another seed starts from another coarse grid.
    let c = dir.path().join("c");
    search(&spec, &c, &["--seed", "4", "--round", "0"]);
    assert_ne!(keys(&c), after0);
}

#[test]
fn the_searchs_points_are_the_grids_and_the_comparison_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small(dir.path());
    let grid = dir.path().join("grid");
    ok(&run(&[
        "sweep",
        "run",
        &spec,
        "-q",
        "--store",
        grid.to_str().unwrap(),
    ]));
    let s = dir.path().join("s");
    let out_dir = dir.path().join("out");
    let out = search(
        &spec,
        &s,
        &[
            "--compare-grid",
            grid.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    let (made, _, _) = runs(&out);
    // Every point the search ran is one of the grid's, under its key.
    let (searched, whole) = (keys(&s), keys(&grid));
    assert_eq!(whole.len(), 72);
    assert!(searched.is_subset(&whole), "{searched:?}");
    // The comparison: "recovered F of G front points in R runs (grid: 72)".
    let line = out
        .lines()
        .find(|l| l.starts_with("recovered "))
        .unwrap_or_else(|| panic!("{out}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let (f, g): (usize, usize) = (words[1].parse().unwrap(), words[3].parse().unwrap());
    assert!(g > 0 && f <= g, "{line}");
    assert!(
        line.contains(&format!("in {made} runs (grid: 72)")),
        "{line}"
    );
    assert!(out.contains("  interrupts/s against p99: "), "{out}");
    assert!(out.contains("  CPU per I/O against p99: "), "{out}");
    // The search's fronts as sweep merge writes them.
    for name in ["table.csv", "fronts.csv", "fronts.svg", "report.md"] {
        assert!(out_dir.join(name).is_file(), "{name}");
    }
    let table = std::fs::read_to_string(out_dir.join("table.csv")).unwrap();
    assert_eq!(table.lines().count() as u64, made + 1);
    // Searching into the grid's store runs nothing.
    let into_grid = search(&spec, &grid, &[]);
    assert_eq!(runs(&into_grid), (made, 0, made), "{into_grid}");
}

#[test]
fn the_budget_holds_and_rounds_are_counted_and_sharded() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small(dir.path());
    let s = dir.path().join("s");
    let out = search(&spec, &s, &["--budget", "5"]);
    let (made, _, _) = runs(&out);
    assert!(made <= 5, "{out}");
    assert_eq!(keys(&s).len() as u64, made);
    assert!(out.lines().next().unwrap().contains("budget"), "{out}");
    // Round 0 counted, then run as two shards: together, the round.
    let t = dir.path().join("t");
    let count = search(&spec, &t, &["--round", "0", "--count"]);
    let n: usize = count.trim().parse().unwrap();
    assert!(n > 0 && keys(&t).is_empty(), "counting runs nothing");
    for k in ["0/2", "1/2"] {
        let said = search(&spec, &t, &["--round", "0", "--shard", k]);
        assert!(
            said.starts_with(&format!("round 0: {n} points; shard {k}:")),
            "{said}"
        );
    }
    assert_eq!(keys(&t).len(), n);
    // Round 2 before round 1 is refused, naming the round missing.
    let rounds = search(&spec, &dir.path().join("whole"), &[]);
    assert!(
        rounds.contains(" runs in ")
            && !rounds.contains(" in 1 rounds")
            && !rounds.contains(" in 2 rounds"),
        "{rounds}"
    );
    let o = bin_outside_array()
        .args(["sweep", "search", &spec, "-q", "--round", "2", "--store"])
        .arg(&t)
        .output()
        .unwrap();
    assert_one_line_error(&o, "round 1 is not done");
}

#[test]
fn bad_options_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let spec = small(dir.path());
    let two_seeds = write(
        dir.path(),
        "two.toml",
        &SMALL.replace("seeds = [1]", "seeds = [1, 2]"),
    );
    let store = dir.path().join("s");
    let st = store.to_str().unwrap();
    for (args, want) in [
        (vec![spec.as_str(), "--budget", "0"], "--budget 0"),
        (
            vec![two_seeds.as_str(), "--budget", "1"],
            "a setting is 2 runs",
        ),
        (vec![spec.as_str(), "--shard", "1/2"], "give --round R"),
        (vec![spec.as_str(), "--count"], "--round"),
        (vec![spec.as_str(), "--seed", "x"], "--seed"),
        (
            vec![spec.as_str(), "--compare-grid", "/nonexistent-grid"],
            "/nonexistent-grid",
        ),
    ] {
        let o = bin_outside_array()
            .args(["sweep", "search"])
            .args(&args)
            .args(["--store", st])
            .output()
            .unwrap();
        assert_one_line_error(&o, want);
    }
    assert!(!store.exists(), "nothing written by a refused search");
}
