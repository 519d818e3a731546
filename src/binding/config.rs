//! `resolveToolSearchConfig` and `toolSearchLimits`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use tool_search_core::config::ConfigEnv;
use tool_search_core::ErrorCode;
use tool_search_gateway::code_mode;

use super::convert::{dto, parsed};
use super::errors::{guard, JsCode};

/// Resolve a raw `tools.toolSearch` value once per run (contract §4).
#[napi(
    ts_args_type = "raw: unknown, env?: ConfigEnv",
    ts_return_type = "ResolvedToolSearchConfig"
)]
pub fn resolve_tool_search_config<'js>(
    js: &'js Env,
    raw: Option<Unknown>,
    env: Option<Unknown>,
) -> Result<Unknown<'js>, JsCode> {
    guard(|| {
        // `env.codeModeSupported`, else the probe's answer (false while it runs) and its reason.
        let what = "env must be { codeModeSupported?: boolean | null }";
        let env: Option<ConfigEnv> = dto(js, env, ErrorCode::InvalidConfig, what)?;
        let support = code_mode::declared_or_probed(env.and_then(|e| e.code_mode_supported));
        // Through JSON.stringify: NaN/Infinity become null and fall back to defaults.
        let what = "invalid tools.toolSearch value";
        let raw: Value = dto(js, raw, ErrorCode::InvalidConfig, what)?;
        parsed(js, &code_mode::resolve_config(&raw, support))
    })
}

/// The contract's defaults and clamps (code timeout, search limits), as the config resolves them.
#[napi(ts_return_type = "ToolSearchLimits")]
pub fn tool_search_limits(env: &Env) -> Result<Unknown<'_>, JsCode> {
    guard(|| parsed(env, &tool_search_core::config::CONTRACT_LIMITS))
}
