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

/// Runs blocking work (argument validation) off the async runtime's workers,
/// so one expensive schema cannot stall the deadlines of other cells. The
/// binding supplies a blocking-thread pool; without one, work runs inline.
pub trait Offload: Send + Sync {
    fn run(&self, job: Box<dyn FnOnce() + Send>);
}

/// A shareable [`Offload`] (cloned into every call's context).
#[derive(Clone)]
pub struct OffloadHandle(pub std::sync::Arc<dyn Offload>);

impl std::fmt::Debug for OffloadHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OffloadHandle")
    }
}

/// Runs `job` through `offload` (inline without one) and resolves with its
/// output; `None` only if the pool dropped the job without running it.
pub async fn offloaded<T: Send + 'static>(
    offload: Option<&OffloadHandle>,
    job: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let Some(offload) = offload else {
        return Some(job());
    };
    let slot: Slot<T> = std::sync::Arc::new(std::sync::Mutex::new(SlotState {
        value: None,
        waker: None,
        done: false,
    }));
    let filler = Filler {
        slot: std::sync::Arc::clone(&slot),
        value: None,
    };
    offload.0.run(Box::new(move || {
        let mut filler = filler;
        filler.value = Some(job());
        // Dropping the filler publishes the value and wakes the waiter.
    }));
    std::future::poll_fn(move |cx| {
        let Ok(mut state) = slot.lock() else {
            return std::task::Poll::Ready(None);
        };
        if state.done {
            return std::task::Poll::Ready(state.value.take());
        }
        state.waker = Some(cx.waker().clone());
        std::task::Poll::Pending
    })
    .await
}

type Slot<T> = std::sync::Arc<std::sync::Mutex<SlotState<T>>>;

struct SlotState<T> {
    value: Option<T>,
    waker: Option<std::task::Waker>,
    done: bool,
}

/// Moved into the job: publishes its value (or nothing, if the job was dropped unrun) on drop.
struct Filler<T> {
    slot: Slot<T>,
    value: Option<T>,
}

impl<T> Drop for Filler<T> {
    fn drop(&mut self) {
        let waker = self.slot.lock().ok().and_then(|mut state| {
            state.value = self.value.take();
            state.done = true;
            state.waker.take()
        });
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}
