//! YCSB's key choosers and core mixes (`jobs::ycsb`, issue 16 item 1).

use jobs::ycsb::{Latest, Mix, Op, ScrambledZipfian, Zipfian, SCRAMBLED_ZETAN, ZIPFIAN_CONSTANT};
use rand::rngs::StdRng;
use rand::SeedableRng;

const DRAWS: usize = 200_000;

fn counts(n: u64, mut draw: impl FnMut() -> u64) -> Vec<u64> {
    let mut c = vec![0u64; n as usize];
    for _ in 0..DRAWS {
        let k = draw();
        assert!(k < n, "{k} outside 0..{n}");
        c[k as usize] += 1;
    }
    c
}

#[test]
fn zipfian_ranks_follow_one_over_i_to_the_theta() {
    let z = Zipfian::new(1000, ZIPFIAN_CONSTANT).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let c = counts(1000, || z.next(&mut rng));
    let p0 = c[0] as f64 / DRAWS as f64;
    assert!(
        (p0 / z.p_first() - 1.0).abs() < 0.03,
        "{p0} vs {}",
        z.p_first()
    );
    // P(0) / P(1) = 2^theta.
    let r = c[0] as f64 / c[1] as f64;
    assert!((r / 2f64.powf(ZIPFIAN_CONSTANT) - 1.0).abs() < 0.06, "{r}");
    assert!(
        c[1] > c[10] && c[10] > c[500],
        "{} {} {}",
        c[1],
        c[10],
        c[500]
    );
}

#[test]
fn bad_zipfian_parameters_say_why() {
    assert!(Zipfian::new(0, 0.99).unwrap_err().contains("at least one"));
    assert!(Zipfian::new(10, 1.0)
        .unwrap_err()
        .contains("outside (0, 1)"));
    assert!(ScrambledZipfian::new(0).is_err());
    assert!(Latest::new(0).is_err());
}

/// YCSB's hard-coded zeta(10^10, 0.99) against the sum: the first 10^6
/// terms exactly, the rest by Euler-Maclaurin (integral plus the end
/// corrections), accurate far beyond the constant's digits.
#[test]
fn the_scrambled_zetan_is_zeta_of_ten_billion() {
    let s = ZIPFIAN_CONSTANT;
    let m: u64 = 1_000_000;
    let n = 1e10f64;
    let head: f64 = (1..=m).map(|i| (i as f64).powf(-s)).sum();
    let mf = m as f64;
    let tail = (n.powf(1.0 - s) - mf.powf(1.0 - s)) / (1.0 - s) + (n.powf(-s) - mf.powf(-s)) / 2.0
        - s / 12.0 * (n.powf(-s - 1.0) - mf.powf(-s - 1.0));
    let zeta = head + tail;
    assert!((zeta / SCRAMBLED_ZETAN - 1.0).abs() < 1e-9, "{zeta}");
}

#[test]
fn scrambled_zipfian_spreads_the_hot_keys_and_is_deterministic() {
    let z = ScrambledZipfian::new(10_000).unwrap();
    let draw = |seed| {
        let mut rng = StdRng::seed_from_u64(seed);
        counts(10_000, || z.next(&mut rng))
    };
    let c = draw(3);
    assert_eq!(c, draw(3));
    let (hot, &top) = c.iter().enumerate().max_by_key(|(_, &n)| n).unwrap();
    // The hottest key takes about 1/zeta(10^10) of the draws ...
    let share = top as f64 / DRAWS as f64;
    assert!(
        share > 0.9 / SCRAMBLED_ZETAN && share < 1.2 / SCRAMBLED_ZETAN,
        "{share}"
    );
    // ... and the hashing puts it away from the start of the key space,
    // where an unscrambled zipfian would put it.
    assert_ne!(hot, 0);
}

#[test]
fn latest_favours_the_newest_keys() {
    let l = Latest::new(5_000).unwrap();
    let mut rng = StdRng::seed_from_u64(11);
    let c = counts(5_000, || l.next(&mut rng));
    let hot = c.iter().enumerate().max_by_key(|(_, &n)| n).unwrap().0;
    assert_eq!(hot, 4_999);
    assert!(c[4_999] > c[4_990] && c[4_990] > c[0], "{:?}", &c[4_990..]);
}

#[test]
fn core_mixes_draw_their_proportions() {
    let want: [(&str, &[(Op, f64)]); 6] = [
        ("a", &[(Op::Read, 0.5), (Op::Update, 0.5)]),
        ("B", &[(Op::Read, 0.95), (Op::Update, 0.05)]),
        ("c", &[(Op::Read, 1.0)]),
        ("d", &[(Op::Read, 0.95), (Op::Insert, 0.05)]),
        ("e", &[(Op::Scan, 0.95), (Op::Insert, 0.05)]),
        ("f", &[(Op::Read, 0.5), (Op::ReadModifyWrite, 0.5)]),
    ];
    for (name, shares) in want {
        let mix = Mix::core(name).unwrap();
        let mut rng = StdRng::seed_from_u64(5);
        let mut n = std::collections::HashMap::new();
        for _ in 0..DRAWS {
            *n.entry(mix.next(&mut rng)).or_insert(0u64) += 1;
        }
        let total: u64 = n.values().sum();
        for &(op, p) in shares {
            let got = *n.get(&op).unwrap_or(&0) as f64 / total as f64;
            assert!(
                (got - p).abs() < 0.01,
                "workload {name} {op:?}: {got} vs {p}"
            );
        }
        assert_eq!(n.len(), shares.len(), "workload {name}: {n:?}");
    }
    assert_eq!(
        Mix::core("g").unwrap_err(),
        "unknown YCSB workload 'g' (a, b, c, d, e, f)"
    );
}
