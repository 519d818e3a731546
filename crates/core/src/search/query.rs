//! Turning a caller's query into weighted terms: the caller's own (literal)
//! terms at full weight, generic intent expansions at a discount.

use std::cell::RefCell;

use super::analyze::Analyzer;
use super::expand::expansions;
use super::fields::RankingParams;

/// Most distinct terms a query contributes; the rest are ignored (bounds work
/// even if a caller skips the catalog's query-length cap).
pub const MAX_QUERY_TERMS: usize = 64;
/// Most expansion terms added to one query.
const MAX_EXPANSION_TERMS: usize = 32;

#[derive(Debug, Clone, PartialEq)]
pub struct QueryTerm {
    pub text: String,
    pub weight: f32,
    /// The caller typed this term (after analysis); false for expansions.
    pub literal: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryPlan {
    pub terms: Vec<QueryTerm>,
}

impl QueryPlan {
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

thread_local! {
    /// One analyzer per thread: its stem cache makes repeated words cheap.
    static ANALYZER: RefCell<Analyzer> = RefCell::new(Analyzer::new());
}

pub fn plan(query: &str, params: &RankingParams) -> QueryPlan {
    let mut terms: Vec<QueryTerm> = Vec::new();
    ANALYZER.with(|cell| {
        let Ok(mut analyzer) = cell.try_borrow_mut() else { return };
        analyzer.analyze(query, &mut |term, _| {
            if terms.len() < MAX_QUERY_TERMS && !terms.iter().any(|t| t.text == term) {
                terms.push(QueryTerm { text: term.to_string(), weight: 1.0, literal: true });
            }
        });
    });

    if params.expansion_weight > 0.0 {
        let mut added = 0usize;
        let literal_count = terms.len();
        for i in 0..literal_count {
            for related in expansions(&terms[i].text) {
                if added >= MAX_EXPANSION_TERMS {
                    break;
                }
                if !terms.iter().any(|t| &t.text == related) {
                    terms.push(QueryTerm { text: related.clone(), weight: params.expansion_weight, literal: false });
                    added += 1;
                }
            }
        }
    }
    QueryPlan { terms }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_terms_then_discounted_expansions() {
        let plan = plan("find the weather", &RankingParams::default());
        let literal: Vec<&str> = plan.terms.iter().filter(|t| t.literal).map(|t| t.text.as_str()).collect();
        assert_eq!(literal, vec!["find", "weather"]);
        assert!(plan.terms.iter().any(|t| !t.literal && t.text == "search" && t.weight < 1.0));
    }

    #[test]
    fn stopwords_only_is_empty() {
        assert!(plan("the of and", &RankingParams::default()).is_empty());
        assert!(plan("   ", &RankingParams::default()).is_empty());
    }

    #[test]
    fn bounded_term_count() {
        let query: String = (0..1000).map(|i| format!("word{i}x ")).collect();
        assert!(plan(&query, &RankingParams::default()).terms.len() <= MAX_QUERY_TERMS + MAX_EXPANSION_TERMS);
    }
}
