//! `runCodeCell`: one code-mode cell for a gateway that keeps its own Tool Search runtime
//! (OpenClaw's `ToolSearchRuntime`, through `openclaw-tool-search/openclaw`). Converts the
//! arguments; the cell runs in `tool_search_gateway::code_mode::run_cell` (the same contained
//! child, pool, budgets and deadline as a session's `tool_search_code`), and every
//! `openclaw.tools.search/describe/call` goes over the channel to the gateway's `bridge`
//! function, so its policy, counters, hooks and result shapes are the gateway's own.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_search_core::ErrorCode;
use tool_search_gateway::channel::Target;
use tool_search_gateway::code_mode::{self, CellOptions};

use super::convert::{dto, function_arg, object_arg, present, property, string_arg};
use super::errors::{guard, invalid, JsCode};
use super::promise::{abort_signal, json_promise, AbortListener};

/// Runs one code cell in the contained child, with every `openclaw.tools.*` request answered
/// by `options.bridge(op, args, signal)` (`op` is `search`, `describe` or `call`; `args` the
/// positional arguments as JSON). Resolves with the run's result; never rejects for the cell's
/// own failures (`ok: false`, `error.code`).
#[napi(
    ts_args_type = "code: string, options: CodeCellOptions",
    ts_return_type = "Promise<CodeCellResult>"
)]
pub fn run_code_cell<'env>(
    env: &'env Env,
    code: Unknown,
    options: Unknown,
) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
    let mut listener: Option<AbortListener> = None;
    let cell = guard(|| {
        let code = string_arg(code, ErrorCode::InvalidRequest, "code")?;
        let not_a_function = || invalid("options.bridge must be a function");
        let object = present(Some(options))?.ok_or_else(not_a_function)?;
        let object = object_arg(object, ErrorCode::InvalidRequest, "options")?;
        let bridge = function_arg(property(&object, "bridge")?, "options.bridge")?
            .ok_or_else(not_a_function)?;
        let bridge = super::port::channel(env, bridge, Target::Bridge)?;
        // The bridge and signal are read from the object; everything plain through `CellOptions`.
        let positive = "options.timeoutMs must be a positive number";
        super::convert::refuse_non_finite(&object, "timeoutMs", positive)?;
        let plain: CellOptions = dto(env, Some(options), ErrorCode::InvalidRequest, "options")?;
        let run = plain.run_options().map_err(invalid)?;
        let cancel = abort_signal(env, &object, &mut listener)?;
        let runtime = &super::runtime::NAPI;
        Ok(async move { Ok(code_mode::run_cell(code, bridge, run, cancel, runtime).await) })
    });
    json_promise(env, cell, listener)
}
