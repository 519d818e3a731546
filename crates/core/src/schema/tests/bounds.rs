use serde_json::{json, Map, Value};

use super::nested_schema;
use crate::schema::check_bounds;

#[test]
fn depth_counts_containers() {
    assert!(check_bounds(&json!("scalar"), 0, 100).is_ok());
    assert!(check_bounds(&json!({}), 1, 100).is_ok());
    assert!(check_bounds(&json!({}), 0, 100).is_err());
    assert!(check_bounds(&json!({"a": []}), 2, 100).is_ok());
    let err = check_bounds(&json!({"a": [1]}), 1, 100).unwrap_err();
    assert!(err.contains("deeper than 1"), "{err}");
}

#[test]
fn deep_schema_is_rejected_without_recursion() {
    // Each level is two containers deep (object + properties map).
    let schema = nested_schema(120);
    let err = check_bounds(&schema, crate::limits::MAX_JSON_DEPTH, usize::MAX).unwrap_err();
    assert!(err.contains("deeper than 64"), "{err}");
    assert!(check_bounds(
        &nested_schema(20),
        crate::limits::MAX_JSON_DEPTH,
        usize::MAX
    )
    .is_ok());
}

#[test]
fn size_matches_compact_serialization_without_escapes() {
    let mut props = Map::new();
    for i in 0..10_000 {
        props.insert(
            format!("p{i}"),
            json!({"type": "string", "n": i, "neg": -i, "f": 1.5, "b": true, "z": null}),
        );
    }
    let value = json!({"properties": props, "list": [1, "two", [], {}]});
    let exact = serde_json::to_string(&value).unwrap().len();
    assert!(check_bounds(&value, 8, exact).is_ok());
    let err = check_bounds(&value, 8, exact - 1).unwrap_err();
    assert!(err.contains("larger than"), "{err}");
}

#[test]
fn size_limit_stops_early_on_huge_values() {
    let big: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
    assert!(check_bounds(&Value::Array(big), 4, crate::limits::MAX_SCHEMA_BYTES).is_err());
    assert!(check_bounds(&json!("x".repeat(100)), 4, 50).is_err());
}
