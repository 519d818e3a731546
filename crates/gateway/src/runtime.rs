//! The async runtime the binding runs futures on, lent to this crate: the binding owns it (napi's
//! Tokio runtime), this crate only spawns onto it.

use std::sync::Arc;

use tool_search_core::session::{BoxFuture, Offload, OffloadHandle};

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
