//! Shell-style globs for `--mark-thread` and `--mark-file`: `*` any run of
//! characters (`/` included: a path glob `*.sst` matches any directory),
//! `?` one character, everything else itself.

/// Whether `text` matches `pattern` as a whole.
pub fn matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // The classic two-pointer match with one backtrack point per `*`:
    // linear in practice, no recursion.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

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
        assert!(matches("**x", "x"));
    }
}
