//! Parameter names and descriptions of a schema, for the search index.
//!
//! Iterative walk (explicit stack) over `properties`, nested objects, `items`,
//! `prefixItems`, `additionalProperties`, `anyOf`/`oneOf`/`allOf` and local
//! `$ref`s, bounded in depth, in visited nodes and in output size.

use std::collections::HashSet;

use serde_json::Value;

use super::refs::{ref_of, resolve_local};

/// Schema nodes visited per walk, whatever the depth: bounds wide schemas
/// (10,000 properties) and ref fan-out.
const MAX_VISITED_NODES: usize = 2_048;
/// Names returned by `param_names`.
pub const MAX_PARAM_NAMES: usize = 256;
/// Local `$ref` resolutions per walk.
const MAX_REF_HOPS: usize = 64;

/// `name: description` lines (or just `name` without a description), one per
/// property, in document order, depth-first: a nested object's properties
/// follow the property that holds them. Descriptions are whitespace-collapsed.
/// Names are left as-is (the search module tokenizes them).
///
/// `max_depth` counts property levels: 1 = top-level properties only. The
/// text stops at `max_chars` chars (cut on a char boundary).
pub fn param_text(schema: &Value, max_depth: usize, max_chars: usize) -> String {
    let mut out = String::new();
    let mut chars = 0usize;
    walk_properties(schema, max_depth, |name, description| {
        let mut line = String::with_capacity(name.len() + 2);
        if !out.is_empty() {
            line.push('\n');
        }
        line.push_str(name);
        if let Some(description) = description {
            let collapsed = collapse_whitespace(description);
            if !collapsed.is_empty() {
                line.push_str(": ");
                line.push_str(&collapsed);
            }
        }
        for c in line.chars() {
            if chars >= max_chars {
                return false;
            }
            out.push(c);
            chars += 1;
        }
        chars < max_chars
    });
    out
}

/// Property names at every level (up to `max_depth`), first occurrence
/// order, without duplicates, at most [`MAX_PARAM_NAMES`].
pub fn param_names(schema: &Value, max_depth: usize) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    walk_properties(schema, max_depth, |name, _| {
        if seen.insert(name.to_string()) {
            names.push(name.to_string());
        }
        names.len() < MAX_PARAM_NAMES
    });
    names
}

/// One pending step of the walk.
enum Step<'v> {
    /// A schema node whose properties sit at property level `level`.
    Schema(&'v Value, usize),
    /// A property to report, then descend into at `level + 1`.
    Property(&'v str, &'v Value, usize),
}

/// Calls `visit(name, description)` for each property found, depth-first in
/// document order, until it returns false or a bound is reached.
fn walk_properties<F>(root: &Value, max_depth: usize, mut visit: F)
where
    F: FnMut(&str, Option<&str>) -> bool,
{
    let mut stack: Vec<Step<'_>> = vec![Step::Schema(root, 1)];
    let mut visited = 0usize;
    let mut ref_hops = 0usize;
    while let Some(step) = stack.pop() {
        visited += 1;
        if visited > MAX_VISITED_NODES {
            return;
        }
        match step {
            Step::Property(name, prop, level) => {
                let description = prop.get("description").and_then(Value::as_str);
                if !visit(name, description) {
                    return;
                }
                stack.push(Step::Schema(prop, level + 1));
            }
            Step::Schema(node, level) => {
                if level > max_depth {
                    continue;
                }
                let Some(map) = node.as_object() else {
                    continue;
                };
                if let Some(reference) = ref_of(node) {
                    ref_hops += 1;
                    if ref_hops <= MAX_REF_HOPS {
                        if let Some(target) = resolve_local(root, reference) {
                            stack.push(Step::Schema(target, level));
                        }
                    }
                    continue;
                }
                // Pushed in reverse of the order they should be walked:
                // properties first, then items / maps, then combinators.
                // Bound every push: a 10,000-member list must not allocate
                // past what the walk could ever visit.
                let room = MAX_VISITED_NODES.saturating_sub(visited);
                for keyword in ["allOf", "oneOf", "anyOf", "prefixItems"] {
                    if let Some(Value::Array(members)) = map.get(keyword) {
                        let members = &members[..members.len().min(room)];
                        stack.extend(members.iter().rev().map(|m| Step::Schema(m, level)));
                    }
                }
                for keyword in ["additionalProperties", "items"] {
                    if let Some(child @ Value::Object(_)) = map.get(keyword) {
                        stack.push(Step::Schema(child, level));
                    }
                }
                if let Some(props) = map.get("properties").and_then(Value::as_object) {
                    let props: Vec<_> = props.iter().take(room).collect();
                    stack.extend(
                        props
                            .into_iter()
                            .rev()
                            .map(|(name, prop)| Step::Property(name.as_str(), prop, level)),
                    );
                }
            }
        }
    }
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
