//! "Did you mean": the closest known name to an unknown one, by edit distance.
//! The one rule of the workspace: rvnlib, VPL's reader and irkit's CLI take it from here.
//!
//! A candidate is offered when its edit distance ([`distance`], case counted
//! as a difference) to the unknown word is at most a third of the longer of
//! the two, and at least 1; ties go to the first candidate given.

/// Edit distance between `a` and `b` in characters: insertions, deletions,
/// substitutions and transpositions of two neighbours each count one (the
/// optimal-string-alignment form of Damerau–Levenshtein).
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j]: distance between a[..i] and b[..j]; three rows suffice.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (previous[j - 1] + cost)
                .min(previous[j] + 1)
                .min(current[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            current[j] = d;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The candidate closest to `word` within the threshold, if any (never `word` itself).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        let longest = word.chars().count().max(candidate.chars().count());
        let limit = (longest / 3).max(1);
        let d = distance(word, candidate);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// `"; did you mean `X`?"` for the closest candidate, or an empty string.
pub fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

/// `"; did you mean `X`?"` for a suggestion already chosen, or an empty string.
pub fn hint_of(suggestion: Option<&str>) -> String {
    suggestion
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("Float", "Flaot"), 1);
        assert_eq!(distance("ab", "ba"), 1);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("é", "e"), 1);
    }

    #[test]
    fn closest_is_within_a_third_and_prefers_the_nearest() {
        let names = ["Float", "Int", "Bool", "Float2"];
        assert_eq!(closest("Flaot", names), Some("Float"));
        assert_eq!(closest("Floa", names), Some("Float"));
        assert_eq!(closest("Int", names), None);
        assert_eq!(closest("Matrix", names), None);
        assert_eq!(hint("Bol", names), "; did you mean `Bool`?");
        assert_eq!(hint("zzz", names), "");
    }
}
