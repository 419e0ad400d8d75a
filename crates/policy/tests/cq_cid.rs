//! The driver's side: a CQ's size as made, the OOO reaped flag in the
//! command id, and the dynamic timeout's ceiling.

use policy::cid;
use policy::cq::{CompletionQueue, CqFull};
use policy::{Completion, DeltaRule, Marks};

#[test]
fn a_cq_reports_its_size_and_refuses_an_entry_beyond_it() {
    let mut cq = CompletionQueue::with_capacity(2);
    assert_eq!(cq.capacity(), 2);
    for id in 0..2 {
        assert_eq!(cq.post(0, Completion::ok(id, Marks::NONE)), Ok(()));
    }
    assert_eq!(cq.post(0, Completion::ok(2, Marks::NONE)), Err(CqFull));
    assert_eq!(CompletionQueue::unbounded().capacity(), usize::MAX);
}

#[test]
fn marking_an_entry_reaped_twice_leaves_it_reaped() {
    let cid = cid::encode(7, Marks::URGENT).unwrap();
    let once = cid::set_reaped(cid);
    assert_eq!(cid::set_reaped(once), once);
    assert!(cid::is_reaped(cid::set_reaped(once)));
}

#[test]
fn an_absurd_dynamic_timeout_saturates_at_a_quarter_of_the_clock() {
    // e^(1000 * 32) overflows any u64; a quarter of the range leaves room
    // to add it to a timestamp without wrapping.
    let rule = DeltaRule::Gyawali {
        a: 1000.0,
        unit: 1_000,
    };
    let ceiling = (u64::MAX as f64 / 4.0) as u64;
    assert_eq!(rule.delta(32, 0), ceiling);
    assert!(ceiling.checked_add(ceiling).is_some());
}
