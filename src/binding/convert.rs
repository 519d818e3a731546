//! The one way values cross the boundary.
//!
//! In: every structured argument goes through the realm's `JSON.stringify`
//! (NaN and Infinity become `null`, `undefined` and functions are dropped,
//! exactly as a JS gateway would serialize them), then `serde_json`; strings
//! and numbers are read by type, and a value of the wrong type is a coded
//! error (`INVALID_REQUEST`, `INVALID_QUERY`, …), never a napi status string.
//! Out: results are serialized once and rebuilt by `JSON.parse` (one string
//! crosses instead of one napi call per property; a `__proto__` key stays an
//! own property).

use napi::bindgen_prelude::*;
use serde_json::Value;
use tool_search_core::ErrorCode;

use super::errors::{invalid, js_error, JsResult};

/// `object[name]` of the realm's global `object` (`JSON.parse`, `Array.from`), as found.
pub fn global_function<'env, Args: JsValuesTupleIntoVec, Return: FromNapiValue>(
    env: &'env Env,
    object: &str,
    name: &str,
) -> napi::Result<Function<'env, Args, Return>> {
    let object: Unknown = env.get_global()?.get_named_property(object)?;
    // SAFETY: `JSON` is an object and `Array` a function, which is an object too; the view only
    // reads one property of it.
    unsafe { object.cast::<Object>() }?.get_named_property(name)
}

/// `JSON.stringify(value, fields)` (`fields`: a replacer list of the top-level fields to
/// write, or all): `None` for values JSON cannot represent (undefined, functions). Throws
/// (BigInt, a throwing getter, a cycle, nesting deeper than V8's stack) come back as the
/// error's message.
pub fn stringify(
    env: &Env,
    value: Unknown,
    fields: Option<&[&str]>,
) -> std::result::Result<Option<String>, String> {
    type Replacer<'a> = Option<Vec<&'a str>>;
    let text = || -> napi::Result<Option<String>> {
        let stringify: Function<FnArgs<(Unknown, Replacer)>, Unknown> =
            global_function(env, "JSON", "stringify")?;
        let out = stringify.call((value, fields.map(<[&str]>::to_vec)).into())?;
        match out.get_type()? {
            // SAFETY: the value's type was read just above.
            ValueType::String => unsafe { out.cast::<String>() }.map(Some),
            _ => Ok(None),
        }
    };
    text().map_err(|e| e.reason.clone())
}

/// The one serializer of results: their JSON text. A value serde cannot
/// write (a failing `Serialize`, a map with non-string keys) is an INTERNAL
/// error saying so, never `null`.
pub fn json_text<T: serde::Serialize + ?Sized>(value: &T) -> JsResult<String> {
    serde_json::to_string(value).map_err(|e| {
        js_error(
            ErrorCode::Internal,
            format!("the result could not be serialized: {e}"),
        )
    })
}

/// A result as a JS value through `JSON.parse` (ten search hits: ~20 µs
/// instead of ~150 µs through per-property conversion).
pub fn parsed<'env, T: serde::Serialize + ?Sized>(
    env: &'env Env,
    value: &T,
) -> JsResult<Unknown<'env>> {
    parse_text(env, json_text(value)?)
}

/// A core result as a JS value ([`parsed`]), or its coded error.
pub fn answer<'env, T: serde::Serialize>(
    env: &'env Env,
    result: tool_search_core::Result<T>,
) -> JsResult<Unknown<'env>> {
    parsed(env, &result.map_err(super::errors::to_js)?)
}

/// JSON text (already serialized) as a JS value through `JSON.parse`.
pub fn parse_text(env: &Env, text: String) -> JsResult<Unknown<'_>> {
    let internal = |e: napi::Error| js_error(ErrorCode::Internal, e.reason.clone());
    let parse: Function<String, Unknown> =
        global_function(env, "JSON", "parse").map_err(internal)?;
    parse.call(text).map_err(internal)
}

/// A structured argument read into its DTO through `JSON.stringify` and serde (absent,
/// `undefined`, `null` and values JSON drops read as JSON `null`, so `Option<Dto>` is `None`);
/// a failure is a `code` error starting with `what`.
pub fn dto<T: serde::de::DeserializeOwned>(
    env: &Env,
    value: Option<Unknown>,
    code: ErrorCode,
    what: &str,
) -> JsResult<T> {
    let failed = |e: &dyn std::fmt::Display| js_error(code, format!("{what}: {e}"));
    let text = match present(value)? {
        Some(value) => stringify(env, value, None).map_err(|e| failed(&e))?,
        None => None,
    };
    let value = match text {
        Some(text) => serde_json::from_str(&text).map_err(|e| failed(&e))?,
        None => Value::Null,
    };
    serde_json::from_value(value).map_err(|e| failed(&e))
}

/// `value` unless it is absent, `undefined` or `null`.
pub fn present(value: Option<Unknown>) -> JsResult<Option<Unknown>> {
    match value {
        Some(v) if !matches!(value_type(&v)?, ValueType::Undefined | ValueType::Null) => {
            Ok(Some(v))
        }
        _ => Ok(None),
    }
}

/// A function argument (`None` when absent), or INVALID_REQUEST "{what} must be a function".
pub fn function_arg<'a>(value: Option<Unknown<'a>>, what: &str) -> JsResult<Option<Unknown<'a>>> {
    match present(value)? {
        Some(v) if value_type(&v)? != ValueType::Function => {
            Err(invalid(format!("{what} must be a function")))
        }
        v => Ok(v),
    }
}

pub fn value_type(value: &Unknown) -> JsResult<ValueType> {
    value
        .get_type()
        .map_err(|e| js_error(ErrorCode::InvalidRequest, e.reason.clone()))
}

/// An argument of type `want` read as `T`, or a `code` error: "{what} must be {a}."
fn typed<'a, T: FromNapiValue + 'a>(
    value: Unknown<'a>,
    want: ValueType,
    (code, what, a): (ErrorCode, &str, &str),
) -> JsResult<T> {
    if value_type(&value)? != want {
        return Err(js_error(code, format!("{what} must be {a}.")));
    }
    // SAFETY: the value's type was read just above.
    unsafe { value.cast::<T>() }.map_err(|e| js_error(code, e.reason.clone()))
}

/// A string argument, or a `code` error naming it.
pub fn string_arg(value: Unknown, code: ErrorCode, what: &str) -> JsResult<String> {
    typed(value, ValueType::String, (code, what, "a string"))
}

/// A number argument (any finite or non-finite number), or a `code` error.
pub fn number_arg(value: Unknown, code: ErrorCode, what: &str) -> JsResult<f64> {
    typed(value, ValueType::Number, (code, what, "a number"))
}

/// An object argument (not null, not a function), or a `code` error.
pub fn object_arg<'a>(value: Unknown<'a>, code: ErrorCode, what: &str) -> JsResult<Object<'a>> {
    typed(value, ValueType::Object, (code, what, "an object"))
}

/// A named property of an object, `None` when `undefined` or `null`.
pub fn property<'a>(object: &Object<'a>, name: &str) -> JsResult<Option<Unknown<'a>>> {
    let value: Unknown = object
        .get_named_property(name)
        .map_err(|e| invalid(format!("cannot read {name}: {}", e.reason)))?;
    present(Some(value))
}

/// JSON writes NaN and ±Infinity as `null`, which a DTO reads as absent: a number option that
/// must be finite is checked on the JS value first, so such a value is refused, not defaulted.
pub fn refuse_non_finite(object: &Object, name: &str, message: &str) -> JsResult<()> {
    if let Some(value) = property(object, name)? {
        if value_type(&value)? == ValueType::Number
            && !number_arg(value, ErrorCode::InvalidRequest, name)?.is_finite()
        {
            return Err(js_error(ErrorCode::InvalidRequest, message.to_string()));
        }
    }
    Ok(())
}
