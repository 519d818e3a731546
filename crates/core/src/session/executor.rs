//! What the session calls out to: the gateway's tool executor (async, in JS
//! for the addon) and, for code mode, the sandbox runner.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::cancel::CancelSignal;
use super::Session;
use crate::catalog::Source;

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// One tool call handed to the gateway. The gateway runs it with its own
/// policy, approvals and `before_tool_call` hooks.
#[derive(Debug, Clone)]
pub struct ExecutorCall {
    pub id: String,
    pub name: String,
    pub source: Source,
    pub owner: String,
    /// Validated (trusted tools) and bounded arguments: always a JSON object.
    pub args: Value,
    pub tool_call_id: String,
    /// The `tool_search_code` call a bridged call came from.
    pub parent_tool_call_id: Option<String>,
    pub cancel: CancelSignal,
}

/// How the gateway answered a call.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecutorOutcome {
    /// The tool ran; its result (JSON values in `result.details`).
    Ok(Value),
    /// The tool no longer exists at the gateway (removed since the catalog was
    /// built). The call fails; nothing is retried or swapped.
    Missing(String),
    /// Policy, approval or a hook refused the call. Reported as a blocked
    /// result; never retried around.
    Blocked(String),
    /// The tool ran and failed, or the executor itself failed.
    Failed(String),
}

pub trait Executor: Send + Sync {
    fn call(&self, call: ExecutorCall) -> BoxFuture<ExecutorOutcome>;
}

/// Runs one `tool_search_code` cell. The runner answers the cell's bridge
/// calls through `session` (`search_json`, `describe_json`, `call`), enforces
/// the code timeout, and resolves to `{ ok, value, logs, telemetry }` (or
/// `{ ok: false, error: { code, message }, logs }`).
pub trait CodeRunner: Send + Sync {
    fn run(&self, session: Session, code: String, context: CodeContext) -> BoxFuture<Value>;
}

/// Per-cell context for a code run.
#[derive(Debug, Clone)]
pub struct CodeContext {
    pub tool_call_id: String,
    pub cancel: CancelSignal,
    pub timeout_ms: u64,
}
