//! Shell-style globs for the marking rules: `*` any run of characters (`/`
//! included: a path glob `*.sst` matches any directory), `?` one
//! character, everything else itself.
//!
//! Runs per I/O inside the program (the preload library), so it allocates
//! nothing: it walks both strings by byte index, a character at a time.

/// Whether `text` matches `pattern` as a whole.
pub fn matches(pattern: &str, text: &str) -> bool {
    if pattern.contains('?') {
        return by_steps(pattern, text);
    }
    // Stars only (every rule we ship): the head is a prefix, the tail a
    // suffix, and each run between stars is found left to right, the
    // leftmost match leaving the most text to the rest.
    let Some(first) = pattern.find('*') else {
        return pattern == text;
    };
    let last = pattern.rfind('*').unwrap_or(first);
    let (head, tail) = (&pattern[..first], &pattern[last + 1..]);
    if text.len() < head.len() + tail.len() || !text.starts_with(head) || !text.ends_with(tail) {
        return false;
    }
    let mut rest = &text[head.len()..text.len() - tail.len()];
    for run in pattern[first + 1..last.max(first + 1)].split('*') {
        if run.is_empty() {
            continue;
        }
        match find(rest.as_bytes(), run.as_bytes()) {
            Some(k) => rest = &rest[k + run.len()..],
            None => return false,
        }
    }
    true
}

/// Where `needle` (not empty) first occurs in `hay`: a scan for its first
/// byte, then a comparison. On UTF-8 both, a match is always at a
/// character boundary. For the short texts here this beats `str::find`,
/// whose two-way search sets itself up at each call.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&lead, _) = needle.split_first()?;
    let last = hay.len().checked_sub(needle.len())?;
    (0..=last).find(|&k| hay[k] == lead && hay[k..].starts_with(needle))
}

/// A pattern with `?`: character by character.
fn by_steps(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    // The classic two-pointer match with one backtrack point per `*`:
    // linear in practice, no recursion. `i`, `j` are byte indices, always
    // on a character boundary.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        let tl = char_len(t[j]);
        if i < p.len() && p[i] == b'?' {
            i += 1;
            j += tl;
        } else if i < p.len() && p[i] != b'*' && p[i..].starts_with(&t[j..j + tl]) {
            i += tl;
            j += tl;
        } else if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            // The star takes one more character.
            let sj = sj + char_len(t[sj]);
            i = si + 1;
            j = sj;
            star = Some((si, sj));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == b'*')
}

/// The length of the UTF-8 character starting with byte `b` (a `&str` is
/// valid UTF-8, so `b` is a leading byte).
fn char_len(b: u8) -> usize {
    match b {
        0..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::{by_steps, matches};

    #[test]
    fn stars_and_question_marks() {
        assert!(matches("rocksdb:*", "rocksdb:low0"));
        assert!(matches("*", ""));
        assert!(matches("*.sst", "/db/000123.sst"));
        assert!(matches("a?c", "abc"));
        assert!(matches("a*b*c", "aXXbYYc"));
        assert!(!matches("a*b*c", "aXXbYY"));
        assert!(!matches("rocksdb:*", "fio"));
        assert!(!matches("abc", "abcd"));
        assert!(!matches("abcd", "abc"));
        assert!(matches("**x", "x"));
        assert!(matches("a*a", "aa"));
        assert!(!matches("a*a", "a"));
        assert!(matches("*ab*ab*", "xabyab"));
        assert!(!matches("*ab*ab*", "xaby"));
        assert!(matches("x*", "x"));
        assert!(matches("*", "anything"));
        assert!(matches("*checkpointer*", "postgres: checkpointer "));
        assert!(!matches("*.ibd", "/var/lib/mysql/ibdata1"));
    }

    /// The stars-only path and the stepping one agree.
    #[test]
    fn both_paths_agree() {
        let pats = [
            "*", "a*", "*a", "a*b", "*a*b*", "ab*ba", "**", "a**b", "*aa*", "é*", "*é",
        ];
        let texts = [
            "", "a", "b", "ab", "ba", "aab", "abba", "abab", "aa", "é", "éa", "xaay",
        ];
        for p in pats {
            for t in texts {
                assert_eq!(matches(p, t), by_steps(p, t), "{p} {t}");
            }
        }
    }

    #[test]
    fn a_question_mark_is_one_character_not_one_byte() {
        assert!(matches("caf?", "café"));
        assert!(matches("?", "é"));
        assert!(!matches("??", "é"));
        assert!(matches("*é*", "un café noir"));
        assert!(matches("*?", "é"));
    }
}
