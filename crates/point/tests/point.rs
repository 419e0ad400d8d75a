//! The one runner: a point on the simulator runs exactly as `sim` runs its
//! configuration, and the settings reach each front end from here (the
//! host profile's mechanisms and idle states; the emulator's device model,
//! its tuned delta and thr, and the host mechanisms `run` applies).

use host::mechanism::{BlockScheduler, Settings as HostSettings};
use host::poll::Mode as Completion;
use point::{Front, Mode, Point, PointError, Settings, Workload};
use policy::{PolicySpec, MS, US};
use sim::{DeviceProfile, HostProfile, IdleSettings};

const JOB: &str = "[r]\nioengine=libaio\niodepth=8\nrw=randread\nbs=4k\nsize=64m\n";

fn sim_point(settings: Settings) -> Point {
    Point {
        front: Front::Sim {
            device: DeviceProfile::load("optane").unwrap(),
            host: HostProfile::load("xeon-e5-2660v4").unwrap(),
        },
        settings,
        seed: 7,
        runtime: Some(5 * MS),
    }
}

#[test]
fn a_simulated_point_runs_as_the_simulator_runs_its_configuration() {
    let jobs = jobs::parse_str(JOB, "t.fio", &|_| None).unwrap().jobs;
    let at = sim_point(Settings::policy(PolicySpec::named("cint")));
    assert_eq!(at.front.mode(), Mode::Sim);
    let config = at.sim_config().unwrap();
    assert_eq!((config.seed, config.runtime), (7, Some(5 * MS)));
    let ours = at.run(Workload::Jobs(&jobs)).unwrap();
    let theirs = sim::simulate(&jobs, &config, &mut |_, _| {}).unwrap();
    assert!(ours.completed_ios() > 0);
    assert_eq!(
        serde_json::to_value(&ours).unwrap(),
        serde_json::to_value(&theirs).unwrap()
    );
}

#[test]
fn a_simulated_point_takes_its_host_settings_and_idle_states_over_the_profile() {
    let host = HostSettings {
        completion: Some(Completion::Poll),
        block_scheduler: Some(BlockScheduler::LD),
        ..HostSettings::default()
    };
    let idle = IdleSettings {
        states: host::cpuidle::Table::Skx,
        cpu_latency_limit: Some(20 * US),
        ..IdleSettings::default()
    };
    let at = sim_point(Settings {
        policy: PolicySpec::named("default"),
        host,
        idle: Some(idle),
    });
    let config = at.sim_config().unwrap();
    assert_eq!(config.host.completion, Completion::Poll);
    assert_eq!(config.host.block_scheduler, BlockScheduler::LD);
    assert_eq!(config.host.explicit.completion, Some(Completion::Poll));
    assert_eq!(config.host.idle_states, host::cpuidle::Table::Skx);
    assert_eq!(config.host.cpu_latency_limit, Some(20 * US));
    assert!(at.emu_config().is_none());
}

#[test]
fn an_emulated_point_on_a_device_takes_its_model_its_tuned_delta_and_the_host_mechanisms() {
    let p3700 = DeviceProfile::load("p3700").unwrap();
    let host = HostSettings {
        completion: Some(Completion::Hybrid),
        block_scheduler: Some("ld,tokens=4,split=64k".parse().unwrap()),
        uring: Some(host::uring::parse("min-wait=20us").unwrap()),
        ..HostSettings::default()
    };
    let at = Point {
        front: Front::emu_on(p3700.clone()),
        settings: Settings {
            host,
            ..Settings::policy(PolicySpec::named("cint"))
        },
        seed: 3,
        runtime: Some(300 * MS),
    };
    assert_eq!(at.front.mode(), Mode::Emu);
    assert!(at.sim_config().is_none());
    let config = at.emu_config().unwrap();
    // TOS 5.2's P3700 delta, from the profile, as the simulator takes it.
    assert_eq!(config.policy.delta, Some(p3700.default_delta));
    assert_eq!(config.policy.thr, Some(p3700.default_thr));
    assert_eq!(
        config.backend.map(|b| b.to_string()),
        Some(emu::backend::BackendSpec::device(p3700, 3).to_string())
    );
    assert_eq!((config.seed, config.runtime), (3, Some(300 * MS)));
    assert_eq!(config.completion, Completion::Hybrid);
    let ld = config.block.unwrap();
    assert_eq!((ld.tokens, ld.split), (4, 64 * 1024));
    assert!(config.uring.is_some());
}

#[test]
fn an_emulator_base_keeps_what_the_point_does_not_set() {
    let null = emu::backend::BackendSpec::parse("null:10us").unwrap();
    let base = emu::EmuConfig {
        backend: Some(null.clone()),
        queue_depth: 64,
        runtime: Some(2 * MS),
        ..emu::EmuConfig::default()
    };
    let mut at = Point {
        front: Front::Emu { device: None, base },
        settings: Settings::policy(PolicySpec::named("adaptive")),
        seed: 9,
        runtime: None,
    };
    let config = at.emu_config().unwrap();
    assert_eq!(config.queue_depth, 64);
    assert_eq!(config.runtime, Some(2 * MS));
    assert_eq!(config.backend.unwrap().to_string(), null.to_string());
    // No device profile: no device-tuned defaults.
    assert_eq!(config.policy, PolicySpec::named("adaptive"));
    assert_eq!(config.completion, Completion::Interrupt);
    at.runtime = Some(MS);
    assert_eq!(at.emu_config().unwrap().runtime, Some(MS));
}

#[test]
fn the_emulator_runs_job_files_only() {
    let at = Point {
        front: Front::emu_on(DeviceProfile::load("optane").unwrap()),
        settings: Settings::default(),
        seed: 1,
        runtime: Some(MS),
    };
    let trace = Workload::Trace {
        ios: &[],
        replay: sim::replay::Loop::Open,
    };
    let e = at.run(trace).unwrap_err();
    assert!(matches!(e, PointError::EmuJobsOnly), "{e}");
    assert_eq!(e.to_string(), "emu runs fio job files only");
}
