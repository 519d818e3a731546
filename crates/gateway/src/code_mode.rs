//! Code mode in the gateway process: one process-wide runner (and warm pool), found by the
//! sandbox's [`Probe`] on its own thread, behind every session's `tool_search_code` (the session
//! answers the cell's bridge) and every `runCodeCell` (the gateway's bridge, over the
//! [`channel`](crate::channel)). Also: the code → tools fallback of a session, and the stable
//! codes of failed cells.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tool_search_core::catalog::Catalog;
use tool_search_core::config::{Mode, ResolvedConfig};
use tool_search_core::session::{
    BoxFuture, CallContext, CancelSignal, CodeContext, CodeRunner, Executor, Failure, Session,
    SessionOptions,
};
use tool_search_sandbox::{
    BridgeError, BridgeHost, CallFuture, CancelToken, CodeRunResult, CodeRunner as SandboxRunner,
    LogStyle, Lookup, Probe, RunOptions, READER_WAIT,
};

use crate::channel::{Answer, Channel};
use crate::runtime::{offload, Runtime};

/// Whether code mode can run on this host, as far as known without waiting, or the reason
/// `mode: 'code'` falls back to tools: the probe is still running, or what it found (no host
/// path: the operator's detail is `codeModeCapability().reason`).
pub fn support() -> Result<(), String> {
    Probe::global().support_within(READER_WAIT)
}

/// What a config resolves with: the gateway's declared support (`env.codeModeSupported`),
/// else [`support`]'s answer, with its reason when it is no.
pub fn declared_or_probed(declared: Option<bool>) -> (bool, Option<String>) {
    if let Some(supported) = declared {
        return (supported, None);
    }
    match support() {
        Ok(()) => (true, None),
        Err(reason) => (false, Some(reason)),
    }
}

/// Registers the process-wide exit cleanup once (`register` adds it: true when it did), from the
/// main thread only: the main environment's teardown is the process's normal exit, and a worker
/// thread that exits must not kill the main thread's children.
pub fn register_exit_cleanup(register: impl FnOnce() -> bool) {
    static REGISTERED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    // SAFETY: plain getters. Node's main environment runs on the process's main thread.
    let main_thread = unsafe { libc::gettid() == libc::getpid() };
    if main_thread && REGISTERED.get().is_none() && register() {
        let _ = REGISTERED.set(());
    }
}

/// Ends code mode now: every child killed, their working directories and groups removed; the
/// report logged (debug) with `message`.
pub fn shutdown(message: &str) {
    let report = tool_search_sandbox::shutdown();
    tracing::debug!(target: "openclaw_tool_search", ?report, "{message}");
}

/// `resolveToolSearchConfig`: `raw` resolved with `support` ([`declared_or_probed`]'s answer,
/// read first); when code mode is not supported, its reason is the config's fallback reason.
pub fn resolve_config(raw: &Value, support: (bool, Option<String>)) -> ResolvedConfig {
    let (supported, why_not) = support;
    let mut resolved = tool_search_core::config::resolve(raw, supported);
    if let (Some(fallback), Some(why_not)) = (resolved.fallback_reason.as_mut(), why_not) {
        *fallback = why_not;
    }
    resolved
}

/// What a session runs on its `config`: a raw `tools.toolSearch` value resolves exactly as
/// [`resolve_config`] does on this host (probed code-mode support); a resolved config is read
/// back.
pub fn resolve_for_session(raw: &Value) -> ResolvedConfig {
    tool_search_core::config::resolve_for_session(raw, support().is_ok())
}

/// A session over `catalog` and `config` ([`resolve_for_session`]) with the code runner that
/// config gets ([`session_runner`]: code mode without one falls back to tools).
pub fn new_session(
    catalog: &Catalog,
    mut config: ResolvedConfig,
    executor: Arc<dyn Executor>,
    options: SessionOptions,
    runtime: &'static dyn Runtime,
) -> tool_search_core::Result<Session> {
    let code_runner = session_runner(&mut config, runtime);
    Session::new(
        catalog,
        config,
        executor,
        SessionOptions {
            code_runner,
            ..options
        },
    )
}

/// The code runner a session over `config` gets. Code mode without a runner is never offered
/// (contract §7): `config` falls back to tools mode, with the reason. Other modes get none.
/// A code-mode session is about to run cells: the warm pool starts now.
pub fn session_runner(
    config: &mut ResolvedConfig,
    runtime: &'static dyn Runtime,
) -> Option<Arc<dyn CodeRunner>> {
    if !config.enabled || config.mode != Mode::Code {
        return None;
    }
    let found = Probe::global()
        .probed_within(READER_WAIT)
        .and_then(|found| found.runner.clone());
    let Some(runner) = found else {
        config.mode = Mode::Tools;
        config.code_mode_supported = false;
        config.fallback_reason = Some(support().err().unwrap_or_else(|| {
            "code mode is unavailable on this host (see codeModeCapability()); using tools mode"
                .into()
        }));
        return None;
    };
    let pool = Arc::clone(&runner);
    runtime.spawn(Box::pin(async move { pool.prewarm() }));
    Some(Arc::new(SessionCodeRunner { runner, runtime }) as Arc<dyn CodeRunner>)
}

/// The process-wide runner once the probe has finished (started here if it has not), or why
/// there is none (in words a cell's result may carry: no host path). Waits off the event loop.
async fn finished_runner(runtime: &'static dyn Runtime) -> Result<Arc<SandboxRunner>, String> {
    let found = Probe::global().finished().await;
    match &found.runner {
        Some(runner) => {
            let pool = Arc::clone(runner);
            runtime.spawn(Box::pin(async move { pool.prewarm() }));
            Ok(Arc::clone(runner))
        }
        None => Err(found.public_reason().to_string()),
    }
}

/// One `runCodeCell`: the cell in the contained child, every `openclaw.tools.*` request answered
/// by the gateway's bridge function over `bridge`. Resolves with the run's result; a cell's own
/// failures are `ok: false` with `error.code`.
pub async fn run_cell(
    code: String,
    bridge: Channel,
    options: RunOptions,
    cancel: Option<CancelSignal>,
    runtime: &'static dyn Runtime,
) -> Value {
    let token = CancelToken::new();
    let linked = token.clone();
    let _link = cancel.map(|signal| signal.on_cancel(move |_| linked.cancel()));
    match finished_runner(runtime).await {
        Ok(runner) => {
            let host = Arc::new(GatewayBridge(bridge));
            result_value(runner.run_with_options(code, host, token, options).await)
        }
        Err(reason) => json!({
            "ok": false,
            "error": {
                "kind": "runtime_unavailable",
                "code": failure_code("runtime_unavailable"),
                "message": format!("code mode is unavailable: {reason}"),
            },
            "logs": [],
        }),
    }
}

/// A run's result as the JS side sees it: the runner's `error.kind` plus the stable `error.code`.
pub fn result_value(result: CodeRunResult) -> Value {
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

/// The runner behind a session's `tool_search_code`.
struct SessionCodeRunner {
    runner: Arc<SandboxRunner>,
    runtime: &'static dyn Runtime,
}

impl CodeRunner for SessionCodeRunner {
    fn run(&self, session: Session, code: String, context: CodeContext) -> BoxFuture<Value> {
        let runner = Arc::clone(&self.runner);
        let runtime = self.runtime;
        Box::pin(async move {
            let token = CancelToken::new();
            let whole_run = token.clone();
            let _whole_run = context.cancel.on_cancel(move |_| whole_run.cancel());
            let host = Arc::new(SessionBridge {
                session,
                parent: context.clone(),
                calls: AtomicU64::new(0),
                runtime,
            });
            let result = runner
                .run_with_timeout(code, host, token, Duration::from_millis(context.timeout_ms))
                .await;
            result_value(result)
        })
    }
}

/// Answers a cell's `openclaw.tools.*` calls through the session, so policy, validation, events
/// and fail-closed rules are the same as for tool_call.
struct SessionBridge {
    session: Session,
    parent: CodeContext,
    /// Calls this cell made, for their ids (`tool_search_code:<cell>:<tool>:<n>`).
    calls: AtomicU64,
    runtime: &'static dyn Runtime,
}

fn bridge_error(f: Failure) -> BridgeError {
    BridgeError::new(f.code, f.message)
}

impl BridgeHost for SessionBridge {
    fn search(&self, query: &str, options: &Value) -> Result<Value, BridgeError> {
        self.session
            .search_json(query, options)
            .map_err(bridge_error)
    }

    fn describe(&self, id: &str) -> Result<Value, BridgeError> {
        self.session.describe_json(id).map_err(bridge_error)
    }

    /// A search that would embed its query (hybrid ranking, vectors not cached) is answered
    /// asynchronously: the embedding runs on the blocking pool, not on the cell's task. Every
    /// other lookup is answered inline.
    fn lookup_async(&self, lookup: Lookup<'_>, _cancel: CancelToken) -> Option<CallFuture> {
        let Lookup::Search { query, options } = lookup else {
            return None;
        };
        if !self.session.search_json_needs_embedding(query) {
            return None;
        }
        let (session, query, options) = (self.session.clone(), query.to_string(), options.clone());
        let offload = offload(self.runtime);
        Some(Box::pin(async move {
            session
                .search_json_async(&query, &options, Some(&offload))
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
            offload: Some(offload(self.runtime)),
        };
        Box::pin(async move {
            // When the cell ends first (deadline, abort, result sent), abort the executor's call
            // through its signal, and still let it settle: a dropped future would leave the
            // gateway's side unaware.
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

/// The gateway's bridge function (`runCodeCell`'s `options.bridge`) behind the sandbox's host
/// interface. Every operation is answered asynchronously in JS; nothing from a native catalog.
struct GatewayBridge(Channel);

impl GatewayBridge {
    fn request(&self, op: &'static str, args: Value, cancel: CancelToken) -> CallFuture {
        let (abort, answer) = self.0.request(&json!({ "op": op, "args": args }));
        Box::pin(async move {
            // When the cell ends first (deadline, abort, result sent), the request's AbortSignal
            // fires and the request still settles on the gateway's side.
            let watcher = tokio::spawn(async move {
                cancel.cancelled().await;
                abort.abort("the code cell ended before this request finished");
            });
            let answer = answer.await;
            watcher.abort();
            match answer {
                Answer::Value(value) => Ok(value),
                Answer::Thrown { code, message } => Err(BridgeError::new(
                    code.unwrap_or_else(|| "bridge_error".into()),
                    message,
                )),
                Answer::NotDelivered => Err(BridgeError::new(
                    "internal",
                    "the code cell ended before this request was delivered",
                )),
                Answer::Broken(reason) => Err(BridgeError::new("internal", reason)),
            }
        })
    }
}

impl BridgeHost for GatewayBridge {
    // Never reached: `lookup_async` answers every search and describe.
    fn search(&self, _query: &str, _options: &Value) -> Result<Value, BridgeError> {
        Err(BridgeError::new(
            "internal",
            "search is answered by the gateway's bridge",
        ))
    }

    fn describe(&self, _id: &str) -> Result<Value, BridgeError> {
        Err(BridgeError::new(
            "internal",
            "describe is answered by the gateway's bridge",
        ))
    }

    fn call(&self, id: String, args: Value, cancel: CancelToken) -> CallFuture {
        self.request("call", json!([id, args]), cancel)
    }

    fn lookup_async(&self, lookup: Lookup<'_>, cancel: CancelToken) -> Option<CallFuture> {
        Some(match lookup {
            Lookup::Search { query, options } => {
                self.request("search", json!([query, options]), cancel)
            }
            Lookup::Describe { id } => self.request("describe", json!([id]), cancel),
        })
    }
}

/// `runCodeCell`'s options besides the `bridge` function and the `signal`:
/// `{ timeoutMs?, logStyle? }`, as JSON carries them.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CellOptions {
    #[serde(default)]
    pub timeout_ms: Option<f64>,
    #[serde(default)]
    pub log_style: Option<String>,
}

impl CellOptions {
    /// The run's deadline (the contract's clamp) and log style, or why not.
    pub fn run_options(&self) -> Result<RunOptions, String> {
        let timeout_ms = tool_search_core::config::cell_timeout_ms(self.timeout_ms)?;
        let log_style = match self.log_style.as_deref() {
            None => LogStyle::Node,
            Some(style) => LogStyle::parse(style).ok_or_else(|| {
                format!("options.logStyle must be 'node' or 'json', not {style:?}")
            })?,
        };
        Ok(RunOptions {
            timeout: Duration::from_millis(timeout_ms),
            log_style,
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
        let result = CodeRunResult {
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
