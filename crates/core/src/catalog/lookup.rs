//! Resolving an id or name the model typed: exact id, then exact unique name;
//! otherwise an error with up to three suggestions.

use super::data::clip;
use super::Catalog;
use crate::error::{Error, ErrorCode, Result};

/// Which surface the caller is on; picks the guidance in error texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LookupStyle {
    /// `tool_search` / `tool_describe` / `tool_call`.
    #[default]
    Structured,
    /// `openclaw.tools.search/describe/call` inside a code cell.
    Code,
}

impl LookupStyle {
    fn guidance(self) -> &'static str {
        match self {
            LookupStyle::Structured => {
                "Use tool_search to find a tool, tool_describe to inspect it, then tool_call with the exact id or name."
            }
            LookupStyle::Code => {
                "Use openclaw.tools.search to find a tool, openclaw.tools.describe to inspect it, then openclaw.tools.call with the exact id or name."
            }
        }
    }
}

const MAX_SUGGESTIONS: usize = 3;
/// Edit distance beyond which a name is not a "near miss".
const MAX_SUGGESTION_DISTANCE: usize = 6;
/// Ids and names longer than this are not compared for suggestions.
const MAX_SELECTOR_CHARS: usize = 300;

impl Catalog {
    /// The ordinal of the allowed tool `id_or_name` names.
    pub fn resolve_ordinal(&self, id_or_name: &str, style: LookupStyle) -> Result<usize> {
        if let Some(&ordinal) = self.data.by_id.get(id_or_name) {
            if self.is_allowed(ordinal) {
                return Ok(ordinal);
            }
        }
        if let Some(ordinals) = self.data.by_name.get(id_or_name) {
            let allowed: Vec<usize> = ordinals.iter().copied().filter(|&o| self.is_allowed(o)).collect();
            match allowed.as_slice() {
                [one] => return Ok(*one),
                [] => {}
                _ => {
                    return Err(Error::new(
                        ErrorCode::AmbiguousTool,
                        format!("Ambiguous tool name: {}; use an exact tool id.", clip(id_or_name, 120)),
                    ))
                }
            }
        }
        let suggestions = self.suggestions(id_or_name);
        let did_you_mean = if suggestions.is_empty() {
            String::new()
        } else {
            format!(" Did you mean: {}?", suggestions.join(", "))
        };
        Err(Error::new(
            ErrorCode::ToolNotFound,
            format!("Unknown tool id: {}.{did_you_mean} {}", clip(id_or_name, 120), style.guidance()),
        ))
    }

    /// Up to three allowed ids closest to `typed`: by edit distance over names
    /// and ids, then by search rank for words the model used.
    fn suggestions(&self, typed: &str) -> Vec<String> {
        if typed.trim().is_empty() || typed.chars().count() > MAX_SELECTOR_CHARS {
            return Vec::new();
        }
        let typed_lower = typed.to_lowercase();
        let mut scored: Vec<(usize, usize)> = Vec::new(); // (distance, ordinal)
        for (ordinal, e) in self.data.entries.iter().enumerate() {
            if !self.is_allowed(ordinal) {
                continue;
            }
            let name_lower = e.name.to_lowercase();
            // Small, fixed ceiling: rows stop early, so a miss stays cheap on big catalogs.
            let budget = (typed_lower.chars().count().max(name_lower.chars().count()) / 2 + 1).min(MAX_SUGGESTION_DISTANCE);
            let d_name = bounded_levenshtein(&typed_lower, &name_lower, budget);
            let d_id = bounded_levenshtein(&typed_lower, &e.id.to_lowercase(), budget);
            let contains = !typed_lower.is_empty() && name_lower.len() >= 3 && typed_lower.contains(&name_lower);
            let best = [d_name, d_id].into_iter().flatten().min().or(contains.then_some(budget));
            if let Some(d) = best {
                scored.push((d, ordinal));
            }
        }
        scored.sort();
        let mut out: Vec<String> = scored.iter().take(MAX_SUGGESTIONS).map(|&(_, o)| self.data.entries[o].id.clone()).collect();
        if out.len() < MAX_SUGGESTIONS {
            let query: String = typed.chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
            for hit in self.data.index.search(&query, MAX_SUGGESTIONS, &|o| self.is_allowed(o)) {
                let id = &self.data.entries[hit.ordinal].id;
                if out.len() < MAX_SUGGESTIONS && !out.contains(id) {
                    out.push(id.clone());
                }
            }
        }
        out
    }
}

/// Levenshtein distance if it is at most `max`, else None. O(len·max) with an
/// early exit, so a long hostile selector cannot make lookups slow.
pub(crate) fn bounded_levenshtein(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
            row_min = row_min.min(cur[j + 1]);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= max).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::bounded_levenshtein;

    #[test]
    fn levenshtein_bounds() {
        assert_eq!(bounded_levenshtein("kitten", "sitting", 5), Some(3));
        assert_eq!(bounded_levenshtein("kitten", "sitting", 2), None);
        assert_eq!(bounded_levenshtein("", "abc", 3), Some(3));
        assert_eq!(bounded_levenshtein("abc", "abc", 0), Some(0));
    }
}
