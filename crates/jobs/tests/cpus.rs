//! `cpus_allowed` with `cpus_allowed_policy`: shared hands every clone the
//! whole set, split hands each clone one CPU of it, round robin.

use jobs::{CpusAllowedPolicy, Job};

fn clone(index: usize, set: Option<Vec<usize>>, policy: CpusAllowedPolicy) -> Job {
    Job {
        clone_index: index,
        cpus_allowed: set.map(Into::into),
        cpus_allowed_policy: policy,
        ..Job::default()
    }
}

#[test]
fn shared_gives_every_clone_the_whole_set() {
    for i in 0..3 {
        let j = clone(i, Some(vec![2, 4]), CpusAllowedPolicy::Shared);
        assert_eq!(j.cpus(), Some(vec![2, 4]));
    }
}

#[test]
fn split_gives_each_clone_one_cpu_round_robin() {
    let cpus: Vec<_> = (0..5)
        .map(|i| clone(i, Some(vec![2, 4]), CpusAllowedPolicy::Split).cpus())
        .collect();
    assert_eq!(
        cpus,
        [vec![2], vec![4], vec![2], vec![4], vec![2]].map(Some)
    );
}

#[test]
fn split_of_an_empty_set_gives_no_cpu() {
    let j = clone(3, Some(vec![]), CpusAllowedPolicy::Split);
    assert_eq!(j.cpus(), Some(vec![]));
}

#[test]
fn no_cpus_allowed_means_no_restriction() {
    assert_eq!(clone(0, None, CpusAllowedPolicy::Split).cpus(), None);
}

#[test]
fn the_policy_is_read_from_the_job_file() {
    let policy =
        |text: &str| jobs::parse_str(text, "t.fio", &|_| None).unwrap().jobs[0].cpus_allowed_policy;
    let global_split = "[global]\ncpus_allowed=0-3\ncpus_allowed_policy=split\n";
    assert_eq!(
        policy(&format!("{global_split}[j]\n")),
        CpusAllowedPolicy::Split
    );
    assert_eq!(
        policy(&format!("{global_split}[j]\ncpus_allowed_policy=shared\n")),
        CpusAllowedPolicy::Shared
    );
    assert!(jobs::parse_str("[j]\ncpus_allowed_policy=spread\n", "t.fio", &|_| None).is_err());
}
