//! Prerequisite tools: a hit that requires an identifier (`person_id`, `geoId`,
//! `user_id`) is of no use without the tool of the same server that finds it
//! (`search-person`, `find_user_id_by_email`). Requests name what they want
//! ("the movies Sofia Coppola directed"), not the look-up before it, so the
//! ranking alone leaves that tool far down. Each of the top
//! `RankingParams::prerequisite_depth` hits (default [`PREREQUISITE_DEPTH`])
//! brings its providers to just after itself.
//!
//! A provider of parameter `<entity words> id` is a tool of the same source
//! and owner that does not itself require the parameter, whose name holds
//! every entity word (or its plural), and whose name also says it yields an
//! id (`id`, `ids`) or looks things up (`search`, `find`, `list`, ...).
//! A server of more than [`MAX_SERVER_TOOLS`] tools is not one API (the dev
//! set's 4,076-tool "seal" owner gathers every domain): shared name words there
//! are coincidence ("book" in a library and a bookshop), so it gets no pairs.
//! A request that states an identifier itself ("the book with ID 42", "order
//! #W2378156") needs no look-up, and gets none.
//! Judged on the dev set per source and leave-one-source-out
//! (bench/QUALITY.md, "Prerequisite tools", which also says why it is kept
//! despite a 0.05-point MetaTool loss).

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use super::ScoredHit;
use crate::entry::{ToolEntry, GONE};

/// Hits this near the top bring their prerequisites (the default of
/// `RankingParams::prerequisite_depth`).
pub const PREREQUISITE_DEPTH: usize = 10;
/// Providers placed per needed identifier: the strongest, and of those the
/// ones the ranking puts first (ties by catalog order).
pub const PROVIDERS_PER_NEED: usize = 2;
/// Servers larger than this get no prerequisite pairs (see above).
pub const MAX_SERVER_TOOLS: usize = 1000;
/// Bounds on what one untrusted schema can make the catalog hold.
const MAX_REQUIRED_SCANNED: usize = 64;
const MAX_NEEDS_PER_TOOL: usize = 8;
const MAX_PROVIDERS_KEPT: usize = 16;
const MAX_NAME_WORDS: usize = 16;

const LOOKUP_WORDS: [&str; 6] = ["search", "find", "list", "lookup", "query", "resolve"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Provider {
    /// Offset in the server's run (in a table), or ordinal (once placed).
    ordinal: u32,
    /// 2 when the name says it yields an id, plus 1 when it says it looks up.
    strength: u8,
}

/// The providers of each tool's identifier parameters, per server. Entries
/// come in catalog order, where a server's tools are one run (ids start with
/// `<source>:<owner>:`); pairs never cross a server, so a server's table is
/// kept by offsets in its run and shared by every catalog version in which
/// the server did not change.
#[derive(Debug, Default, PartialEq)]
pub struct Prerequisites {
    /// Servers with at least one pair, by the first ordinal of their run.
    servers: Vec<ServerRun>,
}

#[derive(Debug, PartialEq)]
struct ServerRun {
    start: u32,
    pairs: Arc<ServerPairs>,
}

/// One tool's providers, one list per identifier it needs.
type NeedLists = Box<[Box<[Provider]>]>;

/// One server's pairs, by offset in its run.
#[derive(Debug, PartialEq)]
struct ServerPairs {
    /// Tools in the run.
    len: u32,
    /// Per needing tool (ascending offset; most tools need nothing), one list
    /// per needed identifier: strongest first, equal strength in catalog order.
    needs: Box<[(u32, NeedLists)]>,
}

impl Prerequisites {
    pub fn build(entries: &[ToolEntry]) -> Prerequisites {
        let mut servers = Vec::new();
        let mut start = 0;
        while start < entries.len() {
            let end = run_end(entries, start, usize::MAX);
            if let Some(pairs) = pair(&entries[start..end]) {
                servers.push(ServerRun {
                    start: start as u32,
                    pairs,
                });
            }
            start = end;
        }
        Prerequisites { servers }
    }

    /// The table of a derived catalog version, equal to `build(entries)`: a
    /// server none of whose tools changed keeps its pairs (shared; its run
    /// found through `new_of_old`, each old ordinal's new one or [`GONE`]),
    /// and only the servers holding a `fresh` ordinal (an entry made or
    /// replaced for this version) are paired again. A live catalog's update
    /// then costs in proportion to the server that changed.
    pub fn derive(
        &self,
        entries: &[ToolEntry],
        new_of_old: &[u32],
        fresh: &[u32],
    ) -> Prerequisites {
        let mut fresh: Vec<u32> = fresh.to_vec();
        fresh.sort_unstable();
        // The runs of the servers that changed: [start, end) in this version.
        let mut changed: Vec<(usize, usize)> = Vec::new();
        for &ordinal in &fresh {
            let ordinal = ordinal as usize;
            if ordinal >= entries.len() || changed.last().is_some_and(|&(_, end)| ordinal < end) {
                continue;
            }
            changed.push((
                run_start(entries, ordinal),
                run_end(entries, ordinal, usize::MAX),
            ));
        }
        let in_changed = |ordinal: usize| {
            let at = changed.partition_point(|&(start, _)| start <= ordinal);
            at > 0 && ordinal < changed[at - 1].1
        };
        let mut servers: Vec<ServerRun> = Vec::with_capacity(self.servers.len() + changed.len());
        for run in &self.servers {
            let Some(start) = new_of_old
                .get(run.start as usize)
                .copied()
                .filter(|&n| n != GONE)
            else {
                continue; // the server's first tool is gone: it changed (or left)
            };
            let start = start as usize;
            let last = run.start as usize + run.pairs.len as usize - 1;
            // Unchanged: every tool kept, one run as before (anything else was re-paired).
            let kept =
                new_of_old.get(last).copied() == Some((start + run.pairs.len as usize - 1) as u32);
            if kept && !in_changed(start) {
                servers.push(ServerRun {
                    start: start as u32,
                    pairs: Arc::clone(&run.pairs),
                });
            }
        }
        for &(start, end) in &changed {
            if let Some(pairs) = pair(&entries[start..end]) {
                servers.push(ServerRun {
                    start: start as u32,
                    pairs,
                });
            }
        }
        servers.sort_unstable_by_key(|run| run.start);
        Prerequisites { servers }
    }

    /// The run start and the needs (providers by offset in the run) of the
    /// tool at `ordinal`, if it needs any.
    fn needs_of(&self, ordinal: usize) -> Option<(usize, &[Box<[Provider]>])> {
        let at = self
            .servers
            .partition_point(|run| run.start as usize <= ordinal);
        let run = self.servers.get(at.checked_sub(1)?)?;
        let offset = u32::try_from(ordinal - run.start as usize).ok()?;
        let needs = &run.pairs.needs;
        let found = needs.binary_search_by_key(&offset, |(o, _)| *o).ok()?;
        Some((run.start as usize, &needs[found].1))
    }

    /// How many tools have a provider for some identifier they require.
    pub fn needing_tools(&self) -> usize {
        self.servers.iter().map(|run| run.pairs.needs.len()).sum()
    }

    /// `ranked` (best first; the hits for `query`) with each of its first
    /// `depth` hits followed by the providers of the identifiers it requires,
    /// at most `limit` hits; unchanged when the query states an identifier.
    /// Only `allowed` providers are placed. A provider the ranking already
    /// holds keeps its own score and marks; one from outside it takes those of
    /// the hit that needs it. Either way its `needed_by` names that hit.
    pub fn promote(
        &self,
        query: &str,
        ranked: &[ScoredHit],
        allowed: &dyn Fn(usize) -> bool,
        limit: usize,
        depth: usize,
    ) -> Vec<ScoredHit> {
        let needy = |h: &ScoredHit| self.needs_of(h.ordinal).is_some();
        if self.servers.is_empty()
            || !ranked.iter().take(depth).any(needy)
            || states_an_identifier(query)
        {
            return ranked.iter().take(limit).copied().collect();
        }
        let rank_of: HashMap<usize, usize> = ranked
            .iter()
            .enumerate()
            .map(|(r, h)| (h.ordinal, r))
            .collect();
        let mut out: Vec<ScoredHit> = Vec::with_capacity(limit.min(ranked.len() + 4));
        let mut placed: Vec<usize> = Vec::new();
        for (r, hit) in ranked.iter().enumerate() {
            if out.len() >= limit {
                break;
            }
            if placed.contains(&hit.ordinal) {
                continue;
            }
            out.push(*hit);
            placed.push(hit.ordinal);
            if r >= depth {
                continue;
            }
            let Some((start, lists)) = self.needs_of(hit.ordinal) else {
                continue;
            };
            for providers in lists.iter() {
                let usable: Vec<Provider> = providers
                    .iter()
                    .map(|p| Provider {
                        ordinal: start as u32 + p.ordinal,
                        ..*p
                    })
                    .filter(|p| allowed(p.ordinal as usize))
                    .collect();
                let Some(strongest) = usable.first().map(|p| p.strength) else {
                    continue;
                };
                let mut best: Vec<Provider> = usable
                    .into_iter()
                    .filter(|p| p.strength == strongest)
                    .collect();
                best.sort_by_key(|p| {
                    (
                        rank_of
                            .get(&(p.ordinal as usize))
                            .copied()
                            .unwrap_or(usize::MAX),
                        p.ordinal,
                    )
                });
                for provider in best.into_iter().take(PROVIDERS_PER_NEED) {
                    let ordinal = provider.ordinal as usize;
                    if placed.contains(&ordinal) {
                        continue;
                    }
                    let needed_by = Some(hit.ordinal as u32);
                    let scored = match rank_of.get(&ordinal) {
                        Some(&at) => ScoredHit {
                            needed_by,
                            ..ranked[at]
                        },
                        None => ScoredHit {
                            ordinal,
                            needed_by,
                            ..*hit
                        },
                    };
                    out.push(scored);
                    placed.push(ordinal);
                }
            }
        }
        out.truncate(limit);
        out
    }
}

/// The end of the run of `entries[at]`'s server (the first ordinal after it),
/// looking at most `limit` entries past `at`.
fn run_end(entries: &[ToolEntry], at: usize, limit: usize) -> usize {
    let same = |e: &ToolEntry| e.source == entries[at].source && e.owner == entries[at].owner;
    let rest = &entries[at..];
    at + rest.iter().take(limit).take_while(|e| same(e)).count()
}

/// The first ordinal of the run of `entries[at]`'s server.
fn run_start(entries: &[ToolEntry], at: usize) -> usize {
    let same = |e: &ToolEntry| e.source == entries[at].source && e.owner == entries[at].owner;
    at - entries[..at].iter().rev().take_while(|e| same(e)).count()
}

/// The pairs of one server's tools (`run`: all of them, in catalog order),
/// by offset in the run; `None` when there are none.
fn pair(run: &[ToolEntry]) -> Option<Arc<ServerPairs>> {
    if run.len() > MAX_SERVER_TOOLS {
        return None;
    }
    // The tools that require an identifier (few): only their servers' names are split.
    // (offset, [(required id parameter, its words before "id")]).
    type Needs<'a> = Vec<(usize, Vec<(&'a str, Vec<String>)>)>;
    let mut needing: Needs = Vec::new();
    for (offset, entry) in run.iter().enumerate() {
        let params: Vec<(&str, Vec<String>)> = required_params(entry)
            .into_iter()
            .filter(|p| ends_with_id(p))
            .filter_map(|p| {
                let mut w = words(p, MAX_NAME_WORDS);
                let last = w.pop()?;
                (!w.is_empty() && (last == "id" || last == "ids")).then_some((p, w))
            })
            .take(MAX_NEEDS_PER_TOOL)
            .collect();
        if !params.is_empty() {
            needing.push((offset, params));
        }
    }
    if needing.is_empty() {
        return None;
    }
    let names: Vec<Vec<String>> = run.iter().map(|e| words(&e.name, MAX_NAME_WORDS)).collect();
    // Tools by name word: a need's candidates are those named with its entity.
    let mut named: HashMap<&str, Vec<u32>> = HashMap::new();
    for (offset, words) in names.iter().enumerate() {
        for word in words {
            let list = named.entry(word.as_str()).or_default();
            if list.last() != Some(&(offset as u32)) {
                list.push(offset as u32);
            }
        }
    }
    let requires =
        |candidate: usize, param: &str| required_params(&run[candidate]).contains(&param);
    let mut needs = Vec::new();
    for (offset, params) in needing {
        let mut lists: Vec<Box<[Provider]>> = Vec::new();
        for (param, entity) in &params {
            let param = *param;
            let has = |candidate: usize, word: &str| {
                names[candidate].iter().any(|w| {
                    w == word
                        || (w.len() == word.len() + 1 && w.starts_with(word) && w.ends_with('s'))
                })
            };
            let plural = format!("{}s", entity[0]);
            let mut candidates: Vec<u32> = [entity[0].as_str(), plural.as_str()]
                .iter()
                .filter_map(|w| named.get(*w))
                .flatten()
                .copied()
                .collect();
            candidates.sort_unstable();
            candidates.dedup();
            let mut providers: Vec<Provider> = candidates
                .into_iter()
                .filter(|&c| c as usize != offset && !requires(c as usize, param))
                .filter(|&c| entity.iter().all(|w| has(c as usize, w)))
                .filter_map(|c| {
                    let name = &names[c as usize];
                    let yields_id = name.iter().any(|w| w == "id" || w == "ids");
                    let looks_up = name.iter().any(|w| LOOKUP_WORDS.contains(&w.as_str()));
                    let strength = 2 * yields_id as u8 + looks_up as u8;
                    (strength > 0).then_some(Provider {
                        ordinal: c,
                        strength,
                    })
                })
                .collect();
            providers.sort_by(|a, b| b.strength.cmp(&a.strength).then(a.ordinal.cmp(&b.ordinal)));
            providers.truncate(MAX_PROVIDERS_KEPT);
            if !providers.is_empty() {
                lists.push(providers.into_boxed_slice());
            }
        }
        if !lists.is_empty() {
            needs.push((offset as u32, lists.into_boxed_slice()));
        }
    }
    (!needs.is_empty()).then(|| {
        Arc::new(ServerPairs {
            len: run.len() as u32,
            needs: needs.into_boxed_slice(),
        })
    })
}

/// Whether a request gives an identifier itself: the word `id` or `ids`
/// (`book with ID 42`; not `user_id`), or a `#` code with a digit (`#W2378156`).
fn states_an_identifier(query: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let says_id = query
        .split(|c: char| !word(c))
        .any(|w| w.eq_ignore_ascii_case("id") || w.eq_ignore_ascii_case("ids"));
    says_id
        || query.split('#').skip(1).any(|after| {
            after
                .chars()
                .take_while(|&c| word(c))
                .any(|c| c.is_ascii_digit())
        })
}

/// Whether a parameter name ends in `id` or `ids`, in any case (a cheap test before splitting it).
fn ends_with_id(param: &str) -> bool {
    let bytes = param.as_bytes();
    let tail = |suffix: &[u8]| {
        bytes.len() >= suffix.len()
            && bytes[bytes.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    tail(b"id") || tail(b"ids")
}

/// The names of the required parameters in an input schema (strings only).
fn required_params(entry: &ToolEntry) -> Vec<&str> {
    let Some(schema) = entry.input_schema.as_deref() else {
        return Vec::new();
    };
    match schema.get("required") {
        Some(serde_json::Value::Array(names)) => names
            .iter()
            .take(MAX_REQUIRED_SCANNED)
            .filter_map(|n| n.as_str())
            .collect(),
        _ => Vec::new(),
    }
}

/// Lower-case words of an identifier or phrase: split at anything but a letter
/// or digit, and at case changes (`originSkyId` → origin, sky, id;
/// `HTTPServer` → http, server). At most `max` words.
fn words(text: &str, max: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().take(256).collect();
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let boundary = c.is_uppercase()
            && match prev {
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) if p.is_uppercase() => next.is_some_and(|n| n.is_lowercase()),
                _ => false,
            };
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.truncate(max);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{EntryFields, Source};
    use serde_json::json;
    use std::sync::Arc;

    fn tool(owner: &str, name: &str, required: &[&str]) -> ToolEntry {
        ToolEntry::from(EntryFields {
            id: format!("mcp:{owner}:{name}"),
            source: Source::Mcp,
            owner: owner.into(),
            name: name.into(),
            label: None,
            description: String::new(),
            input_schema: Some(Arc::new(json!({ "type": "object", "required": required }))),
            output_schema: None,
            mcp: None,
        })
    }

    fn hits(ordinals: &[usize]) -> Vec<ScoredHit> {
        ordinals
            .iter()
            .map(|&o| ScoredHit {
                ordinal: o,
                score: 10.0 - o as f32,
                strength: 0.5,
                weak: false,
                needed_by: None,
            })
            .collect()
    }

    fn order(out: &[ScoredHit]) -> Vec<usize> {
        out.iter().map(|h| h.ordinal).collect()
    }

    #[test]
    fn a_request_that_states_the_identifier_needs_no_look_up() {
        assert!(states_an_identifier("Remove the book with ID 42"));
        assert!(states_an_identifier("ids: 3, 4"));
        assert!(states_an_identifier("my order #W2378156 arrived"));
        assert!(!states_an_identifier("movies by Sofia Coppola"));
        assert!(!states_an_identifier("what is a user_id? idle ideas"));
        assert!(!states_an_identifier("issue #abc, tag #"));
        let entries = vec![
            tool("s", "get_order", &["order_id"]),
            tool("s", "list_orders", &[]),
        ];
        let p = Prerequisites::build(&entries);
        assert_eq!(
            order(&p.promote(
                "status of my order",
                &hits(&[0]),
                &|_| true,
                10,
                PREREQUISITE_DEPTH
            )),
            [0, 1]
        );
        assert_eq!(
            order(&p.promote(
                "status of order #W12",
                &hits(&[0]),
                &|_| true,
                10,
                PREREQUISITE_DEPTH
            )),
            [0]
        );
    }

    #[test]
    fn words_split_at_case_changes_and_punctuation() {
        assert_eq!(words("originSkyId", 16), ["origin", "sky", "id"]);
        assert_eq!(words("GET_search-person", 16), ["get", "search", "person"]);
        assert_eq!(words("HTTPServer2Id", 16), ["http", "server2", "id"]);
        assert_eq!(words("find_user_id_by_email", 3), ["find", "user", "id"]);
    }

    #[test]
    fn a_hit_needing_an_identifier_brings_the_tool_that_finds_it() {
        let entries = vec![
            tool("tmdb", "GET_person-person_id-movie_credits", &["person_id"]), // 0
            tool("tmdb", "GET_search-person", &["query"]),                      // 1
            tool("tmdb", "GET_person-person_id-images", &["person_id"]), // 2: needs the id itself
            tool("other", "search_person", &["query"]),                  // 3: another server
            tool("tmdb", "GET_search-movie", &["query"]),                // 4: another entity
            tool("tmdb", "GET_person-popular", &[]), // 5: neither yields ids nor looks up
        ];
        let p = Prerequisites::build(&entries);
        assert_eq!(p.needing_tools(), 2);
        let all = |_: usize| true;
        assert_eq!(
            order(&p.promote("", &hits(&[0, 4, 3]), &all, 10, PREREQUISITE_DEPTH)),
            [0, 1, 4, 3]
        );
        // Already ranked further down: moved up, keeping its own score.
        let out = p.promote("", &hits(&[0, 4, 3, 1]), &all, 10, PREREQUISITE_DEPTH);
        assert_eq!(order(&out), [0, 1, 4, 3]);
        assert_eq!((out[1].score, out[1].needed_by), (9.0, Some(0)));
        assert_eq!(out.iter().filter(|h| h.needed_by.is_some()).count(), 1);
        // From outside the ranking: the needing hit's score and marks.
        assert_eq!(
            p.promote("", &hits(&[0]), &all, 10, PREREQUISITE_DEPTH)[1],
            ScoredHit {
                ordinal: 1,
                needed_by: Some(0),
                ..hits(&[0])[0]
            }
        );
        // A provider the caller may not show is not placed; the limit holds.
        assert_eq!(
            order(&p.promote("", &hits(&[0, 4]), &|o| o != 1, 10, PREREQUISITE_DEPTH)),
            [0, 4]
        );
        assert_eq!(
            order(&p.promote("", &hits(&[0, 4, 3]), &all, 2, PREREQUISITE_DEPTH)),
            [0, 1]
        );
    }

    #[test]
    fn the_strongest_providers_come_first_then_the_rankings_choice() {
        let entries = vec![
            tool("retail", "get_user_details", &["user_id"]), // 0
            tool("retail", "find_user_id_by_email", &["email"]), // 1: yields the id, strength 3
            tool("retail", "find_user_id_by_name_zip", &["first_name", "zip"]), // 2: strength 3
            tool("retail", "list_users", &[]),                // 3: looks up (plural), strength 1
            tool("retail", "user_summary", &[]),              // 4: strength 0, never
        ];
        let p = Prerequisites::build(&entries);
        let all = |_: usize| true;
        // Both strongest, in ranking order when ranked, catalog order otherwise.
        assert_eq!(
            order(&p.promote("", &hits(&[0, 2, 1]), &all, 10, PREREQUISITE_DEPTH)),
            [0, 2, 1]
        );
        assert_eq!(
            order(&p.promote("", &hits(&[0]), &all, 10, PREREQUISITE_DEPTH)),
            [0, 1, 2]
        );
        // Without them, the weaker look-up.
        assert_eq!(
            order(&p.promote(
                "",
                &hits(&[0]),
                &|o| o == 0 || o == 3,
                10,
                PREREQUISITE_DEPTH
            )),
            [0, 3]
        );
    }

    #[test]
    fn only_the_top_hits_bring_providers() {
        let mut entries: Vec<ToolEntry> = (0..12)
            .map(|i| tool("s", &format!("tool{i}"), &[]))
            .collect();
        entries.push(tool("s", "get_order", &["order_id"])); // 12
        entries.push(tool("s", "list_orders", &[])); // 13
        let p = Prerequisites::build(&entries);
        let all = |_: usize| true;
        let deep: Vec<usize> = (0..PREREQUISITE_DEPTH).chain([12]).collect();
        assert_eq!(
            order(&p.promote("", &hits(&deep), &all, 20, PREREQUISITE_DEPTH)),
            deep
        );
        let near: Vec<usize> = (0..PREREQUISITE_DEPTH - 1).chain([12]).collect();
        assert_eq!(
            order(&p.promote("", &hits(&near), &all, 20, PREREQUISITE_DEPTH)).last(),
            Some(&13)
        );
        assert_eq!(
            order(&p.promote("", &hits(&near), &all, 20, 0)),
            near,
            "depth 0: off"
        );
    }

    #[test]
    fn a_server_too_large_to_be_one_api_gets_no_pairs() {
        let mut entries = vec![
            tool("big", "get_order", &["order_id"]),
            tool("big", "list_orders", &[]),
        ];
        entries.extend((0..MAX_SERVER_TOOLS - 1).map(|i| tool("big", &format!("tool{i}"), &[])));
        assert_eq!(Prerequisites::build(&entries).needing_tools(), 0);
        entries.pop();
        assert_eq!(Prerequisites::build(&entries).needing_tools(), 1);
    }

    /// A derived version shares the tables of servers it did not change, finds
    /// their runs at their new ordinals, and pairs a changed server again.
    #[test]
    fn a_derived_table_shares_unchanged_servers() {
        let old = vec![
            tool("a", "get_order", &["order_id"]),   // 0
            tool("a", "list_orders", &[]),           // 1
            tool("b", "get_person", &["person_id"]), // 2
            tool("b", "find_person_id", &[]),        // 3
            tool("c", "get_user", &["user_id"]),     // 4
            tool("c", "list_users", &[]),            // 5
        ];
        let before = Prerequisites::build(&old);
        assert_eq!(before.needing_tools(), 3);
        // Server "b" replaced by one tool, so "c" moves up by one.
        let mut new = old.clone();
        new.splice(2..4, [tool("b", "get_person", &["person_id"])]);
        let new_of_old = [0, 1, GONE, GONE, 3, 4];
        let derived = before.derive(&new, &new_of_old, &[2]);
        assert!(derived == Prerequisites::build(&new));
        assert_eq!(derived.needing_tools(), 2, "b's look-up is gone");
        assert!(Arc::ptr_eq(
            &derived.servers[0].pairs,
            &before.servers[0].pairs
        ));
        assert!(Arc::ptr_eq(
            &derived.servers[1].pairs,
            &before.servers[2].pairs
        ));
        assert_eq!(derived.needs_of(3).map(|(start, _)| start), Some(3));
        let out = derived.promote("", &hits(&[3]), &|_| true, 10, PREREQUISITE_DEPTH);
        assert_eq!(order(&out), [3, 4]);
    }

    #[test]
    fn hostile_schemas_are_bounded() {
        let many: Vec<String> = (0..500).map(|i| format!("thing{i}_id")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let mut entries = vec![tool("s", "needy", &refs)];
        entries.extend(
            (0..MAX_REQUIRED_SCANNED).map(|i| tool("s", &format!("find_thing{i}_id"), &[])),
        );
        entries.push(ToolEntry::from(EntryFields {
            input_schema: Some(Arc::new(json!({ "required": "x_id" }))),
            ..(*tool("s", "odd", &[])).clone()
        }));
        let p = Prerequisites::build(&entries);
        assert_eq!(
            p.needs_of(0).map(|(_, l)| l.len()),
            Some(MAX_NEEDS_PER_TOOL)
        );
        let out = p.promote("", &hits(&[0]), &|_| true, 100, PREREQUISITE_DEPTH);
        assert_eq!(out.len(), 1 + MAX_NEEDS_PER_TOOL);
    }
}
