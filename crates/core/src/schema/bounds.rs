//! Depth and size guard for untrusted JSON, run before a schema is stored or
//! compiled. On the shared iterative walk ([`tool_search_base::value::walk`]):
//! a recursive one is what a deeply nested hostile value would use to
//! exhaust the stack.

use serde_json::Value;

/// Checks that `value` nests at most `max_depth` containers deep and that its
/// compact serialization is at most about `max_bytes` bytes.
///
/// Depth counts containers: a scalar is depth 0, `{}` and `[]` are depth 1,
/// `{"a": []}` is depth 2. The size is approximate (string escapes are not
/// counted) and the walk stops as soon as either limit is exceeded, so the cost
/// is bounded by the limits, not by the value.
pub fn check_bounds(value: &Value, max_depth: usize, max_bytes: usize) -> Result<(), String> {
    measure(value, max_depth, max_bytes).map(|_| ())
}

/// Size of a JSON value that passed [`check_bounds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonSize {
    /// Values (nodes) in the tree: containers and scalars, the root included.
    pub values: u64,
    /// Approximate compact serialization length.
    pub bytes: usize,
}

/// [`check_bounds`], also returning the size it measured.
pub fn measure(value: &Value, max_depth: usize, max_bytes: usize) -> Result<JsonSize, String> {
    let mut bytes: usize = 0;
    let mut values: u64 = 0;
    tool_search_base::value::walk(value, |node, depth| {
        values += 1;
        match node {
            Value::Null => bytes += 4,
            Value::Bool(b) => bytes += if *b { 4 } else { 5 },
            Value::Number(n) => bytes += number_len(n),
            Value::String(s) => bytes += s.len() + 2,
            Value::Array(items) => {
                if depth > max_depth {
                    return Err(too_deep(max_depth));
                }
                // brackets + commas
                bytes += 2 + items.len().saturating_sub(1);
            }
            Value::Object(map) => {
                if depth > max_depth {
                    return Err(too_deep(max_depth));
                }
                // braces + commas, then per key: quotes + colon
                bytes += 2 + map.len().saturating_sub(1);
                for (key, _) in map.iter() {
                    bytes += key.len() + 3;
                }
            }
        }
        // Checked before a container's items are queued: the walk stops here.
        if bytes > max_bytes {
            return Err(too_big(max_bytes));
        }
        Ok(())
    })?;
    Ok(JsonSize { values, bytes })
}

/// Serialized length of a number without allocating for the common integer case.
fn number_len(n: &serde_json::Number) -> usize {
    if let Some(i) = n.as_i64() {
        let digits = i
            .unsigned_abs()
            .checked_ilog10()
            .map_or(1, |d| d as usize + 1);
        digits + usize::from(i < 0)
    } else if let Some(u) = n.as_u64() {
        u.checked_ilog10().map_or(1, |d| d as usize + 1)
    } else {
        n.to_string().len()
    }
}

/// The refusal of a value nested deeper than `max_depth` (one wording everywhere).
pub fn too_deep(max_depth: usize) -> String {
    format!("JSON is nested deeper than {max_depth} levels.")
}

fn too_big(max_bytes: usize) -> String {
    format!("JSON is larger than {max_bytes} bytes.")
}
