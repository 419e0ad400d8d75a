//! `tune` with its runs kept in a store (issue 28 item 4): a rerun runs
//! nothing, a tuning with runs removed from its store runs only those, and
//! shards each run their share of the candidates (each delta with each
//! thr); every way gives the tuning of one run without a store.

use std::path::Path;

use policy::MS;
use sim::{DeviceProfile, HostProfile};
use store::Tally;
use store::{Shard, Store};
use tune::kept::{tune_kept, Keep, Outcome};
use tune::{Target, TuneConfig, TuneError};

/// One libaio reader at iodepth 64 on core 1: short runs, a real plateau.
const DEEP: &str = "[r]\nioengine=libaio\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
                    iodepth=64\ntime_based\nruntime=1\n";

fn jobs() -> Vec<jobs::Job> {
    jobs::parse_str(DEEP, "t.fio", &|_| None).unwrap().jobs
}

fn cfg() -> TuneConfig {
    TuneConfig {
        runtime: Some(20 * MS),
        thr_points: vec![1, 4, 16, 32, 64],
        // Two candidate deltas (p90's, the percentile, and p99's): 10
        // candidates, if the two gaps round to different microseconds
        // (asserted below).
        delta_percentiles: vec![99.0],
        ..TuneConfig::new(Target::Sim {
            device: DeviceProfile::load("optane").unwrap(),
            host: HostProfile::load("xeon-e5-2660v4").unwrap(),
            seed: 1,
        })
    }
}

fn kept(store: &Store, shard: Shard) -> Result<Outcome, TuneError> {
    let keep = Keep {
        store,
        shard,
        job_file: DEEP.as_bytes(),
    };
    tune_kept(&jobs(), &cfg(), keep, &|_| {})
}

fn counts(runs: usize, before: usize, now: usize) -> Tally {
    Tally {
        runs,
        before,
        now,
        failed: 0,
    }
}

/// The keys of the store's finished runs.
fn keys(dir: &Path) -> Vec<String> {
    let mut k: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
        .collect();
    k.sort();
    k
}

#[test]
fn a_rerun_runs_only_what_the_store_lacks_and_tunes_alike() {
    let whole = tune::tune(&jobs(), &cfg(), &|_| {}).unwrap().to_json();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();

    let first = kept(&store, Shard::ALL).unwrap();
    assert_eq!(first.candidates, 10, "two deltas, five thrs");
    assert_eq!(first.counts, counts(11, 0, 11));
    assert_eq!(
        first.counts_line(),
        "11 runs: 0 stored before, 11 run now, 0 failed"
    );
    assert_eq!(first.tuning.unwrap().to_json(), whole);
    let all = keys(dir.path());
    assert_eq!(all.len(), 11, "the baseline and 10 candidates: {all:?}");

    let again = kept(&store, Shard::ALL).unwrap();
    assert_eq!(again.counts, counts(11, 11, 0));
    assert_eq!(again.tuning.unwrap().to_json(), whole);

    // As a tuning killed part way leaves it: two runs gone (the baseline
    // among them, if it is one of the first two keys).
    for k in &all[..2] {
        std::fs::remove_file(store.finished_path(k)).unwrap();
    }
    let resumed = kept(&store, Shard::ALL).unwrap();
    assert_eq!(resumed.counts, counts(11, 9, 2));
    assert_eq!(resumed.tuning.unwrap().to_json(), whole);
    assert_eq!(keys(dir.path()), all);
}

#[test]
fn shards_split_the_candidates_and_the_last_assembles_the_tuning() {
    let whole = tune::tune(&jobs(), &cfg(), &|_| {}).unwrap().to_json();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut ran = 0;
    for k in 0..3 {
        let o = kept(&store, Shard::new(k, 3).unwrap()).unwrap();
        // 10 candidates in 3 shards: 4, 3, 3; each shard has the
        // baseline, which only the first runs.
        let share = [4, 3, 3][k];
        assert_eq!(o.counts.runs, 1 + share, "shard {k}");
        assert_eq!(o.counts.before, usize::from(k > 0), "shard {k}");
        ran += o.counts.now;
        assert_eq!(o.candidates, 10);
        if k < 2 {
            assert!(o.tuning.is_none(), "shard {k} of 3 cannot assemble");
            assert_eq!(o.missing, 10 - [4, 7][k]);
        } else {
            assert_eq!(o.missing, 0);
            assert_eq!(
                o.tuning.unwrap().to_json(),
                whole,
                "the last shard assembles"
            );
        }
    }
    assert_eq!(ran, 11, "every run once");
    // A final task without a shard runs nothing and tunes alike.
    let last = kept(&store, Shard::ALL).unwrap();
    assert_eq!(last.counts, counts(11, 11, 0));
    assert_eq!(last.tuning.unwrap().to_json(), whole);
}

#[test]
fn a_corrupt_stored_run_is_one_line_naming_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    kept(&store, Shard::ALL).unwrap();
    let victim = keys(dir.path()).pop().unwrap();
    let path = store.finished_path(&victim);
    std::fs::write(&path, "{\"key\": 3").unwrap();
    let e = kept(&store, Shard::ALL).unwrap_err().to_string();
    assert!(e.starts_with(&path.display().to_string()), "{e}");
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn the_emulator_is_refused_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let cfg = TuneConfig::new(Target::Emu(emu::EmuConfig::default()));
    let keep = Keep {
        store: &store,
        shard: Shard::ALL,
        job_file: DEEP.as_bytes(),
    };
    let e = tune_kept(&jobs(), &cfg, keep, &|_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("--mode sim") && e.contains("measurement"), "{e}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}
