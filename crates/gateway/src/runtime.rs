//! The async runtime the binding runs futures on, lent to this crate: the binding owns it (napi's
//! Tokio runtime), this crate only spawns onto it. And the guard of a future that crosses to JS
//! (a promise's work): a panic in it becomes an INTERNAL error, never an unwind into the gateway.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use tool_search_core::session::{BoxFuture, Offload, OffloadHandle};
use tool_search_core::Error as CoreError;

/// Spawning onto the binding's runtime. `'static`: one per process.
pub trait Runtime: Send + Sync + 'static {
    /// Runs `future` on the runtime's workers, detached.
    fn spawn(&self, future: BoxFuture<()>);
    /// Runs `job` on the runtime's blocking pool, detached.
    fn spawn_blocking(&self, job: Box<dyn FnOnce() + Send>);
}

/// A call's blocking work (argument validation) on the runtime's blocking pool.
struct BlockingPool(&'static dyn Runtime);

impl Offload for BlockingPool {
    fn run(&self, job: Box<dyn FnOnce() + Send>) {
        self.0.spawn_blocking(job);
    }
}

/// The offload every session call uses (one per process, as the runtime is).
pub fn offload(runtime: &'static dyn Runtime) -> OffloadHandle {
    static POOL: std::sync::OnceLock<OffloadHandle> = std::sync::OnceLock::new();
    POOL.get_or_init(|| OffloadHandle(Arc::new(BlockingPool(runtime))))
        .clone()
}

/// A caught panic (in a binding call or a promise's future) as the INTERNAL error it
/// becomes, logged once, here.
pub fn caught_panic(panic: Box<dyn std::any::Any + Send>) -> CoreError {
    let detail = panic_message(panic);
    tracing::error!(target: "openclaw_tool_search", %detail, "panic caught at the JS boundary");
    CoreError::internal(format!("internal error (please report): {detail}"))
}

/// `f()`, a panic in it caught as [`caught_panic`]'s error: every binding call goes through this
/// (a panic must never unwind into the gateway).
pub fn guard_call<T>(f: impl FnOnce() -> T) -> Result<T, CoreError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(caught_panic)
}

/// `future`, a panic while it runs caught as [`caught_panic`]'s error: a
/// promise's work on the runtime crosses the boundary as `guard`ed calls do.
pub fn guard_future<F: std::future::Future>(future: F) -> GuardedFuture<F> {
    GuardedFuture(Box::pin(future))
}

pub struct GuardedFuture<F>(std::pin::Pin<Box<F>>);

impl<F: std::future::Future> std::future::Future for GuardedFuture<F> {
    type Output = std::result::Result<F::Output, CoreError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        // A panicked future is never polled again: it is Ready with the error.
        match catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(std::task::Poll::Ready(value)) => std::task::Poll::Ready(Ok(value)),
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Err(panic) => std::task::Poll::Ready(Err(caught_panic(panic))),
        }
    }
}

/// The message of a caught panic payload (taken by value: a `&Box<dyn Any>`
/// would coerce to `&dyn Any` of the box itself and never downcast).
fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_search_core::ErrorCode;

    #[test]
    fn a_panic_in_a_call_becomes_an_internal_error_with_its_message() {
        let err = guard_call::<()>(|| panic!("boom {}", 7)).unwrap_err();
        assert_eq!(err.code, ErrorCode::Internal);
        assert!(err.message.contains("boom 7"), "{}", err.message);
        let err = guard_call::<()>(|| panic!("static boom")).unwrap_err();
        assert!(err.message.contains("static boom"), "{}", err.message);
        assert_eq!(guard_call(|| 5).unwrap(), 5);
    }

    #[test]
    fn a_panic_in_a_future_becomes_an_internal_error_with_its_message() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let err = runtime
            .block_on(guard_future(async {
                tokio::task::yield_now().await;
                panic!("async boom {}", 8)
            }))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Internal);
        assert!(err.message.contains("async boom 8"), "{}", err.message);
        assert_eq!(runtime.block_on(guard_future(async { 5 })).unwrap(), 5);
    }
}
