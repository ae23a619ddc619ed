//! "Did you mean …?": the closest of a few known words to one typed
//! wrong, for unknown fields, enum values and the like (pure).

/// The candidate closest to `typed` when it is close enough to be a slip
/// (a typo, a swapped pair, a different case, or a prefix such as `prod`
/// for `production`); `None` otherwise.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = typed.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let c = candidate.to_ascii_lowercase();
        if c == lower {
            return Some(candidate);
        }
        let distance = if lower.len() >= 3 && c.starts_with(&lower) {
            // An abbreviation: `prod` for `production`.
            1
        } else {
            edit_distance(&lower, &c)
        };
        let allowed = (c.chars().count().max(lower.chars().count()) / 3).max(1);
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The optimal string alignment distance: insertions, deletions,
/// substitutions and swaps of two neighbours each cost 1.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slips_are_matched_and_strangers_are_not() {
        let fields = ["tier", "region", "environment", "heartbeatIntervalSeconds"];
        assert_eq!(closest("teir", fields), Some("tier"));
        assert_eq!(closest("Region", fields), Some("region"));
        assert_eq!(closest("enviroment", fields), Some("environment"));
        assert_eq!(
            closest("heartbeatInterval", fields),
            Some("heartbeatIntervalSeconds")
        );
        assert_eq!(closest("colour", fields), None);
        assert_eq!(
            closest("prod", ["production", "staging"]),
            Some("production")
        );
        assert_eq!(closest("wdie", ["table", "wide", "json"]), Some("wide"));
        assert_eq!(edit_distance("abc", "acb"), 1);
    }
}
