//! `critical`: our own job option (issue 15 item 1), FastResponse's
//! criticality tag, carried by every request of the job. fio has no such
//! option (it answers "Bad option <critical=1>" and drops the job).

use jobs::{lookup, parse_str, Decision, Disposition, Issuer, Job, Marks};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn jobs_of(text: &str) -> Vec<Job> {
    parse_str(text, "ls.fio", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs
}

fn err(text: &str) -> String {
    parse_str(text, "ls.fio", &|_| None)
        .unwrap_err()
        .to_string()
}

/// The first `n` requests of a job, each completing at once.
fn requests(j: &Job, n: usize) -> Vec<jobs::Io> {
    let mut iss = Issuer::new(j, j.bounds(None).unwrap(), 0);
    let mut rng = StdRng::seed_from_u64(1);
    let (mut out, mut now) = (Vec::new(), 0);
    while out.len() < n {
        match iss.next(now, 0, &mut rng) {
            Decision::Issue(mut b) => {
                while let Some(io) = iss.take(&mut b, &mut rng) {
                    out.push(io);
                }
            }
            Decision::SleepUntil(t) => now = t,
            d => panic!("{d:?}"),
        }
    }
    out
}

#[test]
fn critical_is_a_modelled_boolean_off_by_default() {
    assert_eq!(
        lookup("critical").unwrap().disposition(),
        Disposition::Modelled
    );
    assert!(!lookup("critical").unwrap().takes_value());
    assert!(!Job::default().critical);
    assert!(!jobs_of("[j]\nsize=1m\n")[0].critical);
}

#[test]
fn critical_parses_as_fio_parses_its_booleans() {
    for (text, want) in [
        ("critical\n", true),
        ("critical=1\n", true),
        ("critical=true\n", true),
        ("critical = yes\n", true),
        ("critical=on\n", true),
        ("critical=0\n", false),
        ("critical=false\n", false),
        ("critical=off\n", false),
    ] {
        let j = &jobs_of(&format!("[j]\nsize=1m\n{text}"))[0];
        assert_eq!(j.critical, want, "{text}");
    }
}

#[test]
fn critical_follows_global_and_section_precedence() {
    let text = "[global]\ncritical=1\nsize=1m\n[ls]\n[to]\ncritical=0\n";
    let js = jobs_of(text);
    assert_eq!(
        js.iter()
            .map(|j| (j.name.as_str(), j.critical))
            .collect::<Vec<_>>(),
        [("ls", true), ("to", false)]
    );
    // Every clone of a section carries it.
    let js = jobs_of("[ls]\ncritical\nnumjobs=3\nsize=1m\n");
    assert_eq!(js.len(), 3);
    assert!(js.iter().all(|j| j.critical));
}

#[test]
fn a_bad_critical_value_is_one_line_naming_file_line_and_option() {
    assert_eq!(
        err("[j]\nsize=1m\ncritical=maybe\n"),
        "ls.fio:3: option 'critical': invalid boolean 'maybe' (0 or 1)"
    );
    assert_eq!(
        err("[j]\ncritical=\n"),
        "ls.fio:2: option 'critical' needs a value"
    );
    assert_eq!(
        err("[j]\ncritical=2\n"),
        "ls.fio:2: option 'critical': invalid boolean '2' (0 or 1)"
    );
}

#[test]
fn every_request_of_a_critical_job_carries_the_tag_and_the_same_marks() {
    let plain =
        &jobs_of("[j]\nrw=randrw\nioengine=libaio\niodepth=4\niodepth_batch_submit=4\nsize=1g\n")
            [0];
    let crit = &jobs_of(
        "[j]\nrw=randrw\nioengine=libaio\niodepth=4\niodepth_batch_submit=4\nsize=1g\ncritical=1\n",
    )[0];
    let (a, b) = (requests(plain, 64), requests(crit, 64));
    assert!(a.iter().all(|io| !io.critical));
    assert!(b.iter().all(|io| io.critical));
    // The tag changes nothing else: same directions, sizes and marks.
    let shape = |v: &[jobs::Io]| -> Vec<(bool, u64, Marks)> {
        v.iter().map(|io| (io.write, io.bytes, io.marks)).collect()
    };
    assert_eq!(shape(&a), shape(&b));
}

#[test]
fn describe_shows_critical_only_when_set() {
    let js = jobs_of("[ls]\nrw=randread\ncritical=1\nsize=1m\n[to]\nrw=randread\nsize=1m\n");
    assert!(
        js[0].describe().contains(" critical "),
        "{}",
        js[0].describe()
    );
    assert!(
        !js[1].describe().contains("critical"),
        "{}",
        js[1].describe()
    );
}
