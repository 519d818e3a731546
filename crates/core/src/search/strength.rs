//! Match strength: how much distinctive text a hit shares with the query,
//! so a search whose best hits match only incidental common words ("get the
//! current status of my flux capacitor" → tools that "get the current
//! status" of anything) can say so instead of offering an unrelated tool as
//! if it fit.
//!
//! A query term's informative mass is its idf above that of a word found in
//! `COMMON_SHARE` of the catalog's tools: words most tools share ("get",
//! "data", "list") weigh nothing. A hit's strength is the informative mass
//! of the terms it matched in its name, label or description (parameter
//! text and owner matches are incidental), relative to the mass of a word
//! found in one tool only, capped at 1: roughly "how many distinctive words
//! matched". Typo corrections and intent expansions count at their discount.
//! An absolute measure, not the share of the query matched: requests carry
//! argument values, names and several tasks, so a right tool often matches a
//! small share of a long query (measured on dev with 5% of right top hits
//! flagged: the share caught 12% of retrieval failures, this 16%;
//! examples/weak_calibration.rs).
//!
//! Exact name/id matches are never weak. Computed from the term masks the
//! scorer records per candidate, for the returned hits only (no extra pass
//! over postings).

use super::query::QueryPlan;

/// Plan terms a candidate matched, as bits by term index (a plan holds at
/// most 64 typed terms, 32 expansions and a few typo corrections).
pub type TermMask = u128;

/// Fields that say what a tool does (name, label, description) come first
/// in `FieldKind` order.
pub const NAMED_FIELDS: usize = 3;

/// A word in fewer tools than this is never common (in a catalog under
/// 1,000 tools the share alone would call a word in a handful common).
const MIN_COMMON_TOOLS: f32 = 20.0;

pub fn term_bit(index: usize) -> TermMask {
    if index < TermMask::BITS as usize {
        1 << index
    } else {
        0
    }
}

/// What each plan term is worth to a hit that matches it.
#[derive(Debug, Clone, Default)]
pub struct QueryMass {
    /// Informative mass of each plan term times its weight.
    credit: Vec<f32>,
    /// Informative mass of a word found in one tool only.
    unit: f32,
}

impl QueryMass {
    /// `idf[i]`: the idf of plan term i over the whole catalog (0 when no
    /// tool has it); `doc_count`: the catalog size.
    pub fn new(plan: &QueryPlan, idf: &[f32], doc_count: usize, common_share: f32) -> QueryMass {
        let n = doc_count as f32;
        let floor = idf_of((n * common_share).max(MIN_COMMON_TOOLS), n);
        let credit = plan
            .terms
            .iter()
            .enumerate()
            .map(|(i, term)| {
                let idf = idf.get(i).copied().unwrap_or(0.0);
                if idf > 0.0 {
                    (idf - floor).max(0.0) * term.weight.clamp(0.0, 1.0)
                } else {
                    0.0
                }
            })
            .collect();
        QueryMass {
            credit,
            unit: idf_of(1.0, n) - floor,
        }
    }

    /// Strength of a hit that matched the terms in `named` (in its name,
    /// label or description), in [0, 1].
    pub fn strength(&self, named: TermMask) -> f32 {
        if self.unit <= 0.0 {
            return 0.0;
        }
        let matched: f32 = self
            .credit
            .iter()
            .enumerate()
            .filter(|(i, _)| named & term_bit(*i) != 0)
            .map(|(_, c)| c)
            .sum();
        (matched / self.unit).min(1.0)
    }
}

/// BM25's idf, as the scorer computes it.
pub fn idf_of(df: f32, n: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Whether a hit of this strength is weak (an exact name/id match never is).
pub fn is_weak(strength: f32, exact: bool, weak_below: f32) -> bool {
    !exact && strength < weak_below
}

#[cfg(test)]
mod tests {
    use super::super::tests::status_tools;
    use super::super::SearchIndex;
    use crate::entry::{EntryFields, Source, ToolEntry};

    fn catalog() -> Vec<ToolEntry> {
        let mut entries: Vec<ToolEntry> = status_tools()
            .into_iter()
            .map(|(name, description)| {
                ToolEntry::from(EntryFields {
                    id: format!("openclaw:devices:{name}"),
                    source: Source::Openclaw,
                    owner: "devices".into(),
                    name,
                    label: None,
                    description,
                    input_schema: None,
                    output_schema: None,
                    mcp: None,
                })
            })
            .collect();
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        entries
    }

    #[test]
    fn named_fields_are_the_first_ones() {
        use super::super::FieldKind;
        assert_eq!(
            FieldKind::ALL[..super::NAMED_FIELDS],
            [FieldKind::Name, FieldKind::Label, FieldKind::Description]
        );
    }

    #[test]
    fn only_common_words_matched_is_weak() {
        let entries = catalog();
        let index = SearchIndex::build(&entries).unwrap();
        let hits = index.search("get the current status of my flux capacitor", 5, &|_| true);
        assert!(!hits.is_empty());
        assert!(hits.iter().all(|h| h.weak && h.strength < 0.1), "{hits:?}");
    }

    #[test]
    fn a_capability_match_is_not_weak() {
        let entries = catalog();
        let index = SearchIndex::build(&entries).unwrap();
        for (query, expected) in [
            ("send an email", "send_email"),
            ("what is the printer doing", "get_printer_status"),
        ] {
            let hits = index.search(query, 5, &|_| true);
            assert_eq!(entries[hits[0].ordinal].name, expected, "{query}");
            assert!(!hits[0].weak && hits[0].strength > 0.5, "{query}: {hits:?}");
        }
        // The same common words around a distinctive one: only the tool with it is strong.
        let hits = index.search("get the current status of the turbine", 5, &|_| true);
        assert_eq!(entries[hits[0].ordinal].name, "get_turbine_status");
        assert!(!hits[0].weak);
        assert!(hits[1..].iter().all(|h| h.weak), "{hits:?}");
    }

    #[test]
    fn an_exact_name_is_never_weak() {
        let entries = catalog();
        let index = SearchIndex::build(&entries).unwrap();
        // "status" is a common word, but one tool has exactly that name.
        let hits = index.search("STATUS", 5, &|_| true);
        assert_eq!(entries[hits[0].ordinal].name, "status");
        assert!(!hits[0].weak && hits[0].strength == 1.0, "{hits:?}");
        assert!(hits[1..].iter().all(|h| h.weak), "{hits:?}");
    }

    #[test]
    fn marking_leaves_the_order_alone() {
        let entries = catalog();
        let index = SearchIndex::build(&entries).unwrap();
        let strict = super::super::RankingParams {
            weak_below: 1.1,
            ..Default::default()
        };
        for query in [
            "get the current status of the turbine",
            "send an email",
            "status of my flux capacitor",
        ] {
            let default: Vec<usize> = index
                .search(query, 10, &|_| true)
                .iter()
                .map(|h| h.ordinal)
                .collect();
            let marked = index.search_with(query, 10, &|_| true, &strict);
            assert_eq!(
                default,
                marked.iter().map(|h| h.ordinal).collect::<Vec<_>>(),
                "{query}"
            );
            assert!(marked.iter().all(|h| h.weak || h.strength >= 1.0));
        }
    }
}
