//! Issue 36 item 3: Gyawali and Aryal's Figs 6-8 run on their own
//! workloads, and FR Fig 19b's runs are readrandom at the rates they name.

use jobs::{Engine, Job, RwMode};

fn workload_jobs(experiment: &str, name: &str) -> Vec<Job> {
    let e = repro::figures::all()
        .into_iter()
        .find(|e| e.id == experiment)
        .unwrap_or_else(|| panic!("no experiment {experiment}"));
    let w = e
        .workload(name)
        .unwrap_or_else(|| panic!("{experiment}: no workload {name}"));
    jobs::parse_str(w.text, name, &|_| None).unwrap().jobs
}

#[test]
fn gyawalis_workloads_are_two_threads_of_4k_reads_and_writes() {
    // Sec 4: "4kb uniform read/write by 2 threads with preadv2 and
    // pwritev2"; Fig 6's panels: a synchronous and an asynchronous thread.
    for (exp, name) in [
        ("gyawali-fig6", "gyawali-uniform"),
        ("gyawali-fig7", "gyawali-uniform"),
        ("gyawali-fig7", "gyawali-variable"),
        ("gyawali-fig8", "gyawali-variable"),
    ] {
        let js = workload_jobs(exp, name);
        assert_eq!(js.len(), 2, "{exp} {name}: two threads");
        for j in &js {
            assert_eq!(
                j.rw,
                RwMode::RandRw,
                "{exp} {name} {}: reads and writes",
                j.name
            );
            assert_eq!(
                (j.bs_read, j.bs_write),
                (4096, 4096),
                "{exp} {name} {}: 4 KiB",
                j.name
            );
        }
        let sync = js.iter().find(|j| j.name == "sync").expect("a sync thread");
        assert_eq!(sync.ioengine, Engine::Pvsync2, "{name}: preadv2/pwritev2");
        let asy = js
            .iter()
            .find(|j| j.name == "async")
            .expect("an async thread");
        assert!(
            asy.iodepth > 1,
            "{name}: the async thread keeps requests in flight"
        );
    }
}

#[test]
fn the_variable_workload_is_the_uniform_one_with_think_times() {
    // Fig 7 compares adaptive on the two: nothing but the think times may
    // differ, or the comparison measures something else too.
    let uniform = workload_jobs("gyawali-fig7", "gyawali-uniform");
    let variable = workload_jobs("gyawali-fig7", "gyawali-variable");
    for (u, v) in uniform.iter().zip(&variable) {
        assert_eq!(u.thinktime, 0, "{}: uniform issues back to back", u.name);
        assert!(v.thinktime > 0, "{}: variable thinks", v.name);
        let mut v = v.clone();
        v.thinktime = u.thinktime;
        v.thinktime_blocks = u.thinktime_blocks;
        v.section_line = u.section_line;
        assert_eq!(u, &v, "{}", u.name);
    }
}

#[test]
fn gyawalis_experiments_compare_what_their_figures_compare() {
    let all = repro::figures::all();
    let get = |id: &str| all.iter().find(|e| e.id == id).unwrap();
    assert!(
        all.iter().all(|e| e.id != "gyawali"),
        "split into its figures"
    );
    // Fig 8: dynamic is cint with the correction factor and nothing else.
    let f8 = get("gyawali-fig8");
    let cint = &f8.run("cint").unwrap().policy;
    let dynamic = &f8.run("dynamic").unwrap().policy;
    assert_eq!(dynamic.name, "dynamic");
    assert_eq!(
        cint.ooo, dynamic.ooo,
        "cint and dynamic differ only in delta"
    );
    assert_eq!(cint.thr, dynamic.thr);
    for e in ["gyawali-fig6", "gyawali-fig7", "gyawali-fig8"] {
        assert_eq!(repro::claims::paper_of(e), "Gyawali and Aryal");
    }
    let f7 = get("gyawali-fig7");
    assert_eq!(f7.groups(), ["uniform", "variable"]);
}

#[test]
fn fr_fig19b_runs_readrandom_at_the_rate_each_group_names() {
    let e = repro::figures::all()
        .into_iter()
        .find(|e| e.id == "fr-fig19b")
        .unwrap();
    assert!(e.runs.len() >= 3, "a sweep");
    let mut rates = Vec::new();
    for r in &e.runs {
        let js = workload_jobs("fr-fig19b", r.workload);
        let ls = js.iter().find(|j| j.name == "ls-readrandom").unwrap();
        let rate: u64 = r.group.parse().unwrap();
        assert_eq!(ls.rate_iops, Some((rate, rate)), "{}", r.key);
        // TeraSort beside it, at its own rate (FR Table 1).
        let to = js.iter().find(|j| j.name == "to-terasort-read").unwrap();
        assert_eq!(to.rate_iops, Some((1493, 1493)), "{}", r.key);
        rates.push(rate);
    }
    assert!(rates.windows(2).all(|w| w[0] < w[1]), "{rates:?}");
    assert!(rates.contains(&2000), "FR 4.1's rate among them");
}
