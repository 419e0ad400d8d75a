//! Byte-level mutations without coverage feedback: flips, range edits,
//! splices, dictionary tokens and line repetition. Each call applies one to
//! four of them, so most inputs stay close to a valid file and get past the
//! first check.

use rand::Rng;
use rand_pcg::Pcg64;

/// No mutated input grows past this: large enough for the hostile sizes the
/// issue names (a 1 MB value, 5,000 sections), small enough that one
/// execution stays in milliseconds.
pub const MAX_INPUT: usize = 2 << 20;

/// One mutated copy of `base`; `other` is a second corpus entry for splices.
pub fn mutate(rng: &mut Pcg64, base: &[u8], other: &[u8], dict: &[Vec<u8>]) -> Vec<u8> {
    let mut out = base.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        match rng.random_range(0..9) {
            0 => flip(rng, &mut out),
            1 => delete(rng, &mut out),
            2 => duplicate(rng, &mut out),
            3 => insert_random(rng, &mut out),
            4 => splice(rng, &mut out, other),
            5 | 6 => insert_token(rng, &mut out, dict),
            7 => repeat_line(rng, &mut out),
            _ => replace_token(rng, &mut out, dict),
        }
    }
    out.truncate(MAX_INPUT);
    out
}

fn pos(rng: &mut Pcg64, len: usize) -> usize {
    rng.random_range(0..=len)
}

/// A range `[a, b)` of `len`, short more often than long.
fn range(rng: &mut Pcg64, len: usize) -> (usize, usize) {
    let a = pos(rng, len);
    let max = (len - a).min(if rng.random_bool(0.8) { 16 } else { len });
    (a, a + rng.random_range(0..=max))
}

fn flip(rng: &mut Pcg64, out: &mut [u8]) {
    if out.is_empty() {
        return;
    }
    let i = rng.random_range(0..out.len());
    out[i] = match rng.random_range(0..3) {
        0 => out[i] ^ (1 << rng.random_range(0..8)),
        1 => rng.random(),
        // A digit or a separator: the parsers' numbers and syntax.
        _ => b"0123456789=,[]:-.\n "[rng.random_range(0..19)],
    };
}

fn delete(rng: &mut Pcg64, out: &mut Vec<u8>) {
    let (a, b) = range(rng, out.len());
    out.drain(a..b);
}

fn duplicate(rng: &mut Pcg64, out: &mut Vec<u8>) {
    let (a, b) = range(rng, out.len());
    let piece = out[a..b].to_vec();
    let at = pos(rng, out.len());
    out.splice(at..at, piece);
}

fn insert_random(rng: &mut Pcg64, out: &mut Vec<u8>) {
    let at = pos(rng, out.len());
    let n = rng.random_range(1..=8);
    let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
    out.splice(at..at, bytes);
}

/// Keeps a prefix of `out` and appends a suffix of `other`.
fn splice(rng: &mut Pcg64, out: &mut Vec<u8>, other: &[u8]) {
    let cut = pos(rng, out.len());
    out.truncate(cut);
    out.extend_from_slice(&other[pos(rng, other.len())..]);
}

fn insert_token(rng: &mut Pcg64, out: &mut Vec<u8>, dict: &[Vec<u8>]) {
    if dict.is_empty() {
        return;
    }
    let token = &dict[rng.random_range(0..dict.len())];
    // At a line start half the time, where options and sections begin.
    let mut at = pos(rng, out.len());
    if rng.random_bool(0.5) {
        at = out[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
    }
    out.splice(at..at, token.iter().copied());
}

/// Overwrites a short range with a token: a value replaced by a hostile one.
fn replace_token(rng: &mut Pcg64, out: &mut Vec<u8>, dict: &[Vec<u8>]) {
    if dict.is_empty() {
        return;
    }
    let token = &dict[rng.random_range(0..dict.len())];
    let (a, b) = range(rng, out.len());
    out.splice(a..b, token.iter().copied());
}

/// Repeats one line up to 10,000 times (thousands of sections or rows).
fn repeat_line(rng: &mut Pcg64, out: &mut Vec<u8>) {
    let at = pos(rng, out.len());
    let start = out[..at]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let end = out[at..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(out.len(), |i| at + i + 1);
    let mut line = out[start..end].to_vec();
    if line.last() != Some(&b'\n') {
        line.push(b'\n');
    }
    let times = [2, 10, 100, 1000, 10_000][rng.random_range(0..5)];
    let times = times.min(MAX_INPUT / line.len().max(1));
    let block = line.repeat(times);
    out.splice(end..end, block);
}
