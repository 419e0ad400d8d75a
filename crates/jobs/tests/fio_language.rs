//! The fio options that change what is measured, one test each (issue 13
//! item 1): each as fio defines it (options.c, HOWTO.rst), applied through
//! the [`jobs::Issuer`] every front end uses.

use jobs::{Decision, Engine, Issuer, Job, Waiter};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn jobs_of(text: &str) -> Vec<Job> {
    jobs::parse_str(text, "t.fio", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"))
        .jobs
}

fn job(text: &str) -> Job {
    jobs_of(&format!("[a]\n{text}")).remove(0)
}

fn refusal(text: &str) -> String {
    jobs::parse_str(&format!("[a]\n{text}"), "t.fio", &|_| None)
        .unwrap_err()
        .to_string()
}

/// The requests a job issues, completing each batch at once, until `n`.
fn issued(j: &Job, n: usize, seed: u64) -> Vec<jobs::Io> {
    let mut iss = Issuer::new(j, j.bounds(None).unwrap(), 0);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut now = 0;
    while out.len() < n {
        match iss.next(now, 0, &mut rng) {
            Decision::Issue(mut b) => {
                while let Some(io) = iss.take(&mut b, &mut rng) {
                    out.push(io);
                }
            }
            Decision::SleepUntil(t) => now = t,
            Decision::Done => break,
            Decision::Reap(_) => unreachable!("nothing is in flight"),
        }
    }
    out
}

#[test]
fn the_null_engine_queues_like_an_async_engine_and_keeps_its_depth() {
    let j = job("ioengine=null\niodepth=16\niodepth_batch_submit=16\nsize=1m\n");
    assert_eq!(j.ioengine, Engine::Null);
    assert_eq!(j.io_loop().iodepth, 16);
    assert_eq!(Waiter::of(j.ioengine), Waiter::IoUring);
    let ios = issued(&j, 16, 1);
    assert_eq!(ios.len(), 16);
}
