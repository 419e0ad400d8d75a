//! `cinterrupts policies` is generated from the catalogue: each strategy's
//! line, and under it one line per parameter it takes with the default and
//! the help that strategy gives it, as a user reads them.

use policy::catalogue::{listing, STRATEGIES};

/// The parameter lines listed under `strategy`, as (option, default, help).
fn params_of(strategy: &str) -> Vec<(String, String, String)> {
    let text = listing();
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{strategy} ")));
    assert!(lines.next().is_some(), "{strategy} is listed");
    lines
        .take_while(|l| l.starts_with("          --"))
        .map(|l| {
            let mut words = l.split_whitespace();
            let option = words.next().unwrap().trim_start_matches("--").to_string();
            let default = words.next().unwrap().to_string();
            (option, default, words.collect::<Vec<_>>().join(" "))
        })
        .collect()
}

#[test]
fn every_strategy_has_a_line_with_its_summary() {
    let text = listing();
    for st in STRATEGIES {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(st.name))
            .unwrap_or_else(|| panic!("{} missing from\n{text}", st.name));
        assert!(line.ends_with(st.summary), "{line}");
    }
}

#[test]
fn every_strategy_says_what_a_device_needs_to_run_it() {
    let text = listing();
    for st in STRATEGIES {
        let needs = text
            .lines()
            .skip_while(|l| l.split_whitespace().next() != Some(st.name))
            .skip(1)
            .find(|l| !l.starts_with("          --"))
            .unwrap_or_else(|| panic!("{} has no line after its options", st.name));
        assert_eq!(needs, format!("          needs: {}", st.requires));
        assert!(!st.requires.is_empty(), "{}", st.name);
    }
    // The standard's own strategy names its feature; the papers' name what
    // no NVMe revision has.
    let of = |name: &str| STRATEGIES.iter().find(|s| s.name == name).unwrap().requires;
    assert!(of("nvme").contains("Feature 08h"), "{}", of("nvme"));
    assert!(of("cint").contains("in no NVMe revision"), "{}", of("cint"));
}

#[test]
fn parameters_show_their_typed_defaults() {
    let cint = params_of("cint");
    let shown: Vec<(&str, &str)> = cint
        .iter()
        .map(|(o, d, _)| (o.as_str(), d.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("delta", "6us"),
            ("thr", "32"),
            ("ooo", "on"),
            ("barrier", "relaxed"),
            ("max-irq-rate", "off"),
            ("ooo-count", "prose"),
            ("urgent-interval-min-thr", "off"),
        ]
    );
    let nvme = params_of("nvme");
    assert_eq!(nvme[0].0, "aggr-time");
    assert_eq!(nvme[0].1, "100us");
    // An optional parameter without a default shows a dash.
    assert_eq!(
        (nvme[2].0.as_str(), nvme[2].1.as_str()),
        ("nvme-feature", "-")
    );
    assert!(params_of("default").is_empty(), "default takes nothing");
}

#[test]
fn a_parameter_carries_the_help_its_strategy_gives_it() {
    let help = |strategy: &str, option: &str| {
        params_of(strategy)
            .into_iter()
            .find(|(o, _, _)| o == option)
            .map(|(_, _, h)| h)
            .unwrap()
    };
    assert!(help("nvme", "thr").starts_with("Aggregation Threshold: entries per interrupt"));
    assert!(help("nvme", "nvme-thr").contains("pci_emul.c"));
    assert!(help("cint", "ooo-count").contains("TOS 3.5"));
    assert!(help("cint", "ooo-count").contains("irq_poller_fire_urgent"));
    assert_eq!(
        help("adaptive", "thr"),
        "completions coalesced at most per interrupt"
    );
    assert!(help("cint", "delta").contains("TOS 5.2"));
    assert!(help("nvme", "nvme-feature").contains("0x011f"));
}

#[test]
fn the_footer_names_the_p3700_delta() {
    let text = listing();
    assert!(text.contains("never coalesced"), "{text}");
    assert!(
        text.contains("use --delta 15us for the Intel P3700 (TOS 5.2)"),
        "{text}"
    );
}
