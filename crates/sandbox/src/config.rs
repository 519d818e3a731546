//! Runner configuration. Every cap on what the child may send or use is here, with defaults.

use std::path::PathBuf;
use std::time::Duration;

use tool_search_base::limits::{MAX_JSON_DEPTH, MAX_JSON_VALUES};

// The launcher applies the scheduling policy; config names it.
pub use crate::launcher::args::SchedPolicy;
use crate::launcher::Want;

/// Longest failure message of a run (chars): a thrown stack or a runner
/// diagnostic, clipped so a hostile cell cannot hand the model a huge text.
pub(crate) const MAX_FAILURE_CHARS: usize = 4_000;

/// Caps on one run. Defaults are generous for real cells and small enough to bound floods.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Caps {
    /// Model-written code (bytes of UTF-8).
    pub code_bytes: usize,
    /// The returned value, serialized as JSON.
    pub result_bytes: usize,
    /// Logs kept (bytes of text, and lines); more are dropped and `logsTruncated` is set.
    pub log_bytes: usize,
    pub log_lines: usize,
    /// Log bytes the child may send beyond `log_bytes` before the run ends as `output_limit`.
    pub log_flood_bytes: usize,
    /// One bridge frame, either direction (child→parent frames over it end the run).
    pub frame_bytes: usize,
    /// Nesting depth of any JSON frame from the child.
    pub json_depth: usize,
    /// Bridge calls (search + describe + call) per run; more end the run as `bridge_violation`.
    pub calls_per_run: usize,
    /// `call`s executing at once; more wait in a queue.
    pub concurrent_calls: usize,
    /// Tail of the child's stderr/stdout kept for diagnostics.
    pub stderr_tail_bytes: usize,
    /// Total stderr/stdout bytes before the run ends as `output_limit`.
    pub stderr_max_bytes: usize,
    /// Frames queued for a child that does not read them before the run ends.
    pub pending_replies: usize,
    /// `call`s a cell may have outstanding (running + queued); one more is refused at once
    /// (the promise rejects with `budget_exceeded`), nothing queued.
    pub calls_outstanding: usize,
    /// Bytes of `call` frames a cell may have outstanding; queued calls are held as their JSON
    /// text (not parsed values, ~16x larger), so this bounds a cell's share of gateway memory.
    pub call_bytes_outstanding: usize,
    /// JSON values (containers and scalars) in a returned value; more ends the run as
    /// `output_limit`. The gateway rebuilds the value with `JSON.parse` on its event loop, whose
    /// cost grows with the number of values far more than with bytes.
    pub result_values: usize,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            code_bytes: 256 * 1024,
            result_bytes: 256 * 1024,
            log_bytes: 64 * 1024,
            log_lines: 500,
            log_flood_bytes: 4 * 1024 * 1024,
            frame_bytes: 1024 * 1024,
            json_depth: MAX_JSON_DEPTH,
            calls_per_run: 1000,
            concurrent_calls: 8,
            stderr_tail_bytes: 4 * 1024,
            stderr_max_bytes: 1024 * 1024,
            pending_replies: 64,
            calls_outstanding: 64,
            call_bytes_outstanding: 4 * 1024 * 1024,
            result_values: MAX_JSON_VALUES,
        }
    }
}

/// How a cell's `console.*` lines are written into its logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum LogStyle {
    /// `util.format` of the arguments (as Node's console), `[warn] ` / `[error] ` prefixes.
    #[default]
    Node,
    /// OpenClaw's child: strings as they are, other values as JSON, joined by a space, no level
    /// prefix. A gateway that hands the logs to a model used to OpenClaw's format keeps it.
    Json,
}

impl LogStyle {
    /// `"node"` or `"json"`.
    pub fn parse(name: &str) -> Option<LogStyle> {
        match name {
            "node" => Some(LogStyle::Node),
            "json" => Some(LogStyle::Json),
            _ => None,
        }
    }
}

/// How children are kept below the gateway on the CPU. Two layers: a cpu cgroup for all
/// children together where the host has a writable cpu controller (a weight well below the
/// gateway's, optionally a hard cap), and, always, a nice value and scheduling policy that the
/// launcher sets before node starts and the child cannot undo (RLIMIT_NICE 0, no capabilities,
/// seccomp denies `sched_setscheduler`/`sched_setattr`/`sched_setparam`). Without the cgroup the
/// launcher's layer is what holds (it also lowers the child's session autogroup, which `setsid`
/// creates and which would otherwise weigh as much as the gateway).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuIsolation {
    /// Weight of the children's group as cgroup v2 `cpu.weight` (1..=10000; a process's group
    /// has 100 by default); on v1 it becomes `cpu.shares` = weight × 1024 / 100. Default 10: all
    /// cells together get about a tenth of what the gateway's group gets when both want CPU.
    pub weight: u32,
    /// Hard cap on all children together as a share of the cores available to the gateway
    /// (`cpu.max` / `cpu.cfs_quota_us`), e.g. 0.5 = half of them; `None` = no cap (default:
    /// the weight already yields to the gateway, and an idle machine stays usable by cells).
    pub max_share: Option<f64>,
    /// Nice value of every child (0..=19; default 10).
    pub nice: i32,
    /// Scheduling policy of every child. Unless the gateway names one (`policy_set`), the runner
    /// picks it once it knows whether the children's cpu group applies: `Idle` there (a woken
    /// gateway thread then preempts a running child at once, while the group's weight still
    /// gives cells their share), `Batch` without the group (where `Idle` would run cells only on
    /// CPU no other process of the host wants).
    pub policy: SchedPolicy,
    /// The gateway chose `policy` (`childrenCpuPolicy`); false: the runner's choice above.
    #[serde(skip)]
    pub policy_set: bool,
}

impl Default for CpuIsolation {
    fn default() -> Self {
        CpuIsolation {
            weight: 10,
            max_share: None,
            nice: 10,
            policy: SchedPolicy::Batch,
            policy_set: false,
        }
    }
}

/// Per-cell settings beside the code.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Wall-clock deadline of the whole cell, bridged calls included.
    pub timeout: Duration,
    pub log_style: LogStyle,
}

/// How the runner starts children.
#[derive(Clone, Debug)]
pub struct RunnerConfig {
    /// Absolute path of the node binary (the binding passes `process.execPath` unless configured).
    pub node_path: PathBuf,
    /// The launcher binary; `None` = search (see [`crate::find_launcher`]).
    pub launcher_path: Option<PathBuf>,
    /// Directory that also holds the launcher (the binding passes the `.node` file's directory).
    pub launcher_dir_hint: Option<PathBuf>,
    /// Wall-clock deadline of a whole run, bridged calls included.
    pub timeout: Duration,
    pub caps: Caps,
    /// `--max-old-space-size` of the child.
    pub heap_mb: u64,
    /// RLIMIT_AS of the child in bytes (bounds off-heap Buffers, where no cgroup is used);
    /// 0 = none. Node 24/26 need about 1.1-1.4 GiB to start.
    pub address_space_bytes: u64,
    /// RLIMIT_NOFILE of the child (Node needs at least ~25 after the fds are closed).
    pub nofile: u64,
    /// Children kept started and contained, each used for one run.
    pub pool_size: usize,
    /// Startup of one child (launcher + node + prelude), bounded separately from the run deadline
    /// for pool children.
    pub startup_timeout: Duration,
    /// A pooled child older than this is replaced instead of used.
    pub pool_max_idle: Duration,
    /// Parent of the per-child private working directories (default: the system temp dir).
    pub work_root: Option<PathBuf>,
    /// Network namespace: `Try` by default (needs root).
    pub netns: Want,
    /// Landlock (exec only node, no file creation or writes, no TCP, scoped signals): `Try`.
    pub landlock: Want,
    /// Switch to `unprivileged_uid/gid` when running as root: `Try` by default.
    pub drop_uid: Want,
    pub unprivileged_uid: u32,
    pub unprivileged_gid: u32,
    /// Start one contained child in `CodeRunner::new` to learn which layers the host allows.
    pub probe_on_new: bool,
    /// Wait until the killed child is reaped before `run` returns (fills `childExit` and
    /// `workdirClean` in the telemetry). Off by default: the child is SIGKILLed (process group)
    /// before `run` returns either way, and a reaper thread collects it moments later.
    pub await_reap: bool,
    /// Resident memory of all children together (one memory cgroup, where the host allows it;
    /// see `CapabilityReport::memory_cgroup`). 0 = no group.
    pub children_memory_bytes: u64,
    /// Cells running at once in this runner (gateway-wide when the runner is shared). A cell
    /// beyond it waits for a slot within its own deadline, then fails as `busy`. Default: from
    /// the cores available to the gateway ([`crate::admission::default_concurrent_cells`]).
    pub max_concurrent_cells: usize,
    /// Keeping children (pool start-ups included) below the gateway on the CPU.
    pub cpu: CpuIsolation,
    /// Bytes of `call` frames outstanding across every cell of this runner; a call beyond it is
    /// refused at once with `budget_exceeded`.
    pub gateway_call_bytes: usize,
    /// Tests only: replaces the child's prelude script (to prove the OS layers hold when the
    /// in-child defences are bypassed). Never set by the binding.
    #[doc(hidden)]
    pub prelude_override: Option<String>,
}

impl RunnerConfig {
    pub fn new(node_path: impl Into<PathBuf>) -> Self {
        RunnerConfig {
            node_path: node_path.into(),
            launcher_path: None,
            launcher_dir_hint: None,
            timeout: Duration::from_secs(10),
            caps: Caps::default(),
            heap_mb: 256,
            address_space_bytes: 4 * 1024 * 1024 * 1024,
            nofile: 64,
            pool_size: 1,
            startup_timeout: Duration::from_secs(10),
            pool_max_idle: Duration::from_secs(300),
            work_root: None,
            netns: Want::Try,
            landlock: Want::Try,
            drop_uid: Want::Try,
            unprivileged_uid: 65534,
            unprivileged_gid: 65534,
            probe_on_new: true,
            await_reap: false,
            children_memory_bytes: 2 * 1024 * 1024 * 1024,
            max_concurrent_cells: crate::admission::default_concurrent_cells(),
            cpu: CpuIsolation::default(),
            gateway_call_bytes: 64 * 1024 * 1024,
            prelude_override: None,
        }
    }
}
