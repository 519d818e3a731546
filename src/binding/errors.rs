//! Core errors → JS errors with a stable `code`, and the panic guard every
//! entry point goes through (a panic must never cross into the gateway).

use std::panic::{catch_unwind, AssertUnwindSafe};

use tool_search_core::{Error as CoreError, ErrorCode};

/// The `code` property of a thrown JS error.
#[derive(Debug, Clone, Copy)]
pub struct JsCode(pub &'static str);

impl AsRef<str> for JsCode {
    fn as_ref(&self) -> &str {
        self.0
    }
}

pub type JsError = napi::Error<JsCode>;
pub type JsResult<T> = std::result::Result<T, JsError>;

pub fn to_js(e: CoreError) -> JsError {
    napi::Error::new(JsCode(e.code.as_str()), e.message)
}

pub fn js_error(code: ErrorCode, message: impl Into<String>) -> JsError {
    napi::Error::new(JsCode(code.as_str()), message.into())
}

/// An INVALID_REQUEST error: the most common refusal of an argument.
pub fn invalid(message: impl Into<String>) -> JsError {
    js_error(ErrorCode::InvalidRequest, message)
}

/// A napi failure (e.g. a value of the wrong type) as an INVALID_REQUEST error.
pub fn from_napi(e: napi::Error) -> JsError {
    napi::Error::new(JsCode(ErrorCode::InvalidRequest.as_str()), e.reason.clone())
}

/// Run `f`, turning a panic into an INTERNAL error.
pub fn guard<T>(f: impl FnOnce() -> JsResult<T>) -> JsResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => Err(to_js(caught_panic(panic))),
    }
}

/// A caught panic as the INTERNAL error it becomes (logged once, here).
pub fn caught_panic(panic: Box<dyn std::any::Any + Send>) -> CoreError {
    let detail = panic_message(panic);
    tracing::error!(target: "openclaw_tool_search", %detail, "panic caught at the JS boundary");
    CoreError::internal(format!("internal error (please report): {detail}"))
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

    #[test]
    fn a_panic_becomes_an_internal_error_with_its_message() {
        let err = guard::<()>(|| panic!("boom {}", 7)).unwrap_err();
        assert_eq!(err.status.0, "INTERNAL");
        assert!(err.reason.contains("boom 7"), "{}", err.reason);
        let err = guard::<()>(|| panic!("static boom")).unwrap_err();
        assert!(err.reason.contains("static boom"), "{}", err.reason);
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
