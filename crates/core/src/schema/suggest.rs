//! Near-miss matching of property names, for `Did you mean: x?` hints.

/// Names longer than this are not compared (keeps the edit distance cheap).
const MAX_COMPARED_CHARS: usize = 64;
/// At most this many candidates are compared per lookup.
const MAX_CANDIDATES: usize = 1_000;

/// The allowed name closest to `wrong`, if any is close enough.
///
/// Preference order: same name ignoring case and separators (`_`, `-`, `.`,
/// space), then smallest edit distance (Damerau-Levenshtein with adjacent
/// transpositions) within `max(1, len / 3)`. Ties keep the earlier candidate,
/// so the result is deterministic for a given schema order.
pub fn closest_name<'a, I>(wrong: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    if wrong.chars().count() > MAX_COMPARED_CHARS {
        return None;
    }
    let wrong_norm = normalize(wrong);
    let wrong_lower: Vec<char> = wrong.to_lowercase().chars().collect();
    let mut best: Option<(&'a str, usize)> = None;
    for candidate in candidates.into_iter().take(MAX_CANDIDATES) {
        if candidate == wrong || candidate.chars().count() > MAX_COMPARED_CHARS {
            continue;
        }
        if !wrong_norm.is_empty() && normalize(candidate) == wrong_norm {
            return Some(candidate);
        }
        let cand_lower: Vec<char> = candidate.to_lowercase().chars().collect();
        let limit = (wrong_lower.len().max(cand_lower.len()) / 3).max(1);
        let distance = edit_distance(&wrong_lower, &cand_lower);
        if distance <= limit && best.is_none_or(|(_, d)| distance < d) {
            best = Some((candidate, distance));
        }
    }
    best.map(|(name, _)| name)
}

fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Optimal string alignment distance (edits plus adjacent swaps).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = d;
        }
    }
    rows[a.len() * width + b.len()]
}
