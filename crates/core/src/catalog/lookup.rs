//! Resolving an id or name the model typed: exact id, then exact unique name;
//! otherwise an error with up to three suggestions.

use tool_search_base::text::{bounded_edit_distance, clip};

use super::exact::ExactMatch;
use super::{Catalog, ToolEntry};
use crate::entry::GONE;
use crate::error::{Error, ErrorCode, Result};
use crate::limits::MAX_SELECTOR_CHARS;

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
/// Views with at most this many allowed tools are compared in full; larger
/// ones compare only the candidates the trigram index proposes.
const FULL_SCAN_MAX_TOOLS: usize = 512;
/// Candidates (most shared trigrams first) compared by edit distance.
const MAX_CANDIDATES: usize = 48;
/// Postings walked per lookup, rarest trigrams first: bounds a miss on a
/// large catalog whatever was typed.
const MAX_POSTINGS_WALKED: usize = 40_000;
/// Words of the typed text given to the search fallback.
const MAX_FALLBACK_WORDS: usize = 8;
/// Owner words that say nothing about the tool (`mcp-github`, `server-github`).
const FILLER_OWNER_WORDS: [&str; 3] = ["mcp", "server", "plugin"];

/// Trigram postings over every entry's owner and name, built with the
/// catalog, so a miss looks at a few dozen likely tools instead of all of
/// them. Text is folded first ([`fold`]): lowercase, separators as `_`,
/// padded with start / end marks so short names have trigrams too.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub struct NameIndex {
    /// Distinct trigrams, sorted; `starts[i]..starts[i + 1]` are the
    /// postings of `trigrams[i]`.
    trigrams: Vec<u64>,
    starts: Vec<u32>,
    /// Entry ordinals, ascending within one trigram.
    postings: Vec<u32>,
}

impl NameIndex {
    pub fn build(entries: &[ToolEntry]) -> NameIndex {
        let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(entries.len() * 24);
        for (ordinal, entry) in entries.iter().enumerate() {
            let key = fold(&format!("{} {}", entry.owner, entry.name));
            for_each_trigram(&key, |trigram| pairs.push((trigram, ordinal as u32)));
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut index = NameIndex {
            trigrams: Vec::new(),
            starts: Vec::new(),
            postings: Vec::with_capacity(pairs.len()),
        };
        for (trigram, ordinal) in pairs {
            if index.trigrams.last() != Some(&trigram) {
                index.trigrams.push(trigram);
                index.starts.push(index.postings.len() as u32);
            }
            index.postings.push(ordinal);
        }
        index.starts.push(index.postings.len() as u32);
        index
    }

    /// This index for a new version of the entries: `new_of_old[o]` is old
    /// ordinal `o`'s new ordinal ([`GONE`]: none; order kept), `fresh` the
    /// new ordinals of the other entries. Equal to a build from `entries`.
    pub fn derive(&self, new_of_old: &[u32], entries: &[ToolEntry], fresh: &[u32]) -> NameIndex {
        let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(fresh.len() * 24);
        for &ordinal in fresh {
            let entry = &entries[ordinal as usize];
            let key = fold(&format!("{} {}", entry.owner, entry.name));
            for_each_trigram(&key, |trigram| pairs.push((trigram, ordinal)));
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut index = NameIndex {
            trigrams: Vec::with_capacity(self.trigrams.len()),
            starts: Vec::with_capacity(self.starts.len()),
            postings: Vec::with_capacity(self.postings.len() + pairs.len()),
        };
        let mut added = pairs.into_iter().peekable();
        let mut old = self.trigrams.iter().enumerate().peekable();
        loop {
            let trigram = match (old.peek(), added.peek()) {
                (None, None) => break,
                (Some(&(_, &t)), None) => t,
                (None, Some(&(t, _))) => t,
                (Some(&(_, &a)), Some(&(b, _))) => a.min(b),
            };
            let start = index.postings.len();
            let mut kept: &[u32] = &[];
            if let Some((i, _)) = old.next_if(|&(_, &t)| t == trigram) {
                kept = &self.postings[self.starts[i] as usize..self.starts[i + 1] as usize];
            }
            // Both lists ascend and are disjoint: merge them.
            for ordinal in kept
                .iter()
                .map(|&o| new_of_old[o as usize])
                .filter(|&o| o != GONE)
            {
                while let Some((_, f)) = added.next_if(|&(t, f)| t == trigram && f < ordinal) {
                    index.postings.push(f);
                }
                index.postings.push(ordinal);
            }
            while let Some((_, f)) = added.next_if(|&(t, _)| t == trigram) {
                index.postings.push(f);
            }
            if index.postings.len() > start {
                index.trigrams.push(trigram);
                index.starts.push(start as u32);
            }
        }
        index.starts.push(index.postings.len() as u32);
        index
    }

    fn postings_of(&self, trigram: u64) -> &[u32] {
        match self.trigrams.binary_search(&trigram) {
            Ok(i) => &self.postings[self.starts[i] as usize..self.starts[i + 1] as usize],
            Err(_) => &[],
        }
    }

    /// Up to `limit` ordinals sharing the most trigrams with `folded`
    /// (ties: lower ordinal), with the shared count; `allowed` filters.
    fn candidates(
        &self,
        folded: &str,
        entry_count: usize,
        limit: usize,
        allowed: &dyn Fn(usize) -> bool,
    ) -> Vec<(u32, usize)> {
        let mut lists: Vec<&[u32]> = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        for_each_trigram(folded, |trigram| {
            if !seen.contains(&trigram) {
                seen.push(trigram);
                lists.push(self.postings_of(trigram));
            }
        });
        lists.sort_by_key(|list| list.len());
        let mut shared = vec![0u16; entry_count];
        let mut walked = 0usize;
        for list in lists {
            walked += list.len();
            if walked > MAX_POSTINGS_WALKED {
                break;
            }
            for &ordinal in list {
                shared[ordinal as usize] = shared[ordinal as usize].saturating_add(1);
            }
        }
        let mut found: Vec<(u32, usize)> = shared
            .iter()
            .enumerate()
            .filter(|&(ordinal, &count)| count > 0 && allowed(ordinal))
            .map(|(ordinal, &count)| (u32::from(count), ordinal))
            .collect();
        let by_rank = |a: &(u32, usize), b: &(u32, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        if found.len() > limit {
            found.select_nth_unstable_by(limit, by_rank);
            found.truncate(limit);
        }
        found.sort_by(by_rank);
        found
    }
}

/// Lowercase, every run of non-alphanumerics as one `_`, so `mcp-github`,
/// `mcp:github` and `mcp github` read alike.
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out
}

/// Trigrams of `folded` padded with a start and an end mark.
fn for_each_trigram(folded: &str, mut sink: impl FnMut(u64)) {
    const MARK_START: u64 = 0x11_0000;
    const MARK_END: u64 = 0x11_0001;
    let chars = std::iter::once(MARK_START)
        .chain(folded.chars().map(u64::from))
        .chain(std::iter::once(MARK_END));
    let (mut a, mut b) = (u64::MAX, u64::MAX);
    for c in chars {
        if a != u64::MAX {
            sink((a << 42) | (b << 21) | c);
        }
        (a, b) = (b, c);
    }
}

/// The folded texts a typed selector is compared with: the name, the id, and
/// `<owner words>_<name>` without filler words (`github_create_issue` for
/// `mcp:mcp-github:create_issue`).
fn views(entry: &ToolEntry) -> [String; 3] {
    let owner: Vec<&str> = entry
        .owner
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !FILLER_OWNER_WORDS.iter().any(|f| w.eq_ignore_ascii_case(f)))
        .collect();
    [
        fold(&entry.name),
        fold(&entry.id),
        fold(&format!("{}_{}", owner.join("_"), entry.name)),
    ]
}

impl Catalog {
    /// The ordinal of the allowed tool `id_or_name` names.
    pub fn resolve_ordinal(&self, id_or_name: &str, style: LookupStyle) -> Result<usize> {
        match self.exact_match(id_or_name, |o| self.is_allowed(o)) {
            ExactMatch::One(ordinal) => return Ok(ordinal),
            ExactMatch::None => {}
            ExactMatch::Ambiguous => {
                return Err(Error::new(
                    ErrorCode::AmbiguousTool,
                    format!(
                        "Ambiguous tool name: {}; use an exact tool id.",
                        clip(id_or_name, 120)
                    ),
                ))
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
            format!(
                "Unknown tool id: {}.{did_you_mean} {}",
                clip(id_or_name, 120),
                style.guidance()
            ),
        ))
    }

    /// Up to three allowed ids closest to `typed`: by edit distance to names,
    /// ids and owner + name, then by search rank for words the model used.
    /// Bounded on any catalog: a large one compares only the candidates its
    /// trigram index proposes.
    fn suggestions(&self, typed: &str) -> Vec<String> {
        if typed.trim().is_empty() || typed.chars().count() > MAX_SELECTOR_CHARS {
            return Vec::new();
        }
        let folded = fold(typed);
        let folded_chars = folded.chars().count();
        // Tools of an unavailable owner cannot run now: never suggested.
        let allowed = |o: usize| self.is_searchable(o);
        let candidates: Vec<(u32, usize)> = if self.allowed_count <= FULL_SCAN_MAX_TOOLS {
            self.ordinals()
                .filter(|&(o, _)| allowed(o))
                .map(|(o, _)| (0, o))
                .collect()
        } else {
            self.data
                .names
                .candidates(&folded, self.data.entries.len(), MAX_CANDIDATES, &allowed)
        };
        let mut scored: Vec<(usize, std::cmp::Reverse<u32>, usize)> = Vec::new(); // (distance, shared trigrams, ordinal)
        for (shared, ordinal) in candidates {
            let entry = &self.data.entries[ordinal];
            let views = views(entry);
            let [name, ..] = &views;
            let lengths = views.each_ref().map(|v| v.chars().count());
            let longest = lengths.iter().copied().max().unwrap_or(0);
            // Small, fixed ceiling: a far miss is no suggestion.
            let budget = (folded_chars.max(longest) / 2 + 1).min(MAX_SUGGESTION_DISTANCE);
            // Lengths further apart than the budget cannot be within it: skip
            // the comparison (a long random selector then costs nothing here).
            let distance = views
                .iter()
                .zip(lengths)
                .filter(|&(_, len)| len.abs_diff(folded_chars) <= budget)
                .filter_map(|(view, _)| bounded_edit_distance(&folded, view, budget))
                .min();
            let contains = name.chars().count() >= 3 && folded.contains(name.as_str());
            if let Some(d) = distance.or(contains.then_some(budget)) {
                scored.push((d, std::cmp::Reverse(shared), ordinal));
            }
        }
        scored.sort();
        let mut out: Vec<String> = scored
            .iter()
            .take(MAX_SUGGESTIONS)
            .map(|&(_, _, o)| self.data.entries[o].id.clone())
            .collect();
        if out.len() < MAX_SUGGESTIONS {
            let words: Vec<&str> = typed
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .take(MAX_FALLBACK_WORDS)
                .collect();
            for hit in self
                .data
                .index
                .search(&words.join(" "), MAX_SUGGESTIONS, &allowed)
            {
                let id = &self.data.entries[hit.ordinal].id;
                if out.len() < MAX_SUGGESTIONS && !out.contains(id) {
                    out.push(id.clone());
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::catalog::exact::ExactMatch;
    use crate::catalog::{Catalog, CatalogOptions, LookupStyle};

    fn suggested(catalog: &Catalog, typed: &str) -> String {
        let err = catalog.resolve(typed, LookupStyle::Structured).unwrap_err();
        let start = err
            .message
            .find("Did you mean: ")
            .map(|i| i + "Did you mean: ".len())
            .unwrap_or(0);
        err.message[start..]
            .split('?')
            .next()
            .unwrap_or_default()
            .to_string()
    }

    /// Real typos on the 13k-tool dev catalog, where only the trigram
    /// index's candidates are compared.
    #[test]
    fn typos_find_the_tool_in_a_large_catalog() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../bench/data/retrieval-dev/catalog.jsonl");
        let text = std::fs::read_to_string(path).expect("dev catalog");
        let catalog = Catalog::from_json_text(&text, &CatalogOptions::default()).unwrap();
        assert!(catalog.size() > 12_000);
        let first = |typed: &str| {
            suggested(&catalog, typed)
                .split(", ")
                .next()
                .unwrap_or_default()
                .to_string()
        };
        let github = [
            "mcp:mcp-github:create_issue",
            "mcp:server-github:create_issue",
        ];
        for typed in [
            "github_create_isue",
            "mcp:github:create_isue",
            "mcp-github:create_issue_",
            "gihub_create_issue",
        ] {
            assert!(
                github.contains(&first(typed).as_str()),
                "{typed}: {}",
                suggested(&catalog, typed)
            );
        }
        assert_eq!(
            first("mcp:mcp-github:create_isue"),
            "mcp:mcp-github:create_issue"
        );
        assert!(suggested(&catalog, "create_isue").contains(":create_issue"));
        // A restricted view suggests only what it allows.
        let view = catalog.restrict(&[
            "mcp:gitlab-mcp-server:create_issue",
            "mcp:jira-mcp-server:create_issue",
        ]);
        let only = suggested(&view, "github_create_isue");
        assert!(
            only.split(", ")
                .all(|id| id.ends_with("-mcp-server:create_issue")),
            "{only}"
        );
        // Hostile selectors: no panic, bounded, at most three suggestions.
        for typed in [
            "x",
            "::",
            &"ab_".repeat(100),
            &"é".repeat(300),
            &"q".repeat(301),
        ] {
            assert!(suggested(&catalog, typed).split(", ").count() <= 3);
        }
    }

    /// One exact rule for tool calls (allowed tools) and prompt reading (all).
    #[test]
    fn exact_match_is_the_id_then_the_only_name() {
        let text = [
            r#"{"name":"read","owner":"fs"}"#,
            r#"{"name":"read","owner":"docs"}"#,
            r#"{"name":"write"}"#,
        ]
        .join("\n");
        let catalog = Catalog::from_json_text(&text, &CatalogOptions::default()).unwrap();
        let data = catalog.data();
        let id = |o: usize| data.entries[o].id.as_str();
        let all = |_: usize| true;
        assert_eq!(
            catalog.exact_match("openclaw:fs:read", all).one().map(id),
            Some("openclaw:fs:read")
        );
        assert_eq!(catalog.exact_match("read", all), ExactMatch::Ambiguous);
        assert_eq!(catalog.exact_match("Write", all), ExactMatch::None);
        assert_eq!(
            catalog.exact_match("write", all).one().map(id),
            Some("openclaw:core:write")
        );
        // Tools the caller refuses do not count, by id or by name.
        let fs = data.ordinal_of_id("openclaw:fs:read").unwrap();
        let not_fs = |o: usize| o != fs;
        assert_eq!(
            catalog.exact_match("read", not_fs).one().map(id),
            Some("openclaw:docs:read")
        );
        assert_eq!(
            catalog.exact_match("openclaw:fs:read", not_fs),
            ExactMatch::None
        );
        let view = catalog.restrict(&["openclaw:docs:read", "openclaw:core:write"]);
        assert_eq!(
            view.resolve("read", LookupStyle::Structured).unwrap().id,
            "openclaw:docs:read"
        );
    }
}
