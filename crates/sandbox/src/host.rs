//! What the child's `openclaw.tools.*` calls reach.

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde_json::Value;

use crate::CancelToken;

/// The future a bridged `call` returns.
pub type CallFuture = Pin<Box<dyn Future<Output = Result<Value, BridgeError>> + Send>>;

/// Implemented by the binding over the core session. Policy, validation and fail-closed rules live
/// there: the runner only forwards well-formed, bounded requests and never trusts the child.
pub trait BridgeHost: Send + Sync + 'static {
    /// `openclaw.tools.search(query, options?)`, answered directly (no JS hop). `options` is a JSON
    /// object (`{}` when the code passed none).
    fn search(&self, query: &str, options: &Value) -> Result<Value, BridgeError>;
    /// `openclaw.tools.describe(id)`.
    fn describe(&self, id: &str) -> Result<Value, BridgeError>;
    /// `openclaw.tools.call(id, args?)`: goes to the gateway executor. `args` is `{}` when the code
    /// passed none. `cancel` fires when the run ends before the call settles (timeout, abort,
    /// result, violation); the future is dropped right after.
    fn call(&self, id: String, args: Value, cancel: CancelToken) -> CallFuture;

    /// A host whose catalog lives elsewhere (a gateway's own Tool Search runtime, reached through
    /// JS) answers search and describe asynchronously here, like `call`; `None` (the default)
    /// answers them inline through [`BridgeHost::search`] and [`BridgeHost::describe`].
    fn lookup_async(&self, _lookup: Lookup<'_>, _cancel: CancelToken) -> Option<CallFuture> {
        None
    }
}

/// A read-only bridge request: `openclaw.tools.search` or `openclaw.tools.describe`.
#[derive(Clone, Copy, Debug)]
pub enum Lookup<'a> {
    Search { query: &'a str, options: &'a Value },
    Describe { id: &'a str },
}

/// An error a bridge operation reports back to the model's code (the promise rejects with an
/// `Error` whose `code` and `message` are these).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct BridgeError {
    /// Stable machine-readable code, e.g. `not_found`, `policy_denied`, `invalid_args`.
    pub code: String,
    pub message: String,
}

impl BridgeError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        BridgeError {
            code: code.into(),
            message: message.into(),
        }
    }
}
