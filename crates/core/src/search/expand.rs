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

/// Everyday concepts: a specific word implies its domain word (one way:
/// "rain" suggests weather tools; "weather" does not suggest "rain").
/// Common-knowledge categories only, like a thesaurus' broader terms.
const CONCEPTS: &[(&str, &[&str])] = &[
    (
        "weather",
        &[
            "rain",
            "snow",
            "sunny",
            "temperature",
            "humidity",
            "wind",
            "storm",
            "climate",
            "forecast",
        ],
    ),
    (
        "finance",
        &[
            "stock",
            "share",
            "invest",
            "investment",
            "dividend",
            "etf",
            "cryptocurrency",
            "portfolio",
            "trading",
            "bond",
            "market",
            "economy",
            "economic",
        ],
    ),
    (
        "travel",
        &[
            "hotel",
            "flight",
            "vacation",
            "holiday",
            "trip",
            "tourist",
            "destination",
            "itinerary",
            "sightseeing",
            "accommodation",
            "getaway",
        ],
    ),
    (
        "job",
        &[
            "hire",
            "hiring",
            "resume",
            "interview",
            "salary",
            "employer",
            "recruit",
            "vacancy",
            "career",
        ],
    ),
    ("news", &["headline", "breaking", "journalism"]),
    (
        "music",
        &[
            "song", "album", "artist", "band", "playlist", "singer", "concert",
        ],
    ),
    ("movie", &["cinema", "actor", "director", "film"]),
    (
        "food",
        &[
            "cook",
            "cooking",
            "dish",
            "meal",
            "restaurant",
            "cuisine",
            "ingredient",
            "cafe",
            "dinner",
            "lunch",
            "breakfast",
            "diet",
        ],
    ),
    ("recipe", &["cook", "cooking", "dish", "meal", "ingredient"]),
    (
        "house",
        &[
            "apartment",
            "rent",
            "mortgage",
            "property",
            "bedroom",
            "home",
            "realty",
        ],
    ),
    (
        "health",
        &[
            "doctor",
            "symptom",
            "disease",
            "medicine",
            "medication",
            "fitness",
            "exercise",
            "workout",
            "diet",
            "wellness",
        ],
    ),
    (
        "course",
        &[
            "class",
            "tutorial",
            "lesson",
            "learn",
            "learning",
            "study",
            "school",
            "teach",
            "education",
            "skill",
        ],
    ),
    (
        "product",
        &[
            "buy",
            "purchase",
            "shop",
            "shopping",
            "deal",
            "discount",
            "laptop",
            "smartphone",
            "shoes",
            "clothing",
        ],
    ),
    (
        "research",
        &[
            "paper",
            "journal",
            "academic",
            "citation",
            "scholar",
            "scientific",
        ],
    ),
    (
        "math",
        &[
            "equation",
            "arithmetic",
            "formula",
            "solve",
            "calculate",
            "calculation",
            "algebra",
        ],
    ),
    (
        "language",
        &["translate", "translation", "grammar", "vocabulary"],
    ),
    (
        "image",
        &["photo", "picture", "draw", "drawing", "illustration"],
    ),
    (
        "code",
        &[
            "programming",
            "software",
            "developer",
            "debug",
            "repository",
            "script",
        ],
    ),
    (
        "writing",
        &[
            "essay",
            "rewrite",
            "paraphrase",
            "proofread",
            "polish",
            "slogan",
            "copywriting",
        ],
    ),
    (
        "sport",
        &[
            "football",
            "soccer",
            "basketball",
            "baseball",
            "tennis",
            "match",
            "team",
            "league",
        ],
    ),
    (
        "map",
        &[
            "route",
            "directions",
            "navigate",
            "navigation",
            "nearby",
            "distance",
            "street",
        ],
    ),
    ("website", &["seo", "webpage", "domain", "url", "site"]),
    (
        "company",
        &[
            "corporation",
            "corp",
            "business",
            "officer",
            "enterprise",
            "firm",
        ],
    ),
    // Phrasal "look up" / "look for" (the particle is a stopword) is a search.
    ("search", &["look", "seek"]),
    (
        "task",
        &[
            "todo",
            "reminder",
            "remind",
            "productivity",
            "goal",
            "habit",
        ],
    ),
];

/// Stemmed term → stemmed related terms.
fn table() -> &'static HashMap<String, Vec<String>> {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut analyzer = Analyzer::new();
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        let mut link = |from: &str, to: &str| {
            if from != to {
                let related = table.entry(from.to_string()).or_default();
                if !related.iter().any(|r| r == to) {
                    related.push(to.to_string());
                }
            }
        };
        for group in GROUPS {
            let stems: Vec<String> = group.iter().map(|w| analyzer.stem(w)).collect();
            for stem in &stems {
                for other in &stems {
                    link(stem, other);
                }
            }
        }
        if concepts_enabled() {
            for (category, members) in CONCEPTS {
                let category = analyzer.stem(category);
                for member in *members {
                    link(&analyzer.stem(member), &category);
                }
            }
        }
        table
    })
}

/// Concept expansions can be switched off for lever measurements
/// (`TOOL_SEARCH_NO_CONCEPTS=1`, read once; evaluation only).
fn concepts_enabled() -> bool {
    std::env::var_os("TOOL_SEARCH_NO_CONCEPTS").is_none()
}

/// Shortest stem whose trailing "er" is read as an agent-noun suffix.
const MIN_AGENT_NOUN_CHARS: usize = 5;

/// Base forms of an agent noun the stemmer kept whole ("runner", "writer",
/// "reader": Snowball strips "-er" only from longer words like "computer"):
/// the verb stem, with a doubled final consonant undone (runn → run) or a
/// silent "e" restored (writ → write). Stemmed; may include non-words
/// ("writ"), which simply match nothing. Empty for other terms.
pub fn base_forms(stem: &str, analyzer: &mut Analyzer) -> Vec<String> {
    let Some(base) = stem.strip_suffix("er") else {
        return Vec::new();
    };
    if stem.chars().count() < MIN_AGENT_NOUN_CHARS || !base.is_ascii() {
        return Vec::new();
    }
    let bytes = base.as_bytes();
    let last = bytes[bytes.len() - 1];
    let vowel = |b: u8| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y');
    let mut forms = Vec::new();
    if bytes.len() >= 2 && bytes[bytes.len() - 2] == last && !vowel(last) {
        forms.push(analyzer.stem(&base[..base.len() - 1]));
    } else {
        forms.push(analyzer.stem(base));
        if !vowel(last) {
            forms.push(analyzer.stem(&format!("{base}e")));
        }
    }
    forms.retain(|f| f != stem);
    forms.dedup();
    forms
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

    #[test]
    fn looking_something_up_is_a_search() {
        let mut analyzer = Analyzer::new();
        let look = analyzer.stem("look");
        assert!(expansions(&look).contains(&analyzer.stem("search")));
        // One way: a search does not suggest "look".
        assert!(!expansions(&analyzer.stem("search")).contains(&look));
    }

    #[test]
    fn agent_noun_base_forms() {
        let mut analyzer = Analyzer::new();
        assert_eq!(base_forms("runner", &mut analyzer), vec!["run"]);
        assert_eq!(base_forms("writer", &mut analyzer), vec!["writ", "write"]);
        assert_eq!(base_forms("reader", &mut analyzer), vec!["read"]);
        assert!(base_forms("user", &mut analyzer).is_empty());
        assert!(base_forms("search", &mut analyzer).is_empty());
    }
}
