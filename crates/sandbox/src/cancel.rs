//! A small cancellation token: cheap to clone, fires once, observable from sync and async code.
//! The binding fires it from a JS `AbortSignal`; the runner fires the per-call tokens it hands to
//! [`crate::BridgeHost::call`] when a run ends (result, timeout, abort, violation).

use std::sync::Arc;

use tokio::sync::watch;

/// Fires once; every clone observes it.
#[derive(Clone, Debug)]
pub struct CancelToken {
    state: Arc<watch::Sender<bool>>,
}

impl Default for CancelToken {
    fn default() -> Self {
        Self::new()
    }
}

impl CancelToken {
    pub fn new() -> Self {
        let (tx, _rx) = watch::channel(false);
        CancelToken {
            state: Arc::new(tx),
        }
    }

    /// Fires the token (idempotent).
    pub fn cancel(&self) {
        self.state.send_replace(true);
    }

    pub fn is_cancelled(&self) -> bool {
        *self.state.borrow()
    }

    /// Resolves once the token has fired (at once if it already has).
    pub async fn cancelled(&self) {
        let mut rx = self.state.subscribe();
        // The sender lives in `self`, so `wait_for` only returns once the value is true.
        let _ = rx.wait_for(|fired| *fired).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn fires_all_clones() {
        let token = CancelToken::new();
        let clone = token.clone();
        assert!(!clone.is_cancelled());
        let waiter = tokio::spawn(async move { clone.cancelled().await });
        token.cancel();
        waiter.await.unwrap();
        assert!(token.is_cancelled());
        token.cancelled().await; // already fired: returns at once
    }
}
