//! Resolving an id or name the model typed: exact id, then exact unique name;
//! otherwise an error with up to three suggestions.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};
use tool_search_base::text::{bounded_edit_distance, clip};

use super::exact::ExactMatch;
use super::{Catalog, ToolEntry};
use crate::entry::GONE;
use crate::error::{Error, ErrorCode, Result};
use crate::limits::MAX_SELECTOR_CHARS;
use crate::search::Folder;

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
///
/// A live catalog's versions share one base (the postings of the version it
/// was built for, by that version's ordinals) and each holds only what
/// changed since: where the base's entries are now, which of their postings
/// are gone, and the postings of the entries added since. Once the changes
/// grow to a quarter of the base, a version builds a new base.
pub struct NameIndex {
    base: Arc<Trigrams>,
    /// This version's ordinal of each base ordinal ([`GONE`]: removed).
    new_of_base: Vec<u32>,
    /// Per trigram, how many of its base postings are gone, so a list's
    /// length is its live count (what a full build's list would hold).
    gone: HashMap<u64, u32>,
    gone_entries: usize,
    /// Entries added since the base (this version's ordinals, ascending), and
    /// their postings.
    added: Vec<u32>,
    delta: Trigrams,
}

/// Distinct trigrams, sorted; `starts[i]..starts[i + 1]` are the postings of
/// `trigrams[i]`: entry ordinals, ascending within one trigram.
#[derive(Default)]
struct Trigrams {
    trigrams: Vec<u64>,
    starts: Vec<u32>,
    postings: Vec<u32>,
}

impl Trigrams {
    fn build<'a>(entries: impl Iterator<Item = (u32, &'a ToolEntry)>) -> Trigrams {
        let mut pairs: Vec<(u64, u32)> = Vec::new();
        for (ordinal, entry) in entries {
            for_each_trigram(&name_key(entry), |trigram| pairs.push((trigram, ordinal)));
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut index = Trigrams {
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

    fn postings_of(&self, trigram: u64) -> &[u32] {
        match self.trigrams.binary_search(&trigram) {
            Ok(i) => &self.postings[self.starts[i] as usize..self.starts[i + 1] as usize],
            Err(_) => &[],
        }
    }
}

/// The folded text an entry is indexed by.
fn name_key(entry: &ToolEntry) -> String {
    fold(&format!("{} {}", entry.owner, entry.name))
}

impl NameIndex {
    pub fn build(entries: &[ToolEntry]) -> NameIndex {
        let ordinals = 0..entries.len() as u32;
        NameIndex {
            base: Arc::new(Trigrams::build(ordinals.clone().zip(entries))),
            new_of_base: ordinals.collect(),
            gone: HashMap::new(),
            gone_entries: 0,
            added: Vec::new(),
            delta: Trigrams::default(),
        }
    }

    /// This index for a new version of the entries (`old`: the previous
    /// version's): `new_of_old[o]` is old ordinal `o`'s new ordinal ([`GONE`]:
    /// none; order kept), `fresh` the new ordinals of the other entries.
    /// Answers as a build from `entries` would.
    pub fn derive(
        &self,
        old: &[ToolEntry],
        new_of_old: &[u32],
        entries: &[ToolEntry],
        fresh: &[u32],
    ) -> NameIndex {
        let moved = |o: u32| match new_of_old.get(o as usize) {
            Some(&n) => n,
            None => GONE,
        };
        // One pass over the base: where each entry is now, and which left.
        let mut gone_entries = self.gone_entries;
        let mut newly_gone: Vec<u32> = Vec::new();
        let new_of_base: Vec<u32> = self
            .new_of_base
            .iter()
            .map(|&before| {
                if before == GONE {
                    return GONE;
                }
                let after = moved(before);
                if after == GONE {
                    gone_entries += 1;
                    newly_gone.push(before);
                }
                after
            })
            .collect();
        let mut added: Vec<u32> = self
            .added
            .iter()
            .map(|&o| moved(o))
            .filter(|&o| o != GONE)
            .chain(fresh.iter().copied())
            .collect();
        added.sort_unstable();
        // A quarter of the base changed: a new base (searches stay as fast
        // as on a full build, and the delta stays small).
        let base_len = self.new_of_base.len();
        if (added.len() + gone_entries) * 4 > base_len
            || newly_gone.iter().any(|&o| o as usize >= old.len())
        {
            return NameIndex::build(entries);
        }
        let mut gone = self.gone.clone();
        let mut trigrams: Vec<u64> = Vec::new();
        for &o in &newly_gone {
            trigrams.clear();
            for_each_trigram(&name_key(&old[o as usize]), |t| trigrams.push(t));
            trigrams.sort_unstable();
            trigrams.dedup();
            for &t in &trigrams {
                *gone.entry(t).or_default() += 1;
            }
        }
        let delta = Trigrams::build(added.iter().map(|&o| (o, &entries[o as usize])));
        NameIndex {
            base: Arc::clone(&self.base),
            new_of_base,
            gone,
            gone_entries,
            added,
            delta,
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
        // Per distinct trigram: base postings, added postings, live count.
        let mut lists: Vec<(&[u32], &[u32], usize)> = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        for_each_trigram(folded, |trigram| {
            if !seen.contains(&trigram) {
                seen.push(trigram);
                let base = self.base.postings_of(trigram);
                let delta = self.delta.postings_of(trigram);
                let gone = self.gone.get(&trigram).copied().unwrap_or(0) as usize;
                lists.push((base, delta, (base.len() + delta.len()).saturating_sub(gone)));
            }
        });
        lists.sort_by_key(|&(_, _, live)| live);
        let mut shared = vec![0u16; entry_count];
        let mut count = |ordinal: u32| {
            if let Some(n) = shared.get_mut(ordinal as usize) {
                *n = n.saturating_add(1);
            }
        };
        let mut walked = 0usize;
        for (base, delta, live) in lists {
            walked += live;
            if walked > MAX_POSTINGS_WALKED {
                break;
            }
            for &b in base {
                let ordinal = self.new_of_base.get(b as usize).copied().unwrap_or(GONE);
                if ordinal != GONE {
                    count(ordinal);
                }
            }
            delta.iter().for_each(|&o| count(o));
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
    if out.is_ascii() {
        return out;
    }
    // Accents and full-width forms fold as in search (`météo` finds `meteo_now`).
    thread_local! {
        static FOLDER: std::cell::RefCell<Folder> = std::cell::RefCell::new(Folder::new());
    }
    FOLDER.with(|folder| match folder.try_borrow_mut() {
        Ok(mut folder) => folder.fold(&out),
        Err(_) => out,
    })
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
    /// The allowed entry `id_or_name` names (see [`Catalog::resolve_ordinal`]).
    pub fn resolve(&self, id_or_name: &str, style: LookupStyle) -> Result<&ToolEntry> {
        self.resolve_ordinal(id_or_name, style)
            .map(|o| &self.data.entries[o])
    }

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
                .names()
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

    use super::{NameIndex, GONE};

    impl NameIndex {
        /// Every trigram's live postings in this version's ordinals (what two
        /// indexes are compared by).
        fn live_postings(&self) -> std::collections::BTreeMap<u64, Vec<u32>> {
            let mut out: std::collections::BTreeMap<u64, Vec<u32>> = Default::default();
            for (i, &trigram) in self.base.trigrams.iter().enumerate() {
                let list = &self.base.postings
                    [self.base.starts[i] as usize..self.base.starts[i + 1] as usize];
                let live = list
                    .iter()
                    .map(|&b| self.new_of_base[b as usize])
                    .filter(|&o| o != GONE);
                out.entry(trigram).or_default().extend(live);
            }
            for (i, &trigram) in self.delta.trigrams.iter().enumerate() {
                let list = &self.delta.postings
                    [self.delta.starts[i] as usize..self.delta.starts[i + 1] as usize];
                out.entry(trigram).or_default().extend(list);
            }
            out.retain(|_, list| {
                list.sort_unstable();
                !list.is_empty()
            });
            out
        }
    }

    /// Equal when every trigram has the same live postings and list lengths
    /// (however the two are split into base and changes).
    impl PartialEq for NameIndex {
        fn eq(&self, other: &NameIndex) -> bool {
            let lengths = |index: &NameIndex| {
                index
                    .live_postings()
                    .keys()
                    .map(|&t| {
                        let base =
                            index.base.postings_of(t).len() + index.delta.postings_of(t).len();
                        base - index.gone.get(&t).copied().unwrap_or(0) as usize
                    })
                    .collect::<Vec<_>>()
            };
            self.live_postings() == other.live_postings() && lengths(self) == lengths(other)
        }
    }

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

    /// A name typed without its accents (or with them, for a tool that has none) is suggested.
    #[test]
    fn suggestions_fold_accents() {
        let text = [
            r#"{"name":"prévisions_météo_détaillées","owner":"meteo"}"#,
            r#"{"name":"dự_báo_thời_tiết","owner":"thoi_tiet"}"#,
            r#"{"name":"resume_playback","owner":"music"}"#,
            // Closer than the accented names to the typed ones, were accents not folded.
            r#"{"name":"previsions_metro_details","owner":"metro"}"#,
            r#"{"name":"du_bao_thoi_tie","owner":"thoi_tiet"}"#,
            r#"{"name":"resume_playbook","owner":"music"}"#,
        ]
        .join("\n");
        let catalog = Catalog::from_json_text(&text, &CatalogOptions::default()).unwrap();
        let first = |typed: &str| {
            suggested(&catalog, typed)
                .split(", ")
                .next()
                .unwrap_or_default()
                .to_string()
        };
        assert!(first("previsions_meteo_detaillees").ends_with("prévisions_météo_détaillées"));
        assert!(first("du_bao_thoi_tiet").ends_with("dự_báo_thời_tiết"));
        assert!(first("résumé_playbäck").ends_with("resume_playback"));
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

    /// A derived index shares its base, proposes what a full build of the same
    /// entries proposes, and counts list lengths (the walk's bound) alike.
    #[test]
    fn a_derived_name_index_answers_as_a_full_build() {
        use super::{fold, NameIndex, GONE};
        use crate::entry::{EntryFields, Source, ToolEntry};
        let tool = |owner: &str, name: String| {
            ToolEntry::from(EntryFields {
                id: format!("mcp:{owner}:{name}"),
                source: Source::Mcp,
                owner: owner.into(),
                name,
                label: None,
                description: String::new(),
                input_schema: None,
                output_schema: None,
                mcp: None,
            })
        };
        let sorted = |mut v: Vec<ToolEntry>| {
            v.sort_by(|a, b| a.id.cmp(&b.id));
            v
        };
        // Many tools share "get_"; one server's are replaced, another's added.
        let old = sorted(
            (0..3000)
                .map(|i| {
                    let owner = if i % 30 == 1 {
                        "beta"
                    } else {
                        ["alpha", "gamma"][i % 2]
                    };
                    tool(owner, format!("get_item_{i}"))
                })
                .collect(),
        );
        let kept: Vec<ToolEntry> = old.iter().filter(|e| e.owner != "beta").cloned().collect();
        let added: Vec<ToolEntry> = (0..40)
            .map(|i| tool("beta", format!("get_record_{i}")))
            .chain((0..20).map(|i| tool("delta", format!("fetch_item_{i}"))))
            .collect();
        let new = sorted(kept.iter().cloned().chain(added.iter().cloned()).collect());
        let new_of_old: Vec<u32> = old
            .iter()
            .map(
                |e| match new.iter().position(|n| n.id == e.id && e.owner != "beta") {
                    Some(at) => at as u32,
                    None => GONE,
                },
            )
            .collect();
        let fresh: Vec<u32> = (0..new.len() as u32)
            .filter(|&o| !new_of_old.contains(&o))
            .collect();
        let base = NameIndex::build(&old);
        let derived = base.derive(&old, &new_of_old, &new, &fresh);
        let full = NameIndex::build(&new);
        assert!(std::sync::Arc::ptr_eq(&derived.base, &base.base), "rebuilt");
        assert!(derived == full);
        for typed in [
            "get_itme_7",
            "beta_get_recrod_3",
            "fetch_itm",
            "get",
            "delta fetch",
        ] {
            let candidates =
                |index: &NameIndex| index.candidates(&fold(typed), new.len(), 48, &|o| o % 5 != 0);
            assert_eq!(candidates(&derived), candidates(&full), "{typed}");
        }
        // A second update on top of the first keeps sharing the same base.
        let again = derived.derive(&new, &(0..new.len() as u32).collect::<Vec<_>>(), &new, &[]);
        assert!(std::sync::Arc::ptr_eq(&again.base, &base.base));
        assert!(again == full);
    }
}
