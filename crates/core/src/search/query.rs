//! Turning a caller's query into weighted terms: the caller's own (literal)
//! terms at full weight, generic intent expansions at a discount.
//!
//! Multi-intent: a query naming several tasks ("get the news and the stock
//! price", "First ... Then ... Finally ...") is also split into clauses; each
//! term records the clauses it came from, so ranking can make sure every
//! clause's best tools surface, not only tools matching all of them.

use std::cell::RefCell;

use super::analyze::{Analyzer, TermKind};
use super::expand::{base_forms, expansions};
use super::fields::RankingParams;

/// Most distinct terms a query contributes; the rest are ignored (bounds work
/// even if a caller skips the catalog's query-length cap).
pub const MAX_QUERY_TERMS: usize = 64;
/// Most expansion terms added to one query.
const MAX_EXPANSION_TERMS: usize = 32;
/// Most clauses tracked; later clauses merge into the last one.
pub const MAX_CLAUSES: usize = 8;
/// Weight of a word's exact spelling when folding changed it (`météo` beside
/// `meteo`): enough to rank the request's own spelling first among tools that
/// match the folded word equally, small beside a word of its own.
const EXACT_SPELLING_WEIGHT: f32 = 0.25;

#[derive(Debug, Clone, PartialEq)]
pub struct QueryTerm {
    pub text: String,
    pub weight: f32,
    /// The caller typed this term (after analysis); false for expansions.
    pub literal: bool,
    /// Bit i set: the term occurs in clause i.
    pub clauses: u8,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryPlan {
    pub terms: Vec<QueryTerm>,
    /// Number of clauses with at least one term (1 for a single-intent query).
    pub clause_count: usize,
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

/// Words that start a new task in a request. Matched case-insensitively as
/// whole words; the connector itself is dropped from the clause.
const CLAUSE_CONNECTORS: &[&str] = &[
    "and",
    "then",
    "also",
    "additionally",
    "afterwards",
    "finally",
    "lastly",
    "next",
    "plus",
    "moreover",
    "furthermore",
];

/// Split a query into clauses: at sentence ends (`.`, `?`, `!`, `;`, newline
/// followed by space or end) and before connector words.
pub fn clauses(query: &str, split_on_connectors: bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0usize;
    let bytes = query.as_bytes();
    let mut word_start: Option<usize> = None;
    for (i, c) in query.char_indices() {
        let at_end_or_space = |j: usize| j >= bytes.len() || bytes[j].is_ascii_whitespace();
        if matches!(c, '.' | '?' | '!' | ';' | '\n') && at_end_or_space(i + c.len_utf8()) {
            out.push(&query[start..i]);
            start = i + c.len_utf8();
            word_start = None;
            continue;
        }
        if c.is_alphanumeric() {
            word_start.get_or_insert(i);
        } else if let Some(ws) = word_start.take() {
            if split_on_connectors && is_connector(&query[ws..i]) {
                out.push(&query[start..ws]);
                start = i;
            }
        }
    }
    out.push(&query[start..]);
    out
}

/// Stems of words that frame a request rather than name a capability
/// ("I want to know ...", "can you help me find ..."). Dropped from queries only.
const REQUEST_FILLER: &[&str] = &[
    "help", "know", "like", "need", "pleas", "tell", "want", "wonder", "would",
];

fn is_request_filler(stem: &str) -> bool {
    REQUEST_FILLER.contains(&stem)
}

fn is_connector(word: &str) -> bool {
    CLAUSE_CONNECTORS
        .iter()
        .any(|c| c.eq_ignore_ascii_case(word))
}

/// The distinct words a caller typed, analyzed as the index analyzes them
/// (request filler dropped, no expansions), in order: what a learned prior
/// keys a query by.
pub fn literal_terms(query: &str, params: &RankingParams) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    ANALYZER.with(|cell| {
        let Ok(mut analyzer) = cell.try_borrow_mut() else {
            return;
        };
        analyzer.analyze(query, &mut |term, kind| {
            if kind == TermKind::ExactSpelling {
                return;
            }
            let filler = params.drop_request_filler && is_request_filler(term);
            if !filler && out.len() < MAX_QUERY_TERMS && !out.iter().any(|t| t == term) {
                out.push(term.to_string());
            }
        });
    });
    out
}

pub fn plan(query: &str, params: &RankingParams) -> QueryPlan {
    let mut terms: Vec<QueryTerm> = Vec::new();
    let mut clause_count = 0usize;
    // Per literal term (by index): base forms of agent nouns ("runner" → "run").
    let mut bases: Vec<Vec<String>> = Vec::new();
    // Exact spellings of folded words, added after the expansions.
    let mut spellings: Vec<QueryTerm> = Vec::new();
    ANALYZER.with(|cell| {
        let Ok(mut analyzer) = cell.try_borrow_mut() else {
            return;
        };
        let parts = if params.multi_intent {
            clauses(query, params.split_on_connectors)
        } else {
            vec![query]
        };
        for part in parts {
            let clause = clause_count.min(MAX_CLAUSES - 1);
            let bit = 1u8 << clause;
            let mut any = false;
            analyzer.analyze(part, &mut |term, kind| {
                if kind == TermKind::ExactSpelling {
                    match spellings.iter_mut().find(|t| t.text == term) {
                        Some(existing) => existing.clauses |= bit,
                        None => spellings.push(QueryTerm {
                            text: term.to_string(),
                            weight: EXACT_SPELLING_WEIGHT,
                            literal: false,
                            clauses: bit,
                        }),
                    }
                    return;
                }
                if params.drop_request_filler && is_request_filler(term) {
                    return;
                }
                any = true;
                if let Some(existing) = terms.iter_mut().find(|t| t.text == term) {
                    existing.clauses |= bit;
                } else if terms.len() < MAX_QUERY_TERMS {
                    terms.push(QueryTerm {
                        text: term.to_string(),
                        weight: 1.0,
                        literal: true,
                        clauses: bit,
                    });
                }
            });
            if any {
                clause_count += 1;
            }
        }
        bases = terms
            .iter()
            .map(|t| base_forms(&t.text, &mut analyzer))
            .collect();
    });
    let clause_count = clause_count.min(MAX_CLAUSES);

    if params.expansion_weight > 0.0 {
        let mut added = 0usize;
        let literal_count = terms.len();
        for i in 0..literal_count {
            let clauses = terms[i].clauses;
            let related = bases
                .get(i)
                .into_iter()
                .flatten()
                .chain(expansions(&terms[i].text));
            for related in related {
                if added >= MAX_EXPANSION_TERMS {
                    break;
                }
                if let Some(existing) = terms.iter_mut().find(|t| &t.text == related) {
                    if !existing.literal {
                        existing.clauses |= clauses;
                    }
                } else {
                    terms.push(QueryTerm {
                        text: related.clone(),
                        weight: params.expansion_weight,
                        literal: false,
                        clauses,
                    });
                    added += 1;
                }
            }
        }
    }
    for spelling in spellings {
        if terms.len() >= MAX_QUERY_TERMS {
            break;
        }
        if !terms.iter().any(|t| t.text == spelling.text) {
            terms.push(spelling);
        }
    }
    QueryPlan {
        terms,
        clause_count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Concept expansions are off by default (bench/QUALITY.md); these tests
    /// check the mechanism with the lever on.
    fn with_expansions() -> RankingParams {
        RankingParams {
            expansion_weight: 0.7,
            ..RankingParams::default()
        }
    }

    #[test]
    fn literal_terms_then_discounted_expansions() {
        let plan = plan("find the weather", &with_expansions());
        let literal: Vec<&str> = plan
            .terms
            .iter()
            .filter(|t| t.literal)
            .map(|t| t.text.as_str())
            .collect();
        assert_eq!(literal, vec!["find", "weather"]);
        assert!(plan
            .terms
            .iter()
            .any(|t| !t.literal && t.text == "search" && t.weight < 1.0));
    }

    #[test]
    fn agent_nouns_expand_to_their_verb() {
        let plan = plan("test runner", &with_expansions());
        let run = plan.terms.iter().find(|t| t.text == "run").expect("run");
        assert!(!run.literal && run.weight < 1.0);
        let plan = super::plan("file writer", &with_expansions());
        assert!(plan.terms.iter().any(|t| t.text == "write" && !t.literal));
        // Off by default: only the typed words.
        assert!(plan_default("file writer").terms.iter().all(|t| t.literal));
    }

    fn plan_default(query: &str) -> QueryPlan {
        plan(query, &RankingParams::default())
    }

    #[test]
    fn a_folded_word_is_typed_and_its_exact_spelling_a_small_bonus() {
        let plan = plan_default("météo à Lyon");
        let literal: Vec<&str> = plan
            .terms
            .iter()
            .filter(|t| t.literal)
            .map(|t| t.text.as_str())
            .collect();
        assert_eq!(literal, vec!["meteo", "lyon"]);
        let exact = plan
            .terms
            .iter()
            .find(|t| t.text == "météo")
            .expect("exact");
        assert!(!exact.literal && exact.weight < 1.0);
        // Typed without accents: only the words.
        assert!(plan_default("meteo lyon").terms.iter().all(|t| t.literal));
        // The learned prior keys a query by its words, spelled either way.
        let params = RankingParams::default();
        assert_eq!(
            literal_terms("météo à Lyon", &params),
            literal_terms("meteo a lyon", &params)
        );
    }

    #[test]
    fn stopwords_only_is_empty() {
        assert!(plan("the of and", &RankingParams::default()).is_empty());
        assert!(plan("   ", &RankingParams::default()).is_empty());
    }

    #[test]
    fn bounded_term_count() {
        let query: String = (0..1000).map(|i| format!("word{i}x ")).collect();
        assert!(
            plan(&query, &RankingParams::default()).terms.len()
                <= MAX_QUERY_TERMS + MAX_EXPANSION_TERMS
        );
    }

    #[test]
    fn splits_clauses_at_sentences_and_connectors() {
        assert_eq!(
            clauses("Get the news. Then check stocks!", true),
            vec!["Get the news", " ", " check stocks", ""]
        );
        assert_eq!(
            clauses("news and stock prices", true),
            vec!["news ", " stock prices"]
        );
        assert_eq!(
            clauses("version 1.5 release", true),
            vec!["version 1.5 release"]
        );
        assert_eq!(
            clauses("news and stock prices", false),
            vec!["news and stock prices"]
        );
    }

    #[test]
    fn clause_bits_follow_terms() {
        let params = RankingParams {
            split_on_connectors: true,
            ..RankingParams::default()
        };
        let plan = plan("latest news and stock prices", &params);
        assert_eq!(plan.clause_count, 2);
        let news = plan.terms.iter().find(|t| t.text == "news").unwrap();
        let stock = plan.terms.iter().find(|t| t.text == "stock").unwrap();
        assert_eq!((news.clauses, stock.clauses), (0b01, 0b10));
    }
}
