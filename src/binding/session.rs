//! `ToolSearchSession`: one run's surfaces and control-tool dispatch. Thin:
//! JS values in and out, everything else in `tool_search_core::session`.
//!
//! The executor lives in JS. It is wrapped once per session in a small JS
//! adapter (below) that always resolves with `{ status, result | reason }`,
//! so a thrown error's `code` is read on the JS thread:
//! - resolve with the tool result → ok;
//! - throw an Error with `code: 'TOOL_BLOCKED'` → a blocked result (policy,
//!   approval, hook), never retried;
//! - throw an Error with `code: 'TOOL_UNAVAILABLE'` → the tool is gone: the
//!   call fails closed;
//! - any other throw → the tool failed (TOOL_FAILED with its message).
//!
//! The adapter passes each call an `AbortSignal`, aborted when the caller's
//! `signal` aborts or a code cell times out. Executor, abort and `onEvent`
//! are weak threadsafe functions: they never keep the event loop alive.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{json, Value};
use tool_search_core::config;
use tool_search_core::session::{
    direct::definition_from_value, BoxFuture, EventSink, Executor, ExecutorCall, ExecutorOutcome,
    Failure, HandleOptions, Session, SessionEvent, SessionOptions, ToolResult,
};
use tool_search_core::surfaces::SurfaceFormat;
use tool_search_core::ErrorCode;

use super::catalog::ToolCatalog;
use super::convert::{
    is_nullish, json_text, number_arg, object_arg, optional_json_arg, parsed, property, string_arg,
    value_type,
};
use super::errors::{from_napi, guard, guard_future, js_error, to_js, JsCode, JsResult};
use super::promise::{json_promise, link_abort_signal, AbortListener};

/// Wraps the gateway's executor: `{ run(callJson), abort(requestJson) }`.
/// A call crosses as one JSON string and its result comes back as one JSON
/// string: the event loop does one `JSON.parse` and one `JSON.stringify` per
/// call, never a conversion per property. `run` calls the executor
/// synchronously, so when the threadsafe call returns, the call has been
/// delivered (the delivery gate below relies on that).
const EXECUTOR_ADAPTER: &str = r#"(function (executor) {
  const controllers = new Map();
  // Keys are handed out in delivery order, and `run` and `abort` travel on two
  // queues: an abort whose run has not arrived yet (key above the last run seen)
  // waits here, and that run then does not start the executor.
  const early = new Map();
  let lastRun = 0;
  const failed = (status, reason) => JSON.stringify({ status, reason });
  return {
    run(text) {
      let call;
      try { call = JSON.parse(text); } catch { return Promise.resolve(failed('failed', 'the call could not be decoded')); }
      if (call.key > lastRun) lastRun = call.key;
      if (early.has(call.key)) {
        const reason = early.get(call.key);
        early.delete(call.key);
        return Promise.resolve(failed('failed', 'aborted before it started: ' + reason));
      }
      const controller = new AbortController();
      controllers.set(call.key, controller);
      return (async () => {
        try {
          const request = { id: call.id, name: call.name, source: call.source, owner: call.owner, args: call.args,
                            toolCallId: call.toolCallId, signal: controller.signal };
          if (call.parentToolCallId !== undefined) request.parentToolCallId = call.parentToolCallId;
          const result = await executor(request);
          const json = JSON.stringify(result === undefined ? null : result);
          return '{"status":"ok","result":' + (json === undefined ? 'null' : json) + '}';
        } catch (error) {
          const code = error !== null && typeof error === 'object' ? error.code : undefined;
          let reason;
          try {
            reason = error !== null && typeof error === 'object' && 'message' in error ? String(error.message) : String(error);
          } catch { reason = 'executor failed'; }
          return failed(code === 'TOOL_BLOCKED' ? 'blocked' : code === 'TOOL_UNAVAILABLE' ? 'missing' : 'failed', reason);
        } finally {
          controllers.delete(call.key);
        }
      })();
    },
    abort(text) {
      let request;
      try { request = JSON.parse(text); } catch { return; }
      const controller = controllers.get(request.key);
      if (controller) controller.abort(new Error(request.reason));
      else if (request.key > lastRun && early.size < 1024) early.set(request.key, String(request.reason));
    },
  };
})"#;

type JsFn = ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;
type JsSink = ThreadsafeFunction<String, Unknown<'static>, String, Status, false, true>;

/// One executor delivery at a time, gateway-wide: the next call is handed to
/// the event loop only after the previous one's `JSON.parse` and synchronous
/// executor start have run. Node drains up to 1,000 queued threadsafe calls
/// in one turn; with this gate a turn carries one delivery, whose cost the
/// argument caps bound, so a flood of calls cannot freeze the event loop.
pub(crate) fn delivery_gate() -> &'static tokio::sync::Semaphore {
    static GATE: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    GATE.get_or_init(|| tokio::sync::Semaphore::new(1))
}

struct JsExecutor {
    run: Arc<JsFn>,
    abort: Arc<JsSink>,
    /// Handed out under the delivery gate, so keys reach JS in increasing order.
    keys: Arc<AtomicU64>,
}

/// Where one executor call stands, so an abort reaches the JS side exactly when
/// there is something to abort: never before the call was handed over (it is
/// then simply not delivered), once after.
enum Delivery {
    Waiting,
    Cancelled,
    Delivered(u64),
    Done,
}

struct DeliveryState {
    state: std::sync::Mutex<Delivery>,
    abort: Arc<JsSink>,
}

impl DeliveryState {
    fn abort(&self, reason: &str) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *state {
            Delivery::Waiting => *state = Delivery::Cancelled,
            Delivery::Delivered(key) => {
                *state = Delivery::Done;
                drop(state);
                let text = json!({ "key": key, "reason": reason }).to_string();
                self.abort
                    .call(text, ThreadsafeFunctionCallMode::NonBlocking);
            }
            Delivery::Cancelled | Delivery::Done => {}
        }
    }

    /// Claims the next key for delivery, unless the call was cancelled while it waited.
    fn deliver(&self, next_key: &AtomicU64) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *state {
            Delivery::Waiting => {
                let key = next_key.fetch_add(1, Ordering::Relaxed);
                *state = Delivery::Delivered(key);
                Some(key)
            }
            _ => None,
        }
    }

    fn settle(&self) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Delivery::Done;
    }
}

/// Aborts the JS call when the core drops the call's future before it settles (a
/// cell's end aborts its bridge tasks at once, possibly before a cancel callback ran).
struct AbortOnDrop(Arc<DeliveryState>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort("the call was abandoned before it finished");
    }
}

impl Executor for JsExecutor {
    fn call(&self, call: ExecutorCall) -> BoxFuture<ExecutorOutcome> {
        let delivery = Arc::new(DeliveryState {
            state: std::sync::Mutex::new(Delivery::Waiting),
            abort: Arc::clone(&self.abort),
        });
        let on_cancel = Arc::clone(&delivery);
        let registration = call.cancel.on_cancel(move |reason| on_cancel.abort(reason));
        let mut payload = json!({
            "id": call.id,
            "name": call.name,
            "source": call.source.as_str(),
            "owner": call.owner,
            "args": call.args,
            "toolCallId": call.tool_call_id,
        });
        if let Some(parent) = call.parent_tool_call_id {
            payload["parentToolCallId"] = Value::String(parent);
        }
        // Held as text while it waits for the gate (a parsed value is many times its JSON);
        // the key, known only at delivery, is put in front.
        let body = payload.to_string();
        drop(payload);
        let run = Arc::clone(&self.run);
        let keys = Arc::clone(&self.keys);
        Box::pin(async move {
            let _registration = registration;
            let guard = AbortOnDrop(delivery);
            let delivered = {
                let _permit = delivery_gate().acquire().await;
                let Some(key) = guard.0.deliver(&keys) else {
                    return ExecutorOutcome::Failed("cancelled before it was delivered".into());
                };
                let text = format!("{{\"key\":{key},{}", &body[1..]);
                drop(body);
                run.call_async_catch(text).await
            };
            let outcome = match delivered {
                Ok(promise) => match promise.await {
                    Ok(answer) => outcome_of(&answer),
                    Err(e) => ExecutorOutcome::Failed(e.reason),
                },
                Err(e) => {
                    ExecutorOutcome::Failed(format!("executor could not be called: {}", e.reason))
                }
            };
            guard.0.settle();
            outcome
        })
    }
}

fn outcome_of(answer: &str) -> ExecutorOutcome {
    let Ok(mut answer) = serde_json::from_str::<Value>(answer) else {
        return ExecutorOutcome::Failed("the executor's answer could not be decoded".into());
    };
    let reason = answer
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    match answer.get("status").and_then(Value::as_str) {
        Some("ok") => ExecutorOutcome::Ok(
            answer
                .get_mut("result")
                .map(Value::take)
                .unwrap_or(Value::Null),
        ),
        Some("blocked") => ExecutorOutcome::Blocked(reason),
        Some("missing") => ExecutorOutcome::Missing(reason),
        _ => ExecutorOutcome::Failed(reason),
    }
}

/// A session answers one run's control-tool calls. See `ToolSearchSessionOptions`.
#[napi]
pub struct ToolSearchSession {
    /// Replaced by `useCatalog`; each call works on the session it read.
    inner: std::sync::RwLock<Session>,
}

impl ToolSearchSession {
    pub(crate) fn session(&self) -> Session {
        self.inner.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

fn error_result(tool_name: &str, e: tool_search_core::Error) -> ToolResult {
    ToolResult::from_outcome(tool_name, Err(Failure::from(e)))
}

/// The `ToolCatalog` behind a JS value, or INVALID_REQUEST. Taken as `Unknown` (not a
/// `ClassInstance` parameter) so a wrong argument throws the coded error, not napi's.
fn catalog_arg<'a>(env: &Env, value: &Unknown<'a>) -> JsResult<ClassInstance<'a, ToolCatalog>> {
    let wrong = || js_error(ErrorCode::InvalidRequest, "catalog must be a ToolCatalog.");
    if value_type(value)? != ValueType::Object {
        return Err(wrong());
    }
    // SAFETY: `value` is a live handle of this call's scope. napi-rs's conversion unwraps it and
    // checks the type tag and class (another class or a spoofed prototype is refused).
    unsafe { ClassInstance::<ToolCatalog>::from_napi_value(env.raw(), value.raw()) }
        .map_err(|_| wrong())
}

fn function_arg<'a>(value: Option<Unknown<'a>>, what: &str) -> JsResult<Option<Unknown<'a>>> {
    match value {
        None => Ok(None),
        Some(v) if value_type(&v)? == ValueType::Function => Ok(Some(v)),
        Some(_) => Err(js_error(
            ErrorCode::InvalidRequest,
            format!("{what} must be a function"),
        )),
    }
}

#[napi]
impl ToolSearchSession {
    /// Build a session over a catalog and a resolved config. Throws
    /// NAME_COLLISION when client tool names collide with OpenClaw, plugin or
    /// MCP tools in directory mode, or a direct tool shadows a control tool.
    #[napi(
        constructor,
        ts_args_type = "catalog: ToolCatalog, config: ResolvedToolSearchConfig | unknown, options: ToolSearchSessionOptions"
    )]
    pub fn new(
        env: Env,
        catalog: Unknown,
        config: Option<Unknown>,
        options: Option<Unknown>,
    ) -> Result<Self, JsCode> {
        guard(|| {
            let catalog = catalog_arg(&env, &catalog)?;
            let raw_config = optional_json_arg(&env, config, ErrorCode::InvalidConfig, "config")?
                .unwrap_or(Value::Null);
            let mut config = super::config::resolve_for_session(&raw_config);
            let options = match options {
                Some(o) if !is_nullish(&o)? => object_arg(o, ErrorCode::InvalidRequest, "options")?,
                _ => {
                    return Err(js_error(
                        ErrorCode::InvalidRequest,
                        "options.executor must be a function",
                    ))
                }
            };
            let executor = function_arg(property(&options, "executor")?, "options.executor")?
                .ok_or_else(|| {
                    js_error(
                        ErrorCode::InvalidRequest,
                        "options.executor must be a function",
                    )
                })?;
            let executor = js_executor(&env, executor)?;

            let direct_tools = match optional_json_arg(
                &env,
                property(&options, "directTools")?,
                ErrorCode::InvalidRequest,
                "options.directTools",
            )? {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(definition_from_value)
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(to_js)?,
                Some(_) => {
                    return Err(js_error(
                        ErrorCode::InvalidRequest,
                        "options.directTools must be an array",
                    ))
                }
            };
            let context_tokens = match property(&options, "contextTokens")? {
                None => None,
                Some(v) => {
                    match number_arg(v, ErrorCode::InvalidRequest, "options.contextTokens") {
                        Ok(n) if n.is_finite() && n >= 0.0 => Some(n.floor() as u64),
                        _ => {
                            return Err(js_error(
                                ErrorCode::InvalidRequest,
                                "options.contextTokens must be a non-negative number",
                            ))
                        }
                    }
                }
            };
            let on_event = match function_arg(property(&options, "onEvent")?, "options.onEvent")? {
                None => None,
                Some(v) => Some(event_sink(&env, v)?),
            };
            // Only code mode needs the sandbox. Code mode without a runner is
            // never offered: fall back to tools (contract §7).
            let code_runner = if config.enabled && config.mode == config::Mode::Code {
                let runner = super::code_mode::session_code_runner();
                if runner.is_none() {
                    config.mode = config::Mode::Tools;
                    config.code_mode_supported = false;
                    // The probe pending, or what it found (no host path).
                    config.fallback_reason = Some(
                        super::code_mode::code_mode_support()
                            .err()
                            .unwrap_or_else(|| "code mode is unavailable on this host (see codeModeCapability()); using tools mode".into()),
                    );
                }
                runner
            } else {
                None
            };
            let capability_directory = match property(&options, "capabilityDirectory")? {
                None => None,
                Some(v) => match value_type(&v)? {
                    // SAFETY: the value's type was read just above.
                    ValueType::Boolean => Some(unsafe { v.cast::<bool>() }.map_err(from_napi)?),
                    _ => {
                        return Err(js_error(
                            ErrorCode::InvalidRequest,
                            "options.capabilityDirectory must be a boolean",
                        ))
                    }
                },
            };
            let session_options = SessionOptions {
                direct_tools,
                context_tokens,
                on_event,
                code_runner,
                capability_directory,
            };
            Session::new(&catalog.inner, config, executor, session_options)
                .map(|inner| ToolSearchSession {
                    inner: std::sync::RwLock::new(inner),
                })
                .map_err(to_js)
        })
    }

    /// Move this session to `catalog` (e.g. from `withSource` after an MCP
    /// server changed): same config, executor, event sink, telemetry and call
    /// numbering; the model surfaces keep their bytes in code and tools modes
    /// when the direct tools did not change. Calls in flight finish on the
    /// catalog they started with. Throws NAME_COLLISION as the constructor does.
    #[napi(ts_args_type = "catalog: ToolCatalog")]
    pub fn use_catalog(&self, env: Env, catalog: Unknown) -> Result<(), JsCode> {
        guard(|| {
            let catalog = catalog_arg(&env, &catalog)?;
            let next = self.session().with_catalog(&catalog.inner).map_err(to_js)?;
            *self.inner.write().unwrap_or_else(|p| p.into_inner()) = next;
            Ok(())
        })
    }

    /// `direct` (Tool Search disabled), `code`, `tools` or `directory`.
    #[napi(getter, ts_return_type = "'direct' | 'code' | 'tools' | 'directory'")]
    pub fn mode(&self) -> Result<String, JsCode> {
        guard(|| Ok(self.session().mode().as_str().to_string()))
    }

    /// The tools to send (control tools for the mode, direct tools, and in
    /// direct mode the catalog tools shown with schemas), the directory
    /// prompt where the mode has one, and their byte sizes. `options.prompt`
    /// (the turn's user prompt) orders the capability directory of code and
    /// tools modes by what it most likely needs.
    #[napi(
        ts_args_type = "format?: SurfaceFormat | null, options?: { prompt?: string | null } | null",
        ts_return_type = "ModelSurface"
    )]
    pub fn surface<'env>(
        &self,
        env: &'env Env,
        format: Option<Unknown>,
        options: Option<Unknown>,
    ) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let format = match format {
                Some(f) if !is_nullish(&f)? => {
                    SurfaceFormat::parse(&string_arg(f, ErrorCode::InvalidRequest, "format")?)
                        .map_err(to_js)?
                }
                _ => SurfaceFormat::Neutral,
            };
            let prompt = match options {
                Some(o) if !is_nullish(&o)? => {
                    let o = object_arg(o, ErrorCode::InvalidRequest, "options")?;
                    match property(&o, "prompt")? {
                        Some(p) => {
                            Some(string_arg(p, ErrorCode::InvalidRequest, "options.prompt")?)
                        }
                        None => None,
                    }
                }
                _ => None,
            };
            parsed(env, &*self.session().surface_for(format, prompt.as_deref()))
        })
    }

    /// The directory text (directory mode; memoized per catalog snapshot and
    /// options) or the capability directory (code and tools modes, when
    /// enabled; owners by size), without rendering the tool definitions.
    #[napi]
    pub fn directory_prompt(&self) -> Result<Option<String>, JsCode> {
        guard(|| {
            Ok(self
                .session()
                .directory_prompt()
                .map(|text| text.to_string()))
        })
    }

    /// Whether `handle` answers this tool name (control tools of the mode, and
    /// exact catalog tool names in direct and directory modes).
    #[napi(ts_args_type = "toolName: string")]
    pub fn handles(&self, tool_name: Unknown) -> Result<bool, JsCode> {
        guard(|| {
            let tool_name = string_arg(tool_name, ErrorCode::InvalidRequest, "toolName")?;
            Ok(self.session().handles(&tool_name))
        })
    }

    /// Answer one model tool call. Resolves with a `ToolResult`; failures
    /// (unknown tool, invalid arguments, blocked, unavailable) are results with
    /// `ok: false`, not rejections.
    #[napi(
        ts_args_type = "toolName: string, args: unknown, options?: { toolCallId?: string; signal?: AbortSignal } | null",
        ts_return_type = "Promise<ToolResult>"
    )]
    pub fn handle<'env>(
        &self,
        env: &'env Env,
        tool_name: Unknown,
        args: Option<Unknown>,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
        let session = self.session();
        let mut listener: Option<AbortListener> = None;
        let tool_name = guard(|| string_arg(tool_name, ErrorCode::InvalidRequest, "toolName"))?;
        let prepared = guard(|| {
            let args = optional_json_arg(env, args, ErrorCode::InvalidRequest, "tool arguments")?
                .unwrap_or(Value::Null);
            let mut handle_options = HandleOptions {
                offload: Some(super::code_mode::offload()),
                ..HandleOptions::default()
            };
            if let Some(options) = options {
                if !is_nullish(&options)? {
                    let options = object_arg(options, ErrorCode::InvalidRequest, "options")?;
                    if let Some(id) = property(&options, "toolCallId")? {
                        handle_options.tool_call_id = Some(string_arg(
                            id,
                            ErrorCode::InvalidRequest,
                            "options.toolCallId",
                        )?);
                    }
                    if let Some(signal) = property(&options, "signal")? {
                        let (cancel, added) = link_abort_signal(env, signal)?;
                        handle_options.cancel = Some(cancel);
                        listener = added;
                    }
                }
            }
            Ok((args, handle_options))
        });
        let future = async move {
            let result = match prepared {
                // A panic while handling is the call's INTERNAL failure, a
                // result like any other (the promise resolves).
                Ok((args, handle_options)) => {
                    guard_future(session.handle(&tool_name, args, handle_options))
                        .await
                        .unwrap_or_else(|panic| error_result(&tool_name, panic))
                }
                Err(e) => error_result(
                    &tool_name,
                    tool_search_core::Error::new(
                        ErrorCode::parse(e.status.0).unwrap_or(ErrorCode::Internal),
                        e.reason.clone(),
                    ),
                ),
            };
            // Serialized off the event loop; rebuilt there with one JSON.parse.
            Ok(result)
        };
        json_promise(env, future, listener)
    }

    /// Directory mode: at most `maxTools` (default and cap 4) schemas likely
    /// needed this turn, `required` first. Reads the whole prompt with bounded
    /// work (its ends searched, tool names anywhere looked up), hydrates implied
    /// families together (web search + page reader, memory tools), never a name
    /// shared by two tools, never MCP or client tools. Other modes: `[]`.
    #[napi(
        ts_args_type = "userPrompt: string, options?: { maxTools?: number; required?: string[] } | null",
        ts_return_type = "ToolDefinition[]"
    )]
    pub fn hydrate<'env>(
        &self,
        env: &'env Env,
        user_prompt: Unknown,
        options: Option<Unknown>,
    ) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let user_prompt = string_arg(user_prompt, ErrorCode::InvalidRequest, "userPrompt")?;
            let options = optional_json_arg(env, options, ErrorCode::InvalidRequest, "options")?
                .unwrap_or(Value::Null);
            if !matches!(options, Value::Null | Value::Object(_)) {
                return Err(js_error(
                    ErrorCode::InvalidRequest,
                    "options must be an object",
                ));
            }
            let max_tools = match options.get("maxTools") {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_f64() {
                    Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => Some(n as usize),
                    _ => {
                        return Err(js_error(
                            ErrorCode::InvalidRequest,
                            "maxTools must be a non-negative integer",
                        ))
                    }
                },
            };
            let required: Vec<String> = match options.get("required") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        js_error(
                            ErrorCode::InvalidRequest,
                            "required must be an array of tool names or ids",
                        )
                    })?,
                Some(_) => {
                    return Err(js_error(
                        ErrorCode::InvalidRequest,
                        "required must be an array of tool names or ids",
                    ))
                }
            };
            parsed(
                env,
                &self.session().hydrate(&user_prompt, max_tools, &required),
            )
        })
    }

    /// Record the serialized size of one provider request (bytes).
    #[napi(ts_args_type = "bytes: number")]
    pub fn record_request_bytes(&self, bytes: Unknown) -> Result<(), JsCode> {
        guard(|| {
            let bytes = number_arg(bytes, ErrorCode::InvalidRequest, "bytes")?;
            if !bytes.is_finite() || bytes < 0.0 {
                return Err(js_error(
                    ErrorCode::InvalidRequest,
                    "bytes must be a non-negative number",
                ));
            }
            self.session().record_request_bytes(bytes as u64);
            Ok(())
        })
    }

    /// Catalog counters plus what the model saw, bytes and tools called.
    #[napi(ts_return_type = "SessionTelemetry")]
    pub fn telemetry<'env>(&self, env: &'env Env) -> Result<Unknown<'env>, JsCode> {
        guard(|| parsed(env, &self.session().telemetry()))
    }
}

fn js_executor(env: &Env, executor: Unknown) -> JsResult<Arc<dyn Executor>> {
    let factory: Function<Unknown, Object> = env.run_script(EXECUTOR_ADAPTER).map_err(from_napi)?;
    let adapter = factory.call(executor).map_err(from_napi)?;
    let run: Function<String, Promise<String>> =
        adapter.get_named_property("run").map_err(from_napi)?;
    let abort: Function<String, Unknown> =
        adapter.get_named_property("abort").map_err(from_napi)?;
    let run: JsFn = run
        .build_threadsafe_function()
        .callee_handled::<false>()
        .weak::<true>()
        .build()
        .map_err(from_napi)?;
    let abort: JsSink = abort
        .build_threadsafe_function()
        .callee_handled::<false>()
        .weak::<true>()
        .build()
        .map_err(from_napi)?;
    Ok(Arc::new(JsExecutor {
        run: Arc::new(run),
        abort: Arc::new(abort),
        keys: Arc::new(AtomicU64::new(1)),
    }))
}

/// `onEvent` receives each event as a plain object, asynchronously (queued
/// to the JS thread as one JSON string; never blocks the session). An event
/// that cannot be serialized is not delivered, and logged as an error.
fn event_sink(env: &Env, callback: Unknown) -> JsResult<EventSink> {
    let tsfn = Arc::new(super::convert::json_callback(env, callback)?);
    Ok(Arc::new(move |event: &SessionEvent| {
        match json_text(event) {
            Ok(text) => {
                tsfn.call(text, ThreadsafeFunctionCallMode::NonBlocking);
            }
            Err(e) => {
                tracing::error!(target: "openclaw_tool_search", reason = %e.reason, "session event not delivered")
            }
        }
    }))
}
