//! Issue 42 item 6: "on the shipped mixed example, cint appears on the
//! synchronous job's p99 front". The shipped spec
//! (examples/sweeps/mixed.toml: adaptive and cint, 10 deltas x 10 thrs,
//! on examples/mixed-16.fio) is run as shipped but for its runtime (20 ms
//! instead of 100 ms, so its 200 points take seconds; at 100 ms the fronts
//! hold the same strategies: crates/sweep/README.md, "Fronts"), merged,
//! and its fronts read back from what `sweep merge --out` writes.

mod common;

use std::fs;
use std::path::Path;

use common::*;
use serde_json::Value;

fn ok(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o)
}

/// The shipped spec in `dir/sweeps/` with its job file at `dir/`, as its
/// relative path wants it, at 20 ms.
fn shipped_mixed(dir: &Path) -> String {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    fs::create_dir(dir.join("sweeps")).unwrap();
    fs::copy(examples.join("mixed-16.fio"), dir.join("mixed-16.fio")).unwrap();
    let spec = fs::read_to_string(examples.join("sweeps/mixed.toml")).unwrap();
    assert!(spec.contains("runtime = \"100ms\""), "{spec}");
    let spec = spec.replace("runtime = \"100ms\"", "runtime = \"20ms\"");
    let path = dir.join("sweeps/mixed.toml");
    fs::write(&path, spec).unwrap();
    path.to_str().unwrap().to_string()
}

/// The strategies of a front's points in `fronts.json`.
fn strategies(front: &Value) -> Vec<String> {
    let mut v: Vec<String> = front["points"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["settings"].as_array().unwrap().iter())
        .map(|s| {
            s["policy"]
                .as_str()
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn on_the_shipped_mixed_example_cint_is_on_the_readers_front_and_drawn_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let spec = shipped_mixed(dir);
    let store = dir.join("sweeps/sweep-store");
    let store = store.to_str().unwrap();
    ok(&run(&["sweep", "run", &spec, "-q"]));
    let out = dir.join("merged");
    let text = ok(&run(&[
        "sweep",
        "merge",
        store,
        "--out",
        out.to_str().unwrap(),
    ]));
    let fronts: Value =
        serde_json::from_str(&fs::read_to_string(out.join("fronts.json")).unwrap()).unwrap();
    let group = &fronts[0];
    assert_eq!(group["jobs"], serde_json::json!(["sync", "async"]));
    let front = |spelling: &str| {
        group["fronts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["front"] == spelling)
            .unwrap_or_else(|| panic!("no front {spelling}: {text}"))
            .clone()
    };
    // The worst job's p99 (the batch's, which cint starves) hides cint;
    // the reader's own front shows it.
    assert_eq!(strategies(&front("p99,interrupts")), ["adaptive"], "{text}");
    assert_eq!(
        strategies(&front("sync:p99,interrupts")),
        ["adaptive", "cint"],
        "{text}"
    );
    // No point twice on any front: settings that measured the same are
    // one point.
    for f in group["fronts"].as_array().unwrap() {
        let mut at: Vec<(String, String)> = f["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["x"].to_string(), p["y"].to_string()))
            .collect();
        let n = at.len();
        at.sort();
        at.dedup();
        assert_eq!(at.len(), n, "{}: a point twice", f["front"]);
    }

    // The figure: every point, those off a front faint, one colour per
    // strategy, the front's settings labelled.
    let svg = fs::read_to_string(out.join("fronts.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let points: Vec<_> = doc
        .descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.starts_with("point "))
        })
        .collect();
    let dominated: Vec<_> = points
        .iter()
        .filter(|n| n.attribute("class") == Some("point dominated"))
        .collect();
    assert!(!dominated.is_empty());
    assert!(dominated
        .iter()
        .all(|n| n.attribute("fill-opacity") == Some("0.25")));
    let on = points.len() - dominated.len();
    let panels = group["fronts"].as_array().unwrap().len();
    assert_eq!(panels, 6, "the worst job's two, each job's two");
    let mut fills = std::collections::BTreeMap::new();
    for n in &points {
        fills
            .entry(n.attribute("data-series").unwrap())
            .or_insert_with(std::collections::BTreeSet::new)
            .insert(n.attribute("fill").unwrap());
    }
    assert_eq!(fills.len(), 2, "{fills:?}");
    assert!(fills.values().all(|f| f.len() == 1), "{fills:?}");
    assert_ne!(fills["cint"], fills["adaptive"]);
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("front-label"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(labels.len(), on, "a label per point on a front");
    assert!(
        labels.iter().any(|l| l.starts_with("cint δ=")),
        "{labels:?}"
    );

    // A front named: the reader's p99 against the batch's throughput.
    let named = ok(&run(&[
        "sweep",
        "merge",
        store,
        "--front",
        "sync:p99,async:iops",
    ]));
    assert!(
        named.contains("sync's p99 against async's IOPS (sync:p99,async:iops)"),
        "{named}"
    );
    assert!(
        !named.contains("(p99,interrupts)"),
        "only the named front: {named}"
    );
    // A job the stores lack: one line naming it and the jobs there are.
    let o = run(&["sweep", "merge", store, "--front", "reader:p99,interrupts"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("no job 'reader' in the stores (jobs: sync, async)"),
        "{e}"
    );
    // A metric there is not: clap's one line, listing the metrics.
    let o = run(&["sweep", "merge", store, "--front", "sync:p98,interrupts"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("no metric 'p98' (metrics: p99, p50, iops, interrupts, cpu"),
        "{e}"
    );
}
