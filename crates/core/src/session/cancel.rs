//! A cancel signal that works without an async runtime: an atomic flag, the
//! wakers of futures waiting on it, and callbacks (the binding uses one to
//! abort the JS executor's AbortSignal).
//!
//! Nothing registered on a signal outlives its registrant: a callback is
//! removed when its [`Registration`] drops, a waiting future's waker when the
//! future drops, and a [`CancelSignal::child`] holds only a weak reference to
//! itself in its parent. A long-lived signal (a caller's, reused for many
//! calls) therefore does not accumulate one entry per call, and no signal
//! keeps itself alive through its own callbacks.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};

type Callback = Box<dyn FnOnce(&str) + Send>;

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    state: Mutex<State>,
    /// A child's registration on its parent (removed when this signal goes).
    _parent: Mutex<Option<Registration>>,
}

#[derive(Default)]
struct State {
    reason: Option<String>,
    next_slot: u64,
    wakers: Vec<(u64, Waker)>,
    callbacks: Vec<(u64, Callback)>,
}

impl State {
    fn slot(&mut self) -> u64 {
        self.next_slot += 1;
        self.next_slot
    }
}

/// Cheap to clone; all clones observe the same cancellation.
#[derive(Clone, Default)]
pub struct CancelSignal {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CancelSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelSignal")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Keeps a callback registered; dropping it unregisters the callback.
#[must_use = "dropping the registration removes the callback"]
pub struct Registration {
    signal: Weak<Inner>,
    slot: u64,
}

impl Registration {
    fn none() -> Self {
        Registration {
            signal: Weak::new(),
            slot: 0,
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some(inner) = self.signal.upgrade() else {
            return;
        };
        let removed = inner.state.lock().ok().and_then(|mut state| {
            let at = state
                .callbacks
                .iter()
                .position(|(slot, _)| *slot == self.slot)?;
            Some(state.callbacks.swap_remove(at))
        });
        // Dropped outside the lock: a callback may own another registration.
        drop(removed);
    }
}

impl CancelSignal {
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancel once; later calls keep the first reason.
    pub fn cancel(&self, reason: impl Into<String>) {
        let reason = reason.into();
        let (wakers, callbacks) = {
            let Ok(mut state) = self.inner.state.lock() else {
                return;
            };
            if self.inner.cancelled.swap(true, Ordering::SeqCst) {
                return;
            }
            state.reason = Some(reason.clone());
            (
                std::mem::take(&mut state.wakers),
                std::mem::take(&mut state.callbacks),
            )
        };
        // Run outside the lock: a callback may touch this signal again.
        for (_, waker) in wakers {
            waker.wake();
        }
        for (_, callback) in callbacks {
            callback(&reason);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    pub fn reason(&self) -> Option<String> {
        self.inner.state.lock().ok().and_then(|s| s.reason.clone())
    }

    /// Run `callback` with the reason on cancellation (at once if already
    /// cancelled) while the returned registration lives.
    pub fn on_cancel(&self, callback: impl FnOnce(&str) + Send + 'static) -> Registration {
        {
            let Ok(mut state) = self.inner.state.lock() else {
                return Registration::none();
            };
            if !self.is_cancelled() {
                let slot = state.slot();
                state.callbacks.push((slot, Box::new(callback)));
                return Registration {
                    signal: Arc::downgrade(&self.inner),
                    slot,
                };
            }
        }
        let reason = self.reason().unwrap_or_else(|| "cancelled".into());
        callback(&reason);
        Registration::none()
    }

    /// A signal cancelled with this one (and cancellable on its own). The
    /// parent holds only a weak reference to it, removed when the child goes.
    pub fn child(&self) -> CancelSignal {
        let child = CancelSignal::new();
        let weak = Arc::downgrade(&child.inner);
        let registration = self.on_cancel(move |reason| {
            if let Some(inner) = weak.upgrade() {
                CancelSignal { inner }.cancel(reason);
            }
        });
        if let Ok(mut parent) = child.inner._parent.lock() {
            *parent = Some(registration);
        }
        child
    }

    /// Resolves when the signal is cancelled.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            signal: self.clone(),
            slot: None,
        }
    }
}

pub struct Cancelled {
    signal: CancelSignal,
    slot: Option<u64>,
}

impl Future for Cancelled {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_cancelled() {
            return Poll::Ready(());
        }
        let signal = self.signal.clone();
        let Ok(mut state) = signal.inner.state.lock() else {
            return Poll::Ready(());
        };
        // Re-check under the lock so a concurrent cancel cannot be missed.
        if signal.is_cancelled() {
            return Poll::Ready(());
        }
        match self.slot {
            Some(slot) => {
                if let Some((_, waker)) = state.wakers.iter_mut().find(|(s, _)| *s == slot) {
                    if !waker.will_wake(cx.waker()) {
                        *waker = cx.waker().clone();
                    }
                }
            }
            None => {
                let slot = state.slot();
                state.wakers.push((slot, cx.waker().clone()));
                drop(state);
                self.slot = Some(slot);
            }
        }
        Poll::Pending
    }
}

impl Drop for Cancelled {
    fn drop(&mut self) {
        let Some(slot) = self.slot else { return };
        if let Ok(mut state) = self.signal.inner.state.lock() {
            if let Some(at) = state.wakers.iter().position(|(s, _)| *s == slot) {
                state.wakers.swap_remove(at);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    impl CancelSignal {
        /// Registered callbacks and wakers (what a leak leaves behind).
        fn registered(&self) -> usize {
            self.inner
                .state
                .lock()
                .map(|s| s.callbacks.len() + s.wakers.len())
                .unwrap_or(0)
        }
    }

    #[test]
    fn a_child_is_freed_and_unregistered_when_dropped() {
        let parent = CancelSignal::new();
        let child = parent.child();
        let weak = Arc::downgrade(&child.inner);
        assert_eq!(parent.registered(), 1);
        drop(child);
        // The old child() kept a strong reference to the parent in the parent's own
        // callback list (a cycle) and never removed the entry.
        assert!(weak.upgrade().is_none(), "the child signal leaked");
        assert_eq!(parent.registered(), 0);
        let parent_weak = Arc::downgrade(&parent.inner);
        drop(parent);
        assert!(parent_weak.upgrade().is_none(), "the parent signal leaked");
    }

    #[test]
    fn many_children_of_a_long_lived_signal_do_not_accumulate() {
        let parent = CancelSignal::new();
        for _ in 0..1000 {
            let child = parent.child();
            let _wait = child.cancelled();
        }
        assert_eq!(parent.registered(), 0);
    }

    #[test]
    fn cancelling_the_parent_cancels_live_children_with_its_reason() {
        let parent = CancelSignal::new();
        let child = parent.child();
        let grandchild = child.child();
        parent.cancel("deadline");
        assert!(child.is_cancelled() && grandchild.is_cancelled());
        assert_eq!(grandchild.reason().as_deref(), Some("deadline"));
        // A child made after the cancel starts cancelled.
        assert!(parent.child().is_cancelled());
    }

    #[test]
    fn a_dropped_registration_never_fires() {
        let signal = CancelSignal::new();
        let fired = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&fired);
        let registration = signal.on_cancel(move |_| flag.store(true, Ordering::SeqCst));
        drop(registration);
        signal.cancel("x");
        assert!(!fired.load(Ordering::SeqCst));
        let flag = Arc::clone(&fired);
        let _kept = signal.on_cancel(move |reason| flag.store(reason == "x", Ordering::SeqCst));
        assert!(
            fired.load(Ordering::SeqCst),
            "an already-cancelled signal runs the callback at once"
        );
    }

    #[test]
    fn a_finished_wait_removes_its_waker() {
        let signal = CancelSignal::new();
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        for _ in 0..100 {
            let mut wait = Box::pin(signal.cancelled());
            assert!(wait.as_mut().poll(&mut cx).is_pending());
            assert!(wait.as_mut().poll(&mut cx).is_pending());
        }
        assert_eq!(signal.registered(), 0);
    }
}
