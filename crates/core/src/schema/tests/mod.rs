//! Unit tests of the schema module: `cargo test -p tool-search-core schema`.

mod bounds;
mod hint;
pub(crate) mod hostile;
mod validate;

use serde_json::{json, Map, Value};

/// `{"type":"object","properties":{"child": <inner>}}` nested `depth` times,
/// built iteratively so the builder itself does not recurse.
pub(super) fn nested_schema(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        schema = json!({"type": "object", "properties": {"child": schema}});
    }
    schema
}

/// An object schema with `count` string properties `p0..`, all required if asked.
pub(super) fn wide_schema(count: usize, required: bool) -> Value {
    let mut props = Map::new();
    for i in 0..count {
        props.insert(
            format!("p{i}"),
            json!({"type": "string", "description": format!("param {i}")}),
        );
    }
    let names: Vec<Value> = if required {
        (0..count).map(|i| json!(format!("p{i}"))).collect()
    } else {
        vec![]
    };
    json!({"type": "object", "properties": props, "required": names})
}
