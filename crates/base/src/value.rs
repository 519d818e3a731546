//! The one walk over untrusted JSON values. Iterative on purpose: a recursive
//! walk is exactly what a deeply nested hostile value would use to exhaust
//! the stack.

use serde_json::Value;

/// Visits every value of `root` (containers and scalars, the root included)
/// in document order, with its depth, until `visit` returns an error.
///
/// Depth counts containers: a container's depth includes itself, a scalar
/// has its parent's depth. A root scalar is depth 0, `{}` and `[]` are depth
/// 1, the `[]` in `{"a": []}` is depth 2. A visitor that refuses a too-deep
/// container stops the walk before its items are queued, so the work done is
/// bounded by what the visitor accepts, not by the value.
pub fn walk<'a, E>(
    root: &'a Value,
    mut visit: impl FnMut(&'a Value, usize) -> Result<(), E>,
) -> Result<(), E> {
    // (value, depth of the container holding it)
    let mut stack: Vec<(&Value, usize)> = vec![(root, 0)];
    while let Some((node, parent_depth)) = stack.pop() {
        match node {
            Value::Array(items) => {
                let depth = parent_depth + 1;
                visit(node, depth)?;
                stack.extend(items.iter().rev().map(|item| (item, depth)));
            }
            Value::Object(map) => {
                let depth = parent_depth + 1;
                visit(node, depth)?;
                stack.extend(map.values().rev().map(|item| (item, depth)));
            }
            _ => visit(node, parent_depth)?,
        }
    }
    Ok(())
}

/// Number of JSON values (containers and scalars) in `value`; counting stops
/// past `cap` (the result is then `cap + 1`).
pub fn count_values(value: &Value, cap: usize) -> usize {
    let mut count = 0usize;
    let _ = walk(value, |_, _| {
        count += 1;
        if count > cap {
            Err(())
        } else {
            Ok(())
        }
    });
    count
}

/// Deepest container nesting in `value` (0 for a scalar), or `Err(limit)` as
/// soon as a container nests deeper than `limit`.
pub fn depth_within(value: &Value, limit: usize) -> Result<usize, usize> {
    let mut deepest = 0;
    walk(value, |_, depth| {
        if depth > limit {
            return Err(limit);
        }
        deepest = deepest.max(depth);
        Ok(())
    })?;
    Ok(deepest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_values_with_a_cap() {
        let v = json!({"a": [1, 2, {"b": null}], "c": "x"});
        assert_eq!(count_values(&v, 100), 7);
        assert_eq!(count_values(&v, 3), 4);
        assert_eq!(count_values(&json!(1), 0), 1);
        assert_eq!(count_values(&json!([]), 5), 1);
    }

    #[test]
    fn depth_counts_containers() {
        assert_eq!(depth_within(&json!(1), 0), Ok(0));
        assert_eq!(depth_within(&json!({}), 1), Ok(1));
        assert_eq!(depth_within(&json!({"a": []}), 2), Ok(2));
        assert_eq!(depth_within(&json!({"a": []}), 1), Err(1));
        assert_eq!(depth_within(&json!([[1], [[2]]]), 8), Ok(3));
    }

    #[test]
    fn visits_in_document_order_with_depths() {
        let v = json!({"a": [1, {"b": 2}], "c": 3});
        let mut seen = Vec::new();
        walk(&v, |node, depth| {
            seen.push((node.to_string(), depth));
            Ok::<(), ()>(())
        })
        .unwrap();
        let expected = [
            (r#"{"a":[1,{"b":2}],"c":3}"#, 1),
            (r#"[1,{"b":2}]"#, 2),
            ("1", 2),
            (r#"{"b":2}"#, 3),
            ("2", 3),
            ("3", 1),
        ];
        let seen: Vec<(&str, usize)> = seen.iter().map(|(s, d)| (s.as_str(), *d)).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn deep_values_do_not_overflow_the_stack() {
        let mut v = json!(0);
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        assert_eq!(count_values(&v, usize::MAX - 1), 100_001);
        assert_eq!(depth_within(&v, 64), Err(64));
        // Dropping a value this deep recurses in serde_json: leak it instead.
        std::mem::forget(v);
    }
}
