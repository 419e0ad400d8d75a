//! Every experiment says where its parameters come from (issue 13): the
//! artifact's script, the paper's section, or our choice with the reason.

use repro::provenance::Origin;

#[test]
fn every_experiment_names_its_device_workload_and_run_length() {
    for e in repro::figures::all() {
        let p = &e.provenance;
        let has = |prefix: &str| p.params.iter().any(|x| x.name.starts_with(prefix));
        assert!(has("device"), "{}: no device in its provenance", e.id);
        assert!(has("runtime"), "{}: no run length", e.id);
        assert!(
            has("job file") || has("workload") || has("sync workload"),
            "{}: no workload",
            e.id
        );
        for x in &p.params {
            assert!(!x.value.is_empty(), "{}: '{}' has no value", e.id, x.name);
            let (Origin::Ours(why) | Origin::Paper(why) | Origin::Artifact(why)) = x.origin;
            assert!(!why.is_empty(), "{}: '{}' has no source", e.id, x.name);
        }
    }
}

#[test]
fn the_artifacts_experiments_pass_its_command_line_and_name_each_system() {
    let from_artifact = |o: &Origin| matches!(o, Origin::Artifact(_));
    let mut n = 0;
    for e in repro::figures::all() {
        if !from_artifact(&e.provenance.source) {
            continue;
        }
        n += 1;
        assert!(
            e.provenance.get("fio command line").is_some(),
            "{}: the script's fio command line",
            e.id
        );
        for r in &e.runs {
            assert!(
                r.fio_args.iter().any(|a| a == "--default_marks=basis"),
                "{} {}: the artifact's microbenchmarks ran the basis kernel",
                e.id,
                r.key
            );
            let named = e.provenance.params.iter().any(|x| {
                x.name == "system"
                    && (x.value.starts_with(&format!("{} = ", r.system))
                        || x.value.contains(&format!(": {} = ", r.system)))
            });
            assert!(named, "{} {}: system not in the provenance", e.id, r.system);
        }
    }
    // Figs 10, 11, 12, 15 and 20 (fig5, fig6, fig7, fig10, fig14).
    assert_eq!(n, 5);
}
