//! `resolveToolSearchConfig`.

use napi_derive::napi;
use serde_json::Value;

use super::errors::{guard, to_js, JsCode};

#[napi(object)]
pub struct ConfigEnv {
    /// Whether this host can run code mode. Default: probed once
    /// (`codeModeCapability().available`).
    pub code_mode_supported: Option<bool>,
}

/// Resolve a raw `tools.toolSearch` value once per run (contract §4).
#[napi(ts_args_type = "raw: unknown, env?: ConfigEnv", ts_return_type = "ResolvedToolSearchConfig")]
pub fn resolve_tool_search_config(raw: Option<Value>, env: Option<ConfigEnv>) -> napi::Result<Value, JsCode> {
    guard(|| {
        let supported = env.and_then(|e| e.code_mode_supported).unwrap_or_else(super::code_mode::code_mode_supported);
        let resolved = tool_search_core::config::resolve(&raw.unwrap_or(Value::Null), supported);
        serde_json::to_value(resolved).map_err(|e| to_js(tool_search_core::Error::internal(e.to_string())))
    })
}
