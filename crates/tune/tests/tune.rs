//! `tune` end to end on workloads whose answer is known: a device with a
//! constant service time and one unit, kept busy, posts a completion every
//! service time exactly, so delta is the next whole microsecond above that
//! time whatever the percentile; and the thr chosen is the sweep's plateau.

use policy::{MS, US};
use sim::{DeviceProfile, HostProfile};
use tune::{Target, TuneConfig, TuneError};

/// One unit, constant service time.
fn device(service: &str) -> DeviceProfile {
    DeviceProfile::constant_service(service, 1, 10_000_000).unwrap()
}

fn jobs(text: &str) -> Vec<jobs::Job> {
    jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs
}

/// One libaio reader at iodepth 64 on core 1.
const DEEP: &str = "[r]\nioengine=libaio\nrw=randread\nbs=4k\nsize=256m\ncpus_allowed=1\n\
                    iodepth=64\ntime_based\nruntime=1\n";

fn sim_config(service: &str) -> TuneConfig {
    TuneConfig {
        runtime: Some(20 * MS),
        ..TuneConfig::new(Target::Sim {
            device: device(service),
            host: HostProfile::load("xeon-e5-2660v4").unwrap(),
            seed: 1,
        })
    }
}

#[test]
fn constant_gaps_give_their_own_delta_at_any_percentile() {
    for p in [50.0, 90.0, 99.0, 100.0] {
        let cfg = TuneConfig {
            percentile: p,
            ..sim_config("5500ns")
        };
        let t = tune::tune(&jobs(DEEP), &cfg, &|_| {}).unwrap();
        assert_eq!(t.gap_at_percentile, 5_500, "p{p}: {:?}", t.gaps);
        assert_eq!(t.delta, 6 * US, "5.5 us rounds up to 6 us");
        assert_eq!(t.percentile, p);
    }
}

#[test]
fn the_chosen_thr_is_the_start_of_the_swept_plateau() {
    let cfg = sim_config("5us");
    let t = tune::tune(&jobs(DEEP), &cfg, &|_| {}).unwrap();
    assert_eq!(t.gap_at_percentile, 5 * US);
    assert_eq!(t.delta, 6 * US, "above the gap, or no burst would last");
    let thrs: Vec<u32> = t.sweep.iter().map(|p| p.thr.unwrap()).collect();
    assert_eq!(thrs, tune::THR_POINTS);
    let iops: Vec<f64> = t.sweep.iter().map(|p| p.iops).collect();
    let i = thrs.iter().position(|&x| x == t.thr).unwrap();
    assert_eq!(tune::pick::plateau(&iops, t.tolerance), Some(i));
    // The device serves one command per 5 us: nothing beats 200K IOPS.
    assert!(iops.iter().all(|&v| v <= 200_000.0 * 1.001), "{iops:?}");
    // The baseline has an interrupt per completion or so; adaptive at the
    // largest thr coalesces.
    assert!(t.baseline.completions_per_irq < 1.5, "{:?}", t.baseline);
    assert!(
        t.sweep.last().unwrap().completions_per_irq > 4.0,
        "{:?}",
        t.sweep
    );
    // Every number makes it to the JSON.
    let v = t.to_json();
    assert_eq!(v["delta"], "6us");
    assert_eq!(v["sweep"].as_array().unwrap().len(), thrs.len());
    assert_eq!(v["thr"], t.thr);
    assert_eq!(v["completion_gaps"]["cdf"][0][0], 5_000);
}

#[test]
fn sweep_points_are_sorted_and_deduplicated() {
    let cfg = TuneConfig {
        thr_points: vec![32, 1, 8, 8],
        ..sim_config("5us")
    };
    let t = tune::tune(&jobs(DEEP), &cfg, &|_| {}).unwrap();
    let thrs: Vec<u32> = t.sweep.iter().map(|p| p.thr.unwrap()).collect();
    assert_eq!(thrs, [1, 8, 32]);
}

#[test]
fn a_workload_without_two_completions_has_no_delta() {
    let one = "[r]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\nnumber_ios=1\n";
    let cfg = TuneConfig {
        runtime: None,
        ..sim_config("5us")
    };
    let e = tune::tune(&jobs(one), &cfg, &|_| {}).unwrap_err();
    assert!(matches!(e, TuneError::NoGaps), "{e}");
}

#[test]
fn bad_settings_are_refused_before_running() {
    for (p, tol, thrs) in [
        (0.0, 0.01, vec![1]),
        (100.5, 0.01, vec![1]),
        (f64::NAN, 0.01, vec![1]),
        (90.0, 1.0, vec![1]),
        (90.0, -0.1, vec![1]),
        (90.0, 0.01, vec![]),
        (90.0, 0.01, vec![0, 4]),
    ] {
        let cfg = TuneConfig {
            percentile: p,
            tolerance: tol,
            thr_points: thrs,
            ..sim_config("5us")
        };
        let e = tune::tune(&jobs(DEEP), &cfg, &|_| panic!("ran")).unwrap_err();
        assert!(matches!(e, TuneError::Config(_)), "{e}");
        assert_eq!(e.to_string().lines().count(), 1);
    }
}

/// The same method on the emulator: delta from gaps the device thread
/// measured, a sweep of three points, one run at a time. The numbers depend
/// on this machine; only the structure is held.
#[test]
fn tuning_runs_on_the_emulator() {
    let cfg = TuneConfig {
        // 100 ms: at 30 ms a loaded machine (load 4-5, 2 vCPUs, 2026-11-28)
        // once left the thr=64 point with nothing completed in its window.
        runtime: Some(100 * MS),
        thr_points: vec![1, 8, 64],
        // One candidate delta: the sweep is the candidates.
        delta_percentiles: vec![],
        ..TuneConfig::new(Target::Emu(emu::EmuConfig {
            backend: Some(emu::backend::BackendSpec::parse("null:10us,depth=8").unwrap()),
            ..emu::EmuConfig::default()
        }))
    };
    let steps = std::sync::Mutex::new(Vec::new());
    let t = tune::tune(&jobs(DEEP), &cfg, &|s| {
        steps.lock().unwrap().push(s.to_string())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(t.gaps.count > 0);
    assert!(t.delta >= US && t.delta % US == 0, "{}", t.delta);
    assert_eq!(t.sweep.len(), 3);
    assert_eq!(t.candidates, t.sweep);
    assert!(
        t.recommended.is_some(),
        "no budget: something is on the front"
    );
    assert!([1, 8, 64].contains(&t.thr));
    assert!(t.sweep.iter().all(|p| p.iops > 0.0), "{:?}", t.sweep);
    assert_eq!(
        steps.lock().unwrap().len(),
        4,
        "the baseline and three points"
    );
}
