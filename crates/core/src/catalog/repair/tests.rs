//! The repair's unit tests (a sibling file: they search, and the search layer sits above the
//! catalog data this module serves).

use serde_json::{json, Value};

use super::*;
use crate::catalog::{unreadable_record, CatalogOptions, SearchOptions, SourceSelector};

fn options(repair: bool) -> CatalogOptions {
    serde_json::from_value(json!({ "repair": repair, "cache": false })).unwrap()
}

fn build(tools: &[Value], repair: bool) -> Catalog {
    Catalog::from_json_text(&Value::from(tools.to_vec()).to_string(), &options(repair)).unwrap()
}

fn ids(catalog: &Catalog) -> Vec<String> {
    catalog.entries().map(|e| e.id.clone()).collect()
}

fn as_json<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .map(|x| serde_json::to_value(x).unwrap())
        .collect()
}

/// The record of a tool JSON could not express, with its readable fields.
fn unreadable(name: &str) -> String {
    let readable = json!({ "name": name, "description": "lists invoices" }).to_string();
    unreadable_record("JSON.stringify threw TypeError: BigInt", Some(&readable))
}

/// One tool of each repair, and ones without a repair.
fn odd_tools() -> Vec<Value> {
    let unreadable: Value = serde_json::from_str(&unreadable("list_invoices")).unwrap();
    vec![
        json!({ "name": "read_file", "description": "reads a file" }),
        json!({ "name": "tool_search", "description": "searches the web" }),
        json!({ "name": "send\u{200B}mail", "description": "sends an email" }),
        json!({ "name": "git:status", "description": "shows the git status" }),
        json!({ "name": "make_chart", "description": "draws a chart", "inputSchema": 5 }),
        unreadable,
        json!({ "name": "bad_mcp", "mcp": { "serverName": "s", "toolName": "t" } }),
        json!({ "name": "bad_label", "label": 5, "description": "labelled" }),
        json!({ "name": "bad_title", "title": [], "description": "titled" }),
        json!({ "name": "bad_description", "description": { "text": "x" } }),
        json!({ "name": "other_source", "source": "plugin", "owner": "p" }),
        json!({ "name": "owned", "owner": "team:a" }),
        json!({ "description": "a tool without a name" }),
        json!({ "name": "read_file", "description": "reads a file again" }),
        json!({ "name": "mismatched", "id": "openclaw:core:other" }),
        json!({ "name": "odd_mode", "catalogMode": "sometimes" }),
        json!("not a tool"),
    ]
}

#[test]
fn each_refusal_with_a_repair_is_indexed_in_the_same_build() {
    let catalog = build(&odd_tools(), true);
    let made: Vec<(usize, &str, Option<&str>, &str)> = catalog
        .repaired()
        .iter()
        .map(|r| (r.index, r.code.as_str(), r.field, r.id.as_str()))
        .collect();
    let missing_name = format!(
        "openclaw:core:{}",
        stand_in(r#"{"description":"a tool without a name"}"#)
    );
    assert_eq!(
        made,
        [
            (
                1,
                "CONTROL_TOOL",
                Some("name"),
                "openclaw:core:tool_search_2"
            ),
            (2, "INVALID_FIELD", Some("name"), "openclaw:core:sendmail"),
            (3, "INVALID_FIELD", Some("name"), "openclaw:core:git_status"),
            (
                4,
                "INVALID_SCHEMA",
                Some("inputSchema"),
                "openclaw:core:make_chart"
            ),
            (5, "UNREADABLE_RECORD", None, "openclaw:core:list_invoices"),
            (6, "INVALID_FIELD", Some("mcp"), "openclaw:core:bad_mcp"),
            (7, "INVALID_FIELD", Some("label"), "openclaw:core:bad_label"),
            (8, "INVALID_FIELD", Some("title"), "openclaw:core:bad_title"),
            (
                9,
                "INVALID_FIELD",
                Some("description"),
                "openclaw:core:bad_description"
            ),
            (10, "INVALID_FIELD", Some("source"), "client:p:other_source"),
            (11, "INVALID_FIELD", Some("owner"), "openclaw:team_a:owned"),
            (12, "INVALID_FIELD", Some("name"), missing_name.as_str()),
        ]
    );
    let changes: Vec<&str> = catalog
        .repaired()
        .iter()
        .map(|r| r.change.as_str())
        .collect();
    assert_eq!(changes[0], "renamed to openclaw:core:tool_search_2");
    assert_eq!(changes[3], "indexed without its input schema");
    assert_eq!(
        changes[4],
        "indexed by its source, owner, name and description only"
    );
    assert_eq!(changes[9], "indexed as a client tool");
    // The refusal is the one a build without repairs reports.
    let plain = build(&odd_tools(), false);
    for r in catalog.repaired() {
        let x = plain
            .excluded()
            .iter()
            .find(|x| x.index == r.index)
            .unwrap();
        assert_eq!(
            (x.code, x.field, x.reason.as_str()),
            (r.code, r.field, r.reason.as_str())
        );
    }
    // What stays excluded: the replaced duplicate and the refusals without a repair.
    let excluded: Vec<(usize, &str)> = catalog
        .excluded()
        .iter()
        .map(|x| (x.index, x.code.as_str()))
        .collect();
    assert_eq!(
        excluded,
        [
            (0, "DUPLICATE_ID"),
            (14, "INVALID_FIELD"),
            (15, "INVALID_FIELD"),
            (16, "UNREADABLE_RECORD")
        ]
    );
    assert!(
        catalog.control_named().is_empty(),
        "a renamed control tool is cataloged"
    );
    // Each repaired tool is found under its id, in its repaired form.
    for r in catalog.repaired() {
        let entry = catalog
            .resolve(&r.id, crate::catalog::LookupStyle::Structured)
            .unwrap();
        assert_eq!(entry.id, r.id);
    }
    let chart = catalog
        .resolve("openclaw:core:make_chart", Default::default())
        .unwrap();
    assert!(chart.input_schema.is_none());
    let invoices = catalog
        .resolve("openclaw:core:list_invoices", Default::default())
        .unwrap();
    assert_eq!(invoices.description, "lists invoices");
    let hits = catalog
        .search("send an email", &SearchOptions::hits(Some(3.0)))
        .unwrap();
    assert_eq!(hits[0].id, "openclaw:core:sendmail");
    let hits = catalog
        .search("searches the web", &SearchOptions::hits(Some(3.0)))
        .unwrap();
    assert_eq!(hits[0].id, "openclaw:core:tool_search_2");
}

#[test]
fn without_the_option_nothing_is_repaired() {
    let plain = build(&odd_tools(), false);
    assert!(plain.repaired().is_empty());
    assert_eq!(plain.excluded().len(), 16);
    assert_eq!(plain.control_named().len(), 1);
    // A catalog with nothing to repair is the same with the option.
    let fine = [json!({ "name": "a" }), json!({ "name": "b", "owner": "x" })];
    let (with, without) = (build(&fine, true), build(&fine, false));
    assert_eq!(with.fingerprint(), without.fingerprint());
    assert!(with.repaired().is_empty());
}

#[test]
fn a_record_with_several_refusals_is_repaired_for_each() {
    let catalog = build(
        &[json!({ "name": "tool_search\u{202E}", "owner": " me ", "parameters": [], "label": 1 })],
        true,
    );
    let made: Vec<(&str, Option<&str>, &str)> = catalog
        .repaired()
        .iter()
        .map(|r| (r.code.as_str(), r.field, r.id.as_str()))
        .collect();
    assert_eq!(
        made,
        [
            ("INVALID_FIELD", Some("label"), "openclaw:me:tool_search_2"),
            ("INVALID_FIELD", Some("name"), "openclaw:me:tool_search_2"),
            ("INVALID_FIELD", Some("owner"), "openclaw:me:tool_search_2"),
            (
                "INVALID_SCHEMA",
                Some("inputSchema"),
                "openclaw:me:tool_search_2"
            ),
        ]
    );
    assert_eq!(ids(&catalog), ["openclaw:me:tool_search_2"]);
}

#[test]
fn renamed_tools_take_no_other_tools_id() {
    let long = "x".repeat(MAX_NAME_CHARS + 20);
    let catalog = build(
        &[
            json!({ "name": "a:b" }),
            json!({ "name": "a_b" }),
            json!({ "name": "a\u{200D}_b" }),
            json!({ "name": long }),
            json!({ "name": format!("{long}y") }),
            json!({ "name": "a_b_2" }),
        ],
        true,
    );
    let long_cut = "x".repeat(MAX_NAME_CHARS);
    let long_second = format!("{}_2", "x".repeat(MAX_NAME_CHARS - 2));
    let mut want = vec![
        "openclaw:core:a_b".to_string(),
        "openclaw:core:a_b_2".to_string(),
        "openclaw:core:a_b_3".to_string(),
        "openclaw:core:a_b_4".to_string(),
        format!("openclaw:core:{long_cut}"),
        format!("openclaw:core:{long_second}"),
    ];
    want.sort();
    assert_eq!(ids(&catalog), want);
    assert!(catalog.excluded().is_empty());
    let renamed: Vec<(usize, &str)> = catalog
        .repaired()
        .iter()
        .map(|r| (r.index, r.id.as_str()))
        .collect();
    assert_eq!(renamed[0], (0, "openclaw:core:a_b_3"));
    assert_eq!(renamed[1], (2, "openclaw:core:a_b_4"));
}

#[test]
fn renames_are_bounded() {
    // More tools with one unsafe name than there are suffixes: the rest stay excluded.
    let tools: Vec<Value> = (0..MAX_SUFFIX + 20)
        .map(|i| json!({ "name": "a:b", "description": format!("tool {i}") }))
        .collect();
    let catalog = build(&tools, true);
    assert_eq!(catalog.size(), MAX_SUFFIX);
    assert_eq!(catalog.repaired().len(), MAX_SUFFIX);
    assert_eq!(catalog.excluded().len(), 20);
    assert!(catalog
        .excluded()
        .iter()
        .all(|x| x.code == ExclusionCode::InvalidField && x.field == Some("name")));
    // The build's total is bounded too, whatever the names.
    let mut repairs = Repairs::new(0, Vec::new);
    let id_of = |c: &str| format!("openclaw:core:{c}");
    let mut made = 0;
    for i in 0..RENAME_TRIES_BASE + 10 {
        if repairs.unique(&format!("n{i}"), 64, true, id_of).is_some() {
            made += 1;
        }
    }
    assert_eq!(made, RENAME_TRIES_BASE);
}

#[test]
fn duplicates_of_a_repaired_tool_stay_excluded() {
    let catalog = build(
        &[
            json!({ "name": "chart", "inputSchema": 5 }),
            json!({ "name": "chart", "description": "the later one" }),
            json!({ "name": "plot", "description": "first" }),
            json!({ "name": "plot", "inputSchema": 5 }),
        ],
        true,
    );
    let repaired: Vec<usize> = catalog.repaired().iter().map(|r| r.index).collect();
    assert_eq!(
        repaired,
        [3],
        "the replaced record is not reported as repaired"
    );
    let excluded: Vec<(usize, &str)> = catalog
        .excluded()
        .iter()
        .map(|x| (x.index, x.code.as_str()))
        .collect();
    assert_eq!(excluded, [(0, "DUPLICATE_ID"), (2, "DUPLICATE_ID")]);
}

#[test]
fn strict_builds_repair_and_refuse_the_rest() {
    let strict: CatalogOptions =
        serde_json::from_value(json!({ "repair": true, "strict": true })).unwrap();
    let text = json!([{ "name": "a:b" }, { "name": "c", "inputSchema": 5 }]).to_string();
    let catalog = Catalog::from_json_text(&text, &strict).unwrap();
    assert_eq!(catalog.repaired().len(), 2);
    let text = json!([{ "name": "a:b" }, { "name": "c", "catalogMode": "x" }]).to_string();
    let err = Catalog::from_json_text(&text, &strict).unwrap_err();
    assert!(
        err.message.starts_with("tool #1: unknown catalogMode"),
        "{}",
        err.message
    );
}

#[test]
fn a_repaired_catalog_shares_no_data_with_an_unrepaired_one() {
    let cached = |repair: bool| -> CatalogOptions {
        serde_json::from_value(json!({ "repair": repair })).unwrap()
    };
    let odd = json!([{ "name": "repair_cache_probe", "inputSchema": 5 }]).to_string();
    let plain = Catalog::from_json_text(&odd, &cached(false)).unwrap();
    let repaired = Catalog::from_json_text(&odd, &cached(true)).unwrap();
    assert_eq!((plain.size(), repaired.size()), (0, 1));
    assert_eq!(repaired.repaired().len(), 1);
    assert!(!Arc::ptr_eq(&plain.data, &repaired.data));
    // The same tool given without the schema: the same entry, but not the same catalog.
    let clean = json!([{ "name": "repair_cache_probe" }]).to_string();
    let clean = Catalog::from_json_text(&clean, &cached(true)).unwrap();
    assert_eq!(ids(&clean), ids(&repaired));
    assert_ne!(clean.fingerprint(), repaired.fingerprint());
    assert!(clean.repaired().is_empty());
}

/// A derived version and a full repaired build of its records agree on
/// everything a caller reads.
fn assert_full_build(derived: &Catalog, records: &[Arc<StoredRecord>]) {
    let full = Catalog::from_stored(records.to_vec(), &options(true)).unwrap();
    assert_eq!(ids(derived), ids(&full));
    assert_eq!(as_json(derived.excluded()), as_json(full.excluded()));
    assert_eq!(as_json(derived.repaired()), as_json(full.repaired()));
    assert_eq!(derived.fingerprint(), full.fingerprint());
    for query in ["chart", "send an email", "reads a file", "status"] {
        let found = |c: &Catalog| -> Vec<String> {
            c.search(query, &SearchOptions::hits(Some(10.0)))
                .unwrap()
                .into_iter()
                .map(|h| h.id)
                .collect()
        };
        assert_eq!(found(derived), found(&full), "{query}");
    }
}

fn server(owner: &str, tools: &[Value]) -> String {
    Value::from(
        tools
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t["source"] = Value::from("mcp");
                t["owner"] = Value::from(owner);
                t
            })
            .collect::<Vec<_>>(),
    )
    .to_string()
}

#[test]
fn derived_versions_repair_as_a_full_build() {
    let base_tools = [
        json!({ "name": "read_file", "description": "reads a file" }),
        json!({ "name": "chart", "description": "draws a chart", "inputSchema": 5 }),
    ];
    let base = build(&base_tools, true);
    let selector = |owner: &str| -> SourceSelector {
        serde_json::from_value(json!({ "source": "mcp", "owner": owner })).unwrap()
    };
    // Local repairs (a schema, a label): derived, not rebuilt.
    let mail = base
        .with_source(
            &selector("mail"),
            &server(
                "mail",
                &[
                    json!({ "name": "send", "description": "send an email", "label": 3 }),
                    json!({ "name": "status", "inputSchema": "any" }),
                ],
            ),
        )
        .unwrap();
    assert_eq!(mail.repaired().len(), 3);
    assert_eq!(
        mail.data.index_cache.state,
        crate::search::IndexCacheState::Derived
    );
    assert_full_build(&mail, &mail.data.records);
    // Renames among the added tools: unique among the kept ones too.
    let git = mail
        .with_source(
            &selector("git"),
            &server(
                "git",
                &[
                    json!({ "name": "git:status", "description": "git status" }),
                    json!({ "name": "git_status", "description": "plain" }),
                    json!({ "name": "tool_call" }),
                ],
            ),
        )
        .unwrap();
    let git_repairs: Vec<&str> = git
        .repaired()
        .iter()
        .filter(|r| r.id.starts_with("mcp:git:"))
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(git_repairs, ["mcp:git:git_status_2", "mcp:git:tool_call_2"]);
    assert!(git
        .repaired()
        .iter()
        .any(|r| r.id == "mcp:git:git_status_2"));
    assert_full_build(&git, &git.data.records);
    // A version of a catalog holding a renamed tool: built in full, equal to a full build.
    let replaced = git
        .with_source(
            &selector("mail"),
            &server("mail", &[json!({ "name": "send:now" })]),
        )
        .unwrap();
    assert_ne!(
        replaced.data.index_cache.state,
        crate::search::IndexCacheState::Derived
    );
    assert_full_build(&replaced, &replaced.data.records);
    let appended = git
        .append(&json!([{ "name": "git_status_2", "source": "mcp", "owner": "git" }]).to_string())
        .unwrap();
    assert_full_build(&appended, &appended.data.records);
    assert!(appended
        .repaired()
        .iter()
        .any(|r| r.id == "mcp:git:git_status_3"));
    // Removing the owner of repaired tools removes their repairs.
    let gone = git.with_source(&selector("git"), "[]").unwrap();
    assert!(gone
        .repaired()
        .iter()
        .all(|r| !r.id.starts_with("mcp:git:")));
    assert_full_build(&gone, &gone.data.records);
    // A duplicate replacing a repaired tool drops its repair.
    let again = mail
        .append(&server(
            "mail",
            &[json!({ "name": "status", "description": "fine now" })],
        ))
        .unwrap();
    assert!(again.repaired().iter().all(|r| r.id != "mcp:mail:status"));
    assert_full_build(&again, &again.data.records);
}

#[test]
fn updates_of_a_repaired_catalog_equal_a_full_build() {
    use crate::search::IndexCacheState::Derived;
    // Eight servers of five tools, each server's tools together; one schema to repair.
    let mut tools: Vec<Value> = (0..40)
        .map(|i| json!({ "source": "mcp", "owner": format!("s{}", i / 5), "name": format!("op{i}"), "description": format!("operation {i} exports reports") }))
        .collect();
    tools[1]["inputSchema"] = Value::from(5);
    let base = build(&tools, true);
    assert_eq!(base.repaired().len(), 1);
    let check = |from: &Catalog, next: &[Value], derived: bool| {
        let updated = from
            .update(&Value::from(next.to_vec()).to_string())
            .unwrap();
        let full = build(next, true);
        assert_eq!(ids(&updated), ids(&full));
        assert_eq!(as_json(updated.repaired()), as_json(full.repaired()));
        assert_eq!(as_json(updated.excluded()), as_json(full.excluded()));
        assert_eq!(updated.fingerprint(), full.fingerprint());
        assert_eq!(updated.data.index_cache.state == Derived, derived);
        updated
    };
    // The last server changed: the repaired record keeps its position, derived.
    let mut next = tools.clone();
    next[37]["description"] = Value::from("changed");
    check(&base, &next, true);
    // The first server changed: its records move behind the others in a derived
    // version, so the repair's position would too: a full build.
    let mut next = tools.clone();
    next[0]["description"] = Value::from("changed");
    check(&base, &next, false);
    // A newly odd tool in the last server: renamed in the derived version.
    let mut odd = tools.clone();
    odd[38]["name"] = Value::from("op:38");
    let renamed = check(&base, &odd, true);
    assert_eq!(renamed.repaired()[1].id, "mcp:s7:op_38");
    // A catalog holding a renamed tool: its next version is one full build.
    let mut next = odd.clone();
    next[32]["description"] = Value::from("changed");
    check(&renamed, &next, false);
}

#[test]
fn fields_are_split_without_reading_their_values() {
    let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
    let text =
        format!(r#" {{ "name" : "a,b:{{", "x":{deep}, "n\"k":{{"q":[1,{{}}]}}, "z": nul }} "#);
    let fields = Fields::of(&text).unwrap();
    let keys: Vec<&str> = fields.0.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["name", "x", "n\"k", "z"]);
    assert_eq!(fields.string("name").as_deref(), Some("a,b:{"));
    assert_eq!(fields.raw("z"), Some("nul"));
    assert_eq!(Fields::of("{}").map(|f| f.0.len()), Some(0));
    for bad in [
        "[]",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{\"a\":[1}",
        "{\"a\":\"x}",
        "{a:1}",
        "\"s\"",
    ] {
        assert!(Fields::of(bad).is_none(), "{bad}");
    }
    // A deep value in an unknown field: the record is read by its plain fields.
    let text = format!(r#"[{{"name":"deep_extra","description":"d","x":{deep}}}]"#);
    let catalog = Catalog::from_json_text(&text, &options(true)).unwrap();
    assert_eq!(ids(&catalog), ["openclaw:core:deep_extra"]);
    assert_eq!(catalog.repaired()[0].code, ExclusionCode::UnreadableRecord);
    let plain = Catalog::from_json_text(&text, &options(false)).unwrap();
    assert_eq!(plain.size(), 0);
}

#[test]
fn natural_ids_are_the_ids_records_name() {
    assert_eq!(
        natural_id(r#"{"name":"a"}"#).as_deref(),
        Some("openclaw:core:a")
    );
    assert_eq!(
        natural_id(r#"{"name":"a","source":"client","owner":null}"#).as_deref(),
        Some("client:client:a")
    );
    assert_eq!(natural_id(r#"{"name":"a","source":"x"}"#), None);
    assert_eq!(natural_id(r#"{"name":5}"#), None);
    assert_eq!(natural_id("[1]"), None);
}

#[test]
fn unreadable_records_carry_their_readable_fields() {
    let bare = unreadable_record("why", None);
    assert_eq!(
        bare,
        Value::from(format!("{}why", crate::catalog::UNREADABLE)).to_string()
    );
    assert_eq!(unreadable_record("why", Some("{}")), bare);
    assert_eq!(unreadable_record("why", Some("not json")), bare);
    let text = unreadable_record("why", Some(r#"{"name":"n","other":1,"owner":"o"}"#));
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value,
        json!({ crate::catalog::UNREADABLE: "why", "name": "n", "owner": "o" })
    );
    // Either form is excluded alike without repairs, with its reason.
    for text in [bare, text] {
        let catalog = Catalog::from_json_text(&format!("[{text}]"), &options(false)).unwrap();
        let x = &catalog.excluded()[0];
        assert_eq!(
            (x.code, x.reason.as_str()),
            (ExclusionCode::UnreadableRecord, "why")
        );
    }
    // Only a named one is repaired.
    let nameless = unreadable_record("why", Some(r#"{"owner":"o"}"#));
    let catalog = Catalog::from_json_text(&format!("[{nameless}]"), &options(true)).unwrap();
    assert_eq!(catalog.size(), 0);
}

#[test]
fn safe_identifiers_follow_the_catalogs_rules() {
    assert_eq!(safe_identifier(" a:\u{200B}b\u{7}\u{FE0F} ", 10), "a_b");
    assert_eq!(safe_identifier("\u{202E}\u{200B}", 10), "");
    assert_eq!(safe_identifier("abc def", 4), "abc");
    assert_eq!(suffixed("abcdef", 12, 6), "abc_12");
    assert_eq!(suffixed("ab", 1, 6), "ab");
    assert!(stand_in("x").starts_with("tool_") && stand_in("x").is_ascii());
}
