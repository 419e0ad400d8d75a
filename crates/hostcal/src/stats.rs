//! One benchmark's rounds: each round yields one value (a mean over its
//! iterations), and the spread is over rounds, so a round disturbed by
//! another program shows as the extreme, not as a shifted median.

/// A benchmark's value over its rounds, ns (or ns per KiB, or a count).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// The median round.
    pub median: f64,
    /// The fastest and slowest rounds.
    pub min: f64,
    pub max: f64,
    /// How many rounds.
    pub rounds: usize,
}

impl Spread {
    /// The spread of `values`, one per round; `None` without any (or with
    /// a value that is not a number).
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: v[0],
            max: v[n - 1],
            rounds: n,
        })
    }

    /// "median 98 ns (min 95, max 120; 7 rounds)", in `unit`.
    pub fn describe(&self, unit: &str) -> String {
        format!(
            "median {} {unit} (min {}, max {}; {} rounds)",
            num(self.median),
            num(self.min),
            num(self.max),
            self.rounds
        )
    }
}

/// A number as a reader wants it: whole above 100, three figures below.
pub fn num(x: f64) -> String {
    if x.abs() >= 100.0 || (x.fract() == 0.0 && x.abs() >= 1.0) {
        let r = x.round() as i64;
        // Thousands separated, as the hand-written profiles write them.
        let s = r.abs().to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if r < 0 {
            format!("-{out}")
        } else {
            out
        }
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// A count with thousands separated ("3,000").
pub fn int(x: u64) -> String {
    num(x as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_odd_and_even_rounds() {
        let s = Spread::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.rounds), (3.0, 1.0, 5.0, 3));
        assert_eq!(Spread::of(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
        assert!(Spread::of(&[]).is_none());
        assert!(Spread::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn numbers_read_as_the_hand_written_profiles_write_them() {
        assert_eq!(num(12_500.4), "12,500");
        assert_eq!(num(208.0), "208");
        assert_eq!(num(33.25), "33.2");
        assert_eq!(num(0.5), "0.50");
        assert_eq!(num(-1_234.0), "-1,234");
    }
}
