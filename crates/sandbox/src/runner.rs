//! `CodeRunner`: owns the configuration, the warm pool and the capability report; `run` drives one
//! cell (see [`crate::bridge`]).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::AsyncReadExt;

use crate::admission::CpuBudget;
use crate::bridge::{Bridge, Outcome};
use crate::budget::CallBytes;
use crate::cgroup::{ChildrenCgroup, CpuCgroup, CpuCgroupReport, MemoryCgroupReport};
use crate::config::{CpuIsolation, LogStyle, RunOptions, RunnerConfig, SchedPolicy};
use crate::fault::{self, Death, Exit};
use crate::launcher::{LauncherArgs, LauncherReport, Want};
use crate::probe::{probe_node, NodeSupport};
use crate::protocol::{parse_child_frame, ChildFrame};
use crate::result::{CodeRunResult, FailureKind, RunFailure, RunTelemetry};
use crate::spawn::{self, ChildProc};
use crate::{locate_launcher, BridgeHost, CancelToken, LAUNCHER_NAME};

/// The child's prelude script (run with `node -e`).
pub const PRELUDE: &str = include_str!("prelude.js");

/// Invalid configuration (an unusable host is not an error: see [`CapabilityReport`]).
#[derive(Debug, thiserror::Error)]
#[error("invalid code runner configuration: {0}")]
pub struct ConfigError(pub String);

/// Which containment layers the host allowed, and whether code mode is available at all.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityReport {
    /// Code mode can run; when false, `reason` says why and the gateway falls back to `tools`.
    pub available: bool,
    pub reason: Option<String>,
    pub node: NodeSupport,
    pub launcher_path: Option<PathBuf>,
    /// Flags node runs with (the prelude script itself is omitted).
    pub node_flags: Vec<String>,
    /// Layers applied to the most recent child (from the probe launch or the last run).
    pub layers: Option<LauncherReport>,
    /// RLIMIT_AS in bytes (what bounds off-heap Buffers here), 0 = none.
    pub address_space_bytes: u64,
    /// The memory cgroup holding all children together, or why there is none (then RLIMIT_AS,
    /// the heap cap and `max_concurrent_cells` are what bound the children's memory).
    pub memory_cgroup: MemoryCgroupReport,
    /// The cpu cgroup holding all children together below the gateway, or why there is none
    /// (then the launcher's nice value, policy and autogroup are what hold them; see `layers`).
    pub cpu_cgroup: CpuCgroupReport,
    /// How children are kept below the gateway (configured): weight, cap, nice, policy.
    pub cpu_isolation: CpuIsolation,
    /// The CPU the gateway can use (what the default of `max_concurrent_cells` follows).
    pub cpu_budget: CpuBudget,
    pub pool_size: usize,
    /// Gateway-wide budgets: cells at once, bytes of bridged call arguments outstanding.
    pub max_concurrent_cells: usize,
    pub gateway_call_bytes: usize,
    /// Per-cell caps (code, result, logs, frames, calls, outstanding call budgets).
    pub caps: crate::config::Caps,
}

pub(crate) struct Inner {
    pub(crate) config: RunnerConfig,
    node: NodeSupport,
    launcher: Option<PathBuf>,
    node_args: Vec<OsString>,
    node_flags: Vec<String>,
    work_root: PathBuf,
    unavailable: Mutex<Option<Unavailable>>,
    layers: Mutex<Option<LauncherReport>>,
    pool: Mutex<VecDeque<ChildProc>>,
    starting: AtomicUsize,
    /// Cell slots (gateway-wide when the runner is shared).
    cells: tokio::sync::Semaphore,
    /// Bytes of bridged calls outstanding across all cells.
    call_bytes: Arc<CallBytes>,
    cgroup: Option<ChildrenCgroup>,
    cgroup_report: MemoryCgroupReport,
    /// Held for its `Drop`, which removes the group.
    _cpu_cgroup: Option<CpuCgroup>,
    cpu_report: CpuCgroupReport,
    cpu_budget: CpuBudget,
    /// `cgroup.procs` files each child is written to before it gets code (memory, cpu).
    adopt_into: Vec<PathBuf>,
    /// What `adopt_into` means, for each run's telemetry.
    cgroups_applied: Vec<String>,
}

/// Why code mode cannot run here: the operator's reason (the capability report's, which may name
/// paths and quote the child's stderr) and the sentence a cell's result may carry (no host path).
#[derive(Clone, Debug)]
struct Unavailable {
    reason: String,
    public: String,
}

impl Unavailable {
    fn same(reason: String) -> Self {
        Unavailable {
            public: reason.clone(),
            reason,
        }
    }
}

/// Why a child could not be started: one clause for the cell's result (no host path, pid or
/// stderr) and the whole story for the operator's log.
#[derive(Debug)]
struct StartFailure {
    public: String,
    detail: String,
}

impl StartFailure {
    fn new(public: impl Into<String>, detail: impl Into<String>) -> Self {
        StartFailure {
            public: public.into(),
            detail: detail.into(),
        }
    }
}

/// The code-mode runner. `Send + Sync`; create once per gateway (or per session) and share it.
pub struct CodeRunner {
    inner: Arc<Inner>,
}

impl CodeRunner {
    /// Probes node and finds the launcher; with `probe_on_new` it also starts one contained child
    /// (blocking, ~50-300 ms) so that [`CodeRunner::capability_report`] reflects what the host
    /// really allows. Fails only on invalid configuration; an unusable host yields a runner whose
    /// report says `available: false` and whose runs return `runtime_unavailable`.
    pub fn new(mut config: RunnerConfig) -> Result<Self, ConfigError> {
        validate(&config)?;
        let node = probe_node(&config.node_path);
        let launcher = locate_launcher(
            config.launcher_path.as_deref(),
            config.launcher_dir_hint.as_deref(),
        );
        let (node_args, node_flags) = node_arguments(&node, &config);
        let work_root = config
            .work_root
            .clone()
            .unwrap_or_else(spawn::default_work_root);
        spawn::sweep_stale_workdirs(&work_root);
        let (cgroup, cgroup_report) = match ChildrenCgroup::create(config.children_memory_bytes) {
            Ok((group, report)) => (Some(group), report),
            Err(reason) => (
                None,
                MemoryCgroupReport {
                    applied: false,
                    version: None,
                    path: None,
                    limit_bytes: config.children_memory_bytes,
                    reason: Some(reason),
                },
            ),
        };
        let cpu_budget = crate::admission::cpu_budget();
        let memory_dir = cgroup.as_ref().map(|g| g.dir().to_path_buf());
        let memory_version = cgroup_report.version.clone().unwrap_or_default();
        let (cpu_cgroup, cpu_report) = match CpuCgroup::create(
            &config.cpu,
            cpu_budget.cores,
            memory_dir.as_deref().map(|d| (d, memory_version.as_str())),
        ) {
            Ok((group, report)) => (Some(group), report),
            Err(reason) => (
                None,
                CpuCgroupReport {
                    applied: false,
                    version: None,
                    path: None,
                    weight: config.cpu.weight,
                    shares: None,
                    max: None,
                    gateway_path: None,
                    reason: Some(reason),
                },
            ),
        };
        if !config.cpu.policy_set {
            config.cpu.policy = if cpu_cgroup.is_some() {
                SchedPolicy::Idle
            } else {
                SchedPolicy::Batch
            };
        }
        let mut adopt_into: Vec<PathBuf> = Vec::new();
        let mut cgroups_applied = Vec::new();
        if let Some(group) = &cgroup {
            adopt_into.push(group.procs().to_path_buf());
            cgroups_applied.push(format!(
                "memory ({}, {} MiB for all children)",
                memory_version,
                config.children_memory_bytes / (1024 * 1024)
            ));
        }
        if let Some(group) = &cpu_cgroup {
            if !adopt_into.iter().any(|p| p == group.procs()) {
                adopt_into.push(group.procs().to_path_buf());
            }
            let version = cpu_report.version.clone().unwrap_or_default();
            cgroups_applied.push(match cpu_report.shares {
                Some(shares) => format!("cpu ({version}, shares {shares})"),
                None => format!("cpu ({version}, weight {})", cpu_report.weight),
            });
        }
        // Node's reasons are built from its version and flags only (no path).
        let reason = if !node.sound {
            Some(Unavailable::same(node.reason.clone().unwrap_or_else(
                || "node is not usable for code mode".into(),
            )))
        } else {
            launcher.as_ref().err().map(|problem| Unavailable {
                reason: problem.detail.clone(),
                public: problem.public.clone(),
            })
        };
        let inner = Arc::new(Inner {
            node,
            launcher: launcher.ok(),
            node_args,
            node_flags,
            work_root,
            unavailable: Mutex::new(reason),
            layers: Mutex::new(None),
            pool: Mutex::new(VecDeque::new()),
            starting: AtomicUsize::new(0),
            cells: tokio::sync::Semaphore::new(config.max_concurrent_cells),
            call_bytes: Arc::new(CallBytes::new(config.gateway_call_bytes)),
            cgroup,
            cgroup_report,
            _cpu_cgroup: cpu_cgroup,
            cpu_report,
            cpu_budget,
            adopt_into,
            cgroups_applied,
            config,
        });
        let runner = CodeRunner { inner };
        if runner.inner.config.probe_on_new && runner.unavailable_reason().is_none() {
            match probe_launch(&runner.inner) {
                Ok(report) => *lock(&runner.inner.layers) = Some(report),
                Err(reason) => {
                    *lock(&runner.inner.unavailable) = Some(Unavailable {
                        reason,
                        public: "a contained child could not be started on this host".into(),
                    })
                }
            }
        }
        runner.prewarm();
        Ok(runner)
    }

    /// Starts filling the warm pool when called inside a tokio runtime (a no-op otherwise; the
    /// first run fills it).
    pub fn prewarm(&self) {
        refill(&self.inner);
    }

    /// Started, contained children waiting in the warm pool.
    pub fn warm_children(&self) -> usize {
        lock(&self.inner.pool).len()
    }

    pub fn capability_report(&self) -> CapabilityReport {
        let reason = self.unavailable_reason();
        CapabilityReport {
            available: reason.is_none(),
            reason,
            node: self.inner.node.clone(),
            launcher_path: self.inner.launcher.clone(),
            node_flags: self.inner.node_flags.clone(),
            layers: lock(&self.inner.layers).clone(),
            address_space_bytes: self.inner.config.address_space_bytes,
            memory_cgroup: self.inner.cgroup_report.clone(),
            cpu_cgroup: self.inner.cpu_report.clone(),
            cpu_isolation: self.inner.config.cpu.clone(),
            cpu_budget: self.inner.cpu_budget.clone(),
            pool_size: self.inner.config.pool_size,
            max_concurrent_cells: self.inner.config.max_concurrent_cells,
            gateway_call_bytes: self.inner.config.gateway_call_bytes,
            caps: self.inner.config.caps.clone(),
        }
    }

    /// Why code mode cannot run here, for the operator (may name paths).
    fn unavailable_reason(&self) -> Option<String> {
        lock(&self.inner.unavailable)
            .as_ref()
            .map(|u| u.reason.clone())
    }

    /// Why code mode cannot run here, in words a cell's result may carry (no host path).
    pub(crate) fn unavailable_public_reason(&self) -> Option<String> {
        lock(&self.inner.unavailable)
            .as_ref()
            .map(|u| u.public.clone())
    }

    /// Runs one cell with the configured timeout.
    pub async fn run(
        &self,
        code: String,
        host: Arc<dyn BridgeHost>,
        cancel: CancelToken,
    ) -> CodeRunResult {
        self.run_with_timeout(code, host, cancel, self.inner.config.timeout)
            .await
    }

    /// Runs one cell with an explicit wall-clock deadline (the session's `codeTimeoutMs`). The
    /// child's RLIMIT_CPU backstop is max(`RunnerConfig::timeout`, 60 s) + 2 s.
    pub async fn run_with_timeout(
        &self,
        code: String,
        host: Arc<dyn BridgeHost>,
        cancel: CancelToken,
        timeout: Duration,
    ) -> CodeRunResult {
        self.run_with_options(
            code,
            host,
            cancel,
            RunOptions {
                timeout,
                log_style: LogStyle::Node,
            },
        )
        .await
    }

    /// Runs one cell with explicit per-cell settings (deadline, log style).
    pub async fn run_with_options(
        &self,
        code: String,
        host: Arc<dyn BridgeHost>,
        cancel: CancelToken,
        options: RunOptions,
    ) -> CodeRunResult {
        let RunOptions { timeout, log_style } = options;
        let started = Instant::now();
        let deadline = tokio::time::Instant::now() + timeout;
        let caps = self.inner.config.caps.clone();
        let mut telemetry = RunTelemetry::default();
        let early = |kind, message: String, mut telemetry: RunTelemetry| {
            telemetry.duration_ms = ms(started.elapsed());
            failure(kind, message, Vec::new(), telemetry)
        };
        if let Some(reason) = self.unavailable_public_reason() {
            return early(
                FailureKind::RuntimeUnavailable,
                format!("code mode is unavailable: {reason}"),
                telemetry,
            );
        }
        if code.len() > caps.code_bytes {
            let message = format!(
                "the code is {} bytes, over the cap of {}",
                code.len(),
                caps.code_bytes
            );
            return early(FailureKind::RuntimeError, message, telemetry);
        }
        if cancel.is_cancelled() {
            return early(
                FailureKind::Aborted,
                "the run was aborted before it started".into(),
                telemetry,
            );
        }
        // A slot first: beyond the cap, cells wait (within their own deadline) instead of each
        // starting a node process; the gateway stays responsive under a burst of cells.
        let slot = tokio::select! {
            biased;
            _ = cancel.cancelled() => Err((FailureKind::Aborted, "the run was aborted while waiting for a free cell slot".to_string())),
            _ = tokio::time::sleep_until(deadline) => Err((FailureKind::Busy, format!(
                "code mode is at capacity: {} cells were running for the whole {} ms deadline; nothing ran, try again",
                self.inner.config.max_concurrent_cells, timeout.as_millis()))),
            permit = self.inner.cells.acquire() => permit.map_err(|_| (FailureKind::RuntimeUnavailable, "the code runner is shutting down".to_string())),
        };
        let _slot = match slot {
            Ok(permit) => permit,
            Err((kind, message)) => return early(kind, message, telemetry),
        };
        telemetry.queued_ms = ms(started.elapsed());

        let acquired = tokio::select! {
            biased;
            _ = cancel.cancelled() => Err((FailureKind::Aborted, "the run was aborted while starting node".to_string())),
            _ = tokio::time::sleep_until(deadline) => Err((FailureKind::Timeout, timeout_message(timeout))),
            got = acquire(&self.inner) => got.map_err(|e| {
                tracing::warn!("a code cell's child failed to start: {}", e.detail);
                (FailureKind::RuntimeUnavailable, format!("{}; nothing ran", e.public))
            }),
        };
        let (mut child, warm) = match acquired {
            Ok(c) => c,
            Err((kind, message)) => return early(kind, message, telemetry),
        };
        telemetry.acquire_ms = ms(started.elapsed());
        telemetry.warm = warm;
        telemetry.child_pid = Some(child.pid);
        telemetry.node_version = child.node_version.clone();
        telemetry.containment = child.launcher.clone();
        telemetry.cgroups = self.inner.cgroups_applied.clone();
        if let Some(report) = child.launcher.clone() {
            *lock(&self.inner.layers) = Some(report);
        }

        let oom_kills_before = self
            .inner
            .cgroup
            .as_ref()
            .and_then(ChildrenCgroup::oom_kills);
        let mut bridge = Bridge::new(caps, log_style, host, Arc::clone(&self.inner.call_bytes));
        let outcome = bridge
            .drive(&mut child, code, deadline, timeout, &cancel)
            .await;
        child.kill();
        telemetry.calls_cancelled = bridge.cancel_outstanding();
        let mut outcome = outcome;
        // The child died without a result: its stderr and exit status say why, for the operator's
        // log; the cell's result gets one sentence (see `fault`).
        let died = matches!(outcome, Outcome::Fail(_, _, true));
        let tail = if died {
            read_diag_tail(
                &mut child.diag,
                bridge.diag_tail(),
                Duration::from_millis(200),
            )
            .await
        } else {
            String::new()
        };
        // SIGKILL has been sent; waiting for the kernel's teardown is optional (it costs a few ms
        // per cell on a busy host). Either way the reaper thread reaps it and removes the workdir.
        let reaped = if died || self.inner.config.await_reap {
            let reaped = child.finish().await;
            telemetry.child_exit = reaped.exit.clone();
            telemetry.workdir_clean = reaped.workdir_clean;
            Some(reaped)
        } else {
            drop(child);
            None
        };
        if died {
            let cgroup_oom = match (oom_kills_before, self.inner.cgroup.as_ref()) {
                (Some(before), Some(group)) => {
                    group.oom_kills().is_some_and(|after| after > before)
                }
                _ => false,
            };
            let death = Death {
                stderr: &tail,
                exit: Exit::of(reaped.and_then(|r| r.status)),
                cgroup_oom,
            };
            let (kind, message) = fault::child_died(&death, &fault_limits(&self.inner.config));
            tracing::warn!(
                exit = ?death.exit,
                cgroup_oom,
                "a code cell's child died without a result ({message}); its stderr: {tail}"
            );
            outcome = Outcome::Fail(kind, message, false);
        }
        // Start the replacement only now, so it does not compete with this cell for CPU.
        refill(&self.inner);
        bridge.fill_telemetry(&mut telemetry);
        telemetry.duration_ms = ms(started.elapsed());
        let logs = bridge.take_logs();
        match outcome {
            Outcome::Value(value) => CodeRunResult {
                ok: true,
                value: Some(value),
                error: None,
                logs,
                telemetry,
            },
            Outcome::Fail(kind, message, _) => failure(kind, message, logs, telemetry),
        }
    }
}

fn failure(
    kind: FailureKind,
    message: String,
    logs: Vec<String>,
    telemetry: RunTelemetry,
) -> CodeRunResult {
    let message = tool_search_base::text::clip(&message, crate::config::MAX_FAILURE_CHARS);
    CodeRunResult {
        ok: false,
        value: None,
        error: Some(RunFailure { kind, message }),
        logs,
        telemetry,
    }
}

/// The limits a child runs under, for the sentence that says which one it hit.
fn fault_limits(config: &RunnerConfig) -> fault::Limits {
    fault::Limits {
        heap_mb: config.heap_mb,
        address_space_bytes: config.address_space_bytes,
        children_memory_bytes: config.children_memory_bytes,
        cpu_secs: cpu_secs(config),
    }
}

/// RLIMIT_CPU of a child: a CPU-time backstop (the wall clock is enforced by the runner), at least
/// 60 s so a per-run deadline above `config.timeout` is not cut short by it.
fn cpu_secs(config: &RunnerConfig) -> u64 {
    config.timeout.as_secs().max(60) + 2
}

fn timeout_message(timeout: Duration) -> String {
    format!("the code did not finish within {} ms", timeout.as_millis())
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Checks a configuration as [`CodeRunner::new`] does, without starting anything.
pub fn validate_config(config: &RunnerConfig) -> Result<(), ConfigError> {
    validate(config)
}

fn validate(config: &RunnerConfig) -> Result<(), ConfigError> {
    let caps = &config.caps;
    let bad = |m: &str| Err(ConfigError(m.into()));
    if config.timeout.is_zero() {
        return bad("timeout must be positive");
    }
    if config.pool_size > 64 {
        return bad("pool_size must be at most 64");
    }
    if config.nofile < 32 {
        return bad("nofile must be at least 32");
    }
    if caps.frame_bytes < caps.result_bytes + 1024 || caps.frame_bytes < caps.code_bytes + 1024 {
        return bad("frame_bytes must exceed result_bytes and code_bytes by at least 1 KiB");
    }
    if caps.concurrent_calls == 0
        || caps.calls_per_run == 0
        || caps.json_depth < 4
        || caps.pending_replies == 0
    {
        return bad(
            "calls_per_run, concurrent_calls, pending_replies must be positive and json_depth >= 4",
        );
    }
    if config.heap_mb < 16 {
        return bad("heap_mb must be at least 16");
    }
    if config.max_concurrent_cells == 0 || config.max_concurrent_cells > 1024 {
        return bad("max_concurrent_cells must be 1..=1024");
    }
    let cpu = &config.cpu;
    if cpu.weight == 0 || cpu.weight > 10_000 {
        return bad("the children's cpu weight must be 1..=10000");
    }
    if !(0..=19).contains(&cpu.nice) {
        return bad(
            "the children's nice value must be 0..=19 (a child never runs above the gateway)",
        );
    }
    if cpu
        .max_share
        .is_some_and(|s| !(s.is_finite() && s > 0.0 && s <= 1.0))
    {
        return bad("the children's cpu cap must be a share of the cores in (0, 1]");
    }
    if caps.calls_outstanding == 0
        || caps.call_bytes_outstanding < caps.frame_bytes
        || config.gateway_call_bytes < caps.frame_bytes
    {
        return bad(
            "calls_outstanding must be positive and the call byte budgets at least one frame",
        );
    }
    Ok(())
}

/// Node's flags: permission model with no grants, hardening flags the binary knows, heap cap,
/// and the prelude via `-e` (model code never goes on argv).
fn node_arguments(node: &NodeSupport, config: &RunnerConfig) -> (Vec<OsString>, Vec<String>) {
    let mut flags: Vec<String> = Vec::new();
    if let Some(flag) = &node.permission_flag {
        flags.push(flag.clone());
    }
    if node.no_sqlite_flag {
        flags.push("--no-experimental-sqlite".into());
    }
    if node.no_ffi_flag {
        flags.push("--no-experimental-ffi".into());
    }
    if node.no_addons_flag {
        flags.push("--no-addons".into());
    }
    if node.disable_sigusr1_flag {
        flags.push("--disable-sigusr1".into());
    }
    flags.push(format!("--max-old-space-size={}", config.heap_mb));
    let mut args: Vec<OsString> = flags.iter().map(OsString::from).collect();
    args.push("-e".into());
    args.push(config.prelude_override.as_deref().unwrap_or(PRELUDE).into());
    (args, flags)
}

fn launcher_args(inner: &Inner, workdir: PathBuf) -> LauncherArgs {
    let config = &inner.config;
    LauncherArgs {
        parent_pid: std::process::id() as i32,
        cwd: workdir,
        uid: config.unprivileged_uid,
        gid: config.unprivileged_gid,
        drop_uid: config.drop_uid,
        netns: config.netns,
        landlock: config.landlock,
        nofile: config.nofile,
        cpu_secs: cpu_secs(config),
        as_bytes: config.address_space_bytes,
        nice: config.cpu.nice,
        sched: config.cpu.policy,
        node: config.node_path.clone(),
        node_args: inner.node_args.clone(),
    }
}

/// Owner of the private working directory: the unprivileged uid when we are root and will drop.
fn workdir_owner(config: &RunnerConfig) -> Option<(u32, u32)> {
    // SAFETY: getter.
    let root = unsafe { libc::geteuid() } == 0;
    (root && config.drop_uid != Want::Off)
        .then_some((config.unprivileged_uid, config.unprivileged_gid))
}

/// Starts one contained child and waits for its launcher report and `ready` frame.
async fn start_child(inner: &Inner) -> Result<ChildProc, StartFailure> {
    const CONTAINMENT: &str = "containment could not be applied to the cell's child";
    let shut_down = || StartFailure::new("code mode has shut down in this process", "shut down");
    let launcher = inner.launcher.as_ref().ok_or_else(|| {
        StartFailure::new("the code-mode launcher is not available", "no launcher")
    })?;
    let workdir =
        spawn::create_workdir(&inner.work_root, workdir_owner(&inner.config)).map_err(|e| {
            if spawn::is_shut_down() {
                return shut_down();
            }
            StartFailure::new(
                "a private working directory for the cell could not be created",
                format!("cannot create a private working directory: {e}"),
            )
        })?;
    let command = spawn::launcher_command(launcher, &launcher_args(inner, workdir.clone()));
    let child = spawn::spawn_async(command, workdir.clone())
        .await
        .map_err(|e| {
            StartFailure::new(
                format!("the code-mode launcher {LAUNCHER_NAME} could not be started"),
                format!("cannot start the launcher {}: {e}", launcher.display()),
            )
        })?;
    // Into the children's memory and cpu groups before the child can receive any code (a write
    // can take ~10 ms in the kernel: off the async workers). Fail closed if one does not take.
    let child = if inner.adopt_into.is_empty() {
        child
    } else {
        let pid = child.id();
        let files = inner.adopt_into.clone();
        let adopted = tokio::task::spawn_blocking(move || adopt(&files, pid)).await;
        let cgroups = "the cell's child could not be moved into the code-mode cgroups";
        match adopted {
            Ok(Ok(())) => child,
            Ok(Err(e)) => {
                spawn::kill_and_reap(child, Some(workdir), None);
                return Err(StartFailure::new(cgroups, e));
            }
            Err(e) => {
                spawn::kill_and_reap(child, Some(workdir), None);
                return Err(StartFailure::new(
                    cgroups,
                    format!("cannot move the child into its cgroups: {e}"),
                ));
            }
        }
    };
    let mut child = ChildProc::new(child, workdir, inner.config.caps.frame_bytes).map_err(|e| {
        if spawn::is_shut_down() {
            return shut_down();
        }
        StartFailure::new(
            "the cell's bridge could not be set up",
            format!("cannot set up the bridge: {e}"),
        )
    })?;
    let startup =
        tokio::time::timeout(inner.config.startup_timeout, handshake(&mut child, inner)).await;
    match startup {
        Ok(Ok(())) => Ok(child),
        Ok(Err(message)) => {
            child.kill();
            // The launcher's and Node's stderr: for the operator only.
            let tail =
                read_diag_tail(&mut child.diag, Vec::new(), Duration::from_millis(300)).await;
            Err(StartFailure::new(
                CONTAINMENT,
                if tail.is_empty() {
                    message
                } else {
                    format!("{message}: {tail}")
                },
            ))
        }
        Err(_) => Err(StartFailure::new(
            "the cell's child did not become ready in time",
            "node did not become ready in time",
        )),
    }
}

async fn handshake(child: &mut ChildProc, inner: &Inner) -> Result<(), String> {
    let first = child
        .from_child
        .next_frame()
        .await?
        .ok_or("containment could not be applied")?;
    let report: LauncherReport =
        serde_json::from_slice(&first).map_err(|e| format!("bad launcher report: {e}"))?;
    if !(report.setsid
        && report.seccomp
        && report.rlimits
        && report.close_range
        && report.pdeathsig
        && report.caps_dropped
        && report.exec_only_node
        && report.x32_denied
        && report.ipc_denied
        && report.priority_scoped
        && report.pdeathsig_locked
        && report.ambient_caps_cleared
        && report.priority_locked)
    {
        return Err("the launcher did not apply the required layers".into());
    }
    if !priority_as_configured(&report, &inner.config.cpu) {
        return Err(format!(
            "the launcher did not lower the child's CPU priority as configured (nice {}, {})",
            report.nice, report.sched_policy
        ));
    }
    let second = child
        .from_child
        .next_frame()
        .await?
        .ok_or("node exited during startup")?;
    match parse_child_frame(&second, inner.config.caps.json_depth)? {
        ChildFrame::Ready {
            node,
            permission: true,
        } => {
            child.launcher = Some(report);
            child.node_version = Some(node);
            child.ready_at = Instant::now();
            Ok(())
        }
        _ => Err("node did not confirm the permission model".into()),
    }
}

/// Reads what is left on the diagnostics pipe (bounded in time and size) and returns the tail.
async fn read_diag_tail(
    diag: &mut tokio::net::unix::pipe::Receiver,
    mut tail: Vec<u8>,
    wait: Duration,
) -> String {
    const KEEP: usize = 2048;
    let _ = tokio::time::timeout(wait, async {
        let mut buf = vec![0u8; 16 * 1024];
        let mut total = 0usize;
        while let Ok(n) = diag.read(&mut buf).await {
            if n == 0 || total > 4 * 1024 * 1024 {
                break;
            }
            total += n;
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > KEEP {
                tail.drain(..tail.len() - KEEP);
            }
        }
    })
    .await;
    String::from_utf8_lossy(&tail).trim().to_string()
}

/// A pooled child if one is healthy, else a fresh one; the pool is refilled in the background.
async fn acquire(inner: &Arc<Inner>) -> Result<(ChildProc, bool), StartFailure> {
    loop {
        let candidate = lock(&inner.pool).pop_front();
        let Some(mut child) = candidate else { break };
        let fresh = child.ready_at.elapsed() < inner.config.pool_max_idle;
        if fresh && child.from_child.buffered() == 0 && child.is_alive() {
            return Ok((child, true));
        }
        // Unhealthy or stale: dropping it kills and reaps it.
    }
    start_child(inner).await.map(|c| (c, false))
}

/// Tops the pool up to `pool_size` with background starts (needs a tokio runtime).
fn refill(inner: &Arc<Inner>) {
    if tokio::runtime::Handle::try_current().is_err() || lock(&inner.unavailable).is_some() {
        return;
    }
    let pool = lock(&inner.pool);
    while pool.len() + inner.starting.load(Ordering::SeqCst) < inner.config.pool_size {
        inner.starting.fetch_add(1, Ordering::SeqCst);
        let inner = Arc::clone(inner);
        tokio::spawn(async move {
            let started = start_child(&inner).await;
            let mut pool = lock(&inner.pool);
            inner.starting.fetch_sub(1, Ordering::SeqCst);
            match started {
                Ok(child) => pool.push_back(child),
                Err(e) => tracing::warn!("code-mode pool child failed to start: {}", e.detail),
            }
        });
    }
}

/// One synchronous contained launch at construction: proves the layers apply here.
fn probe_launch(inner: &Inner) -> Result<LauncherReport, String> {
    let launcher = inner.launcher.as_ref().ok_or("no launcher")?;
    let workdir = spawn::create_workdir(&inner.work_root, workdir_owner(&inner.config))
        .map_err(|e| format!("cannot create a private working directory: {e}"))?;
    let command = spawn::launcher_command(launcher, &launcher_args(inner, workdir.clone()));
    let mut child = match spawn::spawn_blocking(command) {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&workdir);
            return Err(format!("cannot start the launcher: {e}"));
        }
    };
    if let Err(e) = adopt(&inner.adopt_into, child.id()) {
        spawn::kill_and_reap(child, Some(workdir), None);
        return Err(e);
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (tx, rx) = std::sync::mpsc::channel();
    let depth = inner.config.caps.json_depth;
    let cpu = inner.config.cpu.clone();
    let reader = std::thread::spawn(move || {
        let verdict = (|| -> Result<LauncherReport, String> {
            let mut lines =
                std::io::BufRead::lines(std::io::BufReader::new(stdout.ok_or("no stdout")?));
            let first = lines
                .next()
                .ok_or("containment could not be applied")?
                .map_err(|e| e.to_string())?;
            let report: LauncherReport =
                serde_json::from_str(&first).map_err(|e| format!("bad launcher report: {e}"))?;
            if !(report.priority_locked && priority_as_configured(&report, &cpu)) {
                return Err(
                    "the launcher did not lower the child's CPU priority as configured".into(),
                );
            }
            let second = lines
                .next()
                .ok_or("node exited during startup")?
                .map_err(|e| e.to_string())?;
            match parse_child_frame(second.as_bytes(), depth)? {
                ChildFrame::Ready {
                    permission: true, ..
                } => Ok(report),
                _ => Err("node did not confirm the permission model".into()),
            }
        })();
        let _ = tx.send(verdict);
    });
    let verdict = rx
        .recv_timeout(inner.config.startup_timeout)
        .unwrap_or_else(|_| Err("node did not become ready in time".into()));
    spawn::kill_and_reap(child, Some(workdir), None);
    let _ = reader.join();
    verdict.map_err(|message| {
        let mut tail = String::new();
        if let Some(mut stderr) = stderr {
            let mut buf = Vec::new();
            let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut buf);
            tail = String::from_utf8_lossy(&buf)
                .trim()
                .chars()
                .rev()
                .take(1000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
        }
        if tail.is_empty() {
            message
        } else {
            format!("{message}: {tail}")
        }
    })
}

/// Writes `pid` into each `cgroup.procs` file (memory, then cpu). Blocking (kernel work).
fn adopt(files: &[PathBuf], pid: u32) -> Result<(), String> {
    for file in files {
        std::fs::write(file, pid.to_string()).map_err(|e| {
            format!(
                "cannot move the child into its cgroup {}: {e}",
                file.display()
            )
        })?;
    }
    Ok(())
}

/// The launcher's report shows the nice value and policy the runner asked for.
fn priority_as_configured(report: &LauncherReport, cpu: &CpuIsolation) -> bool {
    report.nice == cpu.nice && report.sched_policy == cpu.policy.as_str()
}
