//! DIM makes the decisions Linux's net_dim makes (lib/dim/net_dim.c): each
//! test feeds measurement windows whose rates are chosen by hand and checks
//! the profile and tuning state net_dim would reach, step by step.
//!
//! Reading a test: `w.window(span_us, completions)` is one window of
//! DIM_NEVENTS = 64 interrupts spread evenly over `span_us` microseconds that
//! deliver `completions` in all, so DIM measures
//! ceil(completions * 1000 / span_us) completions per ms (net_dim's ppms) and
//! ceil(64000 / span_us) interrupts per ms (epms). A change of more than 10%
//! is significant (IS_SIGNIFICANT_DIFF); throughput is compared first, then
//! fewer interrupts are better. The EQE profiles are
//! {1, 8, 64, 128, 256} us, 256 completions; the default is index 1.

use policy::dim::{Dim, DimMode, TuneState, NEVENTS};
use policy::{Completion, Interrupt, Marks, Nanos, Policy, US};

use TuneState::{GoingLeft, GoingRight, ParkingOnTop, ParkingTired};

/// Drives DIM with interrupts at chosen instants. Each interrupt is forced by
/// a completion in error (delivered at once whatever the profile), after the
/// rest of its completions posted at the same instant, so the active profile
/// never decides when an interrupt comes and the test alone sets the rates.
struct Bench {
    dim: Dim,
    now: Nanos,
    /// Whether a measurement is under way (net_dim's
    /// DIM_MEASURE_IN_PROGRESS); false at first and after a profile change,
    /// when the next interrupt only starts one.
    measuring: bool,
}

impl Bench {
    fn new(mode: DimMode) -> Self {
        Bench {
            dim: Dim::new(mode),
            now: 0,
            measuring: false,
        }
    }

    fn eqe() -> Self {
        Bench::new(DimMode::Eqe)
    }

    /// One interrupt at `at` delivering `completions` (at least one).
    fn interrupt(&mut self, at: Nanos, completions: u64) {
        assert!(completions >= 1);
        self.now = at;
        for _ in 1..completions {
            assert_eq!(self.dim.completed(at, Completion::ok(0, Marks::NONE)), None);
        }
        let error = Completion {
            id: 0,
            marks: Marks::NONE,
            error: true,
        };
        assert_eq!(self.dim.completed(at, error), Some(Interrupt::Full));
    }

    /// A measurement window (see the file's doc); when none is under way,
    /// one interrupt a microsecond earlier starts it. Returns the profile
    /// index DIM chose.
    fn window(&mut self, span_us: u64, completions: u64) -> usize {
        assert!(completions >= NEVENTS, "every interrupt delivers one");
        if !self.measuring {
            self.interrupt(self.now + US, 1);
        }
        let before = self.dim.profile_ix();
        let start = self.now;
        for i in 0..NEVENTS {
            let at = start + span_us * US * (i + 1) / NEVENTS;
            let n = completions / NEVENTS + u64::from(i < completions % NEVENTS);
            self.interrupt(at, n);
        }
        self.measuring = self.dim.profile_ix() == before;
        self.dim.profile_ix()
    }

    /// A window of `per_ms` completions over one millisecond: 64 interrupts
    /// per ms, so only throughput differs between such windows.
    fn ms(&mut self, per_ms: u64) -> usize {
        self.window(1000, per_ms)
    }

    fn state(&self) -> (usize, TuneState) {
        (self.dim.profile_ix(), self.dim.tune_state())
    }
}

#[test]
fn dim_starts_on_the_default_profile_going_right() {
    let d = Dim::new(DimMode::Eqe);
    assert_eq!((d.profile_ix(), d.tune_state()), (1, GoingRight));
}

#[test]
fn the_first_window_beats_an_empty_history_so_dim_steps_right() {
    let mut w = Bench::eqe();
    assert_eq!(w.ms(200), 2);
    assert_eq!(w.state(), (2, GoingRight));
    // The new profile moderates at once: a lone completion now waits 64 us.
    let t = w.now + 10 * US;
    assert_eq!(w.dim.completed(t, Completion::ok(1, Marks::NONE)), None);
    assert_eq!(w.dim.deadline(), Some(t + 64 * US));
}

#[test]
fn dim_decides_after_exactly_64_interrupts() {
    let mut w = Bench::eqe();
    w.interrupt(US, 1); // starts the measurement
    for i in 1..NEVENTS {
        w.interrupt(US + i * 10 * US, 3);
        assert_eq!(w.dim.profile_ix(), 1, "no decision after {i} interrupts");
    }
    w.interrupt(US + NEVENTS * 10 * US, 3);
    assert_eq!(w.state(), (2, GoingRight), "the 64th interrupt decides");
}

#[test]
fn after_a_profile_change_the_next_interrupt_starts_a_new_window() {
    // net_dim: DIM_APPLY_NEW_PROFILE, then DIM_START_MEASURE at the next
    // sample; the interrupts before the change do not count.
    let mut w = Bench::eqe();
    assert_eq!(w.ms(200), 2);
    let t0 = w.now;
    for i in 1..=NEVENTS {
        w.interrupt(t0 + i * 10 * US, 3);
        assert_eq!(w.dim.profile_ix(), 2, "window not complete after {i}");
    }
    w.interrupt(t0 + (NEVENTS + 1) * 10 * US, 3);
    assert_ne!(w.dim.profile_ix(), 2, "64 interrupts after the start");
}

#[test]
fn a_decision_that_keeps_the_profile_chains_the_next_window_on_at_once() {
    // Parked, a same-load window decides nothing new; its last interrupt is
    // the start of the next window, which unparks at its 64th interrupt.
    let mut w = Bench::eqe();
    for c in [200, 400, 800, 1600] {
        w.ms(c);
    }
    assert_eq!(w.state(), (4, ParkingOnTop));
    w.ms(1600);
    assert_eq!(w.state(), (4, ParkingOnTop));
    let t0 = w.now;
    for i in 1..NEVENTS {
        w.interrupt(t0 + i * 20 * US, 1);
        assert_eq!(w.state(), (4, ParkingOnTop), "after {i} interrupts");
    }
    w.interrupt(t0 + NEVENTS * 20 * US, 1);
    assert_eq!(w.state(), (3, GoingLeft), "a new load unparks DIM");
}

#[test]
fn rising_throughput_keeps_dim_going_right_until_it_parks_on_the_right_edge() {
    let mut w = Bench::eqe();
    assert_eq!(w.ms(200), 2);
    assert_eq!(w.ms(400), 3);
    assert_eq!(w.ms(800), 4);
    assert_eq!(w.state(), (4, GoingRight));
    // Better again, but no profile is right of the last: DIM_ON_EDGE.
    assert_eq!(w.ms(1600), 4);
    assert_eq!(w.state(), (4, ParkingOnTop));
}

#[test]
fn a_window_no_better_than_the_last_turns_dim_around() {
    let mut same = Bench::eqe();
    same.ms(200);
    assert_eq!(same.ms(200), 1, "the same throughput is not better");
    assert_eq!(same.state(), (1, GoingLeft));

    let mut worse = Bench::eqe();
    worse.ms(200);
    assert_eq!(worse.ms(100), 1);
    assert_eq!(worse.state(), (1, GoingLeft));
}

#[test]
fn going_left_keeps_going_while_it_pays_and_parks_on_the_left_edge() {
    let mut w = Bench::eqe();
    assert_eq!(w.ms(200), 2);
    assert_eq!(w.ms(100), 1, "worse: turn left");
    assert_eq!(w.ms(200), 0, "better: keep going left");
    assert_eq!(w.state(), (0, GoingLeft));
    assert_eq!(w.ms(400), 0, "better, but no profile left of the first");
    assert_eq!(w.state(), (0, ParkingOnTop));
    // A changed load unparks it; from the first profile the only way is right.
    assert_eq!(w.ms(100), 1);
    assert_eq!(w.state(), (1, GoingRight));
}

#[test]
fn a_step_back_that_pays_after_a_turn_from_the_right_marks_the_top() {
    // Going left with steps_right > 1 and steps_left == 1: dim_on_top().
    let mut w = Bench::eqe();
    assert_eq!(w.ms(200), 2);
    assert_eq!(w.ms(400), 3);
    assert_eq!(w.ms(200), 2, "worse: turn left");
    assert_eq!(w.state(), (2, GoingLeft));
    assert_eq!(w.ms(400), 2, "better: this is the top, park here");
    assert_eq!(w.state(), (2, ParkingOnTop));
}

#[test]
fn a_step_back_that_pays_after_a_turn_from_the_left_marks_the_top() {
    // Going right with steps_left > 1 and steps_right == 1: dim_on_top().
    let mut w = Bench::eqe();
    assert_eq!(w.ms(200), 2);
    assert_eq!(w.ms(100), 1, "worse: turn left");
    assert_eq!(w.ms(200), 0, "better: keep going left");
    assert_eq!(w.ms(100), 1, "worse: turn right");
    assert_eq!(w.state(), (1, GoingRight));
    assert_eq!(w.ms(200), 1, "better: this is the top, park here");
    assert_eq!(w.state(), (1, ParkingOnTop));
}

#[test]
fn a_single_step_each_way_is_no_top_and_dim_keeps_climbing() {
    let mut w = Bench::eqe();
    assert_eq!(w.ms(200), 2);
    assert_eq!(w.ms(100), 1, "worse: turn left (one step left)");
    assert_eq!(w.ms(100), 2, "same: turn right (one step right)");
    assert_eq!(w.ms(200), 3, "better: one step left before is no top");
    assert_eq!(w.state(), (3, GoingRight));
}

#[test]
fn a_load_that_never_improves_tires_dim_after_ten_steps_and_it_rests_ten_windows() {
    // net_dim_step: tired == 2 * NUM_PROFILES is DIM_TOO_TIRED.
    let mut w = Bench::eqe();
    assert_eq!(w.ms(200), 2);
    for step in 2..=10 {
        let ix = w.ms(200);
        assert_eq!(ix, if step % 2 == 0 { 1 } else { 2 }, "step {step}");
        assert_ne!(w.dim.tune_state(), ParkingTired, "step {step}");
    }
    assert_eq!(w.ms(200), 1, "the eleventh window finds DIM too tired");
    assert_eq!(w.state(), (1, ParkingTired));
    // Tired, it ignores the load (even a much better one) for ten windows,
    // then leaves the park going left, the profile index being > 0.
    for rest in 1..10 {
        assert_eq!(w.ms(1600), 1, "resting window {rest}");
        assert_eq!(w.dim.tune_state(), ParkingTired, "resting window {rest}");
    }
    assert_eq!(w.ms(1600), 0);
    assert_eq!(w.state(), (0, GoingLeft));
}

#[test]
fn parking_on_top_forgets_the_tired_count() {
    // dim_park_on_top() clears tired: a DIM that parks after a few steps can
    // take ten more before it tires.
    let mut w = Bench::eqe();
    for c in [200, 400, 800, 1600] {
        w.ms(c);
    }
    assert_eq!(w.state(), (4, ParkingOnTop), "after 3 steps");
    assert_eq!(w.ms(800), 3, "a changed load unparks: step 1");
    for step in 2..=10 {
        w.ms(800);
        assert_ne!(w.dim.tune_state(), ParkingTired, "step {step}");
    }
    w.ms(800);
    assert_eq!(w.dim.tune_state(), ParkingTired, "the eleventh window");
}

#[test]
fn parked_dim_stays_parked_while_the_load_holds() {
    let mut w = Bench::eqe();
    for c in [200, 400, 800, 1600] {
        w.ms(c);
    }
    assert_eq!(w.state(), (4, ParkingOnTop));
    // Compared with the window it parked on (1600/ms), not the one before.
    for c in [1600, 1700, 1500, 1600] {
        assert_eq!(w.ms(c), 4, "{c}/ms is within 10% of 1600/ms");
        assert_eq!(w.dim.tune_state(), ParkingOnTop);
    }
}

#[test]
fn parked_dim_keeps_the_window_it_parked_on_so_a_slow_drift_unparks_it() {
    let mut w = Bench::eqe();
    for c in [200, 400, 800, 1600] {
        w.ms(c);
    }
    // Each window is within 10% of the one before; only the third is more
    // than 10% away from the 1600/ms DIM parked on.
    assert_eq!(w.ms(1700), 4);
    assert_eq!(w.ms(1760), 4, "exactly 10% more is not significant");
    assert_eq!(w.dim.tune_state(), ParkingOnTop);
    assert_eq!(w.ms(1800), 3);
    assert_eq!(w.state(), (3, GoingLeft));
}

#[test]
fn a_fall_in_throughput_unparks_dim_once_it_is_more_than_ten_percent() {
    let mut w = Bench::eqe();
    for c in [200, 400, 800, 1600] {
        w.ms(c);
    }
    assert_eq!(w.ms(1440), 4, "exactly 10% less is the same");
    assert_eq!(w.dim.tune_state(), ParkingOnTop);
    assert_eq!(w.ms(1420), 3, "11% less is worse");
    assert_eq!(w.state(), (3, GoingLeft));
}

#[test]
fn throughput_more_than_ten_percent_higher_is_better() {
    let mut w = Bench::eqe();
    w.ms(1000);
    assert_eq!(w.ms(1110), 3, "11% more: keep going right");
    assert_eq!(w.dim.tune_state(), GoingRight);

    let mut w = Bench::eqe();
    w.ms(1000);
    assert_eq!(w.ms(1100), 1, "exactly 10% more is the same: turn");
    assert_eq!(w.dim.tune_state(), GoingLeft);
}

#[test]
fn the_same_throughput_with_fewer_interrupts_is_better() {
    // 1000 completions/ms throughout; the interrupts per ms change.
    let mut w = Bench::eqe();
    assert_eq!(w.window(640, 640), 2, "100 interrupts/ms");
    assert_eq!(w.window(720, 720), 3, "89/ms: 11% fewer is better");
    assert_eq!(w.dim.tune_state(), GoingRight);
    assert_eq!(w.window(640, 640), 2, "100/ms again: more is worse");
    assert_eq!(w.dim.tune_state(), GoingLeft);

    let mut w = Bench::eqe();
    w.window(640, 640);
    assert_eq!(
        w.window(712, 712),
        1,
        "90/ms: exactly 10% fewer is the same"
    );
    assert_eq!(w.dim.tune_state(), GoingLeft);
}

#[test]
fn a_window_shorter_than_a_microsecond_is_not_measured() {
    // dim_calc_stats() refuses an empty interval; the measurement goes on
    // and the next interrupt a millisecond later ends it.
    let mut w = Bench::eqe();
    w.interrupt(US, 1);
    for _ in 0..NEVENTS {
        w.interrupt(US, 2);
    }
    assert_eq!(w.state(), (1, GoingRight));
    w.interrupt(US + 1000 * US, 2);
    assert_eq!(w.state(), (2, GoingRight));
}

#[test]
fn eqe_timer_starts_at_the_first_pending_completion() {
    // Default EQE profile: 8 us or 256 completions.
    let mut d = Dim::new(DimMode::Eqe);
    assert_eq!(d.completed(0, Completion::ok(1, Marks::NONE)), None);
    assert_eq!(d.completed(5 * US, Completion::ok(2, Marks::NONE)), None);
    assert_eq!(d.deadline(), Some(8 * US), "not extended");
    assert_eq!(d.deadline_reached(8 * US - 1), None, "early: nothing");
    assert_eq!(d.deadline_reached(8 * US), Some(Interrupt::Full));
    assert_eq!(d.deadline(), None);
}

#[test]
fn cqe_timer_restarts_with_every_completion() {
    // Default CQE profile: 8 us or 128 completions.
    let mut d = Dim::new(DimMode::Cqe);
    assert_eq!(d.completed(0, Completion::ok(1, Marks::NONE)), None);
    assert_eq!(d.completed(5 * US, Completion::ok(2, Marks::NONE)), None);
    assert_eq!(d.deadline(), Some(13 * US));
    assert_eq!(d.deadline_reached(8 * US), None);
    assert_eq!(d.deadline_reached(13 * US), Some(Interrupt::Full));
}

#[test]
fn the_profiles_count_fires_an_interrupt_at_once() {
    for (mode, count) in [(DimMode::Eqe, 256), (DimMode::Cqe, 128)] {
        let mut d = Dim::new(mode);
        for i in 1..count {
            assert_eq!(d.completed(0, Completion::ok(i, Marks::NONE)), None);
        }
        assert_eq!(
            d.completed(0, Completion::ok(count, Marks::NONE)),
            Some(Interrupt::Full),
            "{mode:?}"
        );
    }
}

#[test]
fn eqe_delay_bound_is_the_slowest_profiles_timer() {
    // 256 us: a lone completion under the last EQE profile waits that long.
    assert_eq!(Dim::new(DimMode::Eqe).delay_bound(), 256 * US);
}

#[test]
fn cqe_delay_bound_is_the_timer_restarted_by_all_but_the_last_completion() {
    // The restarted timer lets a completion wait one timer per later
    // completion until the count: 64 us x 63 under {64 us, 64}, the largest
    // such product among NET_DIM_RX_CQE_PROFILES ({2,256}: 510 us, {8,128}:
    // 1016 us, {16,64}: 1008 us, {32,64}: 2016 us).
    assert_eq!(Dim::new(DimMode::Cqe).delay_bound(), 64 * 63 * US);
}
