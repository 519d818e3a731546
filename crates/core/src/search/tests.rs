//! Ranking rules of the search index, on small hand-made catalogs.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::entry::{EntryFields, Source, ToolEntry};

/// A folder of its own for one test (removed if left over), in the temp folder.
pub(crate) fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "ots-{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Devices with a status tool each: "get", "current" and "status" are in
/// every one of them (common), each device word in one tool only.
const DEVICES: [&str; 28] = [
    "printer",
    "reactor",
    "pump",
    "boiler",
    "turbine",
    "router",
    "elevator",
    "furnace",
    "camera",
    "drone",
    "satellite",
    "freezer",
    "generator",
    "compressor",
    "conveyor",
    "crane",
    "valve",
    "heater",
    "sensor",
    "battery",
    "inverter",
    "scanner",
    "robot",
    "kiosk",
    "antenna",
    "locker",
    "projector",
    "thermostat",
];

/// (name, description) of a catalog where common words are common.
pub(crate) fn status_tools() -> Vec<(String, String)> {
    let mut tools: Vec<(String, String)> = DEVICES
        .iter()
        .map(|d| {
            (
                format!("get_{d}_status"),
                format!("Get the current status of the {d}."),
            )
        })
        .collect();
    tools.push((
        "send_email".into(),
        "Send an email message to a recipient.".into(),
    ));
    tools.push(("status".into(), "Current status of the gateway.".into()));
    tools
}

pub(super) fn entry(source: Source, owner: &str, name: &str, description: &str) -> ToolEntry {
    ToolEntry::from(EntryFields {
        id: format!("{}:{}:{}", source.as_str(), owner, name),
        source,
        owner: owner.to_string(),
        name: name.to_string(),
        label: None,
        description: description.to_string(),
        input_schema: None,
        output_schema: None,
        mcp: None,
    })
}

/// `entry` with this input schema (entries are immutable once made).
fn with_input_schema(entry: ToolEntry, schema: serde_json::Value) -> ToolEntry {
    ToolEntry::from(EntryFields {
        input_schema: Some(Arc::new(schema)),
        ..(*entry).clone()
    })
}

fn sorted(mut entries: Vec<ToolEntry>) -> Vec<ToolEntry> {
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    entries
}

fn ids(index: &SearchIndex, entries: &[ToolEntry], query: &str, limit: usize) -> Vec<String> {
    index
        .search(query, limit, &|_| true)
        .into_iter()
        .map(|h| entries[h.ordinal].id.clone())
        .collect()
}

/// As `ids`, with ranking parameters other than the defaults (levers that
/// are off by default, tested with the lever on).
fn ids_with(
    index: &SearchIndex,
    entries: &[ToolEntry],
    query: &str,
    limit: usize,
    params: &RankingParams,
) -> Vec<String> {
    index
        .search_with(query, limit, &|_| true, params)
        .into_iter()
        .map(|h| entries[h.ordinal].id.clone())
        .collect()
}

/// Concept expansions with the strict literal tier (off by default: bench/QUALITY.md).
fn expansions_on() -> RankingParams {
    RankingParams {
        expansion_weight: 0.7,
        literal_tier: true,
        ..RankingParams::default()
    }
}

pub(super) fn sample() -> Vec<ToolEntry> {
    let with_schema = with_input_schema(
        entry(
            Source::Openclaw,
            "core",
            "get_forecast",
            "Daily outlook for a place.",
        ),
        json!({
            "type": "object",
            "properties": { "city": { "type": "string", "description": "City to look up" } }
        }),
    );
    sorted(vec![
        entry(
            Source::Mcp,
            "github",
            "create_issue",
            "Open a new issue in a repository.",
        ),
        entry(
            Source::Mcp,
            "github",
            "list_issues",
            "List issues of a repository.",
        ),
        entry(
            Source::Openclaw,
            "core",
            "message",
            "Send a message to a channel.",
        ),
        entry(
            Source::Mcp,
            "weather",
            "getWeather",
            "Current weather conditions for a city.",
        ),
        entry(Source::Mcp, "cn", "天气查询", "查询城市的天气预报"),
        entry(Source::Client, "client", "_", "An oddly named tool."),
        entry(Source::Client, "client", "的", "Another oddly named tool."),
        with_schema,
    ])
}

#[test]
fn finds_by_description_and_split_name() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(
        ids(&index, &entries, "weather in a city", 1),
        vec!["mcp:weather:getWeather"]
    );
    assert_eq!(
        ids(&index, &entries, "create issue", 1),
        vec!["mcp:github:create_issue"]
    );
}

#[test]
fn stemming_matches_inflections() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(
        ids(&index, &entries, "sending messages", 1),
        vec!["openclaw:core:message"]
    );
}

#[test]
fn parameter_text_is_indexed() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(
        ids(&index, &entries, "outlook by city", 1),
        vec!["openclaw:core:get_forecast"]
    );
}

#[test]
fn exact_name_or_id_comes_first() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    // "list_issues" shares "issue" with create_issue, but the exact name wins.
    assert_eq!(
        ids(&index, &entries, "list_issues", 1),
        vec!["mcp:github:list_issues"]
    );
    assert_eq!(
        ids(&index, &entries, "mcp:github:create_issue", 1),
        vec!["mcp:github:create_issue"]
    );
    assert_eq!(
        ids(&index, &entries, "GETWEATHER", 1),
        vec!["mcp:weather:getWeather"]
    );
}

#[test]
fn exact_match_without_indexable_terms() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(ids(&index, &entries, "_", 5), vec!["client:client:_"]);
    assert_eq!(ids(&index, &entries, "的", 5), vec!["client:client:的"]);
    // The id also matches other client tools by owner, but the exact id is first.
    assert_eq!(
        ids(&index, &entries, " client:client:_ ", 5)[0],
        "client:client:_"
    );
}

#[test]
fn empty_and_stopword_queries_return_nothing() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    assert!(ids(&index, &entries, "", 5).is_empty());
    assert!(ids(&index, &entries, "   ", 5).is_empty());
    assert!(ids(&index, &entries, "the of and", 5).is_empty());
    assert!(ids(&index, &entries, "?!", 5).is_empty());
}

#[test]
fn chinese_text_matches() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(
        ids(&index, &entries, "天气预报", 1),
        vec!["mcp:cn:天气查询"]
    );
}

#[test]
fn allowed_mask_is_applied_before_the_limit() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    let blocked = entries
        .iter()
        .position(|e| e.name == "create_issue")
        .unwrap();
    let hits = index.search("issue", 1, &|o| o != blocked);
    assert_eq!(hits.len(), 1);
    assert_eq!(entries[hits[0].ordinal].name, "list_issues");
    // An exact match outside the mask is not returned either.
    assert!(index
        .search("create_issue", 5, &|o| o != blocked)
        .iter()
        .all(|h| h.ordinal != blocked));
    assert!(index.search("issue", 5, &|_| false).is_empty());
}

#[test]
fn ties_break_by_id() {
    let entries = sorted(vec![
        entry(Source::Mcp, "b", "tool", "Convert units."),
        entry(Source::Mcp, "a", "tool", "Convert units."),
        entry(Source::Mcp, "c", "tool", "Convert units."),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(
        ids(&index, &entries, "convert", 3),
        vec!["mcp:a:tool", "mcp:b:tool", "mcp:c:tool"]
    );
    // The ambiguous exact name returns every match, in id order.
    assert_eq!(
        ids(&index, &entries, "tool", 3),
        vec!["mcp:a:tool", "mcp:b:tool", "mcp:c:tool"]
    );
}

#[test]
fn literal_match_outranks_expansion_only() {
    let entries = sorted(vec![
        // Matches only through the expansion find -> search, many times over.
        entry(Source::Mcp, "x", "searcher", "Search search search search."),
        entry(Source::Mcp, "y", "locator", "Find a place."),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(
        ids_with(&index, &entries, "find", 2, &expansions_on()),
        vec!["mcp:y:locator", "mcp:x:searcher"]
    );
    // Expansions off (the default): only the literal match.
    assert_eq!(ids(&index, &entries, "find", 2), vec!["mcp:y:locator"]);
}

#[test]
fn limit_and_empty_catalog() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    assert!(index.search("issue", 0, &|_| true).is_empty());
    assert_eq!(index.search("issue", 1, &|_| true).len(), 1);
    let empty = SearchIndex::build(&[]).unwrap();
    assert!(empty.search("anything", 5, &|_| true).is_empty());
}

#[test]
fn hostile_query_is_bounded() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    let huge = "weather ".repeat(200_000);
    let hits = index.search(&huge, 5, &|_| true);
    assert_eq!(entries[hits[0].ordinal].name, "getWeather");
}

#[test]
fn index_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SearchIndex>();
}

#[test]
fn a_misspelt_tool_name_word_still_finds_the_tool() {
    let entries = sorted(vec![
        entry(
            Source::Openclaw,
            "core",
            "get_weather",
            "Current conditions for a city.",
        ),
        entry(
            Source::Openclaw,
            "core",
            "send_email",
            "Send a message to an address.",
        ),
        entry(
            Source::Mcp,
            "calendar",
            "create_event",
            "Add an event to a calendar.",
        ),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    // Typo joining is off by default (bench/QUALITY.md); the mechanism, with the lever on:
    let on = RankingParams {
        typo_weight: 0.8,
        ..RankingParams::default()
    };
    let typo_ids = |query: &str, limit: usize| ids_with(&index, &entries, query, limit, &on);
    // "wether" (deletion), "emial" (transposition), "calandar" (substitution); words are
    // matched as stems, so a typo the stemmer changes more ("calender" → "calend") is out of reach.
    assert_eq!(typo_ids("wether now", 1), vec!["openclaw:core:get_weather"]);
    assert_eq!(
        typo_ids("emial someone", 1),
        vec!["openclaw:core:send_email"]
    );
    assert_eq!(
        typo_ids("calandar entry", 1),
        vec!["mcp:calendar:create_event"]
    );
    // Off (the default): no correction, so nothing matches.
    assert!(index.search("wether", 5, &|_| true).is_empty());
    // A known word is never corrected, and short words are never corrected.
    assert_eq!(typo_ids("message", 5), vec!["openclaw:core:send_email"]);
    assert!(typo_ids("snd", 5).is_empty());
}

#[test]
fn parameter_text_in_branches_items_and_root_description_is_indexed() {
    let convert = with_input_schema(
        entry(Source::Mcp, "fx", "convert", "Convert an amount."),
        json!({
            "description": "Uses central bank reference rates",
            "type": "object",
            "properties": {
                "amount": { "anyOf": [{ "type": "number", "description": "Plain figure" }, { "type": "string", "description": "Figure with a currency symbol" }] },
                "history": { "type": "array", "items": { "type": "object", "description": "One dated exchange quote" } },
                "mode": { "oneOf": [{ "const": "spot" }, { "const": "forward", "description": "Settlement in the future" }] },
                "filter": { "allOf": [{ "description": "Restrict to liquid pairs" }] }
            }
        }),
    );
    let entries = sorted(vec![
        convert,
        entry(Source::Mcp, "misc", "other", "Something unrelated."),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    for query in [
        "currency symbol",
        "central bank",
        "exchange quote",
        "settlement future",
        "liquid pairs",
    ] {
        assert_eq!(
            ids(&index, &entries, query, 1),
            vec!["mcp:fx:convert"],
            "{query}"
        );
    }
}

/// Case twins are all exact matches, and the one spelled as typed leads them (at
/// every limit); neither spelled: score, then catalog order.
#[test]
fn exact_names_match_ignoring_case_spelled_first() {
    let entries = sorted(vec![
        entry(Source::Mcp, "a", "HARVEST", "Collect crops."),
        entry(Source::Mcp, "b", "harvest", "Collect crops."),
        entry(
            Source::Mcp,
            "c",
            "harvest_report",
            "Harvest harvest harvest: a harvest report of the harvest.",
        ),
        entry(Source::Mcp, "d", "do", "Run a step."),
        entry(Source::Mcp, "e", "DO", "Run a step."),
        entry(Source::Mcp, "f", "do_thing", "Do the thing."),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    let top2 = ids(&index, &entries, "harvest", 2);
    assert!(
        top2.contains(&"mcp:a:HARVEST".to_string()) && top2.contains(&"mcp:b:harvest".to_string()),
        "{top2:?}"
    );
    assert_eq!(
        ids(&index, &entries, " DO ", 5),
        vec!["mcp:e:DO", "mcp:d:do"]
    );
    assert_eq!(ids(&index, &entries, "do", 5), vec!["mcp:d:do", "mcp:e:DO"]);
    assert_eq!(ids(&index, &entries, "Do", 5), vec!["mcp:d:do", "mcp:e:DO"]);
    assert_eq!(ids(&index, &entries, "HARVEST", 1), vec!["mcp:a:HARVEST"]);
    assert_eq!(ids(&index, &entries, "harvest", 1), vec!["mcp:b:harvest"]);
}

/// OpenClaw's shape: an MCP server with `listUrl` and `listURL`; each exact id, and each
/// exact name, finds itself first at every limit, lexical and through the catalog.
#[test]
fn an_exact_id_leads_its_case_twin_at_every_limit() {
    let entries = sorted(vec![
        entry(
            Source::Mcp,
            "accounting",
            "listURL",
            "List the URLs of the accounting exports.",
        ),
        entry(
            Source::Mcp,
            "accounting",
            "listUrl",
            "List the URL of one accounting export.",
        ),
        entry(Source::Mcp, "accounting", "list_urls", "List URLs."),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    for limit in 1..=3 {
        for spelled in ["listUrl", "listURL"] {
            let id = format!("mcp:accounting:{spelled}");
            assert_eq!(ids(&index, &entries, &id, limit)[0], id, "{id} at {limit}");
            assert_eq!(
                ids(&index, &entries, spelled, limit)[0],
                id,
                "{spelled} at {limit}"
            );
        }
    }
}

#[test]
fn agent_nouns_reach_their_verb() {
    let entries = sorted(vec![
        entry(
            Source::Openclaw,
            "core",
            "run_tests",
            "Execute the test suite.",
        ),
        entry(Source::Openclaw, "core", "send_email", "Send a message."),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(
        ids_with(&index, &entries, "runner", 5, &expansions_on()),
        vec!["openclaw:core:run_tests"]
    );
}

#[test]
fn plural_acronyms_in_names_match_the_singular() {
    let entries = sorted(vec![
        entry(
            Source::Mcp,
            "web",
            "getURLs",
            "Collect the links of a page.",
        ),
        entry(
            Source::Mcp,
            "web",
            "listIDsForUser",
            "Identifiers owned by someone.",
        ),
        entry(Source::Mcp, "misc", "fetch_page", "Download a page."),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(ids(&index, &entries, "url", 1), vec!["mcp:web:getURLs"]);
    assert_eq!(
        ids(&index, &entries, "ids", 1),
        vec!["mcp:web:listIDsForUser"]
    );
}

#[test]
fn looking_up_a_price_reaches_web_search() {
    let entries = sorted(vec![
        entry(
            Source::Openclaw,
            "core",
            "web_search",
            "Search the web for current information.",
        ),
        entry(
            Source::Openclaw,
            "core",
            "send_email",
            "Send a message to an address.",
        ),
        entry(
            Source::Mcp,
            "github",
            "create_issue",
            "Open a new issue in a repository.",
        ),
    ]);
    let index = SearchIndex::build(&entries).unwrap();
    assert_eq!(
        ids_with(
            &index,
            &entries,
            "look up the price of a laptop",
            3,
            &expansions_on()
        ),
        vec!["openclaw:core:web_search"]
    );
}

#[test]
fn long_queries_are_read_up_to_the_cap() {
    let entries = sample();
    let index = SearchIndex::build(&entries).unwrap();
    // The capability sits past 2,048 chars but inside the 4,096 cap.
    let query = format!("{} weather", "\u{2003}".repeat(3_000));
    assert_eq!(
        ids(&index, &entries, &query, 1),
        vec!["mcp:weather:getWeather"]
    );
}

#[test]
fn a_derived_index_ranks_bit_for_bit_as_a_full_build() {
    let mut old = sample();
    old.push(entry(
        Source::Mcp,
        "gems",
        "quartz_finder",
        "Find crystals in a cave.",
    ));
    old.push(entry(
        Source::Mcp,
        "units",
        "quart_convert",
        "Convert volumes between units.",
    ));
    // Enough unchanged tools that the change is derived, not rebuilt.
    for (i, topic) in [
        "invoices",
        "calendars",
        "tickets",
        "backups",
        "logs",
        "alerts",
    ]
    .iter()
    .enumerate()
    {
        old.push(entry(
            Source::Openclaw,
            "misc",
            &format!("tool_{i}"),
            &format!("Manage {topic} of a team."),
        ));
    }
    let old = sorted(old);
    let index = SearchIndex::build(&old).unwrap();
    // Replaced and removed tools, one unchanged tool re-sent, new tools.
    let mut new: Vec<ToolEntry> = old
        .iter()
        .filter(|e| !["quartz_finder", "message", "list_issues"].contains(&e.name.as_str()))
        .cloned()
        .collect();
    new.push(entry(
        Source::Mcp,
        "github",
        "list_issues",
        "List the open issues of a repository, newest first.",
    ));
    new.push(entry(
        Source::Mcp,
        "weather",
        "get_alerts",
        "Severe weather alerts for a region.",
    ));
    let new = sorted(new);
    let reused: Vec<Option<u32>> = new
        .iter()
        .map(|e| {
            old.iter()
                .position(|o| o.id == e.id && o.description == e.description)
                .map(|o| o as u32)
        })
        .collect();
    let derived = index.derive(&new, &reused).unwrap();
    assert_eq!(derived.part_count(), 2, "derived, not rebuilt");
    let full = SearchIndex::build(&new).unwrap();
    // Typo joining is off by default (bench/QUALITY.md); its live-doc counting is checked with it on.
    let typo_on = RankingParams {
        typo_weight: 0.8,
        ..RankingParams::default()
    };
    let hits = |index: &SearchIndex, query: &str| {
        let mut all = Vec::new();
        for params in [&RankingParams::default(), &typo_on] {
            all.extend(
                index
                    .search_with(query, 100, &|_| true, params)
                    .into_iter()
                    .map(|h| (h.ordinal, h.score.to_bits())),
            );
        }
        all
    };
    // "quartz" is only in a removed tool: unknown, so corrected to "quart" as in a full build.
    assert_eq!(
        ids_with(&full, &new, "quartz", 5, &typo_on),
        vec!["mcp:units:quart_convert"]
    );
    for query in [
        "quartz",
        "mcp:gems:quartz_finder",
        "quartz_finder",
        "message",
        "list issues",
        "issues of a repository",
        "weather alerts",
        "weather in a city",
        "city",
        "tool",
        "天气",
        "crystals",
        "convert volumes",
        "repositry",
    ] {
        assert_eq!(hits(&derived, query), hits(&full, query), "query {query:?}");
    }
    // Another version on top of the derived one.
    let mut third: Vec<ToolEntry> = new
        .iter()
        .filter(|e| e.owner != "weather")
        .cloned()
        .collect();
    third.push(entry(
        Source::Mcp,
        "weather",
        "getWeather",
        "Current weather conditions for a city.",
    ));
    let third = sorted(third);
    let reused: Vec<Option<u32>> = third
        .iter()
        .map(|e| {
            if e.owner == "weather" {
                None
            } else {
                new.iter().position(|o| o.id == e.id).map(|o| o as u32)
            }
        })
        .collect();
    let derived = derived.derive(&third, &reused).unwrap();
    assert_eq!(derived.part_count(), 3, "derived, not rebuilt");
    let full = SearchIndex::build(&third).unwrap();
    for query in [
        "weather",
        "weather alerts",
        "city",
        "list issues",
        "quartz",
        "getweather",
        "manage alerts",
    ] {
        assert_eq!(hits(&derived, query), hits(&full, query), "query {query:?}");
    }
}
