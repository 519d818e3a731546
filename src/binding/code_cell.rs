//! `runCodeCell`: one code-mode cell for a gateway that keeps its own Tool Search runtime
//! (OpenClaw's `ToolSearchRuntime`, through `openclaw-tool-search/openclaw`). Converts the
//! arguments; the cell runs in `tool_search_gateway::code_mode::run_cell` (the same contained
//! child, pool, budgets and deadline as a session's `tool_search_code`), and every
//! `openclaw.tools.search/describe/call` goes over the channel to the gateway's `bridge`
//! function, so its policy, counters, hooks and result shapes are the gateway's own.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_search_core::session::CancelSignal;
use tool_search_core::ErrorCode;
use tool_search_gateway::channel::{Channel, Target};
use tool_search_gateway::code_mode::CellOptions;
use tool_search_sandbox::RunOptions;

use super::convert::{dto, is_nullish, object_arg, property, string_arg, value_type};
use super::errors::{guard, js_error, JsCode, JsResult};
use super::promise::{json_promise, link_abort_signal, AbortListener};

struct CellRequest {
    code: String,
    bridge: Channel,
    options: RunOptions,
    cancel: Option<CancelSignal>,
}

fn cell_request(
    env: &Env,
    code: Unknown,
    options: Unknown,
    listener: &mut Option<AbortListener>,
) -> JsResult<CellRequest> {
    let code = string_arg(code, ErrorCode::InvalidRequest, "code")?;
    let not_a_function = || {
        js_error(
            ErrorCode::InvalidRequest,
            "options.bridge must be a function",
        )
    };
    if is_nullish(&options)? {
        return Err(not_a_function());
    }
    let unknown = options;
    let options = object_arg(options, ErrorCode::InvalidRequest, "options")?;
    let bridge = match property(&options, "bridge")? {
        Some(f) if value_type(&f)? == ValueType::Function => {
            super::port::channel(env, f, Target::Bridge)?
        }
        _ => return Err(not_a_function()),
    };
    // The bridge and signal are read from the object; everything plain through `CellOptions`.
    let plain: CellOptions = dto(env, Some(unknown), ErrorCode::InvalidRequest, "options")?;
    let run = plain
        .run_options()
        .map_err(|why| js_error(ErrorCode::InvalidRequest, why))?;
    let cancel = match property(&options, "signal")? {
        Some(signal) => {
            let (cancel, added) = link_abort_signal(env, signal)?;
            *listener = added;
            Some(cancel)
        }
        None => None,
    };
    Ok(CellRequest {
        code,
        bridge,
        options: run,
        cancel,
    })
}

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
    let request = match guard(|| cell_request(env, code, options, &mut listener)) {
        Ok(request) => request,
        Err(e) => {
            if let Some(listener) = listener {
                let _ = listener.remove(env);
            }
            return Err(e);
        }
    };
    let CellRequest {
        code,
        bridge,
        options,
        cancel,
    } = request;
    let future = async move {
        let runtime = &super::runtime::NAPI;
        Ok(tool_search_gateway::code_mode::run_cell(code, bridge, options, cancel, runtime).await)
    };
    json_promise(env, future, listener)
}
