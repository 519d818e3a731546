//! Hostile schemas across every entry point: must return, never panic.

use serde_json::{json, Value};

use super::{nested_schema, wide_schema};
use crate::error::ErrorCode;
use crate::schema::{input_hint, output_hint, schema_cost, validate_args, CostError};

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
        match validate_args(&schema, &json!({"a": 1})) {
            Ok(issues) => assert!(issues.len() <= crate::schema::MAX_ISSUES),
            Err(err) => assert_eq!(err.code, ErrorCode::InvalidSchema, "{schema:.80}: {err}"),
        }
    }
}

/// The issue's schema: `$defs` where each level is `anyOf` of two refs to the
/// next, `depth` levels (2^depth checks of one value on the old validator).
pub(crate) fn fanout_schema(depth: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for level in 0..depth {
        let next = format!("#/$defs/d{}", level + 1);
        defs.insert(
            format!("d{level}"),
            json!({ "anyOf": [{ "$ref": next }, { "$ref": next }] }),
        );
    }
    defs.insert(format!("d{depth}"), json!({ "type": "string" }));
    json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/d0" } }, "$defs": defs })
}

fn too_expensive(schema: &Value) -> String {
    match schema_cost(schema) {
        Err(CostError::TooExpensive(why)) => why,
        other => panic!("expected TooExpensive for {schema:.120}, got {other:?}"),
    }
}

#[test]
fn ref_fanout_is_rejected_by_the_cost_analysis() {
    for depth in [20, 21, 30] {
        let schema = fanout_schema(depth);
        let why = too_expensive(&schema);
        assert!(
            why.starts_with("too expensive to validate: up to "),
            "{why}"
        );
        assert!(
            why.contains("subschema checks per value (limit 1000)"),
            "{why}"
        );
        // validate_args refuses it before compiling (the old validator ran 2^depth checks).
        let err = validate_args(&schema, &json!({"x": 1})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidSchema);
        assert!(
            err.message
                .starts_with("Invalid input schema: too expensive to validate"),
            "{err}"
        );
    }
    // Exact bound at `x`: level k applies itself, two `$ref` holders and the
    // next level twice (3 + 2 * next), the leaf 1: 2^(depth + 2) - 3 at level
    // 0, plus the property schema holding the first $ref.
    assert_eq!(schema_cost(&fanout_schema(3)).unwrap().checks_per_value, 30);
    assert_eq!(
        schema_cost(&fanout_schema(7)).unwrap().checks_per_value,
        510
    );
    too_expensive(&fanout_schema(8));
}

/// A tree: `children` items are the whole schema again (recursion that
/// descends one value per level).
pub(crate) fn tree_schema() -> Value {
    json!({"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#"}},
        "parent": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}})
}

#[test]
fn descending_recursion_is_accepted_and_validates() {
    let cost = schema_cost(&tree_schema()).unwrap();
    assert!(cost.checks_per_value <= 4, "{cost:?}");
    let mut args = json!({"name": "leaf"});
    for level in 0..15 {
        args =
            json!({"name": format!("n{level}"), "children": [args, {"name": 5}], "parent": null});
    }
    let issues = validate_args(&tree_schema(), &args).unwrap();
    assert_eq!(issues.len(), 15, "{issues:?}");
    // Definitions the usual generators emit (pydantic `$defs`, zod `definitions`).
    let linked = json!({"$ref": "#/definitions/Node", "definitions": {"Node": {"type": "object", "properties": {
        "value": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#/definitions/Node"}, {"type": "null"}]}}}}});
    assert!(schema_cost(&linked).unwrap().checks_per_value <= 4);
    assert_eq!(
        validate_args(
            &linked,
            &json!({"value": 1, "next": {"value": "x", "next": null}})
        )
        .unwrap()
        .len(),
        1
    );
}

#[test]
fn fanout_through_nested_values_is_rejected() {
    // Each level applies the root twice to the same child: 2^depth at depth `depth`.
    let doubling =
        json!({"type": "object", "properties": {"a": {"allOf": [{"$ref": "#"}, {"$ref": "#"}]}}});
    too_expensive(&doubling);
    // A key matched by `properties` and `patternProperties` gets both.
    let both =
        json!({"properties": {"a": {"$ref": "#"}}, "patternProperties": {"^a": {"$ref": "#"}}});
    too_expensive(&both);
    // ...but `additionalProperties` only applies to keys nothing else matched.
    let exclusive =
        json!({"properties": {"a": {"$ref": "#"}}, "additionalProperties": {"$ref": "#"}});
    // (the `$ref` holder and the root it applies: 2 at every level)
    assert_eq!(schema_cost(&exclusive).unwrap().checks_per_value, 2);
}

#[test]
fn in_place_ref_cycles_are_rejected() {
    for schema in [
        json!({"anyOf": [{"$ref": "#"}, {"type": "string"}]}),
        json!({"$ref": "#/$defs/a", "$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}}}),
    ] {
        let why = too_expensive(&schema);
        assert!(why.contains("$ref cycle"), "{why}");
    }
    // The validator drops a self-reference, so this one stays accepted.
    assert!(schema_cost(&json!({"$ref": "#"})).is_ok());
}

#[test]
fn fanout_hidden_behind_anchors_and_ids_is_found() {
    let mut anchors = serde_json::Map::new();
    let mut resources = serde_json::Map::new();
    for level in 0..20 {
        anchors.insert(
            format!("d{level}"),
            json!({"$anchor": format!("a{level}"),
            "anyOf": [{"$ref": format!("#a{}", level + 1)}, {"$ref": format!("#a{}", level + 1)}]}),
        );
        resources.insert(format!("d{level}"), json!({"$id": format!("https://example.com/r{level}.json"),
            "anyOf": [{"$ref": format!("r{}.json", level + 1)}, {"$ref": format!("r{}.json#", level + 1)}]}));
    }
    anchors.insert("d20".into(), json!({"$anchor": "a20", "type": "string"}));
    resources.insert(
        "d20".into(),
        json!({"$id": "https://example.com/r20.json", "type": "string"}),
    );
    too_expensive(&json!({"$defs": anchors, "$ref": "#a0"}));
    too_expensive(
        &json!({"$id": "https://example.com/root.json", "$defs": resources, "$ref": "r0.json"}),
    );
    // A reference nothing in the document answers is left to the compiler
    // (which works offline and fails it).
    assert!(matches!(
        schema_cost(&json!({"$ref": "https://example.com/x.json"})),
        Err(CostError::Unfollowable(_))
    ));
    // Meta-schemas are bundled with the validator.
    assert!(schema_cost(
        &json!({"properties": {"schema": {"$ref": "http://json-schema.org/draft-07/schema#"}}})
    )
    .is_ok());
}

#[test]
fn arguments_beyond_the_validation_budget_are_refused() {
    // 7 levels: 510 checks per value, so 1960 values fit the budget.
    let mut schema = fanout_schema(7);
    schema["properties"] = json!({"items": {"type": "array", "items": {"$ref": "#/$defs/d0"}}});
    let compiled = crate::schema::CompiledSchema::compile(&schema).unwrap();
    let small: Vec<Value> = (0..100).map(|i| json!(format!("s{i}"))).collect();
    assert!(compiled.validate(&json!({"items": small})).is_empty());
    let large: Vec<Value> = (0..5_000).map(|i| json!(format!("s{i}"))).collect();
    let issues = compiled.validate(&json!({"items": large}));
    assert_eq!(issues.len(), 1);
    assert!(
        issues[0]
            .message
            .starts_with("Arguments too large to validate against this schema: 5002 JSON values"),
        "{issues:?}"
    );
    // Invalid arguments beyond the report budget: the first issue only.
    let failing = json!({"items": vec![1; 1_000]});
    assert_eq!(compiled.validate(&failing).len(), 1);
    let few = json!({"items": vec![1; 3]});
    assert_eq!(compiled.validate(&few).len(), 3);
    // A cheap schema takes far larger arguments.
    let cheap = crate::schema::CompiledSchema::compile(
        &json!({"type": "array", "items": {"type": "string"}}),
    )
    .unwrap();
    let many: Vec<Value> = (0..50_000).map(|i| json!(format!("s{i}"))).collect();
    assert!(cheap.validate(&Value::Array(many)).is_empty());
    assert_eq!(cheap.validate(&json!(vec![1; 50_000])).len(), 1);
    assert_eq!(
        cheap.validate(&json!(vec![1; 100])).len(),
        crate::schema::MAX_ISSUES
    );
}

#[test]
fn catastrophic_patterns_fail_the_value_instead_of_running_on() {
    // A back-reference forces the backtracking engine; nested quantifiers
    // make it exponential in the input length.
    let schema = json!({"type": "string", "pattern": "^(a|a)*\\1b$"});
    let issues = validate_args(&schema, &json!("a".repeat(40))).unwrap();
    assert_eq!(issues.len(), 1, "{issues:?}");
    // Plain patterns (no look-around or back-reference) stay exact.
    let plain = json!({"type": "string", "pattern": "^(a+)+$"});
    assert!(validate_args(&plain, &json!("a".repeat(10_000)))
        .unwrap()
        .is_empty());
    assert_eq!(
        validate_args(&plain, &json!(format!("{}b", "a".repeat(10_000))))
            .unwrap()
            .len(),
        1
    );
}

/// Tool schemas as the wild writes them (the 13k-tool dev catalog): none is
/// too expensive. Prints the distribution of the bound.
#[test]
fn dev_catalog_schemas_are_not_rejected() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/data/retrieval-dev/catalog.jsonl");
    let text = std::fs::read_to_string(&path).expect("dev catalog");
    let (mut schemas, mut rejected, mut worst) = (0usize, Vec::new(), 0u64);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line).unwrap();
        for key in ["inputSchema", "outputSchema"] {
            let Some(schema) = record.get(key).filter(|s| s.is_object()) else {
                continue;
            };
            schemas += 1;
            match schema_cost(schema) {
                Ok(cost) => worst = worst.max(cost.checks_per_value),
                Err(err) => rejected.push(format!("{}: {}", record["id"], err.reason())),
            }
        }
    }
    println!(
        "dev catalog: {schemas} schemas, {} rejected, worst bound {worst} checks per value",
        rejected.len()
    );
    assert!(schemas > 4_000);
    assert!(rejected.is_empty(), "{rejected:?}");
}

/// The shortcut the catalog takes for most schemas agrees with the analysis:
/// a schema it passes as a tree is within the bound, with no more checks per
/// value than it has values; schemas with references always get the analysis.
#[test]
fn a_small_schema_without_references_is_within_the_bound() {
    use crate::schema::within_bound_as_a_tree;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/data/retrieval-dev/catalog.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut passed = 0;
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(schema) = record.get("inputSchema") else {
            continue;
        };
        if within_bound_as_a_tree(schema) {
            passed += 1;
            let values = crate::schema::measure(schema, 64, usize::MAX)
                .unwrap()
                .values;
            let cost = schema_cost(schema).expect("within the bound");
            assert!(cost.checks_per_value <= values, "{schema}");
        }
    }
    assert!(passed > 4_000, "{passed}");
    assert!(!within_bound_as_a_tree(&fanout_schema(1)));
    assert!(!within_bound_as_a_tree(
        &json!({ "$ref": "#/$defs/a", "$defs": { "a": {} } })
    ));
    assert!(!within_bound_as_a_tree(
        &json!({ "properties": { "a": { "$dynamicRef": "#x" } } })
    ));
    // A wide anyOf without references: passes only while small.
    let wide = json!({ "anyOf": (0..2000).map(|i| json!({ "minimum": i })).collect::<Vec<_>>() });
    assert!(!within_bound_as_a_tree(&wide));
}
