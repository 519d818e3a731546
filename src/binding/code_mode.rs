//! Code mode glue: the sandbox runner behind the core session's
//! `CodeRunner` hook, with the session answering the cell's bridge calls.
//! One process-wide runner (and warm pool) serves every session.
//!
//! Finding the runner probes Node and launches one contained child
//! (~100–300 ms, longer on a cold disk; a hung binary would never answer).
//! That work runs on a thread of its own, never on the event loop:
//! `probeCodeMode()` resolves when it is done; the synchronous readers
//! (`codeModeCapability()`, `resolveToolSearchConfig()`, a code-mode
//! `ToolSearchSession`) wait at most a few milliseconds and otherwise answer
//! "pending" (code mode is not offered until the probe says it works).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{json, Value};
use tool_search_core::session::{
    BoxFuture, CallContext, CodeContext, CodeRunner, Failure, Offload, OffloadHandle, Session,
};
use tool_search_core::ErrorCode;
use tool_search_sandbox::{
    probe_node, BridgeError, BridgeHost, CallFuture, CancelToken, CodeRunner as SandboxRunner,
    Lookup, RunnerConfig,
};

use super::convert::{is_nullish, json_arg, parsed};
use super::errors::{guard, js_error, JsCode};

/// Environment variable naming the Node binary for code-mode children. The
/// gateway's own Node is used when this is unset and its version is sound.
pub const NODE_ENV: &str = "OPENCLAW_TOOL_SEARCH_NODE";

/// How long a synchronous reader waits for a running probe.
const SYNC_WAIT: Duration = Duration::from_millis(3);

/// The Node the children run on: `$OPENCLAW_TOOL_SEARCH_NODE`, else the
/// gateway's own executable (the addon runs inside `node`).
fn node_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(path) = std::env::var_os(NODE_ENV).filter(|p| !p.is_empty()) {
        out.push(PathBuf::from(path));
    }
    if let Ok(exe) = std::env::current_exe() {
        out.push(exe);
    }
    out
}

struct DefaultRunner {
    runner: Option<Arc<SandboxRunner>>,
    report: Value,
}

/// Budgets a gateway may set with `configureCodeMode` before the probe starts.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CodeModeSettings {
    max_concurrent_cells: Option<usize>,
    gateway_call_bytes: Option<usize>,
    cell_calls_outstanding: Option<usize>,
    cell_call_bytes_outstanding: Option<usize>,
    concurrent_calls: Option<usize>,
    pool_size: Option<usize>,
    children_memory_bytes: Option<u64>,
    /// Weight of the children's cpu group (v2 `cpu.weight` 1..=10000; v1 shares = ×1024/100).
    children_cpu_weight: Option<u32>,
    /// Cap on all children together as a share (0, 1] of the cores available; `null` = none.
    children_cpu_max: Option<f64>,
    /// Nice value of every child, 0..=19.
    children_nice: Option<i32>,
    /// `'other'`, `'batch'` or `'idle'`.
    children_cpu_policy: Option<String>,
}

enum ProbeState {
    Idle,
    Running,
    Done(Arc<DefaultRunner>),
}

struct Probe {
    state: Mutex<ProbeState>,
    done: Condvar,
    /// Wakes the async waiters (`probeCodeMode()`).
    notify: tokio::sync::watch::Sender<bool>,
    settings: Mutex<CodeModeSettings>,
}

fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(|| Probe {
        state: Mutex::new(ProbeState::Idle),
        done: Condvar::new(),
        notify: tokio::sync::watch::channel(false).0,
        settings: Mutex::new(CodeModeSettings::default()),
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Starts the probe thread once; returns the result if it is already there.
fn start_probe() -> Option<Arc<DefaultRunner>> {
    let probe = probe();
    let mut state = lock(&probe.state);
    match &*state {
        ProbeState::Done(runner) => return Some(Arc::clone(runner)),
        ProbeState::Running => return None,
        ProbeState::Idle => {}
    }
    *state = ProbeState::Running;
    let settings = lock(&probe.settings).clone();
    let spawned = std::thread::Builder::new().name("openclaw-code-probe".into()).spawn(move || {
        let found = std::panic::catch_unwind(|| find_runner(&settings)).unwrap_or_else(|_| DefaultRunner {
            runner: None,
            report: json!({ "available": false, "reason": "the code-mode probe failed unexpectedly" }),
        });
        let probe = self::probe();
        *lock(&probe.state) = ProbeState::Done(Arc::new(found));
        probe.done.notify_all();
        probe.notify.send_replace(true);
    });
    if let Err(e) = spawned {
        let failed = Arc::new(DefaultRunner {
            runner: None,
            report: json!({ "available": false, "reason": format!("cannot start the code-mode probe: {e}") }),
        });
        *state = ProbeState::Done(Arc::clone(&failed));
        probe.notify.send_replace(true);
        return Some(failed);
    }
    None
}

/// The probe's result, waiting at most `wait` for a running probe.
fn probed_within(wait: Duration) -> Option<Arc<DefaultRunner>> {
    if let Some(done) = start_probe() {
        return Some(done);
    }
    let probe = probe();
    let state = lock(&probe.state);
    let (state, _) = probe
        .done
        .wait_timeout_while(state, wait, |s| !matches!(s, ProbeState::Done(_)))
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match &*state {
        ProbeState::Done(runner) => Some(Arc::clone(runner)),
        _ => None,
    }
}

fn pending_report() -> Value {
    json!({
        "available": false,
        "pending": true,
        "reason": "the code-mode probe is still running (await probeCodeMode() at start-up); code mode is not offered until it finishes",
    })
}

/// Checks the settings' values (the runner validates the whole configuration again).
fn check_settings(settings: &CodeModeSettings) -> std::result::Result<(), String> {
    if let Some(policy) = &settings.children_cpu_policy {
        if tool_search_sandbox::SchedPolicy::parse(policy).is_none() {
            return Err(format!(
                "childrenCpuPolicy must be 'other', 'batch' or 'idle', not {policy:?}"
            ));
        }
    }
    let mut config = runner_config(PathBuf::from("/"), settings);
    config.probe_on_new = false;
    tool_search_sandbox::validate_config(&config).map_err(|e| e.0)
}

fn find_runner(settings: &CodeModeSettings) -> DefaultRunner {
    let mut tried = Vec::new();
    for node in node_candidates() {
        let support = probe_node(&node);
        if !support.sound {
            tried.push(serde_json::to_value(&support).unwrap_or(Value::Null));
            continue;
        }
        match SandboxRunner::new(runner_config(node, settings)) {
            Ok(runner) => {
                let report =
                    serde_json::to_value(runner.capability_report()).unwrap_or(Value::Null);
                let available = report
                    .get("available")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if available {
                    return DefaultRunner {
                        runner: Some(Arc::new(runner)),
                        report,
                    };
                }
                tried.push(report);
            }
            Err(e) => tried.push(json!({ "available": false, "reason": e.0 })),
        }
    }
    let reason = if tried.is_empty() {
        format!("no Node binary found (set {NODE_ENV})")
    } else {
        format!("no Node with a sound permission model and working containment (set {NODE_ENV} to Node >= 22.23, >= 24.17 or >= 26.3.1)")
    };
    tracing::info!(target: "openclaw_tool_search", %reason, "code mode unavailable");
    DefaultRunner {
        runner: None,
        report: json!({ "available": false, "reason": reason, "candidates": tried }),
    }
}

fn runner_config(node: PathBuf, settings: &CodeModeSettings) -> RunnerConfig {
    let mut config = RunnerConfig::new(node);
    if let Some(n) = settings.max_concurrent_cells {
        config.max_concurrent_cells = n;
    }
    if let Some(n) = settings.gateway_call_bytes {
        config.gateway_call_bytes = n;
    }
    if let Some(n) = settings.cell_calls_outstanding {
        config.caps.calls_outstanding = n;
    }
    if let Some(n) = settings.cell_call_bytes_outstanding {
        config.caps.call_bytes_outstanding = n;
    }
    if let Some(n) = settings.concurrent_calls {
        config.caps.concurrent_calls = n;
    }
    if let Some(n) = settings.pool_size {
        config.pool_size = n;
    }
    if let Some(n) = settings.children_memory_bytes {
        config.children_memory_bytes = n;
    }
    if let Some(n) = settings.children_cpu_weight {
        config.cpu.weight = n;
    }
    if let Some(share) = settings.children_cpu_max {
        config.cpu.max_share = Some(share);
    }
    if let Some(n) = settings.children_nice {
        config.cpu.nice = n;
    }
    if let Some(policy) = settings
        .children_cpu_policy
        .as_deref()
        .and_then(tool_search_sandbox::SchedPolicy::parse)
    {
        config.cpu.policy = policy;
    }
    config
}

/// Whether code mode can run on this host, as far as known without waiting
/// (false while the probe is still running).
pub fn code_mode_supported() -> bool {
    probed_within(SYNC_WAIT).is_some_and(|r| r.runner.is_some())
}

/// The session hook, when code mode is available. A code-mode session is
/// about to run cells: start the warm pool now so the first cell is warm.
pub fn session_code_runner() -> Option<Arc<dyn CodeRunner>> {
    let runner = probed_within(SYNC_WAIT)?.runner.clone()?;
    let pool = Arc::clone(&runner);
    napi::bindgen_prelude::spawn(async move { pool.prewarm() });
    Some(Arc::new(SandboxCodeRunner { runner }) as Arc<dyn CodeRunner>)
}

/// Kills code-mode children and removes their directories and memory group
/// when the gateway's main environment is torn down (normal exit). Process-wide,
/// so only the main thread's environment registers it: a worker thread that
/// exits must not kill the main thread's children.
fn register_cleanup(env: &Env) {
    static REGISTERED: OnceLock<()> = OnceLock::new();
    // SAFETY: plain getters. Node's main environment runs on the process's main thread.
    let main_thread = unsafe { libc::gettid() == libc::getpid() };
    if main_thread
        && REGISTERED.get().is_none()
        && env
            .add_env_cleanup_hook((), |_| {
                let report = tool_search_sandbox::shutdown();
                tracing::debug!(target: "openclaw_tool_search", ?report, "code mode shut down");
            })
            .is_ok()
    {
        let _ = REGISTERED.set(());
    }
}

/// Ends code mode now: every child killed, their working directories and groups removed.
/// index.js calls it on the main thread's `exit` event: `process.exit()` fires that event but
/// skips the environment's cleanup hooks, so without it each such exit left the warm child's
/// directory (and, on cgroup v1, its groups) behind until the next runner's sweep.
#[napi(js_name = "__shutdownCodeMode", skip_typescript)]
pub fn shutdown_code_mode() -> Result<(), JsCode> {
    guard(|| {
        let started = !matches!(*lock(&probe().state), ProbeState::Idle);
        if started {
            let report = tool_search_sandbox::shutdown();
            tracing::debug!(target: "openclaw_tool_search", ?report, "code mode shut down at exit");
        }
        Ok(())
    })
}

/// What the host allowed for code mode: Node version and flags, each
/// containment layer, budgets, and why code mode is unavailable if it is.
/// Never waits more than a few milliseconds: while the probe runs, it
/// answers `{ available: false, pending: true, reason }`.
#[napi(ts_return_type = "CodeModeCapability")]
pub fn code_mode_capability(env: &Env) -> Result<Unknown<'_>, JsCode> {
    guard(|| {
        register_cleanup(env);
        let report = probed_within(SYNC_WAIT)
            .map(|r| r.report.clone())
            .unwrap_or_else(pending_report);
        parsed(env, &report)
    })
}

/// Runs (once) and awaits the code-mode probe off the event loop; resolves
/// with the same report as `codeModeCapability()` once it is final.
#[napi(ts_return_type = "Promise<CodeModeCapability>")]
pub fn probe_code_mode<'env>(env: &'env Env) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
    guard(|| {
        register_cleanup(env);
        start_probe();
        let mut done = probe().notify.subscribe();
        let future = async move {
            let _ = done.wait_for(|finished| *finished).await;
            let report = probed_within(Duration::ZERO)
                .map(|r| r.report.clone())
                .unwrap_or_else(pending_report);
            Ok(serde_json::to_string(&report).unwrap_or_else(|_| "null".into()))
        };
        env.spawn_future_with_callback(future, |env, text| {
            super::convert::parse_text(env, text)
                .map_err(|e| napi::Error::new(Status::GenericFailure, e.reason.clone()))
        })
        .map_err(super::errors::from_napi)
    })
}

/// Sets code mode's gateway-wide budgets. Only before the probe starts (the
/// first `probeCodeMode()`, `codeModeCapability()`, `resolveToolSearchConfig()`
/// or code-mode session); later calls throw INVALID_CONFIG.
#[napi(ts_args_type = "settings: CodeModeSettings")]
pub fn configure_code_mode(env: Env, settings: Unknown) -> Result<(), JsCode> {
    guard(|| {
        if is_nullish(&settings)? {
            return Err(js_error(
                ErrorCode::InvalidConfig,
                "settings must be an object",
            ));
        }
        let value = json_arg(
            &env,
            settings,
            ErrorCode::InvalidConfig,
            "code mode settings",
        )?;
        let parsed: CodeModeSettings = serde_json::from_value(value).map_err(|e| {
            js_error(
                ErrorCode::InvalidConfig,
                format!("invalid code mode settings: {e}"),
            )
        })?;
        check_settings(&parsed).map_err(|e| {
            js_error(
                ErrorCode::InvalidConfig,
                format!("invalid code mode settings: {e}"),
            )
        })?;
        let probe = probe();
        let state = lock(&probe.state);
        if !matches!(*state, ProbeState::Idle) {
            return Err(js_error(
                ErrorCode::InvalidConfig,
                "code mode has already started; call configureCodeMode before probeCodeMode, codeModeCapability, resolveToolSearchConfig or a code-mode session",
            ));
        }
        *lock(&probe.settings) = parsed;
        Ok(())
    })
}

/// Validation and other blocking work of a call, on napi's blocking pool.
struct BlockingPool;

impl Offload for BlockingPool {
    fn run(&self, job: Box<dyn FnOnce() + Send>) {
        drop(napi::bindgen_prelude::spawn_blocking(job));
    }
}

/// The offload every call of the binding uses.
pub fn offload() -> OffloadHandle {
    static POOL: OnceLock<OffloadHandle> = OnceLock::new();
    POOL.get_or_init(|| OffloadHandle(Arc::new(BlockingPool)))
        .clone()
}

struct SandboxCodeRunner {
    runner: Arc<SandboxRunner>,
}

impl CodeRunner for SandboxCodeRunner {
    fn run(&self, session: Session, code: String, context: CodeContext) -> BoxFuture<Value> {
        let runner = Arc::clone(&self.runner);
        Box::pin(async move {
            let token = CancelToken::new();
            let whole_run = token.clone();
            let _whole_run = context.cancel.on_cancel(move |_| whole_run.cancel());
            let host = Arc::new(SessionBridge {
                session,
                parent: context.clone(),
                calls: AtomicU64::new(0),
            });
            let result = runner
                .run_with_timeout(code, host, token, Duration::from_millis(context.timeout_ms))
                .await;
            result_value(result)
        })
    }
}

/// A run's result as the JS side sees it: the runner's `error.kind` plus the stable `error.code`.
pub fn result_value(result: tool_search_sandbox::CodeRunResult) -> Value {
    let mut value = serde_json::to_value(result).unwrap_or_else(
        |e| json!({ "ok": false, "error": { "kind": "runtime_error", "message": e.to_string() } }),
    );
    if let Some(error) = value.get_mut("error").and_then(Value::as_object_mut) {
        let kind = error
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("runtime_error");
        error.insert("code".into(), Value::from(failure_code(kind)));
    }
    value
}

/// The process-wide runner once the probe has finished (started here if it has not), or why
/// there is none. Waits off the event loop.
pub async fn await_runner() -> std::result::Result<Arc<SandboxRunner>, String> {
    start_probe();
    let mut done = probe().notify.subscribe();
    let _ = done.wait_for(|finished| *finished).await;
    let found = probed_within(Duration::ZERO)
        .ok_or_else(|| "the code-mode probe did not finish".to_string())?;
    match &found.runner {
        Some(runner) => {
            let pool = Arc::clone(runner);
            napi::bindgen_prelude::spawn(async move { pool.prewarm() });
            Ok(Arc::clone(runner))
        }
        None => Err(found
            .report
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("no usable Node for code mode")
            .to_string()),
    }
}

/// Stable result codes of failed cells, by the runner's failure kind.
fn failure_code(kind: &str) -> &'static str {
    match kind {
        "timeout" => "CODE_TIMEOUT",
        "aborted" => "CODE_ABORTED",
        "runtime_unavailable" => "CODE_MODE_UNAVAILABLE",
        "output_limit" => "CODE_OUTPUT_LIMIT",
        "bridge_violation" => "CODE_BRIDGE_VIOLATION",
        "busy" => "CODE_BUSY",
        _ => "CODE_RUNTIME_ERROR",
    }
}

/// Answers a cell's `openclaw.tools.*` calls through the session, so policy,
/// validation, events and fail-closed rules are the same as for tool_call.
struct SessionBridge {
    session: Session,
    parent: CodeContext,
    /// Calls this cell made, for their ids (`tool_search_code:<cell>:<tool>:<n>`).
    calls: AtomicU64,
}

fn bridge_error(f: Failure) -> BridgeError {
    BridgeError::new(f.code, f.message)
}

impl BridgeHost for SessionBridge {
    fn search(&self, query: &str, options: &Value) -> std::result::Result<Value, BridgeError> {
        self.session
            .search_json(query, options)
            .map_err(bridge_error)
    }

    fn describe(&self, id: &str) -> std::result::Result<Value, BridgeError> {
        self.session.describe_json(id).map_err(bridge_error)
    }

    /// A search that would embed its query (hybrid ranking, vectors not
    /// cached) is answered asynchronously: the embedding runs on the blocking
    /// pool, not on the cell's task. Every other lookup is answered inline.
    fn lookup_async(&self, lookup: Lookup<'_>, _cancel: CancelToken) -> Option<CallFuture> {
        let Lookup::Search { query, options } = lookup else {
            return None;
        };
        if !self.session.search_json_needs_embedding(query) {
            return None;
        }
        let (session, query, options) = (self.session.clone(), query.to_string(), options.clone());
        Some(Box::pin(async move {
            session
                .search_json_async(&query, &options, Some(&offload()))
                .await
                .map_err(bridge_error)
        }))
    }

    fn call(&self, id: String, args: Value, cancel: CancelToken) -> CallFuture {
        let session = self.session.clone();
        let signal = self.parent.cancel.child();
        let context = CallContext {
            tool_call_id: None,
            parent_tool_call_id: Some(self.parent.tool_call_id.clone()),
            sequence: Some(self.calls.fetch_add(1, Ordering::Relaxed) + 1),
            cancel: signal.clone(),
            offload: Some(offload()),
        };
        Box::pin(async move {
            // When the cell ends first (deadline, abort, result sent), abort the
            // executor's call through its signal, and still let it settle: a
            // dropped future would leave the gateway's side unaware.
            let watched = signal.clone();
            let watcher = tokio::spawn(async move {
                cancel.cancelled().await;
                watched.cancel("the code cell ended before this call finished");
            });
            let result = session.call(&id, args, context).await;
            watcher.abort();
            result.map_err(bridge_error)
        })
    }
}
