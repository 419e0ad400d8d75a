//! A progress bar on stderr for runs long enough to wonder about (a
//! simulated run's virtual time; `cinterrupts sim`).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use policy::Nanos;

/// Short runs finish before anyone looks; a bar that flashes up and vanishes
/// is noise, so it appears only after this much wall time.
const SHOW_AFTER: Duration = Duration::from_secs(2);
/// Messages are rebuilt at most this often: the engine may report progress
/// far more often than a terminal can show it.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// Progress of a run in virtual time, shown only on a terminal, only when
/// not quiet, and only once the run has taken `SHOW_AFTER`.
pub struct Progress {
    enabled: bool,
    started: Instant,
    last_update: Option<Instant>,
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        Progress {
            enabled: !quiet && std::io::stderr().is_terminal(),
            started: Instant::now(),
            last_update: None,
            bar: None,
        }
    }

    /// Virtual time `now` of `end` reached.
    pub fn update(&mut self, now: Nanos, end: Nanos) {
        if !self.enabled {
            return;
        }
        let wall = Instant::now();
        if self
            .last_update
            .is_some_and(|t| wall.duration_since(t) < REDRAW_EVERY)
        {
            return;
        }
        let elapsed = wall.duration_since(self.started);
        if self.bar.is_none() && elapsed < SHOW_AFTER {
            return;
        }
        let message = format!(
            "{:.1}s/{:.1}s virtual, {}",
            now as f64 / 1e9,
            end as f64 / 1e9,
            eta(elapsed, now, end)
        );
        match &self.bar {
            Some(bar) => {
                bar.set_message(message);
                bar.set_length(end);
                bar.set_position(now.min(end));
            }
            None => {
                let bar = ProgressBar::with_draw_target(Some(end), ProgressDrawTarget::stderr())
                    .with_style(
                        ProgressStyle::with_template("simulating [{wide_bar}] {percent:>3}% {msg}")
                            .expect("valid template")
                            .progress_chars("=> "),
                    )
                    .with_message(message)
                    .with_position(now.min(end));
                bar.tick();
                self.bar = Some(bar);
            }
        }
        self.last_update = Some(wall);
    }

    /// Removes the bar, so the results print on a clean line.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// Wall time left if virtual time keeps advancing at its average pace so far
/// (indicatif's own estimate, from recent steps, swings with the engine's
/// uneven progress reports).
fn eta(elapsed: Duration, now: Nanos, end: Nanos) -> String {
    if now == 0 {
        return "eta ?".to_string();
    }
    let left = elapsed.as_secs_f64() * end.saturating_sub(now) as f64 / now as f64;
    let secs = left.round() as u64;
    if secs >= 60 {
        format!("eta {}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("eta {secs}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_extrapolates_the_average_pace() {
        let ten = Duration::from_secs(10);
        assert_eq!(eta(ten, 1, 2), "eta 10s");
        assert_eq!(eta(ten, 1, 20), "eta 3m10s");
        assert_eq!(eta(ten, 5, 5), "eta 0s");
        assert_eq!(eta(ten, 0, 5), "eta ?");
    }

    #[test]
    fn off_a_terminal_nothing_is_drawn() {
        // Test runs capture stderr, so it is not a terminal.
        let mut p = Progress::new(false);
        if let Some(earlier) = p.started.checked_sub(SHOW_AFTER * 2) {
            p.started = earlier;
        }
        p.update(1, 2);
        assert!(p.bar.is_none());
        let mut p = Progress::new(true);
        p.update(1, 2);
        assert!(p.bar.is_none());
    }
}
