//! Code mode glue: the sandbox runner behind the core session's
//! `CodeRunner` hook, with the session answering the cell's bridge calls.
//! One process-wide runner (and warm pool) serves every session; the probe
//! that finds it is the sandbox's [`Probe`] (its own thread, never the event
//! loop). Here: promise plumbing, the env cleanup hook, JS values.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{json, Value};
use tool_search_core::session::{
    BoxFuture, CallContext, CodeContext, CodeRunner, Failure, Offload, OffloadHandle, Session,
};
use tool_search_core::ErrorCode;
use tool_search_sandbox::{
    BridgeError, BridgeHost, CallFuture, CancelToken, CodeModeSettings,
    CodeRunner as SandboxRunner, ConfigureError, Lookup, Probe, READER_WAIT,
};

use super::convert::{is_nullish, json_arg, parsed};
use super::errors::{guard, js_error, JsCode};
use super::promise::json_promise;

/// Whether code mode can run on this host, as far as known without waiting
/// (false while the probe is still running).
pub fn code_mode_supported() -> bool {
    code_mode_support().is_ok()
}

/// Whether code mode can run on this host, as far as known without waiting, or the reason
/// `mode: 'code'` falls back to tools: the probe is still running, or what it found (no host
/// path: the operator's detail is `codeModeCapability().reason`).
pub fn code_mode_support() -> std::result::Result<(), String> {
    Probe::global().support_within(READER_WAIT)
}

/// The session hook, when code mode is available. A code-mode session is
/// about to run cells: start the warm pool now so the first cell is warm.
pub fn session_code_runner() -> Option<Arc<dyn CodeRunner>> {
    let runner = Probe::global().probed_within(READER_WAIT)?.runner.clone()?;
    let pool = Arc::clone(&runner);
    napi::bindgen_prelude::spawn(async move { pool.prewarm() });
    Some(Arc::new(SandboxCodeRunner { runner }) as Arc<dyn CodeRunner>)
}

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
        json_promise(
            env,
            async move { Ok(probe.finished().await.report.clone()) },
            None,
        )
    })
}

/// Sets code mode's gateway-wide budgets. Only before the probe starts (the
/// first `probeCodeMode()`, `codeModeCapability()`, `resolveToolSearchConfig()`
/// or code-mode session); later calls throw INVALID_CONFIG.
#[napi(ts_args_type = "settings: CodeModeSettings")]
pub fn configure_code_mode(env: Env, settings: Unknown) -> Result<(), JsCode> {
    guard(|| {
        if is_nullish(&settings)? {
            return Err(js_error(
                ErrorCode::InvalidConfig,
                "settings must be an object",
            ));
        }
        let value = json_arg(
            &env,
            settings,
            ErrorCode::InvalidConfig,
            "code mode settings",
        )?;
        let parsed: CodeModeSettings = serde_json::from_value(value).map_err(|e| {
            js_error(
                ErrorCode::InvalidConfig,
                format!("invalid code mode settings: {e}"),
            )
        })?;
        Probe::global().configure(parsed).map_err(|e| match e {
            ConfigureError::Invalid(reason) => js_error(
                ErrorCode::InvalidConfig,
                format!("invalid code mode settings: {reason}"),
            ),
            ConfigureError::Started => js_error(
                ErrorCode::InvalidConfig,
                "code mode has already started; call configureCodeMode before probeCodeMode, codeModeCapability, resolveToolSearchConfig or a code-mode session",
            ),
        })
    })
}

/// Validation and other blocking work of a call, on napi's blocking pool.
struct BlockingPool;

impl Offload for BlockingPool {
    fn run(&self, job: Box<dyn FnOnce() + Send>) {
        drop(napi::bindgen_prelude::spawn_blocking(job));
    }
}

/// The offload every call of the binding uses.
pub fn offload() -> OffloadHandle {
    static POOL: OnceLock<OffloadHandle> = OnceLock::new();
    POOL.get_or_init(|| OffloadHandle(Arc::new(BlockingPool)))
        .clone()
}

struct SandboxCodeRunner {
    runner: Arc<SandboxRunner>,
}

impl CodeRunner for SandboxCodeRunner {
    fn run(&self, session: Session, code: String, context: CodeContext) -> BoxFuture<Value> {
        let runner = Arc::clone(&self.runner);
        Box::pin(async move {
            let token = CancelToken::new();
            let whole_run = token.clone();
            let _whole_run = context.cancel.on_cancel(move |_| whole_run.cancel());
            let host = Arc::new(SessionBridge {
                session,
                parent: context.clone(),
                calls: AtomicU64::new(0),
            });
            let result = runner
                .run_with_timeout(code, host, token, Duration::from_millis(context.timeout_ms))
                .await;
            result_value(result)
        })
    }
}

/// A run's result as the JS side sees it: the runner's `error.kind` plus the stable `error.code`.
pub fn result_value(result: tool_search_sandbox::CodeRunResult) -> Value {
    let mut value = serde_json::to_value(result).unwrap_or_else(
        |e| json!({ "ok": false, "error": { "kind": "runtime_error", "message": e.to_string() } }),
    );
    if let Some(error) = value.get_mut("error").and_then(Value::as_object_mut) {
        let kind = error
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("runtime_error");
        error.insert("code".into(), Value::from(failure_code(kind)));
    }
    value
}

/// The process-wide runner once the probe has finished (started here if it has not), or why
/// there is none (in words a cell's result may carry: no host path). Waits off the event loop.
pub async fn await_runner() -> std::result::Result<Arc<SandboxRunner>, String> {
    let found = Probe::global().finished().await;
    match &found.runner {
        Some(runner) => {
            let pool = Arc::clone(runner);
            napi::bindgen_prelude::spawn(async move { pool.prewarm() });
            Ok(Arc::clone(runner))
        }
        None => Err(found.public_reason().to_string()),
    }
}

/// Stable result codes of failed cells, by the runner's failure kind.
fn failure_code(kind: &str) -> &'static str {
    match kind {
        "timeout" => "CODE_TIMEOUT",
        "aborted" => "CODE_ABORTED",
        "runtime_unavailable" => "CODE_MODE_UNAVAILABLE",
        "output_limit" => "CODE_OUTPUT_LIMIT",
        "memory_limit" => "CODE_MEMORY_LIMIT",
        "bridge_violation" => "CODE_BRIDGE_VIOLATION",
        "busy" => "CODE_BUSY",
        _ => "CODE_RUNTIME_ERROR",
    }
}

/// Answers a cell's `openclaw.tools.*` calls through the session, so policy,
/// validation, events and fail-closed rules are the same as for tool_call.
struct SessionBridge {
    session: Session,
    parent: CodeContext,
    /// Calls this cell made, for their ids (`tool_search_code:<cell>:<tool>:<n>`).
    calls: AtomicU64,
}

fn bridge_error(f: Failure) -> BridgeError {
    BridgeError::new(f.code, f.message)
}

impl BridgeHost for SessionBridge {
    fn search(&self, query: &str, options: &Value) -> std::result::Result<Value, BridgeError> {
        self.session
            .search_json(query, options)
            .map_err(bridge_error)
    }

    fn describe(&self, id: &str) -> std::result::Result<Value, BridgeError> {
        self.session.describe_json(id).map_err(bridge_error)
    }

    /// A search that would embed its query (hybrid ranking, vectors not
    /// cached) is answered asynchronously: the embedding runs on the blocking
    /// pool, not on the cell's task. Every other lookup is answered inline.
    fn lookup_async(&self, lookup: Lookup<'_>, _cancel: CancelToken) -> Option<CallFuture> {
        let Lookup::Search { query, options } = lookup else {
            return None;
        };
        if !self.session.search_json_needs_embedding(query) {
            return None;
        }
        let (session, query, options) = (self.session.clone(), query.to_string(), options.clone());
        Some(Box::pin(async move {
            session
                .search_json_async(&query, &options, Some(&offload()))
                .await
                .map_err(bridge_error)
        }))
    }

    fn call(&self, id: String, args: Value, cancel: CancelToken) -> CallFuture {
        let session = self.session.clone();
        let signal = self.parent.cancel.child();
        let context = CallContext {
            tool_call_id: None,
            parent_tool_call_id: Some(self.parent.tool_call_id.clone()),
            sequence: Some(self.calls.fetch_add(1, Ordering::Relaxed) + 1),
            cancel: signal.clone(),
            offload: Some(offload()),
        };
        Box::pin(async move {
            // When the cell ends first (deadline, abort, result sent), abort the
            // executor's call through its signal, and still let it settle: a
            // dropped future would leave the gateway's side unaware.
            let watched = signal.clone();
            let watcher = tokio::spawn(async move {
                cancel.cancelled().await;
                watched.cancel("the code cell ended before this call finished");
            });
            let result = session.call(&id, args, context).await;
            watcher.abort();
            result.map_err(bridge_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_kind_has_its_stable_code() {
        for (kind, code) in [
            ("timeout", "CODE_TIMEOUT"),
            ("aborted", "CODE_ABORTED"),
            ("runtime_error", "CODE_RUNTIME_ERROR"),
            ("runtime_unavailable", "CODE_MODE_UNAVAILABLE"),
            ("output_limit", "CODE_OUTPUT_LIMIT"),
            ("memory_limit", "CODE_MEMORY_LIMIT"),
            ("bridge_violation", "CODE_BRIDGE_VIOLATION"),
            ("busy", "CODE_BUSY"),
        ] {
            assert_eq!(failure_code(kind), code, "{kind}");
        }
    }

    #[test]
    fn a_memory_fault_crosses_with_its_kind_code_and_sentence() {
        let result = tool_search_sandbox::CodeRunResult {
            ok: false,
            value: None,
            error: Some(tool_search_sandbox::RunFailure {
                kind: tool_search_sandbox::FailureKind::MemoryLimit,
                message: "the cell ran out of memory (limit 256 MB)".into(),
            }),
            logs: Vec::new(),
            telemetry: Default::default(),
        };
        let value = result_value(result);
        assert_eq!(
            value["error"],
            json!({
                "kind": "memory_limit",
                "message": "the cell ran out of memory (limit 256 MB)",
                "code": "CODE_MEMORY_LIMIT",
            })
        );
    }
}
