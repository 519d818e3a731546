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
pub fn resolve_tool_search_config(
    js: napi::Env,
    raw: Option<napi::bindgen_prelude::Unknown>,
    env: Option<ConfigEnv>,
) -> napi::Result<Value, JsCode> {
    guard(|| {
        let supported = env.and_then(|e| e.code_mode_supported).unwrap_or_else(super::code_mode::code_mode_supported);
        // Through JSON.stringify: NaN/Infinity become null and fall back to defaults.
        let raw = match raw {
            None => Value::Null,
            Some(raw) => super::catalog::json_value(&js, raw, tool_search_core::ErrorCode::InvalidConfig, "invalid tools.toolSearch value")?,
        };
        let resolved = tool_search_core::config::resolve(&raw, supported);
        serde_json::to_value(resolved).map_err(|e| to_js(tool_search_core::Error::internal(e.to_string())))
    })
}

/// What `new ToolSearchSession(catalog, config)` runs on its `config`: a raw
/// `tools.toolSearch` value resolves exactly as `resolveToolSearchConfig` does
/// on this host (probed code-mode support); a resolved config is read back.
pub(crate) fn resolve_for_session(raw: &Value) -> tool_search_core::config::ResolvedConfig {
    tool_search_core::config::resolve_for_session(raw, super::code_mode::code_mode_supported())
}
