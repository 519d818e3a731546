//! `runCodeCell`: one code-mode cell for a gateway that keeps its own Tool Search runtime
//! (OpenClaw's `ToolSearchRuntime`, through `openclaw-tool-search/openclaw`). The cell runs in
//! the same contained child, pool, budgets and deadline as a session's `tool_search_code`; every
//! `openclaw.tools.search/describe/call` goes to the gateway's `bridge` function, so its policy,
//! counters, hooks and result shapes are the gateway's own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{json, Value};
use tool_search_core::ErrorCode;
use tool_search_sandbox::{
    BridgeError, BridgeHost, CallFuture, CancelToken, LogStyle, Lookup, RunOptions,
};

use super::convert::{is_nullish, number_arg, object_arg, property, string_arg, value_type};
use super::errors::{from_napi, guard, js_error, JsCode, JsResult};
use super::promise::{json_promise, link_abort_signal, AbortListener};
use super::session::delivery_gate;

/// Wraps the gateway's `bridge(op, args, signal)` as `{ run(requestJson), abort(requestJson) }`:
/// each request crosses as one JSON string and its answer comes back as one, always resolved
/// (`{ ok, value }` or `{ ok: false, code, message }`), so a throw is read on the JS thread.
const BRIDGE_ADAPTER: &str = r#"(function (bridge) {
  const controllers = new Map();
  const failed = (code, message) => JSON.stringify({ ok: false, code, message });
  return {
    run(text) {
      let request;
      try { request = JSON.parse(text); } catch { return Promise.resolve(failed('internal', 'the bridge request could not be decoded')); }
      const controller = new AbortController();
      controllers.set(request.key, controller);
      return (async () => {
        try {
          const value = await bridge(request.op, request.args, controller.signal);
          const json = JSON.stringify(value === undefined ? null : value);
          return '{"ok":true,"value":' + (json === undefined ? 'null' : json) + '}';
        } catch (error) {
          let code = 'bridge_error';
          let message;
          try {
            if (error !== null && typeof error === 'object' && typeof error.code === 'string' && error.code !== '') code = error.code;
            message = error !== null && typeof error === 'object' && 'message' in error ? String(error.message) : String(error);
          } catch { message = 'the bridge request failed'; }
          return failed(code, message);
        } finally {
          controllers.delete(request.key);
        }
      })();
    },
    abort(text) {
      let request;
      try { request = JSON.parse(text); } catch { return; }
      const controller = controllers.get(request.key);
      if (controller) controller.abort(new Error(request.reason));
    },
  };
})"#;

type JsRun = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;
type JsAbort = ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>;

/// The gateway's bridge function behind the sandbox's host interface. Every operation is
/// answered asynchronously in JS; nothing is answered from a native catalog.
struct JsBridge {
    run: Arc<JsRun>,
    abort: Arc<JsAbort>,
    next_key: AtomicU64,
}

impl JsBridge {
    fn request(&self, op: &'static str, args: Value, cancel: CancelToken) -> CallFuture {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let text = json!({ "key": key, "op": op, "args": args }).to_string();
        let run = Arc::clone(&self.run);
        let abort = Arc::clone(&self.abort);
        Box::pin(async move {
            // When the cell ends first (deadline, abort, result sent), the request's AbortSignal
            // fires and the request still settles on the gateway's side.
            let watcher = tokio::spawn(async move {
                cancel.cancelled().await;
                let text = json!({ "key": key, "reason": "the code cell ended before this request finished" });
                abort.call(text.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
            });
            // One delivery per event-loop turn, shared with the sessions' executor calls.
            let delivered = {
                let _permit = delivery_gate().acquire().await;
                run.call_async_catch(text).await
            };
            let answer = match delivered {
                Ok(promise) => promise.await,
                Err(e) => Err(e),
            };
            watcher.abort();
            match answer {
                Ok(text) => answer_of(&text),
                Err(e) => Err(BridgeError::new(
                    "internal",
                    format!("the bridge could not be called: {}", e.reason),
                )),
            }
        })
    }
}

fn answer_of(text: &str) -> std::result::Result<Value, BridgeError> {
    let Ok(mut answer) = serde_json::from_str::<Value>(text) else {
        return Err(BridgeError::new(
            "internal",
            "the bridge's answer could not be decoded",
        ));
    };
    if answer.get("ok").and_then(Value::as_bool) == Some(true) {
        return Ok(answer
            .get_mut("value")
            .map(Value::take)
            .unwrap_or(Value::Null));
    }
    let field = |name: &str| {
        answer
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Err(BridgeError::new(field("code"), field("message")))
}

impl BridgeHost for JsBridge {
    // Never reached: `lookup_async` answers every search and describe.
    fn search(&self, _query: &str, _options: &Value) -> std::result::Result<Value, BridgeError> {
        Err(BridgeError::new(
            "internal",
            "search is answered by the gateway's bridge",
        ))
    }

    fn describe(&self, _id: &str) -> std::result::Result<Value, BridgeError> {
        Err(BridgeError::new(
            "internal",
            "describe is answered by the gateway's bridge",
        ))
    }

    fn call(&self, id: String, args: Value, cancel: CancelToken) -> CallFuture {
        self.request("call", json!([id, args]), cancel)
    }

    fn lookup_async(&self, lookup: Lookup<'_>, cancel: CancelToken) -> Option<CallFuture> {
        Some(match lookup {
            Lookup::Search { query, options } => {
                self.request("search", json!([query, options]), cancel)
            }
            Lookup::Describe { id } => self.request("describe", json!([id]), cancel),
        })
    }
}

fn js_bridge(env: &Env, bridge: Unknown) -> JsResult<Arc<JsBridge>> {
    let factory: Function<Unknown, Object> = env.run_script(BRIDGE_ADAPTER).map_err(from_napi)?;
    let adapter = factory.call(bridge).map_err(from_napi)?;
    let run: Function<String, Promise<String>> =
        adapter.get_named_property("run").map_err(from_napi)?;
    let abort: Function<String, Unknown> =
        adapter.get_named_property("abort").map_err(from_napi)?;
    let run: JsRun = run
        .build_threadsafe_function()
        .callee_handled::<false>()
        .weak::<true>()
        .build()
        .map_err(from_napi)?;
    let abort: JsAbort = abort
        .build_threadsafe_function()
        .callee_handled::<false>()
        .weak::<true>()
        .build()
        .map_err(from_napi)?;
    Ok(Arc::new(JsBridge {
        run: Arc::new(run),
        abort: Arc::new(abort),
        next_key: AtomicU64::new(1),
    }))
}

/// The contract's clamp of `codeTimeoutMs`: default 10,000, 1,000..=60,000.
fn timeout_arg(value: Option<Unknown>) -> JsResult<Duration> {
    let Some(value) = value.filter(|v| !is_nullish(v).unwrap_or(true)) else {
        return Ok(Duration::from_millis(10_000));
    };
    let ms = number_arg(value, ErrorCode::InvalidRequest, "options.timeoutMs")?;
    if !ms.is_finite() || ms <= 0.0 {
        return Err(js_error(
            ErrorCode::InvalidRequest,
            "options.timeoutMs must be a positive number",
        ));
    }
    Ok(Duration::from_millis(ms.clamp(1_000.0, 60_000.0) as u64))
}

struct CellRequest {
    code: String,
    bridge: Arc<JsBridge>,
    options: RunOptions,
    cancel: Option<tool_search_core::session::CancelSignal>,
}

fn cell_request(
    env: &Env,
    code: Unknown,
    options: Unknown,
    listener: &mut Option<AbortListener>,
) -> JsResult<CellRequest> {
    let code = string_arg(code, ErrorCode::InvalidRequest, "code")?;
    if is_nullish(&options)? {
        return Err(js_error(
            ErrorCode::InvalidRequest,
            "options.bridge must be a function",
        ));
    }
    let options = object_arg(options, ErrorCode::InvalidRequest, "options")?;
    let bridge = match property(&options, "bridge")? {
        Some(f) if value_type(&f)? == ValueType::Function => js_bridge(env, f)?,
        _ => {
            return Err(js_error(
                ErrorCode::InvalidRequest,
                "options.bridge must be a function",
            ))
        }
    };
    let timeout = timeout_arg(property(&options, "timeoutMs")?)?;
    let log_style = match property(&options, "logStyle")? {
        None => LogStyle::Node,
        Some(v) if is_nullish(&v)? => LogStyle::Node,
        Some(v) => match string_arg(v, ErrorCode::InvalidRequest, "options.logStyle")?.as_str() {
            "node" => LogStyle::Node,
            "json" => LogStyle::Json,
            other => {
                return Err(js_error(
                    ErrorCode::InvalidRequest,
                    format!("options.logStyle must be 'node' or 'json', not {other:?}"),
                ))
            }
        },
    };
    let cancel = match property(&options, "signal")? {
        Some(signal) if !is_nullish(&signal)? => {
            let (cancel, added) = link_abort_signal(env, signal)?;
            *listener = added;
            Some(cancel)
        }
        _ => None,
    };
    Ok(CellRequest {
        code,
        bridge,
        options: RunOptions { timeout, log_style },
        cancel,
    })
}

/// Runs one code cell in the contained child, with every `openclaw.tools.*` request answered
/// by `options.bridge(op, args, signal)` (`op` is `search`, `describe` or `call`; `args` the
/// positional arguments as JSON). Resolves with the run's result; never rejects for the cell's
/// own failures (`ok: false`, `error.code`).
#[napi(
    ts_args_type = "code: string, options: CodeCellOptions",
    ts_return_type = "Promise<CodeCellResult>"
)]
pub fn run_code_cell<'env>(
    env: &'env Env,
    code: Unknown,
    options: Unknown,
) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
    let mut listener: Option<AbortListener> = None;
    let request = guard(|| cell_request(env, code, options, &mut listener));
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            if let Some(listener) = listener {
                let _ = listener.remove(env);
            }
            return Err(e);
        }
    };
    let future = async move {
        let CellRequest {
            code,
            bridge,
            options,
            cancel,
        } = request;
        let token = CancelToken::new();
        let linked = token.clone();
        let _link = cancel.map(|signal| signal.on_cancel(move |_| linked.cancel()));
        let value = match super::code_mode::await_runner().await {
            Ok(runner) => {
                let result = runner
                    .run_with_options(code, bridge as Arc<dyn BridgeHost>, token, options)
                    .await;
                super::code_mode::result_value(result)
            }
            Err(reason) => json!({
                "ok": false,
                "error": { "kind": "runtime_unavailable", "code": "CODE_MODE_UNAVAILABLE", "message": format!("code mode is unavailable: {reason}") },
                "logs": [],
            }),
        };
        Ok(value)
    };
    json_promise(env, future, listener)
}
