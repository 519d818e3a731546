//! The operator's audit of a catalog: which tools the model will struggle to
//! find, and why. Per tool: findability (its rank for requests derived from its
//! own name and description, in the catalog's ranking), empty, short or copied
//! descriptions, near-duplicates on other servers (and which one wins),
//! names that collide once normalized, and its schema's size and validation
//! cost; per server and for the whole catalog, the totals. Tools are listed
//! most urgent first. The CLI renders it as a table, JSON or an HTML page.

use std::time::Instant;

use foldhash::{HashMap, HashMapExt};
use serde::Serialize;

use super::{Catalog, ExcludedTool, SearchOptions, ToolEntry};
use crate::limits::MAX_QUERY_CHARS;
use crate::schema::{schema_cost, SchemaCost};
use crate::search::{second_thread_allowed, Folder};

/// A tool is findable when a request derived from it ranks it this high.
pub const FINDABLE_RANK: usize = 10;
/// Words of a description's first sentence used as a request.
const PROBE_WORDS: usize = 24;
/// Descriptions shorter than this (characters or words) say too little.
const SHORT_DESCRIPTION_CHARS: usize = 24;
const SHORT_DESCRIPTION_WORDS: usize = 4;
/// Tools on another server whose name, label and description terms overlap at
/// least this much (Jaccard) are near-duplicates.
const NEAR_DUPLICATE_OVERLAP: f32 = 0.7;
/// Most other tools named per finding (the counts stay exact).
const MAX_LISTED: usize = 5;
/// A schema above this many estimated tokens is large in a prompt.
const LARGE_SCHEMA_TOKENS: usize = 1_000;
/// Schemas whose validation applies this many subschemas at one value (a
/// tenth of the refusal bound) are costly to validate.
const COSTLY_SCHEMA_CHECKS: u64 = 100;

/// What an audit finds wrong with a tool, most urgent first.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Problem {
    /// Not in the top 10 for any request derived from its own name or description.
    Unfindable,
    EmptyDescription,
    /// Another server's near-identical tool ranks above it.
    OutrankedDuplicate,
    DuplicatedDescription,
    NameCollision,
    ShortDescription,
    CostlySchema,
    LargeSchema,
}

impl Problem {
    fn weight(self) -> u32 {
        match self {
            Problem::Unfindable => 100,
            Problem::EmptyDescription => 50,
            Problem::OutrankedDuplicate => 40,
            Problem::DuplicatedDescription => 30,
            Problem::NameCollision => 20,
            Problem::ShortDescription => 15,
            Problem::CostlySchema => 10,
            Problem::LargeSchema => 5,
        }
    }
}

/// One request derived from the tool, and where the tool ranked for it.
#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    /// `name` (its words) or `description` (its first sentence).
    pub from: &'static str,
    pub request: String,
    /// 1-based rank in the top 10, or null.
    pub rank: Option<u32>,
    /// The tool ranked first for it (when not this one).
    pub first: Option<String>,
}

/// A near-identical tool on another server.
#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct NearDuplicate {
    pub id: String,
    /// Overlap of name, label and description terms (Jaccard, 0..1).
    pub overlap: f32,
    /// The id that ranks higher for this tool's own description (or name).
    pub winner: String,
    pub why: String,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ToolAudit {
    pub id: String,
    pub name: String,
    pub server: String,
    pub source: &'static str,
    /// Most urgent first; empty when nothing was found.
    pub problems: Vec<Problem>,
    /// Sum of the problems' weights: the sort key.
    pub priority: u32,
    /// Best rank over the probes (null: unfindable, or findability not checked).
    pub best_rank: Option<u32>,
    pub probes: Vec<Probe>,
    pub description_chars: u32,
    /// Tools with the same description (normalized), up to five.
    pub same_description: Vec<String>,
    pub same_description_count: u32,
    pub near_duplicates: Vec<NearDuplicate>,
    /// Tools whose name is this one's once case, accents and separators are dropped.
    pub name_collisions: Vec<String>,
    pub name_collision_count: u32,
    pub schema_bytes: u32,
    /// Estimated at four bytes a token.
    pub schema_tokens: u32,
    /// Most subschemas validation applies at one argument value (null: no schema).
    pub schema_checks_per_value: Option<u64>,
}

#[derive(Serialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct ServerAudit {
    pub server: String,
    pub tools: u32,
    pub unfindable: u32,
    /// Tools with at least one problem.
    pub with_problems: u32,
    pub schema_tokens: u64,
}

#[derive(Serialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
pub struct AuditTotals {
    pub tools: u32,
    pub servers: u32,
    pub with_problems: u32,
    pub unfindable: u32,
    pub empty_descriptions: u32,
    pub short_descriptions: u32,
    pub duplicated_descriptions: u32,
    pub outranked_duplicates: u32,
    pub near_duplicate_pairs: u32,
    pub name_collisions: u32,
    pub costly_schemas: u32,
    pub large_schemas: u32,
    pub schema_bytes: u64,
    pub schema_tokens: u64,
    /// Records the catalog refused (see `excluded`).
    pub excluded: u32,
}

#[derive(Serialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct CatalogAudit {
    /// The ranking the probes ran with: `lexical` or `hybrid`.
    pub ranking: &'static str,
    /// Whether findability was checked (probes run).
    pub findability: bool,
    pub totals: AuditTotals,
    /// Most tools with problems first.
    pub servers: Vec<ServerAudit>,
    /// Most urgent first.
    pub tools: Vec<ToolAudit>,
    pub excluded: Vec<ExcludedTool>,
    pub milliseconds: f64,
}

/// What an audit checks (`catalog.audit(options)`; an unknown option is refused).
#[derive(Clone, Copy, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditOptions {
    /// Run the probes (two searches a tool); off, only the static checks.
    pub findability: bool,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions { findability: true }
    }
}

/// The requests derived from a tool: its name as words, and its
/// description's first sentence (at most [`PROBE_WORDS`] words), each cut to
/// the longest query a search takes (a sentence of very long words would
/// otherwise be refused and the tool counted as not found).
fn probes_of(entry: &ToolEntry) -> Vec<(&'static str, String)> {
    let mut out = Vec::with_capacity(2);
    let name = tool_search_embed::tool_text(&entry.name, "", &[]);
    if !name.trim().is_empty() {
        out.push(("name", as_query(&name)));
    }
    let first = first_sentence(&entry.description);
    if !first.is_empty() {
        out.push(("description", as_query(&first)));
    }
    out
}

fn as_query(text: &str) -> String {
    tool_search_base::text::prefix(text, MAX_QUERY_CHARS).to_string()
}

fn first_sentence(description: &str) -> String {
    let mut end = description.len();
    for (i, c) in description.char_indices() {
        let next_blank = description[i + c.len_utf8()..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace);
        if c == '\n' || (matches!(c, '.' | '?' | '!') && next_blank) {
            end = i;
            break;
        }
    }
    description[..end]
        .split_whitespace()
        .take(PROBE_WORDS)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lowercased, accents folded, letters and digits only: `Get-User` = `get_user` = `getuser`.
fn name_key(folder: &mut Folder, name: &str) -> String {
    let lower: String = name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    folder.fold(&lower)
}

fn description_key(description: &str) -> String {
    description
        .split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The probes' results of one tool: (rank per probe, first hit per probe, the
/// ordinals ranked above it, for near-duplicates).
struct Ranked {
    probes: Vec<Probe>,
    /// Ordinals of the top hits over all probes.
    seen: Vec<usize>,
    /// Per probe: hit ordinals in rank order.
    lists: Vec<Vec<usize>>,
}

impl Catalog {
    /// The audit of this catalog's searchable tools (see the module doc).
    pub fn audit(&self, options: &AuditOptions) -> CatalogAudit {
        let started = Instant::now();
        let ordinals: Vec<usize> = (0..self.data.entries.len())
            .filter(|&o| self.is_searchable(o))
            .collect();
        let ranked = if options.findability {
            self.run_probes(&ordinals)
        } else {
            Vec::new()
        };
        let entries = &self.data.entries;
        let mut folder = Folder::new();

        // Tools with equal descriptions, and with colliding names: each tool's two keys are
        // computed once, the groups kept by number.
        let mut description_groups: Vec<Vec<usize>> = Vec::new();
        let mut name_groups: Vec<Vec<usize>> = Vec::new();
        let mut description_group_of: Vec<Option<usize>> = Vec::with_capacity(ordinals.len());
        let mut name_group_of: Vec<usize> = Vec::with_capacity(ordinals.len());
        {
            let mut by_description: HashMap<String, usize> = HashMap::new();
            let mut by_name: HashMap<String, usize> = HashMap::new();
            let join = |groups: &mut Vec<Vec<usize>>, group: usize, o: usize| {
                if group == groups.len() {
                    groups.push(Vec::new());
                }
                groups[group].push(o);
                group
            };
            for &o in &ordinals {
                let entry = &entries[o];
                let description = entry.description.trim();
                description_group_of.push((!description.is_empty()).then(|| {
                    let next = description_groups.len();
                    let group = *by_description
                        .entry(description_key(description))
                        .or_insert(next);
                    join(&mut description_groups, group, o)
                }));
                let next = name_groups.len();
                let group = *by_name
                    .entry(name_key(&mut folder, &entry.name))
                    .or_insert(next);
                name_group_of.push(join(&mut name_groups, group, o));
            }
        }

        let mut tools = Vec::with_capacity(ordinals.len());
        let mut near_pairs: foldhash::HashSet<(usize, usize)> = foldhash::HashSet::default();
        for (i, &o) in ordinals.iter().enumerate() {
            let entry = &entries[o];
            let mut problems = Vec::new();
            let description = entry.description.trim();
            let chars = description.chars().count();
            if description.is_empty() {
                problems.push(Problem::EmptyDescription);
            } else if chars < SHORT_DESCRIPTION_CHARS
                || description.split_whitespace().count() < SHORT_DESCRIPTION_WORDS
            {
                problems.push(Problem::ShortDescription);
            }
            let others = |group: &[usize]| -> (Vec<String>, u32) {
                let group: Vec<usize> = group.iter().copied().filter(|&x| x != o).collect();
                let listed = group
                    .iter()
                    .take(MAX_LISTED)
                    .map(|&x| entries[x].id.clone())
                    .collect();
                (listed, group.len() as u32)
            };
            let (same_description, same_description_count) = match description_group_of[i] {
                Some(group) => others(&description_groups[group]),
                None => (Vec::new(), 0),
            };
            if same_description_count > 0 {
                problems.push(Problem::DuplicatedDescription);
            }
            let (name_collisions, name_collision_count) = others(&name_groups[name_group_of[i]]);
            if name_collision_count > 0 {
                problems.push(Problem::NameCollision);
            }

            let (mut best_rank, mut probes, mut near_duplicates) = (None, Vec::new(), Vec::new());
            if let Some(r) = ranked.get(i) {
                best_rank = r.probes.iter().filter_map(|p| p.rank).min();
                if best_rank.is_none() {
                    problems.push(Problem::Unfindable);
                }
                for &other in &r.seen {
                    let other_entry = &entries[other];
                    if other == o || other_entry.owner == entry.owner {
                        continue;
                    }
                    let overlap = self.data.index.text_overlap(o, other);
                    if overlap < NEAR_DUPLICATE_OVERLAP {
                        continue;
                    }
                    let (winner, why) = self.winner(o, other, r);
                    if winner == other {
                        problems.push(Problem::OutrankedDuplicate);
                    }
                    near_pairs.insert((o.min(other), o.max(other)));
                    if near_duplicates.len() < MAX_LISTED {
                        near_duplicates.push(NearDuplicate {
                            id: other_entry.id.clone(),
                            overlap: (overlap * 100.0).round() / 100.0,
                            winner: entries[winner].id.clone(),
                            why,
                        });
                    }
                }
                probes = r.probes.clone();
            }

            let (schema_bytes, schema_checks_per_value) = match entry.input_schema.as_deref() {
                Some(schema) => (
                    serde_json::to_vec(schema).map_or(0, |b| b.len()),
                    schema_cost(schema)
                        .ok()
                        .map(|c: SchemaCost| c.checks_per_value),
                ),
                None => (0, None),
            };
            let schema_tokens = schema_bytes.div_ceil(4);
            if schema_checks_per_value.is_some_and(|c| c >= COSTLY_SCHEMA_CHECKS) {
                problems.push(Problem::CostlySchema);
            }
            if schema_tokens > LARGE_SCHEMA_TOKENS {
                problems.push(Problem::LargeSchema);
            }
            problems.sort();
            problems.dedup();
            tools.push(ToolAudit {
                id: entry.id.clone(),
                name: entry.name.clone(),
                server: entry.owner.clone(),
                source: entry.source.as_str(),
                priority: problems.iter().map(|p| p.weight()).sum(),
                problems,
                best_rank,
                probes,
                description_chars: chars as u32,
                same_description,
                same_description_count,
                near_duplicates,
                name_collisions,
                name_collision_count,
                schema_bytes: schema_bytes as u32,
                schema_tokens: schema_tokens as u32,
                schema_checks_per_value,
            });
        }

        let mut totals = AuditTotals {
            tools: tools.len() as u32,
            near_duplicate_pairs: near_pairs.len() as u32,
            excluded: self.data.excluded.len() as u32,
            ..AuditTotals::default()
        };
        let mut servers: HashMap<String, ServerAudit> = HashMap::new();
        for tool in &tools {
            let server = servers
                .entry(tool.server.clone())
                .or_insert_with(|| ServerAudit {
                    server: tool.server.clone(),
                    ..ServerAudit::default()
                });
            server.tools += 1;
            server.schema_tokens += u64::from(tool.schema_tokens);
            totals.schema_bytes += u64::from(tool.schema_bytes);
            totals.schema_tokens += u64::from(tool.schema_tokens);
            if !tool.problems.is_empty() {
                server.with_problems += 1;
                totals.with_problems += 1;
            }
            for problem in &tool.problems {
                let count = match problem {
                    Problem::Unfindable => {
                        server.unfindable += 1;
                        &mut totals.unfindable
                    }
                    Problem::EmptyDescription => &mut totals.empty_descriptions,
                    Problem::ShortDescription => &mut totals.short_descriptions,
                    Problem::DuplicatedDescription => &mut totals.duplicated_descriptions,
                    Problem::OutrankedDuplicate => &mut totals.outranked_duplicates,
                    Problem::NameCollision => &mut totals.name_collisions,
                    Problem::CostlySchema => &mut totals.costly_schemas,
                    Problem::LargeSchema => &mut totals.large_schemas,
                };
                *count += 1;
            }
        }
        totals.servers = servers.len() as u32;
        let mut servers: Vec<ServerAudit> = servers.into_values().collect();
        servers.sort_by(|a, b| {
            (b.with_problems, b.unfindable, &a.server).cmp(&(
                a.with_problems,
                a.unfindable,
                &b.server,
            ))
        });
        tools.sort_by(|a, b| b.priority.cmp(&a.priority).then_with(|| a.id.cmp(&b.id)));
        CatalogAudit {
            ranking: if options.findability && self.hybrid().is_some() {
                "hybrid"
            } else {
                "lexical"
            },
            findability: options.findability,
            totals,
            servers,
            tools,
            excluded: self.data.excluded.clone(),
            milliseconds: started.elapsed().as_secs_f64() * 1000.0,
        }
    }

    /// Which of `a` and `b` ranks higher for `a`'s probes (the first probe that
    /// ranks either), and why.
    fn winner(&self, a: usize, b: usize, ranked: &Ranked) -> (usize, String) {
        for (probe, list) in ranked.probes.iter().zip(&ranked.lists) {
            let rank_a = list.iter().position(|&x| x == a);
            let rank_b = list.iter().position(|&x| x == b);
            match (rank_a, rank_b) {
                (Some(x), Some(y)) => {
                    let (winner, loser, won, lost) =
                        if x < y { (a, b, x, y) } else { (b, a, y, x) };
                    return (
                        winner,
                        format!(
                            "for \"{}\" {} ranks #{}, {} #{}",
                            probe.request,
                            self.data.entries[winner].id,
                            won + 1,
                            self.data.entries[loser].id,
                            lost + 1
                        ),
                    );
                }
                (Some(x), None) => {
                    return (
                        a,
                        format!(
                            "for \"{}\" only {} ranks in the top {FINDABLE_RANK} (#{})",
                            probe.request,
                            self.data.entries[a].id,
                            x + 1
                        ),
                    );
                }
                (None, Some(y)) => {
                    return (
                        b,
                        format!(
                            "for \"{}\" only {} ranks in the top {FINDABLE_RANK} (#{})",
                            probe.request,
                            self.data.entries[b].id,
                            y + 1
                        ),
                    );
                }
                (None, None) => {}
            }
        }
        (
            a,
            "neither ranks for the requests derived from this tool".to_string(),
        )
    }

    /// Every tool's probes in the catalog's ranking, on two threads when the
    /// process allows a second one.
    fn run_probes(&self, ordinals: &[usize]) -> Vec<Ranked> {
        let run = |chunk: &[usize]| -> Vec<Ranked> {
            chunk
                .iter()
                .map(|&o| {
                    let entry = &self.data.entries[o];
                    let mut ranked = Ranked {
                        probes: Vec::new(),
                        seen: Vec::new(),
                        lists: Vec::new(),
                    };
                    for (from, request) in probes_of(entry) {
                        let hits: Vec<usize> = self
                            .search(&request, &SearchOptions::ordinals(FINDABLE_RANK))
                            .unwrap_or_default();
                        let rank = hits.iter().position(|&x| x == o).map(|r| r as u32 + 1);
                        let first = hits
                            .first()
                            .filter(|&&x| x != o)
                            .map(|&x| self.data.entries[x].id.clone());
                        for &x in &hits {
                            if !ranked.seen.contains(&x) {
                                ranked.seen.push(x);
                            }
                        }
                        ranked.probes.push(Probe {
                            from,
                            request,
                            rank,
                            first,
                        });
                        ranked.lists.push(hits);
                    }
                    ranked
                })
                .collect()
        };
        if !second_thread_allowed() || ordinals.len() < 64 {
            return run(ordinals);
        }
        let (left, right) = ordinals.split_at(ordinals.len() / 2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| run(right));
            let mut out = run(left);
            match other.join() {
                Ok(rest) => out.extend(rest),
                Err(_) => out.extend(run(right)),
            }
            out
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CatalogOptions;

    fn catalog(lines: &[&str]) -> Catalog {
        Catalog::from_json_text(&lines.join("\n"), &CatalogOptions::default()).unwrap()
    }

    fn tool<'a>(audit: &'a CatalogAudit, id: &str) -> &'a ToolAudit {
        audit.tools.iter().find(|t| t.id == id).unwrap()
    }

    #[test]
    fn a_first_sentence_longer_than_a_query_is_cut_to_one() {
        // Four ordinary words, then 20 of 300 letters: over the 4,096 characters a search
        // takes (uncut, the request would be refused and the tool counted as not found).
        let word = "a".repeat(299);
        let sentence = ["Export", "quarterly", "ledger", "reports"]
            .into_iter()
            .map(str::to_string)
            .chain((0..20).map(|i| format!("{word}{}", char::from(b'a' + i as u8))))
            .collect::<Vec<_>>()
            .join(" ");
        let record = format!(
            r#"{{"name":"long_words","owner":"x","source":"mcp","description":"{sentence}. More."}}"#
        );
        let audit = catalog(&[record.as_str()]).audit(&AuditOptions::default());
        let long = tool(&audit, "mcp:x:long_words");
        let probe = long
            .probes
            .iter()
            .find(|p| p.from == "description")
            .unwrap();
        assert_eq!(probe.request.chars().count(), MAX_QUERY_CHARS);
        assert_eq!(probe.rank, Some(1), "searched, not refused");
    }

    #[test]
    fn finds_what_keeps_a_tool_from_being_found() {
        let big_schema = format!(
            r#"{{"type":"object","properties":{{{}}}}}"#,
            (0..80)
                .map(|i| format!(r#""field_{i}":{{"type":"string","description":"the {i}th field of the record, as the server names it"}}"#))
                .collect::<Vec<_>>()
                .join(",")
        );
        let records = [
            r#"{"name":"create_issue","owner":"github","source":"mcp","description":"Create a new issue in a GitHub repository with a title and body."}"#.to_string(),
            r#"{"name":"create-issue","owner":"github_mirror","source":"mcp","description":"Create a new issue in a GitHub repository with a title and body."}"#.to_string(),
            r#"{"name":"xq7","owner":"tools","source":"mcp","description":""}"#.to_string(),
            r#"{"name":"weather_now","owner":"weather","source":"mcp","description":"Weather."}"#.to_string(),
            format!(r#"{{"name":"bulk_record_import","owner":"crm","source":"mcp","description":"Import many customer records into the CRM at once from a spreadsheet.","inputSchema":{big_schema}}}"#),
            r#"{"name":"send_email","owner":"mail","source":"mcp","description":"Send an email message to one or more recipients."}"#.to_string(),
        ];
        let lines: Vec<&str> = records.iter().map(String::as_str).collect();
        let audit = catalog(&lines).audit(&AuditOptions::default());
        assert_eq!(audit.ranking, "lexical");
        assert_eq!(audit.totals.tools, 6);

        let email = tool(&audit, "mcp:mail:send_email");
        assert!(email.problems.is_empty(), "{:?}", email.problems);
        assert_eq!(email.best_rank, Some(1));
        assert_eq!(email.probes.len(), 2);

        let empty = tool(&audit, "mcp:tools:xq7");
        assert!(empty.problems.contains(&Problem::EmptyDescription));
        assert_eq!(
            empty.probes.len(),
            1,
            "an empty description gives no request"
        );

        let short = tool(&audit, "mcp:weather:weather_now");
        assert!(short.problems.contains(&Problem::ShortDescription));

        // Two servers with the same tool: both copies are named, one wins, the other is outranked.
        let a = tool(&audit, "mcp:github:create_issue");
        let b = tool(&audit, "mcp:github_mirror:create-issue");
        for t in [a, b] {
            assert!(t.problems.contains(&Problem::DuplicatedDescription));
            assert!(t.problems.contains(&Problem::NameCollision));
            assert_eq!(t.near_duplicates.len(), 1);
        }
        assert_eq!(a.near_duplicates[0].winner, b.near_duplicates[0].winner);
        let outranked = [a, b]
            .iter()
            .filter(|t| t.problems.contains(&Problem::OutrankedDuplicate))
            .count();
        assert_eq!(outranked, 1);
        assert_eq!(audit.totals.near_duplicate_pairs, 1);
        assert_eq!(audit.totals.name_collisions, 2);

        let bulk = tool(&audit, "mcp:crm:bulk_record_import");
        assert!(bulk.schema_tokens > LARGE_SCHEMA_TOKENS as u32);
        assert!(bulk.problems.contains(&Problem::LargeSchema));
        assert!(bulk.schema_checks_per_value.is_some());

        // Most urgent first; servers with the most problems first.
        let priorities: Vec<u32> = audit.tools.iter().map(|t| t.priority).collect();
        assert!(
            priorities.windows(2).all(|w| w[0] >= w[1]),
            "{priorities:?}"
        );
        assert_eq!(audit.tools.last().unwrap().id, "mcp:mail:send_email");
        assert!(audit
            .servers
            .windows(2)
            .all(|w| w[0].with_problems >= w[1].with_problems));
    }

    #[test]
    fn a_tool_no_request_of_its_own_finds_is_unfindable() {
        // Eleven servers with the same tool: for its name and its description, the last one
        // by id order comes eleventh.
        let mut records: Vec<String> = (0..11)
            .map(|i| format!(r#"{{"name":"lookup_order","owner":"s{i:02}","source":"mcp","description":"Look up a customer order by its number and show its status."}}"#))
            .collect();
        records.push(r#"{"name":"refund","owner":"pay","source":"mcp","description":"Refund a payment to the card it was made with."}"#.into());
        let lines: Vec<&str> = records.iter().map(String::as_str).collect();
        let audit = catalog(&lines).audit(&AuditOptions::default());
        assert!(audit.totals.unfindable >= 1, "{:?}", audit.totals);
        let unfindable = audit
            .tools
            .iter()
            .find(|t| t.problems.contains(&Problem::Unfindable))
            .unwrap();
        assert_eq!(unfindable.best_rank, None);
        assert!(unfindable.problems.contains(&Problem::OutrankedDuplicate));
        assert_eq!(audit.tools[0].id, unfindable.id);
        assert_eq!(tool(&audit, "mcp:pay:refund").best_rank, Some(1));

        let quick = catalog(&lines).audit(&AuditOptions { findability: false });
        assert!(!quick.findability);
        assert!(quick
            .tools
            .iter()
            .all(|t| t.probes.is_empty() && t.best_rank.is_none()));
        assert_eq!(quick.totals.unfindable, 0);
    }
}
