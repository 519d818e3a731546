//! Text analysis shared by indexing and querying, so both sides agree on terms.
//!
//! Pipeline: split into words (Unicode alphanumerics; `_`, `-`, `.`, `/` and
//! `:` glue identifier parts) -> split identifiers (camelCase, acronyms,
//! snake_case, kebab-case, letter/digit boundaries) -> lowercase -> drop
//! stopwords -> Snowball English stem (tantivy's `stemmer` feature).
//! An identifier with several parts also yields its joined form
//! (`create_issue` -> `createissue`), so a query that spells the identifier
//! matches it more strongly than one that merely shares its parts.
//! CJK runs (no spaces between words) become overlapping bigrams.

use std::collections::HashMap;

use tantivy::tokenizer::{Language, RawTokenizer, Stemmer, TextAnalyzer, TokenStream};

use super::stopwords::is_stopword;

/// Longest token kept (bytes); longer runs are noise (hashes, base64).
const MAX_TOKEN_BYTES: usize = 40;
/// Joined identifier forms are only emitted for identifiers of at most this many parts.
const MAX_COMPOUND_PARTS: usize = 6;

/// One analyzed term. `compound` marks the joined form of a multi-part identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalyzedTerm {
    pub text: String,
    pub compound: bool,
}

/// Stateful analyzer (the stemmer needs `&mut`); cheap to create per query.
/// An optional cache speeds up bulk indexing where words repeat a lot.
pub struct Analyzer {
    stemmer: TextAnalyzer,
    cache: Option<HashMap<String, String>>,
}

impl Analyzer {
    pub fn new() -> Analyzer {
        Analyzer {
            stemmer: TextAnalyzer::builder(RawTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
            cache: None,
        }
    }

    /// An analyzer that memoizes stems (for building an index).
    pub fn with_cache() -> Analyzer {
        let mut analyzer = Analyzer::new();
        analyzer.cache = Some(HashMap::new());
        analyzer
    }

    /// Stem one lowercased word.
    pub fn stem(&mut self, word: &str) -> String {
        if let Some(cache) = &self.cache {
            if let Some(hit) = cache.get(word) {
                return hit.clone();
            }
        }
        let stemmed = {
            let mut stream = self.stemmer.token_stream(word);
            if stream.advance() { stream.token().text.clone() } else { word.to_string() }
        };
        if let Some(cache) = &mut self.cache {
            if cache.len() < 200_000 {
                cache.insert(word.to_string(), stemmed.clone());
            }
        }
        stemmed
    }

    /// Analyze free text into terms (stopwords removed, stemmed), in order.
    pub fn terms(&mut self, text: &str, out: &mut Vec<AnalyzedTerm>) {
        for word in split_words(text) {
            match word {
                Word::Cjk(run) => push_cjk_bigrams(&run, out),
                Word::Identifier(parts) => self.push_identifier(&parts, out),
            }
        }
    }

    /// Convenience: just the term strings.
    #[cfg(test)]
    pub fn term_strings(&mut self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.terms(text, &mut out);
        out.into_iter().map(|t| t.text).collect()
    }

    fn push_identifier(&mut self, parts: &[String], out: &mut Vec<AnalyzedTerm>) {
        let mut kept = 0usize;
        for part in parts {
            if keep_part(part) {
                let stem = self.stem(part);
                out.push(AnalyzedTerm { text: stem, compound: false });
                kept += 1;
            }
        }
        if parts.len() > 1 && parts.len() <= MAX_COMPOUND_PARTS {
            let joined: String = parts.concat();
            if joined.len() <= MAX_TOKEN_BYTES && kept > 0 {
                let stem = self.stem(&joined);
                out.push(AnalyzedTerm { text: stem, compound: true });
            }
        }
    }
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer::new()
    }
}

/// Single Latin letters and stopwords carry no meaning on their own.
fn keep_part(part: &str) -> bool {
    let mut chars = part.chars();
    let single = chars.next().is_some() && chars.next().is_none();
    if single && !part.chars().all(|c| c.is_ascii_digit()) {
        return false;
    }
    !is_stopword(part)
}

enum Word {
    /// Lowercased identifier parts (a plain word is a one-part identifier).
    Identifier(Vec<String>),
    /// A run of CJK characters.
    Cjk(Vec<char>),
}

pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F) // Extensions B.. and compatibility supplement
}

fn is_glue(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | '/' | ':')
}

/// Split text into words: identifier-ish runs (alphanumerics joined by glue
/// characters) and CJK runs. Everything else separates.
fn split_words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_ident = |current: &mut String, words: &mut Vec<Word>| {
        if !current.is_empty() {
            let parts = split_identifier(current);
            if !parts.is_empty() {
                words.push(Word::Identifier(parts));
            }
            current.clear();
        }
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush_ident(&mut current, &mut words);
            cjk.push(c);
            continue;
        }
        if !cjk.is_empty() {
            words.push(Word::Cjk(std::mem::take(&mut cjk)));
        }
        if c.is_alphanumeric() || (is_glue(c) && !current.is_empty()) {
            current.push(c);
        } else {
            flush_ident(&mut current, &mut words);
        }
    }
    flush_ident(&mut current, &mut words);
    if !cjk.is_empty() {
        words.push(Word::Cjk(cjk));
    }
    words
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii_digit() || c.is_numeric() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_lowercase() {
        Class::Lower
    } else {
        Class::Other
    }
}

/// Split one identifier-ish run into lowercased parts:
/// `getHTTPResponse_v2` -> `get`, `http`, `response`, `v`, `2`.
pub fn split_identifier(run: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for chunk in run.split(is_glue).filter(|s| !s.is_empty()) {
        let chars: Vec<char> = chunk.chars().collect();
        let mut start = 0usize;
        for i in 1..chars.len() {
            let (prev, cur) = (class(chars[i - 1]), class(chars[i]));
            let next = chars.get(i + 1).map(|&c| class(c));
            let boundary = match (prev, cur) {
                (Class::Lower, Class::Upper) => true,
                // Acronym followed by a word: `HTTPServer` splits before `S`.
                (Class::Upper, Class::Upper) => next == Some(Class::Lower),
                (Class::Digit, Class::Lower | Class::Upper) => true,
                (Class::Lower | Class::Upper, Class::Digit) => true,
                _ => false,
            };
            if boundary {
                push_part(&chars[start..i], &mut parts);
                start = i;
            }
        }
        push_part(&chars[start..], &mut parts);
    }
    parts
}

fn push_part(chars: &[char], parts: &mut Vec<String>) {
    if chars.is_empty() {
        return;
    }
    let part: String = chars.iter().collect::<String>().to_lowercase();
    if part.len() <= MAX_TOKEN_BYTES {
        parts.push(part);
    }
}

/// CJK runs: overlapping bigrams; a lone character stays a unigram.
fn push_cjk_bigrams(run: &[char], out: &mut Vec<AnalyzedTerm>) {
    if run.len() == 1 {
        let single = run[0].to_string();
        if !is_stopword(&single) {
            out.push(AnalyzedTerm { text: single, compound: false });
        }
        return;
    }
    for pair in run.windows(2) {
        out.push(AnalyzedTerm { text: pair.iter().collect(), compound: false });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        Analyzer::new().term_strings(text)
    }

    #[test]
    fn splits_identifiers() {
        assert_eq!(split_identifier("getHTTPResponse_v2"), vec!["get", "http", "response", "v", "2"]);
        assert_eq!(split_identifier("create-issue"), vec!["create", "issue"]);
        assert_eq!(split_identifier("FinanceTool"), vec!["finance", "tool"]);
        assert_eq!(split_identifier("airqualityforeast"), vec!["airqualityforeast"]);
    }

    #[test]
    fn stems_and_drops_stopwords() {
        assert_eq!(terms("Searching the issues"), vec!["search", "issu"]);
        assert!(terms("the and of").is_empty());
    }

    #[test]
    fn joined_identifier_form() {
        let t = terms("create_issue");
        assert_eq!(t, vec!["creat", "issu", "createissu"]);
    }

    #[test]
    fn cjk_bigrams() {
        assert_eq!(terms("天气预报"), vec!["天气", "气预", "预报"]);
        assert_eq!(terms("云"), vec!["云"]);
        assert!(terms("的").is_empty());
        assert_eq!(terms("查询weather"), vec!["查询", "weather"]);
    }

    #[test]
    fn long_garbage_is_dropped() {
        let long = "a".repeat(500);
        assert!(terms(&long).is_empty());
    }
}
