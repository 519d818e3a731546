//! Local `$ref` lookup shared by the hint renderer and the parameter walker.
//! Only same-document refs (`#` and `#/json/pointer`) resolve; anything else
//! (remote URLs, anchors, relative files) is unresolvable here by design: the
//! core never fetches.

use serde_json::Value;

/// Resolves a same-document `$ref` against `root`, or None.
pub fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() {
        return Some(root);
    }
    if !fragment.starts_with('/') {
        return None; // `#anchor` style: not supported
    }
    let decoded = percent_decode(fragment)?;
    root.pointer(&decoded)
}

/// The `$ref` string of a schema object, if it has one.
pub fn ref_of(schema: &Value) -> Option<&str> {
    schema.get("$ref").and_then(Value::as_str)
}

/// Minimal `%XX` decoding for JSON pointers in URI fragments.
fn percent_decode(input: &str) -> Option<String> {
    if !input.contains('%') {
        return Some(input.to_string());
    }
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = input.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
