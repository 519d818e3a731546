//! The binding's side of the one channel to JavaScript (`tool_search_gateway::channel`): a
//! gateway function wrapped once in `js/channel.js`, its adapter's `run` and `abort` as weak
//! threadsafe functions (they never keep the event loop alive). Listeners (session events,
//! ranking progress) are wrapped by the same adapter and only ever notified.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use tool_search_core::session::BoxFuture;
use tool_search_gateway::channel::{Answering, Channel, Port, Target, ADAPTER_JS};

use super::errors::{from_napi, JsResult};

type JsRun = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

/// A JS function called from any thread with one JSON string, which reaches it as a plain
/// object (`listener(JSON.parse(text))`).
pub type JsonCallback = ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>;

/// `js/channel.js` applied to `function`: its `{ run, abort }`.
fn adapter<'env>(env: &'env Env, function: Unknown, kind: &str) -> JsResult<Object<'env>> {
    let factory: Function<FnArgs<(Unknown, String)>, Object> =
        env.run_script(ADAPTER_JS).map_err(from_napi)?;
    factory
        .call((function, kind.to_string()).into())
        .map_err(from_napi)
}

fn threadsafe<Return: 'static + FromNapiValue>(
    adapter: &Object,
    name: &str,
) -> JsResult<ThreadsafeFunction<String, Return, String, Status, false, true>> {
    let function: Function<String, Return> = adapter.get_named_property(name).map_err(from_napi)?;
    function
        .build_threadsafe_function()
        .callee_handled::<false>()
        .weak::<true>()
        .build()
        .map_err(from_napi)
}

/// `function` (the executor, a bridge) behind a [`Channel`].
pub fn channel(env: &Env, function: Unknown, target: Target) -> JsResult<Channel> {
    let adapter = adapter(env, function, target.kind())?;
    let port = JsPort {
        run: Arc::new(threadsafe(&adapter, "run")?),
        abort: threadsafe(&adapter, "abort")?,
    };
    Ok(Channel::new(Arc::new(port), target))
}

/// `listener` as a [`JsonCallback`].
pub fn listener(env: &Env, listener: Unknown) -> JsResult<JsonCallback> {
    threadsafe(&adapter(env, listener, "listener")?, "run")
}

/// Queue `value` to `listener` as one JSON string (never blocks); a value
/// that cannot be serialized is not delivered, and logged as an error.
pub fn notify(listener: &JsonCallback, value: &impl serde::Serialize, what: &str) {
    match super::convert::json_text(value) {
        Ok(text) => drop(listener.call(text, ThreadsafeFunctionCallMode::NonBlocking)),
        Err(e) => {
            tracing::error!(target: "openclaw_tool_search", reason = %e.reason, "{what} not delivered")
        }
    }
}

struct JsPort {
    run: Arc<JsRun>,
    abort: JsonCallback,
}

impl Port for JsPort {
    fn deliver(&self, request: String) -> BoxFuture<std::result::Result<Answering, String>> {
        let run = Arc::clone(&self.run);
        Box::pin(async move {
            // Returns once `run` has been called on the JS thread: the request is delivered.
            match run.call_async_catch(request).await {
                Ok(promise) => {
                    Ok(Box::pin(async move { promise.await.map_err(|e| e.reason) }) as Answering)
                }
                Err(e) => Err(e.reason),
            }
        })
    }

    fn abort(&self, request: String) {
        self.abort
            .call(request, ThreadsafeFunctionCallMode::NonBlocking);
    }
}
