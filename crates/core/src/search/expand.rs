//! Generic intent expansions: everyday verbs and nouns a caller uses for a
//! capability that tool text often words differently ("find" vs "search").
//! Expansions score at a discount and never outrank a literal match tier.
//! Only general vocabulary belongs here: never vendor or product names.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::analyze::Analyzer;

/// Each row is a group of interchangeable words; any member expands to the others.
const GROUPS: &[&[&str]] = &[
    &["search", "find", "lookup", "query"],
    &["delete", "remove", "erase"],
    &["create", "add", "new", "make"],
    &["update", "edit", "modify", "change"],
    &["get", "fetch", "retrieve", "read"],
    &["list", "enumerate"],
    &["send", "post"],
    &["message", "chat"],
    &["email", "mail"],
    &["weather", "forecast"],
    &["image", "picture", "photo"],
    &["movie", "film"],
    &["song", "music"],
    &["translate", "translation"],
    &["price", "cost"],
    &["schedule", "calendar", "appointment"],
    &["file", "document"],
    &["run", "execute"],
    &["buy", "purchase"],
    &["job", "career", "employment"],
    &["calculate", "compute"],
    &["location", "place"],
    &["trip", "travel"],
];

/// Stemmed term → stemmed related terms.
fn table() -> &'static HashMap<String, Vec<String>> {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut analyzer = Analyzer::new();
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        for group in GROUPS {
            let stems: Vec<String> = group.iter().map(|w| analyzer.stem(w)).collect();
            for stem in &stems {
                let related = table.entry(stem.clone()).or_default();
                for other in &stems {
                    if other != stem && !related.contains(other) {
                        related.push(other.clone());
                    }
                }
            }
        }
        table
    })
}

/// Expansions of one stemmed term (empty when none).
pub fn expansions(stem: &str) -> &'static [String] {
    table().get(stem).map(Vec::as_slice).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_both_ways_on_stems() {
        let mut analyzer = Analyzer::new();
        let find = analyzer.stem("find");
        let search = analyzer.stem("search");
        assert!(expansions(&find).contains(&search));
        assert!(expansions(&search).contains(&find));
        assert!(expansions("zzzz").is_empty());
    }
}
