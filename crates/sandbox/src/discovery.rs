//! Finding code mode's runner once per process: the Node candidates, the
//! gateway's settings, and the probe's state machine (idle → running → done),
//! run on a thread of its own because probing Node and launching one contained
//! child takes ~100–300 ms (a hung binary would never answer).

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::config::{RunnerConfig, SchedPolicy};
use crate::probe::probe_node;
use crate::runner::{validate_config, CodeRunner};

/// Environment variable naming the Node binary for code-mode children. The
/// gateway's own Node is used when this is unset and its version is sound.
pub const NODE_ENV: &str = "OPENCLAW_TOOL_SEARCH_NODE";

/// How long a synchronous reader (capability, config resolution, a new
/// session) waits for a running probe before answering "pending".
pub const READER_WAIT: Duration = Duration::from_millis(3);

/// The Node the children run on: `$OPENCLAW_TOOL_SEARCH_NODE`, else the
/// current executable (the addon runs inside `node`).
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

/// Gateway-wide code-mode budgets, settable only before the probe starts.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CodeModeSettings {
    pub max_concurrent_cells: Option<usize>,
    pub gateway_call_bytes: Option<usize>,
    pub cell_calls_outstanding: Option<usize>,
    pub cell_call_bytes_outstanding: Option<usize>,
    pub concurrent_calls: Option<usize>,
    pub pool_size: Option<usize>,
    pub children_memory_bytes: Option<u64>,
    /// Weight of the children's cpu group (v2 `cpu.weight` 1..=10000; v1 shares = ×1024/100).
    pub children_cpu_weight: Option<u32>,
    /// Cap on all children together as a share (0, 1] of the cores available; `None` = none.
    pub children_cpu_max: Option<f64>,
    /// Nice value of every child, 0..=19.
    pub children_nice: Option<i32>,
    /// `'other'`, `'batch'` or `'idle'`.
    pub children_cpu_policy: Option<String>,
}

impl CodeModeSettings {
    /// Checks the values (the runner validates the whole configuration again).
    pub fn check(&self) -> Result<(), String> {
        if let Some(policy) = &self.children_cpu_policy {
            if SchedPolicy::parse(policy).is_none() {
                return Err(format!(
                    "childrenCpuPolicy must be 'other', 'batch' or 'idle', not {policy:?}"
                ));
            }
        }
        let mut config = self.runner_config(PathBuf::from("/"));
        config.probe_on_new = false;
        validate_config(&config).map_err(|e| e.0)
    }

    /// The runner's configuration for `node` with these settings applied.
    pub fn runner_config(&self, node: PathBuf) -> RunnerConfig {
        let mut config = RunnerConfig::new(node);
        if let Some(n) = self.max_concurrent_cells {
            config.max_concurrent_cells = n;
        }
        if let Some(n) = self.gateway_call_bytes {
            config.gateway_call_bytes = n;
        }
        if let Some(n) = self.cell_calls_outstanding {
            config.caps.calls_outstanding = n;
        }
        if let Some(n) = self.cell_call_bytes_outstanding {
            config.caps.call_bytes_outstanding = n;
        }
        if let Some(n) = self.concurrent_calls {
            config.caps.concurrent_calls = n;
        }
        if let Some(n) = self.pool_size {
            config.pool_size = n;
        }
        if let Some(n) = self.children_memory_bytes {
            config.children_memory_bytes = n;
        }
        if let Some(n) = self.children_cpu_weight {
            config.cpu.weight = n;
        }
        if let Some(share) = self.children_cpu_max {
            config.cpu.max_share = Some(share);
        }
        if let Some(n) = self.children_nice {
            config.cpu.nice = n;
        }
        if let Some(policy) = self
            .children_cpu_policy
            .as_deref()
            .and_then(SchedPolicy::parse)
        {
            config.cpu.policy = policy;
            config.cpu.policy_set = true;
        }
        config
    }
}

/// What the probe found: the runner when code mode works here, and the
/// capability report (why not, otherwise).
pub struct Probed {
    pub runner: Option<Arc<CodeRunner>>,
    /// The capability report (for the operator: it may name paths and quote stderr).
    pub report: Value,
    /// Why there is no runner, in words a cell's result or the config's fallback reason may
    /// carry: no host path, pid or stderr. `None` when there is a runner.
    pub public_reason: Option<String>,
}

impl Probed {
    /// No runner, for a reason that names nothing of the host.
    pub fn unavailable(reason: String) -> Probed {
        Probed {
            runner: None,
            report: json!({ "available": false, "reason": reason }),
            public_reason: Some(reason),
        }
    }

    /// Why there is no runner (the report's reason, for the operator).
    pub fn reason(&self) -> &str {
        self.report
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("no usable Node for code mode")
    }

    /// Why there is no runner, without host paths (what a cell's result may say).
    pub fn public_reason(&self) -> &str {
        self.public_reason
            .as_deref()
            .unwrap_or_else(|| self.reason())
    }
}

/// The report while the probe runs: code mode is not offered until it finishes.
pub fn pending_report() -> Value {
    json!({
        "available": false,
        "pending": true,
        "reason": "the code-mode probe is still running (await probeCodeMode() at start-up); code mode is not offered until it finishes",
    })
}

/// What `resolveToolSearchConfig` says while the probe runs and `mode: 'code'` falls back.
pub const PENDING_FALLBACK_REASON: &str = "code mode is not offered yet: the code-mode probe is still running (await probeCodeMode() at start-up); using tools mode";

/// What `mode: 'code'` falls back with once the probe found no runner (no host path).
pub fn unavailable_fallback_reason(public_reason: &str) -> String {
    format!("code mode is unavailable on this host ({public_reason}); using tools mode")
}

/// Probes each Node candidate and starts a runner on the first that works. When a sound Node was
/// found but its runner is unavailable (a missing or non-executable launcher, containment the
/// host refuses), that runner's reason is the reason: the Node was not the problem.
pub fn find_runner(settings: &CodeModeSettings) -> Probed {
    let mut tried = Vec::new();
    // The first sound Node's runner that could not run: (operator reason, public reason).
    let mut runner_problem: Option<(String, String)> = None;
    for node in node_candidates() {
        let support = probe_node(&node);
        if !support.sound {
            tried.push(report_value(&support));
            continue;
        }
        match CodeRunner::new(settings.runner_config(node)) {
            Ok(runner) => {
                let capability = runner.capability_report();
                let report = report_value(&capability);
                if report.get("available").and_then(Value::as_bool) == Some(true) {
                    return Probed {
                        runner: Some(Arc::new(runner)),
                        report,
                        public_reason: None,
                    };
                }
                if runner_problem.is_none() {
                    let reason = capability
                        .reason
                        .clone()
                        .unwrap_or_else(|| "code mode is unavailable".into());
                    let public = runner
                        .unavailable_public_reason()
                        .unwrap_or_else(|| "a contained child could not be started".into());
                    runner_problem = Some((reason, public));
                }
                tried.push(report);
            }
            Err(e) => {
                if runner_problem.is_none() {
                    runner_problem = Some((e.0.clone(), e.0.clone()));
                }
                tried.push(json!({ "available": false, "reason": e.0 }));
            }
        }
    }
    let (reason, public) = match runner_problem {
        Some(problem) => problem,
        None => {
            let reason = if tried.is_empty() {
                format!("no Node binary found (set {NODE_ENV})")
            } else {
                format!("no Node with a sound permission model (set {NODE_ENV} to Node >= 22.23, >= 24.17 or >= 26.3.1)")
            };
            (reason.clone(), reason)
        }
    };
    tracing::info!(target: "openclaw_tool_search", %reason, "code mode unavailable");
    Probed {
        runner: None,
        report: json!({ "available": false, "reason": reason, "candidates": tried }),
        public_reason: Some(public),
    }
}

/// A report as JSON; one that cannot be written says so instead of becoming `null`.
fn report_value<T: Serialize>(report: &T) -> Value {
    serde_json::to_value(report).unwrap_or_else(|e| {
        json!({ "available": false, "reason": format!("the report could not be serialized: {e}") })
    })
}

enum ProbeState {
    Idle,
    Running,
    Done(Arc<Probed>),
}

type Finder = dyn Fn(&CodeModeSettings) -> Probed + Send + Sync;

/// Why `configure` refused settings (its message is what `configureCodeMode` throws).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigureError {
    /// A value out of range or unknown.
    #[error("invalid code mode settings: {0}")]
    Invalid(String),
    /// The probe has started: the runner's configuration is fixed.
    #[error("code mode has already started; call configureCodeMode before probeCodeMode, codeModeCapability, resolveToolSearchConfig or a code-mode session")]
    Started,
}

struct ProbeInner {
    state: Mutex<ProbeState>,
    /// Wakes the synchronous waiters.
    done: Condvar,
    /// Wakes the async waiters.
    notify: tokio::sync::watch::Sender<bool>,
    settings: Mutex<CodeModeSettings>,
    find: Box<Finder>,
}

/// Finding the runner probes Node and launches one contained child (~100–300 ms, longer on a
/// cold disk; a hung binary would never answer), so it runs once, on a thread of its own:
/// idle → running → done. Settings are accepted only while idle. Synchronous readers wait at
/// most a bounded time; async ones until done.
#[derive(Clone)]
pub struct Probe(Arc<ProbeInner>);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Default for Probe {
    fn default() -> Self {
        Probe::with_finder(find_runner)
    }
}

impl Probe {
    /// The process-wide probe (one runner and warm pool serve every session).
    pub fn global() -> &'static Probe {
        static PROBE: OnceLock<Probe> = OnceLock::new();
        PROBE.get_or_init(Probe::default)
    }

    /// A probe that finds its runner with `find` (on the probe thread).
    pub fn with_finder(
        find: impl Fn(&CodeModeSettings) -> Probed + Send + Sync + 'static,
    ) -> Probe {
        Probe(Arc::new(ProbeInner {
            state: Mutex::new(ProbeState::Idle),
            done: Condvar::new(),
            notify: tokio::sync::watch::channel(false).0,
            settings: Mutex::new(CodeModeSettings::default()),
            find: Box::new(find),
        }))
    }

    /// Replaces the settings; refused once the probe has started.
    pub fn configure(&self, settings: CodeModeSettings) -> Result<(), ConfigureError> {
        settings.check().map_err(ConfigureError::Invalid)?;
        let state = lock(&self.0.state);
        if !matches!(*state, ProbeState::Idle) {
            return Err(ConfigureError::Started);
        }
        *lock(&self.0.settings) = settings;
        Ok(())
    }

    /// Whether the probe has left the idle state.
    pub fn started(&self) -> bool {
        !matches!(*lock(&self.0.state), ProbeState::Idle)
    }

    /// Starts the probe thread once; returns the result if it is already there.
    pub fn start(&self) -> Option<Arc<Probed>> {
        let mut state = lock(&self.0.state);
        match &*state {
            ProbeState::Done(probed) => return Some(Arc::clone(probed)),
            ProbeState::Running => return None,
            ProbeState::Idle => {}
        }
        *state = ProbeState::Running;
        let settings = lock(&self.0.settings).clone();
        let inner = Arc::clone(&self.0);
        let spawned = std::thread::Builder::new()
            .name("openclaw-code-probe".into())
            .spawn(move || {
                let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    (inner.find)(&settings)
                }))
                .unwrap_or_else(|_| {
                    Probed::unavailable("the code-mode probe failed unexpectedly".into())
                });
                *lock(&inner.state) = ProbeState::Done(Arc::new(found));
                inner.done.notify_all();
                inner.notify.send_replace(true);
            });
        if let Err(e) = spawned {
            let failed = Arc::new(Probed::unavailable(format!(
                "cannot start the code-mode probe: {e}"
            )));
            *state = ProbeState::Done(Arc::clone(&failed));
            self.0.notify.send_replace(true);
            return Some(failed);
        }
        None
    }

    /// The result (starting the probe if idle), waiting at most `wait` for a running probe.
    pub fn probed_within(&self, wait: Duration) -> Option<Arc<Probed>> {
        if let Some(done) = self.start() {
            return Some(done);
        }
        let state = lock(&self.0.state);
        let (state, _) = self
            .0
            .done
            .wait_timeout_while(state, wait, |s| !matches!(s, ProbeState::Done(_)))
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match &*state {
            ProbeState::Done(probed) => Some(Arc::clone(probed)),
            _ => None,
        }
    }

    /// Whether code mode is offered now (waits at most `wait` for a running probe), or why
    /// `mode: 'code'` falls back to tools: the probe is still running, or what it found, in
    /// words without host paths.
    pub fn support_within(&self, wait: Duration) -> Result<(), String> {
        match self.probed_within(wait) {
            None => Err(PENDING_FALLBACK_REASON.to_string()),
            Some(probed) if probed.runner.is_some() => Ok(()),
            Some(probed) => Err(unavailable_fallback_reason(probed.public_reason())),
        }
    }

    /// The report now: the result's, or [`pending_report`] while running (waits at most `wait`).
    pub fn report_within(&self, wait: Duration) -> Value {
        self.probed_within(wait)
            .map(|p| p.report.clone())
            .unwrap_or_else(pending_report)
    }

    /// The result, once the probe (started here if idle) has finished. Never blocks a thread.
    pub async fn finished(&self) -> Arc<Probed> {
        let mut done = self.0.notify.subscribe();
        if let Some(probed) = self.start() {
            return probed;
        }
        let _ = done.wait_for(|finished| *finished).await;
        match &*lock(&self.0.state) {
            ProbeState::Done(probed) => Arc::clone(probed),
            // Unreachable: `notify` is only sent after the state became Done.
            _ => Arc::new(Probed::unavailable(
                "the code-mode probe did not finish".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe whose finder waits for `release` and counts its runs.
    fn gated_probe() -> (
        Probe,
        std::sync::mpsc::Sender<()>,
        Arc<std::sync::atomic::AtomicUsize>,
    ) {
        let (release, gate) = std::sync::mpsc::channel::<()>();
        let gate = Mutex::new(gate);
        let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&runs);
        let probe = Probe::with_finder(move |settings| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = lock(&gate).recv();
            Probed::unavailable(format!("pool size {:?}", settings.pool_size))
        });
        (probe, release, runs)
    }

    #[test]
    fn probe_goes_idle_running_done_once() {
        let (probe, release, runs) = gated_probe();
        assert!(!probe.started());
        assert!(probe.start().is_none(), "the first start runs the finder");
        assert!(probe.started());
        // Running: a bounded reader answers pending, a second start does not run it again.
        assert!(probe.probed_within(Duration::from_millis(20)).is_none());
        assert_eq!(probe.report_within(Duration::ZERO)["pending"], true);
        assert!(probe.start().is_none());
        release.send(()).unwrap();
        let done = probe
            .probed_within(Duration::from_secs(10))
            .expect("done after the release");
        assert_eq!(done.reason(), "pool size None");
        assert!(Arc::ptr_eq(&done, &probe.start().unwrap()));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert!(Arc::ptr_eq(&done, &rt.block_on(probe.finished())));
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn async_waiters_start_the_probe_and_wake_when_done() {
        let (probe, release, _) = gated_probe();
        let waiter = probe.clone();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let task = std::thread::spawn(move || rt.block_on(waiter.finished()).reason().to_string());
        while !probe.started() {
            std::thread::sleep(Duration::from_millis(1));
        }
        release.send(()).unwrap();
        assert_eq!(task.join().unwrap(), "pool size None");
    }

    #[test]
    fn settings_apply_before_start_and_are_refused_after() {
        let (probe, release, _) = gated_probe();
        let invalid = CodeModeSettings {
            children_cpu_policy: Some("fifo".into()),
            ..Default::default()
        };
        assert!(matches!(
            probe.configure(invalid),
            Err(ConfigureError::Invalid(reason)) if reason.contains("childrenCpuPolicy")
        ));
        let two = CodeModeSettings {
            pool_size: Some(2),
            ..Default::default()
        };
        assert_eq!(probe.configure(two.clone()), Ok(()));
        probe.start();
        assert_eq!(probe.configure(two), Err(ConfigureError::Started));
        release.send(()).unwrap();
        let done = probe.probed_within(Duration::from_secs(10)).unwrap();
        assert_eq!(done.reason(), "pool size Some(2)");
        assert_eq!(
            probe.configure(CodeModeSettings::default()),
            Err(ConfigureError::Started)
        );
    }

    #[test]
    fn the_fallback_reason_says_pending_while_the_probe_runs_then_what_it_found() {
        let (release, gate) = std::sync::mpsc::channel::<()>();
        let gate = Mutex::new(gate);
        let probe = Probe::with_finder(move |_| {
            let _ = lock(&gate).recv();
            Probed {
                runner: None,
                report: json!({
                    "available": false,
                    "reason": "the code-mode launcher openclaw-tool-search-launcher is missing beside the addon (looked for /opt/x/openclaw-tool-search-launcher)",
                }),
                public_reason: Some(
                    "the code-mode launcher openclaw-tool-search-launcher is missing beside the addon"
                        .into(),
                ),
            }
        });
        let pending = probe.support_within(Duration::ZERO).unwrap_err();
        assert_eq!(pending, PENDING_FALLBACK_REASON);
        assert!(pending.contains("still running"), "{pending}");
        assert!(!pending.contains("permission model"), "{pending}");
        assert_eq!(probe.report_within(Duration::ZERO)["pending"], true);
        release.send(()).unwrap();
        let done = probe.probed_within(Duration::from_secs(10)).unwrap();
        assert!(
            done.reason().contains("/opt/x/"),
            "the operator's reason keeps the path"
        );
        let after = probe.support_within(Duration::from_secs(10)).unwrap_err();
        assert_eq!(
            after,
            "code mode is unavailable on this host (the code-mode launcher openclaw-tool-search-launcher is missing beside the addon); using tools mode"
        );
        assert!(!after.contains('/'), "{after}");
    }

    #[test]
    fn a_panicking_finder_is_reported_unavailable() {
        let probe = Probe::with_finder(|_| panic!("boom"));
        let done = probe.probed_within(Duration::from_secs(10)).unwrap();
        assert!(done.runner.is_none());
        assert_eq!(done.reason(), "the code-mode probe failed unexpectedly");
    }
}
