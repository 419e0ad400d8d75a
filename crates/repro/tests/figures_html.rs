//! The report's figures laid out by a browser (issue 36 item 8): every
//! bar group's label within its group's extent, checked in headless
//! Chromium by `scripts/check-report-html` on a small report of Fig 11 (seven
//! groups, whose labels drifted off their bars) and Fig 12.

use std::path::Path;
use std::process::Command;

use policy::MS;
use report::Mode;
use repro::run::Plan;

#[test]
fn group_labels_stay_on_their_groups_in_chromium() {
    let found = ["chromium", "chromium-browser"].iter().any(|c| {
        Command::new("sh")
            .args(["-c", &format!("command -v {c}")])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    assert!(
        found,
        "chromium is not installed: run scripts/setup (Debian: apt-get install chromium)"
    );
    let dir = tempfile::tempdir().unwrap();
    let opts = repro::Options {
        only: vec!["fig11".into(), "fig12".into()],
        plan: Plan {
            modes: vec![Mode::Sim],
            sim_runtime: 50 * MS,
            sim_seeds: 2,
            emu_runtime: 100 * MS,
            emu_reps: 1,
        },
        out: dir.path().to_path_buf(),
        command: "tests/figures_html.rs".into(),
    };
    repro::reproduce(&opts, &|_, _| {}).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/check-report-html");
    let out = Command::new(&script)
        .arg(dir.path().join("report.html"))
        .arg(dir.path().join("report.png"))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    // Fig 11: 7 groups x 4 panels; Fig 12: 3 x 4.
    assert!(
        said.contains(" 40 bar group labels within their groups"),
        "{said}"
    );
}
