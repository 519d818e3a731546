//! `resolveToolSearchConfig` and `toolSearchLimits`.

use napi_derive::napi;
use serde_json::Value;

use tool_search_core::config::ConfigEnv;
use tool_search_core::ErrorCode;

use super::errors::{guard, to_js, JsCode};

/// `env.codeModeSupported`: whether this host can run code mode; default: the
/// probe's answer (`codeModeCapability().available`; false while it runs), then
/// with the reason `mode: 'code'` falls back (the probe is pending, or what it found).
fn code_mode_supported(
    js: &napi::Env,
    env: Option<napi::bindgen_prelude::Unknown>,
) -> Result<(bool, Option<String>), napi::Error<JsCode>> {
    let what = "env must be { codeModeSupported?: boolean | null }";
    let env: Option<ConfigEnv> = super::convert::dto(js, env, ErrorCode::InvalidConfig, what)?;
    let declared = env.and_then(|e| e.code_mode_supported);
    Ok(tool_search_gateway::code_mode::declared_or_probed(declared))
}

/// Resolve a raw `tools.toolSearch` value once per run (contract §4).
#[napi(
    ts_args_type = "raw: unknown, env?: ConfigEnv",
    ts_return_type = "ResolvedToolSearchConfig"
)]
pub fn resolve_tool_search_config(
    js: napi::Env,
    raw: Option<napi::bindgen_prelude::Unknown>,
    env: Option<napi::bindgen_prelude::Unknown>,
) -> napi::Result<Value, JsCode> {
    guard(|| {
        let (supported, why_not) = code_mode_supported(&js, env)?;
        // Through JSON.stringify: NaN/Infinity become null and fall back to defaults.
        let what = "invalid tools.toolSearch value";
        let raw: Value = super::convert::dto(&js, raw, ErrorCode::InvalidConfig, what)?;
        let mut resolved = tool_search_core::config::resolve(&raw, supported);
        if let (Some(fallback), Some(why_not)) = (resolved.fallback_reason.as_mut(), why_not) {
            *fallback = why_not;
        }
        serde_json::to_value(resolved)
            .map_err(|e| to_js(tool_search_core::Error::internal(e.to_string())))
    })
}

/// What `new ToolSearchSession(catalog, config)` runs on its `config`: a raw
/// `tools.toolSearch` value resolves exactly as `resolveToolSearchConfig` does
/// on this host (probed code-mode support); a resolved config is read back.
pub(crate) fn resolve_for_session(raw: &Value) -> tool_search_core::config::ResolvedConfig {
    tool_search_core::config::resolve_for_session(
        raw,
        tool_search_gateway::code_mode::support().is_ok(),
    )
}

/// The contract's defaults and clamps (code timeout, search limits), as the config resolves them.
#[napi(ts_return_type = "ToolSearchLimits")]
pub fn tool_search_limits(
    env: &napi::Env,
) -> napi::Result<napi::bindgen_prelude::Unknown<'_>, JsCode> {
    guard(|| super::convert::parsed(env, &tool_search_core::config::CONTRACT_LIMITS))
}
