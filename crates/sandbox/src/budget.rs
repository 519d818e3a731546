//! Gateway-wide budgets shared by every cell of a runner: bytes of bridged calls outstanding,
//! and cell slots. A cell's own budgets live in [`crate::Caps`].

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of `call` frames outstanding across all cells. Charged when a call is accepted,
/// released when it settles or the cell ends; a charge that does not fit is refused.
#[derive(Debug)]
pub(crate) struct CallBytes {
    limit: usize,
    used: AtomicUsize,
}

impl CallBytes {
    pub(crate) fn new(limit: usize) -> Self {
        CallBytes {
            limit,
            used: AtomicUsize::new(0),
        }
    }

    pub(crate) fn try_charge(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .is_ok()
    }

    pub(crate) fn release(&self, bytes: usize) {
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                Some(used.saturating_sub(bytes))
            });
    }

    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_fit_or_are_refused_and_release_restores() {
        let budget = CallBytes::new(100);
        assert!(budget.try_charge(60));
        assert!(!budget.try_charge(41));
        assert!(budget.try_charge(40));
        budget.release(60);
        assert_eq!(budget.used(), 40);
        budget.release(1000);
        assert_eq!(budget.used(), 0);
    }
}
