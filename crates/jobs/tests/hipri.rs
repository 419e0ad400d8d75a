//! `hipri`: fio's polled-completion option of the pvsync2 and io_uring
//! engines (fio HOWTO; engines/sync.c, engines/io_uring.c). fio registers it
//! only with those engines, so any other engine is refused.

use jobs::{lookup, parse_str, Disposition, Job};

fn parse(text: &str) -> Result<Vec<Job>, String> {
    parse_str(text, "p.fio", &|_| None)
        .map(|p| p.jobs)
        .map_err(|e| e.to_string())
}

#[test]
fn hipri_is_a_modelled_boolean_off_by_default() {
    assert_eq!(
        lookup("hipri").unwrap().disposition(),
        Disposition::Modelled
    );
    let j = parse("[j]\nioengine=pvsync2\n").unwrap();
    assert!(!j[0].hipri);
}

#[test]
fn pvsync2_and_io_uring_take_hipri() {
    for engine in ["pvsync2", "io_uring"] {
        let j = parse(&format!("[j]\nioengine={engine}\nhipri\n")).unwrap();
        assert!(j[0].hipri, "{engine}");
        let j = parse(&format!("[j]\nioengine={engine}\nhipri=0\n")).unwrap();
        assert!(!j[0].hipri, "{engine}");
    }
}

#[test]
fn other_engines_refuse_hipri_naming_the_engine() {
    for engine in ["psync", "sync", "libaio", "pvsync"] {
        let e = parse(&format!("[j]\nioengine={engine}\nhipri=1\n")).unwrap_err();
        assert_eq!(
            e,
            format!("p.fio:1: job 'j': option 'hipri': needs ioengine pvsync2 or io_uring, not {engine}")
        );
    }
}

#[test]
fn a_global_hipri_reaches_every_job() {
    let j = parse("[global]\nioengine=io_uring\nhipri\n[a]\n[b]\n").unwrap();
    assert!(j.iter().all(|j| j.hipri));
}
