use serde_json::{json, Value};

use super::{nested_schema, wide_schema};
use crate::error::ErrorCode;
use crate::schema::{validate_args, ArgumentIssue, CompiledSchema, MAX_ISSUES};

fn issues(schema: Value, args: Value) -> Vec<ArgumentIssue> {
    validate_args(&schema, &args).expect("schema compiles")
}

fn messages(schema: Value, args: Value) -> Vec<String> {
    issues(schema, args)
        .into_iter()
        .map(|i| i.message)
        .collect()
}

fn address_schema() -> Value {
    json!({"type": "object", "required": ["marker", "address"], "additionalProperties": false, "properties": {
        "marker": {"type": "string"},
        "mode": {"enum": ["drip", "flood"]},
        "zip_code": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {"type": "object", "required": ["city"], "additionalProperties": false, "properties": {
            "city": {"type": "string"}, "street": {"type": "string"}}}}})
}

#[test]
fn valid_args_have_no_issues() {
    assert!(issues(
        address_schema(),
        json!({"marker": "m", "address": {"city": "Paris"}, "tags": ["a"]})
    )
    .is_empty());
}

#[test]
fn missing_required_property() {
    let found = issues(address_schema(), json!({"address": {"city": "Paris"}}));
    assert_eq!(
        found,
        vec![ArgumentIssue {
            path: String::new(),
            message: r#"Missing required property "marker"."#.into(),
            suggestion: None
        }]
    );
}

#[test]
fn wrong_type_names_both_types() {
    assert_eq!(
        messages(
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            json!({"city": 5})
        ),
        vec![r#"Property "city" must be a string, got number."#]
    );
    assert_eq!(
        messages(json!({"type": "object"}), json!([1])),
        vec!["Arguments must be an object, got array."]
    );
    assert_eq!(
        messages(
            json!({"properties": {"n": {"type": ["integer", "null"]}}}),
            json!({"n": "x"})
        ),
        vec![r#"Property "n" must be an integer or null, got string."#]
    );
}

#[test]
fn unexpected_property_with_suggestion() {
    let found = issues(
        address_schema(),
        json!({"marker": "m", "address": {"city": "P"}, "mod": "drip"}),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, "");
    assert_eq!(
        found[0].message,
        r#"Unexpected property "mod". Did you mean: mode?"#
    );
    assert_eq!(found[0].suggestion.as_deref(), Some("mode"));
}

#[test]
fn nested_paths_are_json_pointers() {
    // Validator order: additionalProperties is checked before required.
    let found = issues(
        address_schema(),
        json!({"marker": "m", "address": {"cty": "Paris"}}),
    );
    assert_eq!(
        found,
        vec![
            ArgumentIssue {
                path: "/address".into(),
                message: r#"Unexpected property "cty" at /address. Did you mean: city?"#.into(),
                suggestion: Some("city".into()),
            },
            ArgumentIssue {
                path: "/address".into(),
                message: r#"Missing required property "city" at /address. Found "cty"; did you mean: city?"#.into(),
                suggestion: Some("city".into()),
            },
        ]
    );
    let found = issues(
        address_schema(),
        json!({"marker": "m", "address": {"city": 5}, "tags": ["a", 2]}),
    );
    let paths: Vec<&str> = found.iter().map(|i| i.path.as_str()).collect();
    // Issues follow the order of the arguments object.
    assert_eq!(paths, vec!["/address/city", "/tags/1"]);
    assert_eq!(
        found[1].message,
        "Value at /tags/1 must be a string, got number."
    );
    assert_eq!(
        found[0].message,
        "Value at /address/city must be a string, got number."
    );
}

#[test]
fn suggestions_are_case_and_separator_insensitive() {
    for (wrong, right) in [
        ("Marker", "marker"),
        ("zipCode", "zip_code"),
        ("ZIP-CODE", "zip_code"),
        ("makrer", "marker"),
        ("tag", "tags"),
    ] {
        let found = issues(
            address_schema(),
            json!({"address": {"city": "P"}, wrong: "x"}),
        );
        let unexpected = found
            .iter()
            .find(|i| i.message.starts_with("Unexpected"))
            .expect("unexpected issue");
        assert_eq!(
            unexpected.suggestion.as_deref(),
            Some(right),
            "{wrong}: {found:?}"
        );
        assert!(
            unexpected
                .message
                .ends_with(&format!("Did you mean: {right}?")),
            "{found:?}"
        );
    }
    // Nothing close: list the allowed names instead.
    let found = issues(
        address_schema(),
        json!({"marker": "m", "address": {"city": "P"}, "qqqqqqq": 1}),
    );
    assert_eq!(found[0].suggestion, None);
    assert_eq!(
        found[0].message,
        r#"Unexpected property "qqqqqqq". Allowed: marker, mode, zip_code, tags, address."#
    );
    // A name the caller already supplied is not suggested again.
    let found = issues(
        address_schema(),
        json!({"marker": "m", "address": {"city": "P"}, "markers": 1}),
    );
    assert_eq!(found[0].suggestion, None, "{found:?}");
}

#[test]
fn enum_and_const_messages() {
    assert_eq!(
        messages(
            address_schema(),
            json!({"marker": "m", "address": {"city": "P"}, "mode": "trickle"})
        ),
        vec![r#"Property "mode" must be one of: "drip", "flood"; got "trickle"."#]
    );
    assert_eq!(
        messages(
            json!({"properties": {"k": {"const": "fixed"}}}),
            json!({"k": "other"})
        ),
        vec![r#"Property "k" must be "fixed"; got "other"."#]
    );
}

#[test]
fn bad_values_are_quoted_briefly() {
    let long = "y".repeat(5_000);
    let found = messages(
        address_schema(),
        json!({"marker": "m", "address": {"city": "P"}, "mode": long}),
    );
    assert!(found[0].chars().count() < 200, "{}", found[0]);
    assert!(found[0].contains('…'));
    let many: Vec<String> = (0..100).map(|i| format!("opt{i}")).collect();
    let found = messages(
        json!({"properties": {"e": {"enum": many}}}),
        json!({"e": [1, 2, 3]}),
    );
    assert_eq!(
        found,
        vec![
            r#"Property "e" must be one of: "opt0", "opt1", "opt2", "opt3", "opt4", "opt5", "opt6", "opt7", ... (92 more); got an array of 3 items."#
        ]
    );
}

#[test]
fn issues_are_capped() {
    let found = issues(wide_schema(3_000, true), json!({}));
    assert_eq!(found.len(), MAX_ISSUES);
    assert_eq!(found[0].message, r#"Missing required property "p0"."#);
}

#[test]
fn formats_are_not_asserted() {
    let schema = json!({"properties": {"email": {"type": "string", "format": "email"}, "when": {"type": "string", "format": "date-time"}}});
    assert!(issues(schema, json!({"email": "not an email", "when": "soon"})).is_empty());
}

#[test]
fn local_refs_work_and_feed_suggestions() {
    let schema = json!({"type": "object", "properties": {"address": {"$ref": "#/$defs/Address"}},
        "$defs": {"Address": {"type": "object", "additionalProperties": false, "properties": {"city": {"type": "string"}}}}});
    let found = issues(schema, json!({"address": {"cty": "Paris"}}));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, "/address");
    assert_eq!(found[0].suggestion.as_deref(), Some("city"));
}

#[test]
fn recursive_schemas_validate_without_hanging() {
    let tree = json!({"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#"}}});
    let found = issues(tree, json!({"child": {"child": {"name": 5}}}));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path, "/child/child/name");
    // `{"$ref": "#"}` refers only to itself: it constrains nothing.
    assert_eq!(
        validate_args(&json!({"$ref": "#"}), &json!({"a": 1})).map(|v| v.len()),
        Ok(0)
    );
}

#[test]
fn remote_refs_are_invalid_schemas_and_never_fetched() {
    for schema in [
        json!({"$ref": "http://example.com/x"}),
        json!({"properties": {"a": {"$ref": "https://127.0.0.1:9/s.json"}}}),
    ] {
        let err = validate_args(&schema, &json!({"a": 1})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidSchema, "{err}");
        assert!(err.message.starts_with("Invalid input schema: "), "{err}");
    }
}

#[test]
fn invalid_schemas_are_errors() {
    let oversized = wide_schema(10_000, true); // > MAX_SCHEMA_BYTES
    for schema in [
        json!({"type": 5}),
        json!({"pattern": "("}),
        json!("string"),
        json!(3),
        json!(null),
        json!([]),
        nested_schema(120),
        oversized,
    ] {
        let err = validate_args(&schema, &json!({})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidSchema, "{schema:.60}");
        assert!(err.message.chars().count() <= 300);
    }
}

#[test]
fn boolean_schemas() {
    assert!(issues(json!(true), json!({"anything": 1})).is_empty());
    assert_eq!(
        messages(json!(false), json!({})),
        vec!["This tool accepts no arguments."]
    );
    assert_eq!(
        messages(json!({"properties": {"x": false}}), json!({"x": 1})),
        vec![r#"Property "x" is not allowed."#]
    );
}

#[test]
fn weird_keys_work() {
    let schema = json!({"type": "object", "required": ["__proto__"], "additionalProperties": false, "properties": {"__proto__": {"type": "string"}, "a/b~c": {"type": "number"}}});
    assert_eq!(
        messages(schema.clone(), json!({})),
        vec![r#"Missing required property "__proto__"."#]
    );
    assert_eq!(
        messages(schema.clone(), json!({"__proto__": 1})),
        vec![r#"Property "__proto__" must be a string, got number."#]
    );
    let found = issues(schema.clone(), json!({"__proto__": "x", "a/b~c": "no"}));
    assert_eq!(found[0].path, "/a~1b~0c");
    let found = issues(schema, json!({"__proto__": "x", "constructor": {}}));
    assert_eq!(
        found[0].message,
        r#"Unexpected property "constructor". Allowed: __proto__, a/b~c."#
    );
}

#[test]
fn deep_args_are_one_issue() {
    let mut args = json!(1);
    for _ in 0..100 {
        args = json!([args]);
    }
    let found = issues(json!({}), args);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path, "");
}

#[test]
fn compiled_schema_is_shared_across_threads() {
    let compiled = CompiledSchema::compile(&address_schema()).expect("compiles");
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let compiled = compiled.clone();
            std::thread::spawn(move || {
                compiled.validate(&json!({"marker": i, "address": {"city": "P"}}))
            })
        })
        .collect();
    for handle in handles {
        let found = handle.join().expect("thread");
        assert_eq!(
            found[0].message,
            r#"Property "marker" must be a string, got number."#
        );
    }
    assert_eq!(compiled.schema(), &address_schema());
}

#[test]
fn declared_drafts_compile() {
    for draft in [
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2020-12/schema",
    ] {
        let schema = json!({"$schema": draft, "type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
        assert_eq!(
            messages(schema, json!({})),
            vec![r#"Missing required property "a"."#],
            "{draft}"
        );
    }
}

#[test]
fn unknown_draft_uri() {
    let schema =
        json!({"$schema": "http://example.com/my-dialect", "type": "object", "required": ["a"]});
    // Compiled under the default draft instead of rejected.
    assert_eq!(
        messages(schema, json!({})),
        vec![r#"Missing required property "a"."#]
    );
    // Still invalid for another reason: that reason is reported.
    let err = validate_args(
        &json!({"$schema": "http://example.com/x", "type": 5}),
        &json!({}),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidSchema);
    assert!(!err.message.contains("meta-schema"), "{err}");
}

#[test]
fn deepest_accepted_schema_validates() {
    // 31 levels = 63 containers, just under MAX_JSON_DEPTH.
    let schema = nested_schema(31);
    let mut args = json!(5);
    for _ in 0..31 {
        args = json!({"child": args});
    }
    let found = issues(schema, args);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path, "/child".repeat(31));
}

#[test]
fn union_mismatch_names_the_allowed_forms() {
    // mcp:biomcp:fetch `detail`, from the retrieval-dev catalog.
    let schema = json!({"properties": {"detail": {"anyOf": [{"enum": ["protocol", "locations", "outcomes", "references", "all", "full"], "type": "string"}, {"type": "null"}], "default": null, "title": "Detail"}}, "type": "object"});
    assert_eq!(
        messages(schema, json!({"detail": 3})),
        vec![
            r#"Property "detail" must be "protocol" | "locations" | "outcomes" | "references" | "all" | "full" | null; got 3."#
        ]
    );
    let schema = json!({"properties": {"id": {"oneOf": [{"type": "string"}, {"$ref": "#/$defs/N"}]}}, "$defs": {"N": {"type": "integer"}}});
    assert_eq!(
        messages(schema, json!({"id": true})),
        vec![r#"Property "id" must be string | number /* integer */; got true."#]
    );
}

#[test]
fn draft4_idioms_without_schema_uri_compile() {
    // Shape of mcp:pdf-reader-mcp:read_pdf in the retrieval-dev catalog.
    let schema = json!({"type": "object", "properties": {"page": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}}});
    assert!(issues(schema.clone(), json!({"page": 3})).is_empty());
    assert_eq!(
        messages(schema, json!({"page": 0})),
        vec![r#"Property "page" must be > 0; got 0."#]
    );
}
