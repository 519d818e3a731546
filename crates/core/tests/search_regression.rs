//! Pinned rankings on the repository's copy of the dev set
//! (bench/data/retrieval-dev): a handful of representative queries and the
//! tool expected first (or in the top 10). A ranking change that moves them
//! must be deliberate: re-run `pnpm bench:quality` and update these pins.

mod common;

use std::collections::HashMap;
use std::sync::OnceLock;

use tool_search_core::catalog::ToolEntry;
use tool_search_core::search::{with_second_thread, SearchIndex};

struct Fixture {
    entries: Vec<ToolEntry>,
    index: SearchIndex,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let mut entries = common::dev_entries();
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        // Built as a synchronous constructor builds it (two threads), so the
        // pinned results below hold for that path too.
        let index = with_second_thread(|| SearchIndex::build(&entries)).expect("build");
        Fixture { entries, index }
    })
}

fn top_ids(query: &str, limit: usize) -> Vec<String> {
    let f = fixture();
    f.index
        .search(query, limit, &|_| true)
        .into_iter()
        .map(|h| f.entries[h.ordinal].id.clone())
        .collect()
}

#[test]
fn pinned_first_results() {
    let pins: &[(&str, &str)] = &[
        // seal-dev: specific requests against tools with parameter schemas
        ("Retrieve the income sources for the organization with the ID \"T7if2WaQ\".", "openclaw:seal:getIncomeSources"),
        ("Tell me how to make a cocktail called \"Mai Tai\" with grenadine as one of the ingredients.", "openclaw:seal:makeCocktail"),
        ("Provide me with information about public health laws.", "openclaw:seal:getPublicHealthLaws"),
        ("Set the speed of robot with ID Wj6ea0AFaEv to 19.0 meters per second.", "openclaw:seal:setRobotSpeed"),
        ("Provide me with the population density of Tokyo.", "openclaw:seal:getPopulationDensity"),
        ("Start the workspace with ID \"BDYPm9mOlVS.", "openclaw:seal:startWorkspace"),
        // metatool: conversational requests against description-only plugins
        ("I'm interested in knowing the average cost of petrol in Adelaide. Can you help?", "mcp:metatool:AusPetrolPrices"),
        (
            "I want to know if my personal information linked to my email has been exposed in any data breaches. Can you assist me?",
            "mcp:metatool:hacktrack",
        ),
    ];
    let mut failures = Vec::new();
    for (query, expected) in pins {
        let got = top_ids(query, 1);
        if got.first().map(String::as_str) != Some(*expected) {
            failures.push(format!("{query:?}: expected {expected}, got {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "ranking changed:\n{}",
        failures.join("\n")
    );
}

#[test]
fn pinned_multi_tool_queries_are_complete_in_top_10() {
    let pins: &[(&str, &[&str])] = &[
        (
            "I need information on the current market trends and insights within the finance industry. Additionally, could you find me job listings for finance professionals specializing in market analysis using JobTool?",
            &["mcp:metatool:FinanceTool", "mcp:metatool:JobTool"],
        ),
        (
            "Please help me to create a new asset in the blockchain supply chain system. The asset I want to create is a raw material named Chainlink, and the manufacturer is Microsoft. After the creation, I need to retrieve information about an EKG machine. Lastly, I want to modify a specific gene sequence by deleting a section with the gene sequence CCGA.",
            &["openclaw:seal:createAsset", "openclaw:seal:modifyGene"],
        ),
        // Near-duplicate travel tools yield a slot to the housing tool (redundancy-aware selection).
        (
            "I want to plan a trip to a city with affordable housing options. Can you suggest any destinations with low housing prices? ",
            &["mcp:metatool:TripTool", "mcp:metatool:HousePurchasingTool"],
        ),
    ];
    for (query, expected) in pins {
        let got = top_ids(query, 10);
        for id in *expected {
            assert!(
                got.iter().any(|g| g == id),
                "{query:?}: {id} not in top 10 {got:?}"
            );
        }
    }
}

#[test]
fn a_short_page_is_a_prefix_of_a_longer_one() {
    for query in [
        "get the weather forecast and the latest news",
        "search the web for news articles",
        "create a new task",
    ] {
        let long = top_ids(query, 50);
        for limit in [1, 10, 30, 31, 40] {
            assert_eq!(
                top_ids(query, limit),
                long[..limit.min(long.len())],
                "{query:?} limit {limit}"
            );
        }
    }
}

#[test]
fn exact_id_and_name_come_first() {
    assert_eq!(
        top_ids("openclaw:seal:getWaterQuality", 1),
        vec!["openclaw:seal:getWaterQuality"]
    );
    assert_eq!(
        top_ids("getWaterQuality", 1),
        vec!["openclaw:seal:getWaterQuality"]
    );
    assert_eq!(top_ids("FinanceTool", 1), vec!["mcp:metatool:FinanceTool"]);
}

#[test]
fn results_are_deterministic_and_masked() {
    let f = fixture();
    let query = "search the web for news articles";
    let first = top_ids(query, 20);
    assert_eq!(first, top_ids(query, 20));
    let by_id: HashMap<&str, usize> = f
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let banned = by_id[first[0].as_str()];
    let masked = f.index.search(query, 20, &|o| o != banned);
    assert_eq!(masked.len(), 20);
    assert!(masked.iter().all(|h| h.ordinal != banned));
}

/// Parameter text inside schema branches is part of the catalog's content:
/// changing only a branch description gives a new fingerprint and a
/// re-indexed catalog, never a cached index of the old text (cache on).
#[test]
fn a_changed_branch_description_is_reindexed() {
    use tool_search_core::catalog::{Catalog, CatalogOptions, SearchOptions};
    let tool = |branch: &str| {
        serde_json::json!({
            "name": "convert_amount",
            "description": "Convert an amount.",
            "inputSchema": { "type": "object", "properties": {
                "amount": { "anyOf": [{ "type": "number" }, { "type": "string", "description": branch }] }
            } }
        })
    };
    let options = CatalogOptions::default();
    let before = Catalog::from_records(vec![tool("Figure written in euros")], &options).unwrap();
    let after = Catalog::from_records(vec![tool("Figure written in yen")], &options).unwrap();
    assert_ne!(before.fingerprint(), after.fingerprint());
    let names = |c: &Catalog, q: &str| {
        c.search(q, &SearchOptions::hits(None))
            .unwrap()
            .into_iter()
            .map(|h| h.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&before, "euros"), vec!["convert_amount"]);
    assert!(names(&before, "yen").is_empty());
    assert_eq!(names(&after, "yen"), vec!["convert_amount"]);
    assert!(names(&after, "euros").is_empty());
}

/// The scalar query cap counts as the tool_search schema's `maxLength` does
/// (JSON Schema: code points), so a character outside the BMP counts once.
#[test]
fn scalar_queries_up_to_4096_characters_are_accepted() {
    use tool_search_core::catalog::{Catalog, CatalogOptions, SearchOptions};
    use tool_search_core::error::ErrorCode;
    let c = Catalog::from_records(
        vec![serde_json::json!({ "name": "get_weather", "description": "Weather for a city." })],
        &CatalogOptions::default(),
    )
    .unwrap();
    let padded = |filler: &str, count: usize| format!("{}weather", filler.repeat(count));
    // 4,089 + 7 = 4,096 characters: accepted, and the capability at the end is still read.
    assert_eq!(
        c.search(&padded(" ", 4_089), &SearchOptions::hits(None))
            .unwrap()[0]
            .name,
        "get_weather"
    );
    assert_eq!(
        c.search(&padded(" ", 4_090), &SearchOptions::hits(None))
            .unwrap_err()
            .code,
        ErrorCode::InvalidQuery
    );
    // U+1F600 is one character (two UTF-16 units): 4,089 of them + 7 = 4,096 characters.
    assert!(c
        .search(&padded("\u{1F600}", 4_089), &SearchOptions::hits(None))
        .is_ok());
    assert_eq!(
        c.search(&padded("\u{1F600}", 4_090), &SearchOptions::hits(None))
            .unwrap_err()
            .code,
        ErrorCode::InvalidQuery
    );
}
