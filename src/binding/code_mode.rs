//! Code mode glue: the sandbox runner behind the core session's
//! `CodeRunner` hook, with the session answering the cell's bridge calls.
//! One process-wide runner (and warm pool) serves every session.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use napi_derive::napi;
use serde_json::Value;
use tool_search_core::session::{BoxFuture, CallContext, CodeContext, CodeRunner, Failure, Session};
use tool_search_sandbox::{probe_node, BridgeError, BridgeHost, CallFuture, CancelToken, CodeRunner as SandboxRunner, RunnerConfig};

/// Environment variable naming the Node binary for code-mode children. The
/// gateway's own Node is used when this is unset and its version is sound.
pub const NODE_ENV: &str = "OPENCLAW_TOOL_SEARCH_NODE";

/// The Node the children run on: `$OPENCLAW_TOOL_SEARCH_NODE`, else the
/// gateway's own executable (the addon runs inside `node`).
fn node_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(path) = std::env::var_os(NODE_ENV).filter(|p| !p.is_empty()) {
        out.push(PathBuf::from(path));
    }
    if let Ok(exe) = std::env::current_exe() {
        out.push(exe);
    }
    out
}

struct DefaultRunner {
    runner: Option<Arc<SandboxRunner>>,
    report: Value,
}

fn default_runner() -> &'static DefaultRunner {
    static RUNNER: OnceLock<DefaultRunner> = OnceLock::new();
    RUNNER.get_or_init(|| {
        let mut tried = Vec::new();
        for node in node_candidates() {
            let support = probe_node(&node);
            if !support.sound {
                tried.push(serde_json::to_value(&support).unwrap_or(Value::Null));
                continue;
            }
            match SandboxRunner::new(RunnerConfig::new(node)) {
                Ok(runner) => {
                    let report = serde_json::to_value(runner.capability_report()).unwrap_or(Value::Null);
                    let available = report.get("available").and_then(Value::as_bool).unwrap_or(false);
                    if available {
                        return DefaultRunner { runner: Some(Arc::new(runner)), report };
                    }
                    tried.push(report);
                }
                Err(e) => tried.push(serde_json::json!({ "available": false, "reason": e.0 })),
            }
        }
        let reason = if tried.is_empty() {
            format!("no Node binary found (set {NODE_ENV})")
        } else {
            format!("no Node with a sound permission model and working containment (set {NODE_ENV} to Node >= 22.23, >= 24.17 or >= 26.3.1)")
        };
        tracing::info!(target: "openclaw_tool_search", %reason, "code mode unavailable");
        DefaultRunner { runner: None, report: serde_json::json!({ "available": false, "reason": reason, "candidates": tried }) }
    })
}

/// Whether code mode can run on this host (the default runner is usable).
pub fn code_mode_supported() -> bool {
    default_runner().runner.is_some()
}

/// The session hook, when code mode is available. A code-mode session is
/// about to run cells: start the warm pool now so the first cell is warm.
pub fn session_code_runner() -> Option<Arc<dyn CodeRunner>> {
    let runner = default_runner().runner.clone()?;
    let pool = Arc::clone(&runner);
    napi::bindgen_prelude::spawn(async move { pool.prewarm() });
    Some(Arc::new(SandboxCodeRunner { runner }) as Arc<dyn CodeRunner>)
}

/// What the host allowed for code mode: Node version and flags, each
/// containment layer, caps, and why code mode is unavailable if it is.
/// The first call (or the first config resolution) probes Node and launches
/// one contained child, ~100–300 ms once per process: do it at start-up.
#[napi(ts_return_type = "CodeModeCapability")]
pub fn code_mode_capability() -> Value {
    default_runner().report.clone()
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
            context.cancel.on_cancel(move || whole_run.cancel());
            let host = Arc::new(SessionBridge { session, parent: context.clone() });
            let result = runner.run_with_timeout(code, host, token, Duration::from_millis(context.timeout_ms)).await;
            let mut value = serde_json::to_value(result).unwrap_or_else(
                |e| serde_json::json!({ "ok": false, "error": { "kind": "runtime_error", "message": e.to_string() } }),
            );
            // The session reports `error.code`; the runner says `error.kind`.
            if let Some(error) = value.get_mut("error").and_then(Value::as_object_mut) {
                let kind = error.get("kind").and_then(Value::as_str).unwrap_or("runtime_error");
                error.insert("code".into(), Value::from(failure_code(kind)));
            }
            value
        })
    }
}

/// Stable result codes of failed cells, by the runner's failure kind.
fn failure_code(kind: &str) -> &'static str {
    match kind {
        "timeout" => "CODE_TIMEOUT",
        "aborted" => "CODE_ABORTED",
        "runtime_unavailable" => "CODE_MODE_UNAVAILABLE",
        "output_limit" => "CODE_OUTPUT_LIMIT",
        "bridge_violation" => "CODE_BRIDGE_VIOLATION",
        _ => "CODE_RUNTIME_ERROR",
    }
}

/// Answers a cell's `openclaw.tools.*` calls through the session, so policy,
/// validation, events and fail-closed rules are the same as for tool_call.
struct SessionBridge {
    session: Session,
    parent: CodeContext,
}

fn bridge_error(f: Failure) -> BridgeError {
    BridgeError::new(f.code, f.message)
}

impl BridgeHost for SessionBridge {
    fn search(&self, query: &str, options: &Value) -> Result<Value, BridgeError> {
        self.session.search_json(query, options).map_err(bridge_error)
    }

    fn describe(&self, id: &str) -> Result<Value, BridgeError> {
        self.session.describe_json(id).map_err(bridge_error)
    }

    fn call(&self, id: String, args: Value, cancel: CancelToken) -> CallFuture {
        let session = self.session.clone();
        let signal = self.parent.cancel.child();
        let context = CallContext {
            tool_call_id: None,
            parent_tool_call_id: Some(self.parent.tool_call_id.clone()),
            cancel: signal.clone(),
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
