mod common;
use common::*;

#[test]
#[ignore]
fn scratch() {
    for ex in [
        "sync-read",
        "async-256",
        "mixed-16",
        "mixed-256",
        "barrier-1",
        "barrier-2",
        "barrier-4",
        "storm",
    ] {
        println!("== {ex}");
        for p in ["default", "cint", "adaptive", "nvme100"] {
            let (r, a) = run_audited(ex, "optane", p, 100 * policy::MS);
            println!("{}  audit={:?}", summary(&r), a);
        }
    }
}

#[test]
#[ignore]
fn one() {
    let ex = std::env::var("EX").unwrap();
    let p = std::env::var("POL").unwrap();
    let (r, a) = run_audited(&ex, "optane", &p, 100 * policy::MS);
    println!("{}  audit={:?}", summary(&r), a);
}
