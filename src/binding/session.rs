//! `ToolSearchSession`: one run's surfaces and control-tool dispatch. Thin:
//! JS values in and out, everything else in `tool_search_core::session`; the
//! executor is called over the gateway crate's channel (`js/channel.js`), and a
//! code-mode session's runner (or its fallback to tools) comes from
//! `tool_search_gateway::code_mode`.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use tool_search_core::session::{
    EventSink, Failure, HandleArgs, HydrateOptions, Session, SessionArgs, SessionEvent,
    SessionOptions, SurfaceArgs, ToolResult,
};
use tool_search_core::surfaces::SurfaceFormat;
use tool_search_core::ErrorCode;
use tool_search_gateway::channel::Target;
use tool_search_gateway::code_mode;
use tool_search_gateway::executor::GatewayExecutor;
use tool_search_gateway::runtime::offload;

use super::catalog::ToolCatalog;
use super::convert::{
    dto, function_arg, number_arg, object_arg, parsed, present, property, string_arg, value_type,
};
use super::errors::{guard, guard_future, invalid, to_core, to_js, JsCode, JsResult};
use super::promise::{abort_signal, json_promise, AbortListener};

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
    let wrong = || invalid("catalog must be a ToolCatalog.");
    if value_type(value)? != ValueType::Object {
        return Err(wrong());
    }
    // SAFETY: `value` is a live handle of this call's scope. napi-rs's conversion unwraps it and
    // checks the type tag and class (another class or a spoofed prototype is refused).
    unsafe { ClassInstance::<ToolCatalog>::from_napi_value(env.raw(), value.raw()) }
        .map_err(|_| wrong())
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
            let raw_config: Value = dto(&env, config, ErrorCode::InvalidConfig, "config")?;
            let config = code_mode::resolve_for_session(&raw_config);
            // Functions are read from the object; everything plain through `SessionArgs`.
            let not_a_function = "options.executor must be a function";
            let object = present(options)?.ok_or_else(|| invalid(not_a_function))?;
            let object = object_arg(object, ErrorCode::InvalidRequest, "options")?;
            let executor = function_arg(property(&object, "executor")?, "options.executor")?
                .ok_or_else(|| invalid(not_a_function))?;
            let executor = super::port::channel(&env, executor, Target::Executor)?;
            let executor = Arc::new(GatewayExecutor::new(executor));
            let on_event = function_arg(property(&object, "onEvent")?, "options.onEvent")?;
            let what = "invalid session options";
            let negative = "options.contextTokens must be a non-negative number";
            super::convert::refuse_non_finite(&object, "contextTokens", negative)?;
            let args: SessionArgs = dto(&env, options, ErrorCode::InvalidRequest, what)?;
            let plain = args.into_options().map_err(to_js)?;
            let on_event = on_event.map(|f| event_sink(&env, f)).transpose()?;
            let options = SessionOptions { on_event, ..plain };
            let runtime = &super::runtime::NAPI;
            let session =
                code_mode::new_session(&catalog.inner, config, executor, options, runtime);
            let inner = std::sync::RwLock::new(session.map_err(to_js)?);
            Ok(ToolSearchSession { inner })
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
            let format =
                present(format)?.map(|f| string_arg(f, ErrorCode::InvalidRequest, "format"));
            let format = SurfaceFormat::parse(format.transpose()?.as_deref().unwrap_or("neutral"));
            let format = format.map_err(to_js)?;
            let options: Option<SurfaceArgs> =
                dto(env, options, ErrorCode::InvalidRequest, "options")?;
            let prompt = options.and_then(|o| o.prompt);
            parsed(env, &*self.session().surface_for(format, prompt.as_deref()))
        })
    }

    /// The directory text (directory mode; memoized per catalog snapshot and
    /// options) or the capability directory (code and tools modes, when
    /// enabled; owners by size), without rendering the tool definitions.
    #[napi]
    pub fn directory_prompt(&self) -> Result<Option<String>, JsCode> {
        guard(|| {
            let prompt = self.session().directory_prompt();
            Ok(prompt.map(|text| text.to_string()))
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
        let call = guard(|| {
            let args: Value = dto(env, args, ErrorCode::InvalidRequest, "tool arguments")?;
            let call: Option<HandleArgs> = dto(env, options, ErrorCode::InvalidRequest, "options")?;
            let mut call_options = HandleArgs::options(call, offload(&super::runtime::NAPI));
            // The signal is read from the object: JSON cannot carry an AbortSignal.
            if let Some(options) = present(options)? {
                let options = object_arg(options, ErrorCode::InvalidRequest, "options")?;
                call_options.cancel = abort_signal(env, &options, &mut listener)?;
            }
            Ok((args, call_options))
        });
        let future = async move {
            let handled = match call.map_err(to_core) {
                Ok((args, options)) => {
                    guard_future(session.handle(&tool_name, args, options)).await
                }
                Err(e) => Err(e),
            };
            // A bad argument or a panic while handling is the call's failure, a result like any
            // other (the promise resolves). Serialized off the event loop.
            Ok(handled.unwrap_or_else(|e| error_result(&tool_name, e)))
        };
        json_promise(env, Ok(future), listener)
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
            let options: Value = dto(env, options, ErrorCode::InvalidRequest, "options")?;
            let options = HydrateOptions::from_json(&options).map_err(to_js)?;
            let hydrated =
                self.session()
                    .hydrate(&user_prompt, options.max_tools, &options.required);
            parsed(env, &hydrated)
        })
    }

    /// Record the serialized size of one provider request (bytes).
    #[napi(ts_args_type = "bytes: number")]
    pub fn record_request_bytes(&self, bytes: Unknown) -> Result<(), JsCode> {
        guard(|| {
            let bytes = number_arg(bytes, ErrorCode::InvalidRequest, "bytes")?;
            self.session().record_request_bytes(bytes).map_err(to_js)
        })
    }

    /// Catalog counters plus what the model saw, bytes and tools called.
    #[napi(ts_return_type = "SessionTelemetry")]
    pub fn telemetry<'env>(&self, env: &'env Env) -> Result<Unknown<'env>, JsCode> {
        guard(|| parsed(env, &self.session().telemetry()))
    }
}

/// `onEvent` receives each event as a plain object, asynchronously (queued
/// to the JS thread as one JSON string; never blocks the session). An event
/// that cannot be serialized is not delivered, and logged as an error.
fn event_sink(env: &Env, callback: Unknown) -> JsResult<EventSink> {
    let tsfn = Arc::new(super::port::listener(env, callback)?);
    Ok(Arc::new(move |event: &SessionEvent| {
        super::port::notify(&tsfn, event, "session event")
    }))
}
