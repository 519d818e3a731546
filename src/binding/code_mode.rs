//! Code mode from JS: the probe's report, its budgets, shutdown (the env cleanup hook,
//! `__shutdownCodeMode`), and `runCodeCell`: one cell for a gateway that keeps its own Tool
//! Search runtime (OpenClaw's `ToolSearchRuntime`, through `openclaw-tool-search/openclaw`).
//! What runs cells lives in `tool_search_gateway::code_mode` (the same contained child, pool,
//! budgets and deadline as a session's `tool_search_code`); every
//! `openclaw.tools.search/describe/call` of a cell goes over the channel to the gateway's
//! `bridge` function, so its policy, counters, hooks and result shapes are the gateway's own.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_search_core::ErrorCode;
use tool_search_gateway::channel::Target;
use tool_search_gateway::code_mode::{self, CellOptions};
use tool_search_sandbox::{CodeModeSettings, ConfigureError, Probe, READER_WAIT};

use super::convert::{dto, function_arg, object_arg, parsed, present, property, string_arg};
use super::errors::{guard, invalid, js_error, JsCode};
use super::promise::{abort_signal, json_promise, AbortListener};

/// Kills code-mode children and removes their directories and memory group when the gateway's
/// main environment is torn down (normal exit): registered once, by the main thread only.
fn register_cleanup(env: &Env) {
    code_mode::register_exit_cleanup(|| {
        let hook = env.add_env_cleanup_hook((), |_| code_mode::shutdown("code mode shut down"));
        hook.is_ok()
    });
}

/// Ends code mode now: every child killed, their working directories and groups removed.
/// index.js calls it on the main thread's `exit` event: `process.exit()` fires that event but
/// skips the environment's cleanup hooks, so without it each such exit left the warm child's
/// directory (and, on cgroup v1, its groups) behind until the next runner's sweep.
#[napi(js_name = "__shutdownCodeMode", skip_typescript)]
pub fn shutdown_code_mode() -> Result<(), JsCode> {
    guard(|| {
        if Probe::global().started() {
            code_mode::shutdown("code mode shut down at exit");
        }
        Ok(())
    })
}

/// What the host allowed for code mode: Node version and flags, each
/// containment layer, budgets, and why code mode is unavailable if it is.
/// Never waits more than a few milliseconds: while the probe runs, it
/// answers `{ available: false, pending: true, reason }`.
#[napi(ts_return_type = "CodeModeCapability")]
pub fn code_mode_capability(env: &Env) -> Result<Unknown<'_>, JsCode> {
    guard(|| {
        register_cleanup(env);
        parsed(env, &Probe::global().report_within(READER_WAIT))
    })
}

/// Runs (once) and awaits the code-mode probe off the event loop; resolves
/// with the same report as `codeModeCapability()` once it is final.
#[napi(ts_return_type = "Promise<CodeModeCapability>")]
pub fn probe_code_mode<'env>(env: &'env Env) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
    guard(|| {
        register_cleanup(env);
        let probe = Probe::global();
        probe.start();
        let report = async move { Ok(probe.finished().await.report.clone()) };
        json_promise(env, Ok(report), None)
    })
}

/// Sets code mode's gateway-wide budgets. Only before the probe starts (the
/// first `probeCodeMode()`, `codeModeCapability()`, `resolveToolSearchConfig()`
/// or code-mode session); later calls throw INVALID_CONFIG.
#[napi(ts_args_type = "settings: CodeModeSettings")]
pub fn configure_code_mode(env: Env, settings: Unknown) -> Result<(), JsCode> {
    guard(|| {
        if present(Some(settings))?.is_none() {
            let what = "settings must be an object";
            return Err(js_error(ErrorCode::InvalidConfig, what));
        }
        let what = "invalid code mode settings";
        let parsed: CodeModeSettings = dto(&env, Some(settings), ErrorCode::InvalidConfig, what)?;
        let refused = |e: ConfigureError| js_error(ErrorCode::InvalidConfig, e.to_string());
        Probe::global().configure(parsed).map_err(refused)
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
