//! Issue 28: "for the Optane and P3700 profiles `tune`'s chosen delta and
//! thr lie on [the Pareto fronts]". `tune` picks delta and thr on its own
//! workload (examples/tune-libaio.fio; p90 on the Optane, p99 on the
//! P3700, as TOS 5.2 did), a sweep of adaptive over deltas and tune's own
//! thr list on both devices is merged with `--tune`, and the report says
//! where each pick stands.
//!
//! What the runs show (and this test asserts): both picks are OFF the
//! front of interrupts/s against p99. On this saturated workload a larger
//! thr (with a delta long enough to reach it) takes fewer interrupts and
//! no worse p99, so settings with thr 64-255 beat tune's thr 8-12 on both.
//! tune's rule is the start of the IOPS plateau, not a point of this
//! trade-off; the test checks the relation from the table's own numbers.

mod common;

use std::fs;
use std::path::Path;

use common::*;
use serde_json::Value;

/// Each run's length, tune's and the sweep's alike (tune's default is
/// 200ms; at 50ms it picks the same delta and thr on both devices and the
/// debug build runs the sweep in seconds).
const RUNTIME: &str = "50ms";

/// tune's thr sweep (crates/tune README: 1, 2, 4, ... 192, 255).
const TUNE_THRS: [u64; 14] = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 255];

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o)
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn tunes_picks_for_the_optane_and_the_p3700_are_judged_against_the_fronts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let example = format!(
        "{}/../../examples/tune-libaio.fio",
        env!("CARGO_MANIFEST_DIR")
    );
    fs::copy(example, dir.join("tune-libaio.fio")).unwrap();
    let job = dir.join("tune-libaio.fio");
    let job = job.to_str().unwrap();

    // tune on each device: TOS 5.2 read delta at p90 on the Optane and at
    // p99 on the P3700.
    let mut picks = Vec::new();
    for (device, percentile) in [("optane", "90"), ("p3700", "99")] {
        let out = dir.join(format!("tune-{device}"));
        ok(&run(&[
            "tune",
            job,
            "--device",
            device,
            "--percentile",
            percentile,
            "--runtime",
            RUNTIME,
            "-q",
            "--out",
            out.to_str().unwrap(),
        ]));
        let t = json(&out.join("tune.json"));
        let delta = t["delta"].as_str().unwrap().to_string();
        let thr = t["thr"].as_u64().unwrap();
        picks.push((device, delta, thr, out.join("tune.json")));
    }

    // The sweep: adaptive over deltas from 2us to 30us (with both picks'
    // deltas) and tune's thr list, on both devices.
    let mut deltas: Vec<String> = ["2us", "6us", "14us", "30us"].map(String::from).to_vec();
    for (_, delta, thr, _) in &picks {
        if !deltas.contains(delta) {
            deltas.push(delta.clone());
        }
        assert!(
            TUNE_THRS.contains(thr),
            "tune picked thr {thr}, not in its list"
        );
    }
    let deltas: Vec<String> = deltas.iter().map(|d| format!("\"{d}\"")).collect();
    let thrs: Vec<String> = TUNE_THRS.iter().map(u64::to_string).collect();
    let spec = write(
        dir,
        "picks.toml",
        &format!(
            "workloads = [\"tune-libaio.fio\"]\ndevices = [\"optane\", \"p3700\"]\nruntime = \"{RUNTIME}\"\n\
             strategies = [{{ name = \"adaptive\", grid = {{ delta = [{}], thr = [{}] }} }}]\n",
            deltas.join(", "),
            thrs.join(", ")
        ),
    );
    ok(&run(&["sweep", "run", &spec, "-q"]));
    let merged = dir.join("merged");
    let mut args = vec![
        "sweep".to_string(),
        "merge".into(),
        dir.join("sweep-store").to_str().unwrap().into(),
        "--out".into(),
        merged.to_str().unwrap().into(),
    ];
    for (_, _, _, tune_json) in &picks {
        args.push("--tune".into());
        args.push(tune_json.to_str().unwrap().into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let report = ok(&run(&args));
    assert!(
        report.contains("tune's picks against the fronts"),
        "{report}"
    );

    let judged = json(&merged.join("picks.json"));
    let judged = judged.as_array().unwrap();
    assert_eq!(judged.len(), 2);
    let table = json(&merged.join("table.json"));
    let rows = table.as_array().unwrap();
    let figure = fs::read_to_string(merged.join("fronts.svg")).unwrap();
    for ((device, delta, thr, _), j) in picks.iter().zip(judged) {
        let policy = format!("adaptive delta={delta} thr={thr}");
        assert_eq!(j["device"], *device);
        assert_eq!(j["policy"], policy.as_str());
        // What the runs show: off the front.
        assert_eq!(j["standing"], "off the front", "{device}: {j:#}");
        assert!(
            report.contains(&format!("{policy} (from")) && report.contains("OFF the front"),
            "{report}"
        );
        assert!(
            figure.contains(&format!("tune delta={delta} thr={thr}: off the front")),
            "the pick is not drawn on {device}'s panel"
        );
        // The relation, from the table's own rows (one seed: a row is a
        // setting): the pick's row, and a row better on both.
        let on_device: Vec<&Value> = rows.iter().filter(|r| r["device"] == *device).collect();
        let point = |r: &Value| {
            (
                r["interrupts_per_sec"].as_f64().unwrap(),
                r["p99_ns"].as_f64().unwrap(),
            )
        };
        let pick = on_device
            .iter()
            .find(|r| r["policy"] == policy.as_str())
            .map(|r| point(r))
            .unwrap_or_else(|| panic!("{policy} not in the table"));
        let better: Vec<&str> = on_device
            .iter()
            .filter(|r| {
                let q = point(r);
                q.0 <= pick.0 && q.1 <= pick.1 && (q.0 < pick.0 || q.1 < pick.1)
            })
            .map(|r| r["policy"].as_str().unwrap())
            .collect();
        assert!(!better.is_empty(), "{device}: nothing beats {policy}");
        for b in j["dominated_by"].as_array().unwrap() {
            assert!(
                better.contains(&b["policy"].as_str().unwrap()),
                "{device}: {b} is said to beat the pick but the table disagrees"
            );
        }
        eprintln!(
            "{device}: tune's {policy} at {:.0} irq/s, p99 {:.0} ns; {} settings better on both",
            pick.0,
            pick.1,
            better.len()
        );
    }
}
