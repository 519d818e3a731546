//! What a run returns: serde-serializable in camelCase, handed to JS as-is by the binding.

use serde::Serialize;
use serde_json::Value;

use crate::launcher::LauncherReport;

/// Why a run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The wall-clock deadline passed (the child was killed, calls were cancelled).
    Timeout,
    /// The caller's cancel token fired.
    Aborted,
    /// The code threw, did not compile, or the child died without a result (for another reason
    /// than memory).
    RuntimeError,
    /// The child ran out of memory: its heap cap, its address-space limit, or the children's
    /// memory cgroup (the kernel killed it).
    MemoryLimit,
    /// No sound node, no launcher, or containment could not be applied: nothing ran.
    RuntimeUnavailable,
    /// Result, logs or stderr exceeded their caps.
    OutputLimit,
    /// The child broke the bridge protocol or its caps.
    BridgeViolation,
    /// Every cell slot stayed taken until the deadline: nothing ran.
    Busy,
}

/// A failure with a bounded diagnostic. `message` is what the model may see: the code's own
/// error (its name, message and stack inside the cell), or one sentence from the runner that
/// names no host path, pid or native stack (the child's stderr goes to the operator's log).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFailure {
    pub kind: FailureKind,
    pub message: String,
}

/// Counts of bridge operations the child made.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeCallCounts {
    pub search: u64,
    pub describe: u64,
    pub call: u64,
}

/// Per-run telemetry.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTelemetry {
    /// Whole run, wall clock.
    pub duration_ms: f64,
    /// Until a started, contained, ready child was at hand.
    pub acquire_ms: f64,
    /// The child came from the warm pool.
    pub warm: bool,
    pub bridge_calls: BridgeCallCounts,
    /// Calls cancelled because the run ended first.
    pub calls_cancelled: u64,
    /// Calls refused at once because the cell's or the gateway's budget was spent.
    pub calls_refused: u64,
    /// Most bytes of call frames this cell had outstanding at once.
    pub peak_call_bytes: u64,
    /// Waiting for a free cell slot (gateway-wide concurrency cap).
    pub queued_ms: f64,
    pub log_lines: u64,
    pub log_bytes: u64,
    pub logs_truncated: bool,
    pub result_bytes: u64,
    pub node_version: Option<String>,
    /// Layers the launcher applied to this child (its nice value, scheduling policy and
    /// autogroup among them).
    pub containment: Option<LauncherReport>,
    /// The cgroups the child was moved into before it received code, e.g.
    /// `"memory (v1, 2048 MiB for all children)"`, `"cpu (v1, shares 102)"`; empty where the
    /// host has none (see the capability report's `memoryCgroup` / `cpuCgroup` for why).
    pub cgroups: Vec<String>,
    /// The private working directory was empty when removed.
    pub workdir_clean: Option<bool>,
    pub child_pid: Option<u32>,
    /// How the child ended, e.g. "signal 9".
    pub child_exit: Option<String>,
}

/// `{ ok, value, logs, telemetry }`, or `{ ok: false, error: { kind, message }, logs, telemetry }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeRunResult {
    pub ok: bool,
    /// The returned value (`null` for `undefined`); only when `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunFailure>,
    /// `console.*` lines in order; warn/error lines start with `[warn] ` / `[error] `.
    pub logs: Vec<String>,
    pub telemetry: RunTelemetry,
}

impl CodeRunResult {
    pub fn failure_kind(&self) -> Option<FailureKind> {
        self.error.as_ref().map(|e| e.kind)
    }
}
