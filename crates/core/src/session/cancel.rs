//! A cancel signal that works without an async runtime: an atomic flag, the
//! wakers of futures waiting on it, and callbacks (the binding uses one to
//! abort the JS executor's AbortSignal).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

type Callback = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    reason: Option<String>,
    wakers: Vec<Waker>,
    callbacks: Vec<Callback>,
}

/// Cheap to clone; all clones observe the same cancellation.
#[derive(Clone, Default)]
pub struct CancelSignal {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CancelSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelSignal").field("cancelled", &self.is_cancelled()).finish()
    }
}

impl CancelSignal {
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancel once; later calls keep the first reason.
    pub fn cancel(&self, reason: impl Into<String>) {
        let (wakers, callbacks) = {
            let Ok(mut state) = self.inner.state.lock() else { return };
            if self.inner.cancelled.swap(true, Ordering::SeqCst) {
                return;
            }
            state.reason = Some(reason.into());
            (std::mem::take(&mut state.wakers), std::mem::take(&mut state.callbacks))
        };
        // Run outside the lock: a callback may touch this signal again.
        for waker in wakers {
            waker.wake();
        }
        for callback in callbacks {
            callback();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    pub fn reason(&self) -> Option<String> {
        self.inner.state.lock().ok().and_then(|s| s.reason.clone())
    }

    /// Run `callback` on cancellation (at once if already cancelled).
    pub fn on_cancel(&self, callback: impl FnOnce() + Send + 'static) {
        {
            let Ok(mut state) = self.inner.state.lock() else { return };
            if !self.is_cancelled() {
                state.callbacks.push(Box::new(callback));
                return;
            }
        }
        callback();
    }

    /// A signal cancelled with this one (and cancellable on its own).
    pub fn child(&self) -> CancelSignal {
        let child = CancelSignal::new();
        let weak = Arc::downgrade(&child.inner);
        let parent = self.clone();
        self.on_cancel(move || {
            if let Some(inner) = weak.upgrade() {
                let reason = parent.reason().unwrap_or_else(|| "cancelled".into());
                CancelSignal { inner }.cancel(reason);
            }
        });
        child
    }

    /// Resolves when the signal is cancelled.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled { signal: self.clone() }
    }
}

pub struct Cancelled {
    signal: CancelSignal,
}

impl Future for Cancelled {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_cancelled() {
            return Poll::Ready(());
        }
        let Ok(mut state) = self.signal.inner.state.lock() else { return Poll::Ready(()) };
        // Re-check under the lock so a concurrent cancel cannot be missed.
        if self.signal.is_cancelled() {
            return Poll::Ready(());
        }
        if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Run `future` until it finishes or `signal` is cancelled (then `None`).
pub async fn until_cancelled<F: Future>(future: F, signal: &CancelSignal) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cancelled = std::pin::pin!(signal.cancelled());
    std::future::poll_fn(move |cx| {
        if let Poll::Ready(out) = future.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}
