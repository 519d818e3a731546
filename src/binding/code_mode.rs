//! Code mode's process-wide functions: the probe's report, its budgets, and shutdown (the env
//! cleanup hook, `__shutdownCodeMode`). What runs cells lives in `tool_search_gateway::code_mode`.

use std::sync::OnceLock;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_search_core::ErrorCode;
use tool_search_sandbox::{CodeModeSettings, ConfigureError, Probe, READER_WAIT};

use super::convert::{dto, parsed, present};
use super::errors::{guard, js_error, JsCode};
use super::promise::json_promise;

/// Kills code-mode children and removes their directories and memory group
/// when the gateway's main environment is torn down (normal exit). Process-wide,
/// so only the main thread's environment registers it: a worker thread that
/// exits must not kill the main thread's children.
fn register_cleanup(env: &Env) {
    static REGISTERED: OnceLock<()> = OnceLock::new();
    // SAFETY: plain getters. Node's main environment runs on the process's main thread.
    let main_thread = unsafe { libc::gettid() == libc::getpid() };
    if main_thread
        && REGISTERED.get().is_none()
        && env
            .add_env_cleanup_hook((), |_| {
                let report = tool_search_sandbox::shutdown();
                tracing::debug!(target: "openclaw_tool_search", ?report, "code mode shut down");
            })
            .is_ok()
    {
        let _ = REGISTERED.set(());
    }
}

/// Ends code mode now: every child killed, their working directories and groups removed.
/// index.js calls it on the main thread's `exit` event: `process.exit()` fires that event but
/// skips the environment's cleanup hooks, so without it each such exit left the warm child's
/// directory (and, on cgroup v1, its groups) behind until the next runner's sweep.
#[napi(js_name = "__shutdownCodeMode", skip_typescript)]
pub fn shutdown_code_mode() -> Result<(), JsCode> {
    guard(|| {
        if Probe::global().started() {
            let report = tool_search_sandbox::shutdown();
            tracing::debug!(target: "openclaw_tool_search", ?report, "code mode shut down at exit");
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
