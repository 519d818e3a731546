//! `tool_call` / `tool_describe` argument repair: the shapes models actually
//! send (dotted keys, selectors that are arguments, empty or null wrappers,
//! double-wrapped calls) against a real catalog.

use serde_json::{json, Value};

use super::args::{parse_call, parse_describe, CallSpec};
use crate::catalog::{Catalog, CatalogOptions, LookupStyle};
use crate::error::ErrorCode;

fn catalog() -> Catalog {
    let tools = vec![
        json!({ "name": "get_weather", "owner": "weather", "description": "Current weather for a city.",
                "inputSchema": { "type": "object", "properties": { "city": { "type": "string" }, "units": { "type": "string" } } } }),
        json!({ "name": "read_file", "description": "Read a file.",
                "inputSchema": { "type": "object", "properties": { "path": { "type": "string" }, "range": { "type": "object" } } } }),
        json!({ "name": "get_record", "description": "Fetch a record by its id.",
                "inputSchema": { "type": "object", "properties": { "id": { "type": "string" } } } }),
        json!({ "name": "create_user", "description": "Create a user with a display name.",
                "inputSchema": { "type": "object", "properties": { "name": { "type": "string" } } } }),
        json!({ "name": "send_message", "description": "Send a message.",
                "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } } }),
    ];
    Catalog::from_records(tools, &CatalogOptions::default()).unwrap()
}

fn call(c: &Catalog, raw: Value) -> CallSpec {
    match parse_call(c, &raw, LookupStyle::Structured) {
        Ok(spec) => spec,
        Err(e) => panic!("{raw} -> {e:?}"),
    }
}

fn name_of(c: &Catalog, spec: &CallSpec) -> String {
    c.entry(spec.ordinal).unwrap().name.clone()
}

fn refused(c: &Catalog, raw: Value) -> ErrorCode {
    match parse_call(c, &raw, LookupStyle::Structured) {
        Ok(spec) => panic!("{raw} was accepted: {spec:?}"),
        Err(e) => e.code,
    }
}

#[test]
fn dotted_keys_become_nested_arguments() {
    let c = catalog();
    let spec = call(&c, json!({ "id": "read_file", "args.path": "x" }));
    assert_eq!(
        (name_of(&c, &spec).as_str(), &spec.args),
        ("read_file", &json!({ "path": "x" }))
    );
    assert!(spec.repaired.unwrap().contains("dotted"));
    let spec = call(
        &c,
        json!({ "id": "read_file", "input.path": "x", "arguments.range.start": 3, "args.range.end": 9 }),
    );
    assert_eq!(
        spec.args,
        json!({ "path": "x", "range": { "start": 3, "end": 9 } })
    );
    // Ordinary flattened keys win over dotted ones.
    let spec = call(
        &c,
        json!({ "id": "read_file", "path": "plain", "args.path": "dotted" }),
    );
    assert_eq!(spec.args, json!({ "path": "plain" }));
    // Explicit args win over dotted keys and are merged with the dotted extras.
    let spec = call(
        &c,
        json!({ "id": "read_file", "args": { "path": "explicit", "range": { "start": 1 } },
                                "args.path": "dotted", "args.range.start": 5, "args.range.end": 7 }),
    );
    assert_eq!(
        spec.args,
        json!({ "path": "explicit", "range": { "start": 1, "end": 7 } })
    );
    // A key that merely contains a dot is an ordinary argument.
    assert_eq!(
        call(&c, json!({ "id": "read_file", "path.txt": 1 })).args,
        json!({ "path.txt": 1 })
    );
    // Conflicting dotted keys and empty segments are refused, not guessed.
    assert_eq!(
        refused(
            &c,
            json!({ "id": "read_file", "args.range": 1, "args.range.start": 2 })
        ),
        ErrorCode::InvalidRequest
    );
    let deep: String = format!("args.{}", vec!["a"; 40].join("."));
    assert_eq!(
        refused(&c, json!({ "id": "read_file", deep: 1 })),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        call(&c, json!({ "id": "read_file", "args..x": 1 })).args,
        json!({ "args..x": 1 })
    );
}

#[test]
fn selectors_not_needed_to_identify_the_tool_are_arguments() {
    let c = catalog();
    let spec = call(&c, json!({ "toolId": "get_record", "id": "record-7" }));
    assert_eq!(
        (name_of(&c, &spec).as_str(), &spec.args),
        ("get_record", &json!({ "id": "record-7" }))
    );
    let spec = call(&c, json!({ "id": "create_user", "name": "x" }));
    assert_eq!(
        (name_of(&c, &spec).as_str(), &spec.args),
        ("create_user", &json!({ "name": "x" }))
    );
    // `name` naming another tool next to explicit args: the id's tool runs with the args.
    let spec = call(
        &c,
        json!({ "id": "get_weather", "name": "send_message", "args": { "city": "Paris" } }),
    );
    assert_eq!(
        (name_of(&c, &spec).as_str(), &spec.args),
        ("get_weather", &json!({ "city": "Paris" }))
    );
    // Agreeing selectors are not arguments.
    let spec = call(
        &c,
        json!({ "id": "openclaw:weather:get_weather", "name": "get_weather", "city": "Paris" }),
    );
    assert_eq!(spec.args, json!({ "city": "Paris" }));
    // Two different tools and no explicit args: refused.
    for raw in [
        json!({ "id": "get_weather", "name": "send_message" }),
        json!({ "toolId": "get_weather", "id": "send_message", "city": "Paris" }),
        json!({ "id": "get_weather", "toolId": "send_message", "args": {} }),
    ] {
        assert_eq!(refused(&c, raw), ErrorCode::AmbiguousTool);
    }
    // Nothing names a tool: the strongest selector's error.
    assert_eq!(
        refused(&c, json!({ "id": "record-7", "name": "x" })),
        ErrorCode::ToolNotFound
    );
}

#[test]
fn empty_and_null_wrappers_next_to_flattened_keys() {
    let c = catalog();
    for raw in [
        json!({ "id": "get_weather", "args": {}, "city": "Paris" }),
        json!({ "id": "get_weather", "input": {}, "city": "Paris" }),
        json!({ "id": "get_weather", "args": "{}", "city": "Paris" }),
        json!({ "id": "get_weather", "args": null, "city": "Paris" }),
        json!({ "id": "get_weather", "input": null, "args": { "city": "Paris" } }),
        json!({ "id": "get_weather", "args": {}, "input": { "city": "Paris" } }),
    ] {
        assert_eq!(
            call(&c, raw.clone()).args,
            json!({ "city": "Paris" }),
            "{raw}"
        );
    }
    // Non-empty args next to ordinary flattened keys stay refused.
    assert_eq!(
        refused(
            &c,
            json!({ "id": "get_weather", "args": { "city": "x" }, "units": "metric" })
        ),
        ErrorCode::InvalidRequest
    );
}

#[test]
fn double_wrapped_payloads_are_hoisted() {
    let c = catalog();
    for raw in [
        json!({ "args": { "id": "get_weather", "args": { "city": "Paris" } } }),
        json!({ "input": { "id": "get_weather", "args": { "city": "Paris" } } }),
        json!({ "arguments": "{\"toolId\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}" }),
        json!({ "args": { "name": "get_weather", "city": "Paris" }, "input": null }),
    ] {
        let spec = call(&c, raw.clone());
        assert_eq!(
            (name_of(&c, &spec).as_str(), &spec.args),
            ("get_weather", &json!({ "city": "Paris" })),
            "{raw}"
        );
        assert!(spec.repaired.unwrap().contains("unwrapped"));
    }
    // Not a wrapped call: the wrapper holds no selector, or sits next to other keys.
    assert_eq!(
        refused(&c, json!({ "args": { "city": "Paris" } })),
        ErrorCode::InvalidRequest
    );
    assert_eq!(
        refused(
            &c,
            json!({ "args": { "id": "get_weather" }, "city": "Paris" })
        ),
        ErrorCode::InvalidRequest
    );
    let described = |raw: Value| {
        parse_describe(&c, &raw, LookupStyle::Structured)
            .map(|(_, o)| c.entry(o).unwrap().name.clone())
    };
    assert_eq!(
        described(json!({ "input": { "id": "get_weather" } })).unwrap(),
        "get_weather"
    );
    assert_eq!(
        described(json!({ "args": { "toolId": "send_message" } })).unwrap(),
        "send_message"
    );
    assert_eq!(
        described(json!({ "input": { "query": "weather" } }))
            .unwrap_err()
            .code,
        ErrorCode::InvalidRequest
    );
}

#[test]
fn bounded_query_cuts_long_queries_at_a_word_within_the_limit() {
    use super::args::bounded_query;
    use crate::limits::MAX_QUERY_CHARS;
    assert_eq!(
        bounded_query("send a message".into()),
        ("send a message".to_string(), None)
    );
    let exact = "é".repeat(MAX_QUERY_CHARS);
    assert_eq!(bounded_query(exact.clone()), (exact, None));
    // Words: cut at the last space of the final 64 characters.
    let words = "word ".repeat(1_000);
    let (cut, total) = bounded_query(words.clone());
    assert_eq!(total, Some(5_000));
    assert!(
        cut.chars().count() <= MAX_QUERY_CHARS && cut.ends_with("word"),
        "{}",
        &cut[cut.len() - 10..]
    );
    assert!(words.starts_with(&cut));
    // No space near the end (one long token, multi-byte): a hard cut on a char boundary.
    let (cut, total) = bounded_query("日".repeat(MAX_QUERY_CHARS + 10));
    assert_eq!(
        (cut.chars().count(), total),
        (MAX_QUERY_CHARS, Some(MAX_QUERY_CHARS + 10))
    );
}
