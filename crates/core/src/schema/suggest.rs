//! Near-miss matching of property names, for `Did you mean: x?` hints.

use tool_search_base::text::bounded_edit_distance;

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
    let wrong_lower = wrong.to_lowercase();
    let wrong_chars = wrong_lower.chars().count();
    let mut best: Option<(&'a str, usize)> = None;
    for candidate in candidates.into_iter().take(MAX_CANDIDATES) {
        if candidate == wrong || candidate.chars().count() > MAX_COMPARED_CHARS {
            continue;
        }
        if !wrong_norm.is_empty() && normalize(candidate) == wrong_norm {
            return Some(candidate);
        }
        let cand_lower = candidate.to_lowercase();
        let limit = (wrong_chars.max(cand_lower.chars().count()) / 3).max(1);
        match bounded_edit_distance(&wrong_lower, &cand_lower, limit) {
            Some(distance) if best.is_none_or(|(_, d)| distance < d) => {
                best = Some((candidate, distance));
            }
            _ => {}
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
