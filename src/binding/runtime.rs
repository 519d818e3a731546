//! napi's Tokio runtime, lent to the gateway crate (`tool_search_gateway::runtime`).

use tool_search_core::session::BoxFuture;
use tool_search_gateway::runtime::Runtime;

pub struct NapiRuntime;

/// The one runtime of the process.
pub static NAPI: NapiRuntime = NapiRuntime;

impl Runtime for NapiRuntime {
    fn spawn(&self, future: BoxFuture<()>) {
        napi::bindgen_prelude::spawn(future);
    }

    fn spawn_blocking(&self, job: Box<dyn FnOnce() + Send>) {
        drop(napi::bindgen_prelude::spawn_blocking(job));
    }
}
