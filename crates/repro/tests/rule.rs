//! Every shipped claim held to the rule (issue 23 item 1): its band comes
//! from its kind and the paper's number, admits that number, keeps clear of
//! no effect where it claims one, and any exception says why.

use repro::claims::{self, Basis, Claim, Compare, Kind};
use repro::rule;

fn shipped() -> Vec<Claim> {
    let mut all = claims::load(claims::SHIPPED, "claims.toml", &repro::figures::all()).unwrap();
    // The completion field's claims on the runs this build has (issue 40).
    let field = repro::figures::field::CLAIMS;
    all.extend(
        claims::load_available(field, "field-claims.toml", repro::figures::all().as_slice())
            .unwrap()
            .0,
    );
    for scale in [repro::app::Scale::quick(), repro::app::Scale::full()] {
        all.extend(repro::app::load_claims(&scale).unwrap());
    }
    all
}

/// The numbers a `paper` text writes, as the kinds' numbers could read
/// them: `2.74x`, `-36%` (0.64), `150K/s` (150000), `1/1.14 = 0.877`.
fn readings(paper: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let chars: Vec<char> = paper.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        if (chars[i] == '-' || chars[i] == '+')
            && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit())
        {
            i += 1;
        }
        if chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
            while chars.get(i).is_some_and(|c| {
                c.is_ascii_digit()
                    || (*c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
            }) {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let text = text.trim_end_matches('.');
            if let Ok(x) = text.parse::<f64>() {
                // "12-15x": the dash is a range's, not a sign.
                out.extend([x, x.abs()]);
                match chars.get(i) {
                    Some('%') => out.extend([1.0 + x / 100.0, x]),
                    Some('K') => out.push(x * 1000.0),
                    _ => {}
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-3 * a.abs().max(b.abs()).max(1e-9)
}

#[test]
fn every_claims_number_is_the_one_its_paper_text_writes() {
    for c in shipped() {
        let numbers = c.kind.numbers();
        let read = readings(&c.paper);
        for n in numbers {
            assert!(
                read.iter().any(|&x| close(x, n)),
                "{}: '{}': number {n} is not what its paper text '{}' writes (read {read:?})",
                c.experiment,
                c.claim,
                c.paper
            );
        }
    }
}

#[test]
fn every_band_admits_the_papers_own_number_and_claimed_effects_exclude_none() {
    for c in shipped() {
        let (band, q) = rule::bands(
            c.kind,
            c.compare,
            c.exception.as_ref().map(|(b, _)| *b),
            0.0,
        );
        let at = format!("{}: '{}' band {band}", c.experiment, c.claim);
        assert!(!band.is_empty(), "{at}: empty");
        let own = match c.kind {
            Kind::Ratio(n) | Kind::Added(n) | Kind::Difference(n) | Kind::About(n) => Some(n),
            Kind::AtLeast(n) | Kind::AtMost(n) => Some(n),
            Kind::Range(a, b) => Some((a + b) / 2.0),
            Kind::Equal | Kind::SameLatency | Kind::Within(_) => Some(1.0),
            Kind::Nothing => Some(0.0),
            Kind::More | Kind::Less => None,
        };
        if let Some(n) = own {
            assert!(band.admits(n), "{at}: the paper's own {n} does not hold");
        }
        if c.kind.sense().is_some() {
            let neutral = c.compare.neutral().unwrap();
            assert!(!band.admits(neutral), "{at}: no effect holds an effect");
            if let Some(q) = q {
                assert!(!q.admits(neutral), "{at}: no effect holds qualitatively");
            }
        }
        // Only ratios, ranges, added times, differences and values have a
        // number to be "qualitatively" near.
        let has_number = matches!(
            c.kind,
            Kind::Ratio(_)
                | Kind::Range(..)
                | Kind::Added(_)
                | Kind::Difference(_)
                | Kind::About(_)
        );
        assert_eq!(q.is_some(), has_number, "{at}");
    }
}

#[test]
fn bands_are_the_rules_unless_an_exception_says_why() {
    let mut exceptions = 0;
    for c in shipped() {
        let at = format!("{}: '{}'", c.experiment, c.claim);
        if let Some((_, why)) = &c.exception {
            exceptions += 1;
            assert!(
                ["TOS", "FR", "Gyawali", "Fig", "Table"]
                    .iter()
                    .any(|s| why.contains(s)),
                "{at}: tolerance_reason cites no paper: {why}"
            );
        }
        match &c.basis {
            Basis::Fitted { fit } => assert!(
                fit.contains("cinterrupts calibrate") || fit.starts_with("no command"),
                "{at}: a fit names its command: {fit}"
            ),
            Basis::Construction { reason } => assert!(reason.len() > 20, "{at}"),
            Basis::Independent => {}
        }
        // The kind fits the comparison (load checks it; a claim in the
        // file that bypassed it would fail here).
        c.kind.check(c.compare).unwrap();
    }
    // The exceptions are few; a new one is a decision, so it shows here.
    assert_eq!(exceptions, 6, "the report lists every exception");
}

#[test]
fn the_fitted_targets_are_the_calibrations() {
    // Every claim on a calibration target is labelled fitted: TOS Fig 17's
    // 150K/s and Fig 21's shares (sim::calibrate), Fig 23's 14% idle
    // (sim::calibrate::kvell).
    let fitted: Vec<(String, String)> = shipped()
        .into_iter()
        .filter(|c| matches!(c.basis, Basis::Fitted { .. }))
        .map(|c| (c.experiment, c.paper))
        .collect();
    for (e, p) in [
        ("fig17", "150K/s"),
        ("fig21", "~50%"),
        ("fig21", "23%"),
        ("fig23", "14%"),
    ] {
        assert!(
            fitted.iter().any(|(fe, fp)| fe == e && fp == p),
            "{e} {p} is a calibration target: {fitted:?}"
        );
    }
    assert!(shipped()
        .iter()
        .all(|c| c.compare != Compare::Value || !matches!(c.kind, Kind::More | Kind::Less)));
}
