//! Folding of Latin diacritics and full-width forms (`é`→`e`, `ß`→`ss`, `ø`→`o`, `ı`→`i`,
//! `ａ`→`a`): most keyboards make people type "meteo" for "météo", so both sides of every
//! match (analyzed terms, the name index) compare folded words. The table is tantivy's
//! `AsciiFoldingFilter` (Lucene's ASCIIFoldingFilter); combining marks left after it (the dot
//! that lowercasing `İ` leaves, marks typed as separate characters) are dropped. Scripts
//! without an ASCII reading (Greek, Cyrillic, CJK, ...) are left as they are.

use tantivy::tokenizer::{AsciiFoldingFilter, RawTokenizer, TextAnalyzer, TokenStream};

/// Folds words; holds the filter's buffers, so create one per analyzer, not per word.
pub struct Folder {
    filter: TextAnalyzer,
}

impl Folder {
    pub fn new() -> Folder {
        Folder {
            filter: TextAnalyzer::builder(RawTokenizer::default())
                .filter(AsciiFoldingFilter)
                .build(),
        }
    }

    /// Writes `word` folded into `out` and returns true, or returns false (leaving `out`
    /// unspecified) when folding would not change it. ASCII words return at once.
    pub fn fold_into(&mut self, word: &str, out: &mut String) -> bool {
        if word.is_ascii() {
            return false;
        }
        out.clear();
        let mut stream = self.filter.token_stream(word);
        if stream.advance() {
            out.extend(
                stream
                    .token()
                    .text
                    .chars()
                    .filter(|&c| !is_combining_mark(c)),
            );
        } else {
            out.extend(word.chars().filter(|&c| !is_combining_mark(c)));
        }
        out != word
    }

    /// `word` folded (itself when folding changes nothing).
    pub fn fold(&mut self, word: &str) -> String {
        let mut out = String::new();
        if self.fold_into(word, &mut out) {
            out
        } else {
            word.to_string()
        }
    }
}

impl Default for Folder {
    fn default() -> Self {
        Folder::new()
    }
}

/// Combining diacritical marks (and their supplement and extended blocks).
fn is_combining_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(word: &str) -> String {
        Folder::new().fold(word)
    }

    #[test]
    fn latin_diacritics_and_ligatures_fold_to_ascii() {
        // French, German, Spanish, Nordic, Vietnamese, Turkish (lowercased as the analyzer does).
        assert_eq!(fold("prévisions"), "previsions");
        assert_eq!(fold("météo"), "meteo");
        assert_eq!(fold("œuvre"), "oeuvre");
        assert_eq!(fold("straße"), "strasse");
        assert_eq!(fold("größe"), "grosse");
        assert_eq!(fold("mañana"), "manana");
        assert_eq!(fold("ø"), "o");
        assert_eq!(fold("æble"), "aeble");
        assert_eq!(fold("thời tiết"), "thoi tiet");
        assert_eq!(fold("đà nẵng"), "da nang");
        assert_eq!(fold("ışık"), "isik");
        assert_eq!(fold(&"İstanbul".to_lowercase()), "istanbul");
        // A mark typed as its own character (NFD input).
        assert_eq!(fold("me\u{301}te\u{301}o"), "meteo");
    }

    #[test]
    fn full_width_forms_fold_to_ascii() {
        assert_eq!(fold("ｗｅａｔｈｅｒ"), "weather");
        assert_eq!(fold("１２３"), "123");
    }

    #[test]
    fn ascii_and_other_scripts_are_unchanged() {
        let mut folder = Folder::new();
        let mut out = String::new();
        assert!(!folder.fold_into("weather", &mut out));
        assert!(!folder.fold_into("погода", &mut out));
        assert!(!folder.fold_into("天気", &mut out));
        assert!(!folder.fold_into("καιρός", &mut out));
    }
}
