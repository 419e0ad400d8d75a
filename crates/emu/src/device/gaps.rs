//! The gaps between consecutive posts to the same CQ, recorded while the
//! run's measured window is open (TOS 5.2's inter-arrival CDF).

use hdrhistogram::Histogram;
use policy::Nanos;

use crate::config::Recording;

/// Cheap on the device thread's path: the window flag is read once a pass,
/// and the common gap of 0 (completions posted in the same pass, at one
/// clock read) is only counted, and added to the histogram at the end.
pub(crate) struct GapRecorder {
    window: Recording,
    /// The window flag as this pass read it.
    open: bool,
    zeros: u64,
    hist: Histogram<u64>,
}

impl GapRecorder {
    pub(crate) fn new(window: Recording) -> GapRecorder {
        GapRecorder {
            window,
            open: false,
            zeros: 0,
            hist: report::gaps::histogram(),
        }
    }

    /// At the start of a pass: reads the window flag for the whole pass.
    pub(crate) fn begin_pass(&mut self) {
        self.open = self.window.is_open();
    }

    /// A completion posted at `now` to a CQ whose previous post was `last`.
    pub(crate) fn post(&mut self, last: &mut Option<Nanos>, now: Nanos) {
        if let Some(prev) = last.replace(now) {
            if self.open {
                match now.saturating_sub(prev) {
                    0 => self.zeros += 1,
                    gap => self.hist.saturating_record(gap),
                }
            }
        }
    }

    /// The gaps recorded, in ns (a gap of 0: posted in the same pass).
    pub(crate) fn into_histogram(mut self) -> Histogram<u64> {
        if self.zeros > 0 {
            self.hist.saturating_record_n(0, self.zeros);
        }
        self.hist
    }
}
