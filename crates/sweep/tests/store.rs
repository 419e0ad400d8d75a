//! A store that cannot lie (issue 42 item 5): bad entries found and run
//! again, every one listed by merge at once, two specs or two code
//! versions never merged into one front, and a spec's points enumerated
//! lazily (a shard of a million points without the million).

mod common;

use common::{default_spec, quiet, spec_named as spec_in, ALL, TINY};
use sweep::merge::{merge, merge_with, Merge, MergeError};
use sweep::store::{Finished, Results};
use sweep::{expand, run, Points, Shard, Spec, Store};

/// The refusal's lines, or a panic naming what merged instead.
fn refused(r: Result<sweep::merge::Table, MergeError>) -> Vec<String> {
    match r {
        Err(MergeError::Refused(lines)) => lines,
        Err(e) => panic!("not refused but failed: {e}"),
        Ok(t) => panic!("merged {} rows", t.rows.len()),
    }
}

/// Cut, emptied, a number changed (its checksum left), another key's
/// entry under this name: each found by `sweep run` and run again; merge
/// before the rerun lists all four at once, naming each file.
#[test]
fn truncated_emptied_tampered_and_misnamed_entries_are_listed_and_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::load(&spec_in(dir.path(), "sweep.toml", TINY)).unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    run(&spec, &store, ALL, &quiet).unwrap();
    let good = merge(std::slice::from_ref(&store)).unwrap();
    let keys: Vec<String> = expand(&spec).into_iter().map(|p| p.key).collect();
    let path = |i: usize| store.finished_path(&keys[i]);
    let text = |i: usize| std::fs::read_to_string(path(i)).unwrap();

    let cut = text(0);
    std::fs::write(path(0), &cut[..cut.len() * 2 / 3]).unwrap();
    std::fs::write(path(1), "").unwrap();
    // A figure changed by hand: still valid JSON, the checksum not its.
    let f: Finished = serde_json::from_str(&text(2)).unwrap();
    let p99 = format!("\"p99_ns\": {}", f.results.p99_ns);
    assert!(text(2).contains(&p99));
    let edited = text(2).replacen(&p99, &format!("\"p99_ns\": {}", f.results.p99_ns / 2), 1);
    std::fs::write(path(2), edited).unwrap();
    std::fs::copy(path(4), path(3)).unwrap();

    let lines = refused(merge(std::slice::from_ref(&store)));
    assert_eq!(lines.len(), 4, "{lines:?}");
    for (i, says) in [
        (0, "truncated"),
        (1, "empty"),
        (2, "tampered"),
        (3, "holds key"),
    ] {
        let named = path(i).display().to_string();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&named) && l.contains(says)),
            "{named} {says}: {lines:?}"
        );
    }

    let again = run(&spec, &store, ALL, &quiet).unwrap();
    assert_eq!(
        again.to_string(),
        "8 points: 4 finished before, 4 run now, 0 failed"
    );
    assert_eq!(
        again.bad_line().unwrap(),
        "4 bad entries run again (1 empty, 1 tampered, 1 truncated, 1 wrong key)"
    );
    // Rerun, the table is the one before: the tampered figure is gone.
    let table = merge(std::slice::from_ref(&store)).unwrap();
    assert_eq!(table.csv(), good.csv());
    let clean = run(&spec, &store, ALL, &quiet).unwrap();
    assert_eq!((clean.finished_before, clean.bad_line()), (8, None));
}

/// The case: a 100 ms and a 200 ms spec into one store. Merged,
/// their points would be one front of two experiments; merge refuses, and
/// `--spec` takes one spec's points alone.
#[test]
fn two_specs_in_one_store_are_never_one_front() {
    let dir = tempfile::tempdir().unwrap();
    let text = |runtime: &str| default_spec("1, 2", runtime);
    let a = Spec::load(&spec_in(dir.path(), "a.toml", &text("100ms"))).unwrap();
    let b = Spec::load(&spec_in(dir.path(), "b.toml", &text("200ms"))).unwrap();
    assert_ne!(a.identity(), b.identity());
    let store = Store::open(&dir.path().join("store")).unwrap();
    run(&a, &store, ALL, &quiet).unwrap();
    run(&b, &store, ALL, &quiet).unwrap();
    let lines = refused(merge(std::slice::from_ref(&store)));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("store holds 2 entries of another spec"),
        "{lines:?}"
    );
    let only_b = Merge {
        spec: Some(b.identity()),
        mixed: false,
    };
    let table = merge_with(std::slice::from_ref(&store), &only_b).unwrap();
    assert_eq!(table.rows.len(), 2);
    assert!(table.rows.iter().all(|r| r.runtime_ns == 200_000_000));
    assert_eq!(table.left_out.len(), 1, "{:?}", table.left_out);
    // The same spec from another file (comments, key order) is the same
    // spec.
    let c = Spec::load(&spec_in(
        dir.path(),
        "c.toml",
        &format!("# again\n{}", text("200ms")),
    ))
    .unwrap();
    assert_eq!(c.identity(), b.identity());
}

/// A spec grown by a seed, run into the store of the smaller one: the
/// points both make are the same configurations (the key names them
/// whole), so they are not run again but become the larger spec's, and
/// its store merges.
#[test]
fn a_grown_spec_takes_over_the_points_it_shares() {
    let dir = tempfile::tempdir().unwrap();
    let text = |seeds: &str| default_spec(seeds, "20ms");
    let one = Spec::load(&spec_in(dir.path(), "one.toml", &text("1"))).unwrap();
    let two = Spec::load(&spec_in(dir.path(), "two.toml", &text("1, 2"))).unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    run(&one, &store, ALL, &quiet).unwrap();
    let c = run(&two, &store, ALL, &quiet).unwrap();
    assert_eq!((c.finished_before, c.adopted, c.run_now), (1, 1, 1));
    assert_eq!(merge(std::slice::from_ref(&store)).unwrap().rows.len(), 2);
}

/// Entries of another code version (as a store made at another commit
/// holds) are refused; `--mixed` keeps them apart: a version column, and
/// a front per version (the host labelled with it).
#[test]
fn two_code_versions_are_refused_unless_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec::load(&spec_in(dir.path(), "sweep.toml", TINY)).unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    run(&spec, &store, ALL, &quiet).unwrap();
    // The same points as another version stored them: keyed with it.
    let old = "0.0.9";
    for f in store.finished::<Results>().unwrap() {
        store
            .put_finished(&Finished {
                key: ::store::key(&f.config, old),
                version: old.into(),
                ..f
            })
            .unwrap();
    }
    let lines = refused(merge(std::slice::from_ref(&store)));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("2 code versions (8 of 0.0.9, 8 of"),
        "{lines:?}"
    );
    let mixed = Merge {
        spec: None,
        mixed: true,
    };
    let table = merge_with(std::slice::from_ref(&store), &mixed).unwrap();
    assert_eq!(table.rows.len(), 16);
    let csv = table.csv();
    assert!(csv.lines().next().unwrap().ends_with(",version"), "{csv}");
    assert_eq!(csv.lines().filter(|l| l.ends_with(",0.0.9")).count(), 8);
    let fronts = sweep::front::fronts(&table);
    assert_eq!(fronts.len(), 2, "a front per version");
    assert!(fronts.iter().any(|f| f.host.ends_with("code 0.0.9")));
}

/// A million-point spec: counted, not built. Point i is made from its
/// coordinates; what the enumerator holds is the spec's lists, the same
/// for 8 points as for 10^6; shard 1/1000's first point is made without
/// the others.
#[test]
fn a_million_point_spec_is_enumerated_lazily() {
    let dir = tempfile::tempdir().unwrap();
    let deltas: Vec<String> = (1..=1000).map(|i| format!("\"{i}us\"")).collect();
    let thrs: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
    let text = format!(
        "workloads = [\"mixed-16.fio\"]\ndevices = [\"optane\"]\nruntime = \"100ms\"\nstrategies = [{{ name = \"adaptive\", grid = {{ delta = [{}], thr = [{}] }} }}]\n",
        deltas.join(","),
        thrs.join(",")
    );
    let big = Spec::load(&spec_in(dir.path(), "big.toml", &text)).unwrap();
    let points = Points::new(&big).unwrap();
    assert_eq!(points.len(), 1_000_000);
    let tiny = Spec::load(&spec_in(dir.path(), "tiny.toml", TINY)).unwrap();
    let small = Points::new(&tiny).unwrap();
    assert_eq!(small.len(), 8);
    assert_eq!(points.held(), small.held() - 1, "one strategy, not two");
    let last = points.get(999_999).unwrap();
    assert_eq!(last.config["policy"]["params"]["delta"], "1ms");
    assert_eq!(last.config["policy"]["params"]["thr"], "1000");
    assert!(points.get(1_000_000).is_none());
    let mut shard = points.shard(Shard::new(1, 1000).unwrap());
    let first = shard.next().unwrap();
    assert_eq!(first.key, points.get(points.order().at(1)).unwrap().key);
    assert_eq!(shard.count(), 999);
}

/// Shards cover every point exactly once, and a point is the same whether
/// made alone or listed.
#[test]
fn shards_cover_every_point_once() {
    let dir = tempfile::tempdir().unwrap();
    let text = TINY.replace("seeds = [1, 2]", "seeds = [1, 2, 3]");
    let spec = Spec::load(&spec_in(dir.path(), "sweep.toml", &text)).unwrap();
    let mut all: Vec<String> = expand(&spec).into_iter().map(|p| p.key).collect();
    assert_eq!(all.len(), 12);
    all.sort();
    let points = Points::new(&spec).unwrap();
    for n in 1..=13 {
        let mut seen: Vec<String> = (0..n)
            .flat_map(|k| points.shard(Shard::new(k, n).unwrap()).map(|p| p.key))
            .collect();
        seen.sort();
        assert_eq!(seen, all, "{n} shards");
    }
}
