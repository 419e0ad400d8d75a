//! What every audited emulator run must keep, shared by the test files.

use emu::Audit;

/// Every request completes exactly once, and no error waits for a
/// coalescing timer (the invariants of README's "Standards").
pub fn assert_exactly_once(a: &Audit) {
    assert!(a.submitted > 0, "{a:?}");
    assert_eq!(
        a.device.fetched, a.submitted,
        "every submission fetched: {a:?}"
    );
    assert_eq!(
        a.device.completed, a.submitted,
        "every command finished: {a:?}"
    );
    assert_eq!(
        a.device.posted, a.submitted,
        "every completion posted: {a:?}"
    );
    assert_eq!(
        a.handlers.reaped, a.submitted,
        "every entry reaped once: {a:?}"
    );
    assert_eq!(a.handlers.duplicates, 0, "{a:?}");
    assert_eq!(a.device.errors_held, 0, "no error coalesced: {a:?}");
    assert_eq!(a.consumed, a.submitted, "every completion consumed: {a:?}");
}
