//! Text bounds: one clipping rule and one bounded edit distance.
//!
//! Clipping is by chars (Unicode scalar values), always on a char boundary.
//! A clipped text ends with [`MARKER`], and the marker counts: the result is
//! at most `max_chars` chars, so a caller's size budget holds for the text it
//! shows. Trailing whitespace before the marker is dropped (`"two …"` reads
//! as a cut word, `"two…"` as a cut sentence).

/// Ends a clipped text.
pub const MARKER: char = '…';

/// The first `max_chars` chars of `text` (all of it when shorter), without a
/// marker: for input that is bounded before use, not shown as cut.
pub fn prefix(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// The part of `text` that [`clip`] keeps before its marker, or `None` when
/// `text` fits in `max_chars` and is kept whole. For callers that write the
/// marker themselves (and count it).
pub fn clipped_head(text: &str, max_chars: usize) -> Option<&str> {
    let keep = max_chars.checked_sub(1)?;
    let (cut, _) = text.char_indices().nth(keep)?;
    // A second char from `cut` on: the text is longer than `max_chars`.
    text[cut..].chars().nth(1)?;
    Some(text[..cut].trim_end())
}

/// `text` in at most `max_chars` chars: whole when it fits, else cut and
/// ending with [`MARKER`] (counted). `max_chars == 0` yields an empty text.
pub fn clip(text: &str, max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    match clipped_head(text, max_chars) {
        None => text.to_string(),
        Some(head) => {
            let mut out = String::with_capacity(head.len() + MARKER.len_utf8());
            out.push_str(head);
            out.push(MARKER);
            out
        }
    }
}

/// Edit distance between `a` and `b` (insertions, deletions, substitutions
/// and swaps of adjacent chars, each one edit: the optimal string alignment
/// distance) if it is at most `max`, else `None`.
///
/// Only the diagonal band of width `2·max + 1` is computed, so the cost is
/// O(len·max): a long hostile text cannot make a comparison slow.
pub fn bounded_edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    const FAR: usize = usize::MAX / 2;
    // before[j] / prev[j] / cur[j]: distance between a[..row - 2], a[..row - 1],
    // a[..row] and b[..j]; FAR outside the band.
    let mut prev: Vec<usize> = (0..=b.len())
        .map(|j| if j <= max { j } else { FAR })
        .collect();
    let mut before = vec![FAR; b.len() + 1];
    let mut cur = vec![FAR; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        let row = i + 1;
        let from = row.saturating_sub(max);
        let to = (row + max).min(b.len());
        cur[0] = if row <= max { row } else { FAR };
        if from > 1 {
            cur[from - 1] = FAR;
        }
        let mut row_min = if from == 0 { cur[0] } else { FAR };
        for j in from.max(1)..=to {
            let cost = usize::from(ca != b[j - 1]);
            let mut d = (prev[j - 1] + cost).min(prev[j] + 1).min(cur[j - 1] + 1);
            // (row - 2, j - 2) lies on the same diagonal: inside the band.
            if i > 0 && j > 1 && ca == b[j - 2] && a[i - 1] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if to < b.len() {
            cur[to + 1] = FAR;
        }
        // A row's minimum never falls in later rows (a swap costs what the
        // substitution on the row between costs): stop once it is over.
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= max).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_cuts_on_char_boundaries() {
        assert_eq!(prefix("héllo", 2), "hé");
        assert_eq!(prefix("héllo", 5), "héllo");
        assert_eq!(prefix("héllo", 50), "héllo");
        assert_eq!(prefix("日本語", 0), "");
    }

    #[test]
    fn clip_keeps_fitting_text_whole() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("", 3), "");
        assert_eq!(clip("日本語", 3), "日本語");
        assert_eq!(clipped_head("abc", 3), None);
    }

    #[test]
    fn clip_counts_the_marker_and_trims_before_it() {
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abcd", 3), "ab…");
        assert_eq!(clip("ab cdef", 4), "ab…");
        assert_eq!(clip("日本語です", 3), "日本…");
        assert_eq!(clip("abc", 1), "…");
        assert_eq!(clip("abc", 0), "");
        assert_eq!(clipped_head("ab cdef", 4), Some("ab"));
        assert_eq!(clipped_head("abc", 0), None);
        for max in 0..12 {
            for text in ["", "a", "a b c d e f", "ééééééé", "x  y  z  w"] {
                let clipped = clip(text, max);
                assert!(clipped.chars().count() <= max, "{text:?} {max}");
                if text.chars().count() <= max {
                    assert_eq!(clipped, text);
                } else if max > 0 {
                    assert!(clipped.ends_with(MARKER));
                }
            }
        }
    }

    #[test]
    fn edit_distance_bounds() {
        assert_eq!(bounded_edit_distance("kitten", "sitting", 5), Some(3));
        assert_eq!(bounded_edit_distance("kitten", "sitting", 2), None);
        assert_eq!(bounded_edit_distance("", "abc", 3), Some(3));
        assert_eq!(bounded_edit_distance("abc", "abc", 0), Some(0));
    }

    #[test]
    fn adjacent_swaps_are_one_edit() {
        assert_eq!(bounded_edit_distance("nmae", "name", 1), Some(1));
        assert_eq!(bounded_edit_distance("ab", "ba", 0), None);
        assert_eq!(bounded_edit_distance("isseu", "issue", 3), Some(1));
        // Optimal string alignment: no edit of a swapped pair (ca → abc is 3).
        assert_eq!(bounded_edit_distance("ca", "abc", 3), Some(3));
    }

    /// Unbanded O(n·m) optimal string alignment, to check the banded one against.
    fn full_distance(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
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

    #[test]
    fn banded_distance_matches_the_full_table() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut word = |len: usize| -> String {
            (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    ['a', 'b', 'c', 'é'][(seed % 4) as usize]
                })
                .collect()
        };
        for round in 0..3_000 {
            let (a, b) = (word(round % 13), word((round / 13) % 11));
            let exact = full_distance(&a, &b);
            for max in 0..8 {
                let expected = (exact <= max).then_some(exact);
                assert_eq!(
                    bounded_edit_distance(&a, &b, max),
                    expected,
                    "{a:?} {b:?} max {max}"
                );
            }
        }
    }
}
