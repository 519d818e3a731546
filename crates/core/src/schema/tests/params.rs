use serde_json::json;

use super::{nested_schema, wide_schema};
use crate::schema::{param_names, param_text};

fn sample() -> serde_json::Value {
    json!({"type": "object", "properties": {
        "userId": {"type": "string", "description": "The   user\n id"},
        "address": {"type": "object", "description": "Postal address", "properties": {
            "city": {"type": "string", "description": "City name"},
            "zip_code": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "object", "properties": {"label": {"description": "Tag label"}}}},
        "filter": {"anyOf": [{"type": "object", "properties": {"from_date": {"type": "string"}}}, {"type": "null"}]},
        "owner": {"$ref": "#/$defs/Owner"}},
        "$defs": {"Owner": {"type": "object", "properties": {"ownerEmail": {"type": "string", "description": "Email"}}}}})
}

#[test]
fn lines_follow_document_order_depth_first() {
    assert_eq!(
        param_text(&sample(), 4, 4096),
        "userId: The user id\naddress: Postal address\ncity: City name\nzip_code\ntags\nlabel: Tag label\nfilter\nfrom_date\nowner\nownerEmail: Email"
    );
}

#[test]
fn depth_bounds_the_walk() {
    assert_eq!(
        param_text(&sample(), 1, 4096),
        "userId: The user id\naddress: Postal address\ntags\nfilter\nowner"
    );
    assert_eq!(param_text(&sample(), 0, 4096), "");
    let deep = param_text(&nested_schema(120), 4, 4096);
    assert_eq!(deep, "child\nchild\nchild\nchild");
}

#[test]
fn chars_bound_the_text() {
    let text = param_text(&sample(), 4, 25);
    assert_eq!(text, "userId: The user id\naddre");
    let wide = param_text(&wide_schema(10_000, false), 4, 4096);
    assert_eq!(wide.chars().count(), 4096);
    assert!(wide.starts_with("p0: param 0\np1: param 1\n"));
    // Cut on a char boundary.
    let unicode = json!({"properties": {"é": {"description": "ééééé"}}});
    assert_eq!(param_text(&unicode, 4, 4), "é: é");
}

#[test]
fn cycles_and_garbage_terminate() {
    assert_eq!(param_text(&json!({"$ref": "#"}), 4, 4096), "");
    let tree = json!({"type": "object", "properties": {"node": {"$ref": "#"}}});
    assert_eq!(param_text(&tree, 4, 4096), "node\nnode\nnode\nnode");
    assert_eq!(param_text(&json!(true), 4, 4096), "");
    assert_eq!(param_text(&json!({"properties": 5}), 4, 4096), "");
    assert_eq!(
        param_text(
            &json!({"properties": {"a": 5, "b": {"description": 7}}}),
            4,
            4096
        ),
        "a\nb"
    );
}

#[test]
fn names_are_deduplicated_and_bounded() {
    assert_eq!(
        param_names(&sample(), 4),
        vec![
            "userId",
            "address",
            "city",
            "zip_code",
            "tags",
            "label",
            "filter",
            "from_date",
            "owner",
            "ownerEmail"
        ]
    );
    assert_eq!(
        param_names(
            &json!({"type": "object", "properties": {"node": {"$ref": "#"}}}),
            4
        ),
        vec!["node"]
    );
    assert_eq!(
        param_names(&wide_schema(10_000, false), 4).len(),
        crate::schema::MAX_PARAM_NAMES
    );
}
