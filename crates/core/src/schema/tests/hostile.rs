//! Hostile schemas across every entry point: must return, never panic.

use serde_json::{json, Value};

use super::{nested_schema, wide_schema};
use crate::error::ErrorCode;
use crate::limits::{MAX_PARAM_INDEX_DEPTH, MAX_PARAM_TEXT_CHARS};
use crate::schema::{input_hint, output_hint, param_names, param_text, validate_args};

fn hostile_schemas() -> Vec<Value> {
    let huge_enum: Vec<Value> = (0..50_000).map(|i| json!(format!("value-{i}"))).collect();
    vec![
        nested_schema(120),
        json!({"$ref": "#"}),
        json!({"$ref": "http://example.com/x"}),
        json!({"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}),
        json!({"enum": huge_enum}),
        wide_schema(10_000, true),
        json!(true),
        json!(false),
        json!(12),
        json!("object"),
        json!(null),
        json!([{"type": "string"}]),
        json!({"type": "object", "properties": {"__proto__": {"type": "string"}, "constructor": {"$ref": "#/properties/__proto__"}}}),
        json!({"type": ["object", 5, null], "properties": [1, 2], "required": "a", "items": 3, "anyOf": {}, "allOf": []}),
        json!({"$ref": "#/a/b", "a": {"b": {"$ref": "#/a/b"}}}),
        json!({"$ref": "#%ZZ"}),
    ]
}

#[test]
fn every_entry_point_survives_hostile_schemas() {
    for schema in hostile_schemas() {
        let text = input_hint(Some(&schema));
        assert!(text.len() <= crate::limits::INPUT_HINT_MAX_CHARS, "{text}");
        if let Some(out) = output_hint(&schema) {
            assert!(out.len() <= crate::limits::OUTPUT_HINT_MAX_CHARS);
        }
        let params = param_text(&schema, MAX_PARAM_INDEX_DEPTH, MAX_PARAM_TEXT_CHARS);
        assert!(params.chars().count() <= MAX_PARAM_TEXT_CHARS);
        assert!(param_names(&schema, MAX_PARAM_INDEX_DEPTH).len() <= crate::schema::MAX_PARAM_NAMES);
        match validate_args(&schema, &json!({"a": 1})) {
            Ok(issues) => assert!(issues.len() <= crate::schema::MAX_ISSUES),
            Err(err) => assert_eq!(err.code, ErrorCode::InvalidSchema, "{schema:.80}: {err}"),
        }
    }
}
