//! Code mode's runner: runs a model-written JavaScript body in a short-lived, contained
//! `node --permission` child, bridges `openclaw.tools.search/describe/call` back to the host, and
//! kills the child right after the result.
//!
//! # Wiring (binding side)
//!
//! ```ignore
//! use tool_search_sandbox::{CodeRunner, RunnerConfig, BridgeHost, CancelToken};
//! let mut config = RunnerConfig::new(node_exec_path);        // absolute; e.g. process.execPath
//! config.launcher_dir_hint = Some(dir_of_the_dot_node_file);  // the launcher ships next to it
//! config.timeout = Duration::from_millis(code_timeout_ms);
//! let runner = CodeRunner::new(config)?;                      // once per gateway; Send + Sync
//! let report = runner.capability_report();                    // available == false → mode falls back to `tools`
//! // per cell, on napi's tokio runtime:
//! let cancel = CancelToken::new();                            // fire from the JS AbortSignal: cancel.cancel()
//! let result = runner.run(code, Arc::new(host) as Arc<dyn BridgeHost>, cancel).await;
//! // `result` serializes (camelCase) to { ok, value, logs, telemetry } or { ok: false, error: { kind, message }, … }
//! ```
//! Use [`CodeRunner::run_with_timeout`] for a per-call deadline. [`CodeRunner::prewarm`] (inside
//! the runtime) starts the warm pool early; otherwise the first run fills it.
//!
//! # Launcher lookup order ([`find_launcher`])
//! 1. `RunnerConfig::launcher_path` (only that file);
//! 2. env `OPENCLAW_TOOL_SEARCH_LAUNCHER` ([`LAUNCHER_ENV`]; only that file, an absolute path);
//! 3. `RunnerConfig::launcher_dir_hint/openclaw-tool-search-launcher`;
//! 4. the directory of the shared object or executable containing this code (`dladdr`: the
//!    `.node` file's directory when loaded as the addon — ship the launcher next to it);
//! 5. the directory of the current executable, and its parent (`target/<profile>/` when running
//!    from `target/<profile>/deps` or `examples`);
//! 6. development: `target/{<arch>-unknown-linux-gnu/,}{release,debug}/` under the directories of
//!    steps 4-5 (a `.node` built by `napi build` sits at the repository root).
//!
//! # Containment (see `launcher` for the order)
//! Launcher spawned via posix_spawn (no `pre_exec`), empty env; it applies setsid, fds 3/4 only,
//! rlimits (core 0, fsize 0, nofile, cpu, AS, nice 0), a nice value and scheduling policy below
//! the gateway's (also for its session's autogroup), a network namespace and uid 65534 where allowed,
//! PR_SET_PDEATHSIG(SIGKILL), Landlock where the kernel has it (exec only node, no file
//! creation or writes, no TCP, signals scoped), seccomp (no sockets, signals only inside its own group, no ptrace /
//! process_vm / bpf / io_uring / mount / namespaces / fork, clone3 → ENOSYS), then execs node
//! with `--permission` (no grants), `--no-experimental-sqlite`, `--no-addons`,
//! `--disable-sigusr1` where known, a heap cap, in a fresh 0700 working directory that is removed
//! afterwards. Every child (pool start-ups too) is moved into the children's memory cgroup and a
//! cpu cgroup with a low weight where the host has them. The prelude strips `process.kill` & co. and asserts the permission model before
//! the code arrives over the bridge. Every layer applied is reported per run
//! (`telemetry.containment`) and in the [`CapabilityReport`].

pub mod admission;
mod bridge;
mod budget;
mod cancel;
mod cgroup;
mod config;
mod discovery;
mod fault;
mod host;
pub mod launcher;
mod probe;
pub mod protocol;
mod result;
mod runner;
mod spawn;
mod version;

use std::path::{Path, PathBuf};

pub use admission::CpuBudget;
pub use cancel::CancelToken;
pub use cgroup::{CpuCgroupReport, MemoryCgroupReport};
pub use config::{Caps, CpuIsolation, LogStyle, RunOptions, RunnerConfig, SchedPolicy};
pub use discovery::{
    find_runner, pending_report, unavailable_fallback_reason, CodeModeSettings, ConfigureError,
    Probe, Probed, NODE_ENV, PENDING_FALLBACK_REASON, READER_WAIT,
};
pub use host::{BridgeError, BridgeHost, CallFuture, Lookup};
pub use launcher::{LauncherReport, Want};
pub use probe::{probe_node, NodeSupport};
pub use result::{BridgeCallCounts, CodeRunResult, FailureKind, RunFailure, RunTelemetry};
pub use runner::{validate_config, CapabilityReport, CodeRunner, ConfigError, PRELUDE};
pub use spawn::ShutdownReport;

/// Releases everything code mode holds outside the process when the gateway exits normally
/// (call it from the main environment's cleanup hook; it is process-wide): kills every child and
/// removes every working directory (see [`spawn::shutdown`]), then the children's memory
/// cgroups. Afterwards no child starts and runs fail as `runtime_unavailable`.
pub fn shutdown() -> ShutdownReport {
    let report = spawn::shutdown();
    cgroup::remove_all();
    report
}

/// File name of the launcher binary built from this crate.
pub const LAUNCHER_NAME: &str = "openclaw-tool-search-launcher";

/// Environment variable naming the launcher binary (an absolute path; only that file is used).
pub const LAUNCHER_ENV: &str = "OPENCLAW_TOOL_SEARCH_LAUNCHER";

/// Why no launcher can be used: a missing file, or one that cannot be executed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LauncherProblem {
    /// One sentence naming the launcher by its file name, never a host path: what a cell's result
    /// and the config fallback may say, e.g. "the code-mode launcher openclaw-tool-search-launcher
    /// is missing beside the addon".
    pub public: String,
    /// `public` with the paths looked at, for the operator (`codeModeCapability().reason`).
    pub detail: String,
}

impl LauncherProblem {
    fn new(public: String, looked_at: &[PathBuf]) -> Self {
        let detail = match looked_at {
            [] => public.clone(),
            [one] => format!("{public} (looked for {})", one.display()),
            [first, rest @ ..] => format!(
                "{public} (looked for {} and in {} other places)",
                first.display(),
                rest.len()
            ),
        };
        LauncherProblem { public, detail }
    }

    fn missing(place: &str, looked_at: &[PathBuf]) -> Self {
        Self::new(
            format!("the code-mode launcher {LAUNCHER_NAME} is missing{place}"),
            looked_at,
        )
    }

    fn not_executable(place: &str, path: &Path) -> Self {
        Self::new(
            format!("the code-mode launcher {LAUNCHER_NAME}{place} is not executable"),
            &[path.to_path_buf()],
        )
    }
}

/// A regular file this process may execute.
fn is_executable(path: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string; access only reads it.
    path.is_file() && unsafe { libc::access(c_path.as_ptr(), libc::X_OK) } == 0
}

/// Finds the launcher (order in the crate docs). Returns only existing, executable files.
pub fn find_launcher(explicit: Option<&Path>, dir_hint: Option<&Path>) -> Option<PathBuf> {
    locate_launcher(explicit, dir_hint).ok()
}

/// Finds the launcher (order in the crate docs), or says why there is none: missing, or present
/// but not executable (a package copy that lost the file or its mode).
pub fn locate_launcher(
    explicit: Option<&Path>,
    dir_hint: Option<&Path>,
) -> Result<PathBuf, LauncherProblem> {
    let only = |path: PathBuf, place: &str| {
        if is_executable(&path) {
            Ok(path)
        } else if path.is_file() {
            Err(LauncherProblem::not_executable(place, &path))
        } else {
            Err(LauncherProblem::missing(place, &[path]))
        }
    };
    if let Some(path) = explicit {
        return only(path.to_path_buf(), " at its configured path");
    }
    if let Some(path) = std::env::var_os(LAUNCHER_ENV) {
        let path = PathBuf::from(path);
        if !path.is_absolute() {
            return Err(LauncherProblem::new(
                format!("the code-mode launcher {LAUNCHER_NAME} cannot be used: {LAUNCHER_ENV} must be an absolute path"),
                &[path],
            ));
        }
        return only(path, &format!(" at the path {LAUNCHER_ENV} names"));
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    dirs.extend(dir_hint.map(Path::to_path_buf));
    let mut bases: Vec<PathBuf> = Vec::new();
    bases.extend(containing_object_dir());
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            bases.push(dir.to_path_buf());
            bases.extend(dir.parent().map(Path::to_path_buf));
        }
    }
    dirs.extend(bases.iter().cloned());
    let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    for base in &bases {
        for profile in ["release", "debug"] {
            dirs.push(base.join("target").join(&triple).join(profile));
            dirs.push(base.join("target").join(profile));
        }
    }
    let candidates: Vec<PathBuf> = dirs.into_iter().map(|d| d.join(LAUNCHER_NAME)).collect();
    if let Some(found) = candidates.iter().find(|p| is_executable(p)) {
        return Ok(found.clone());
    }
    match candidates.iter().find(|p| p.is_file()) {
        Some(present) => Err(LauncherProblem::not_executable(
            " beside the addon",
            present,
        )),
        None => Err(LauncherProblem::missing(" beside the addon", &candidates)),
    }
}

/// Directory of the shared object (the `.node` addon) or executable that contains this function.
fn containing_object_dir() -> Option<PathBuf> {
    // SAFETY: Dl_info is plain C data (pointers and integers); all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = containing_object_dir as *const libc::c_void;
    // SAFETY: dladdr only reads loader tables; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(std::ffi::OsStr::new(
        std::str::from_utf8(name.to_bytes()).ok()?,
    ));
    let path = if path.is_absolute() {
        path
    } else {
        std::fs::canonicalize(path).ok()?
    };
    path.parent().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_missing_or_non_executable_launcher_is_named_as_such() {
        let dir = std::env::temp_dir().join(format!("launcher-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(LAUNCHER_NAME);

        let missing = locate_launcher(Some(&path), None).unwrap_err();
        assert_eq!(
            missing.public,
            "the code-mode launcher openclaw-tool-search-launcher is missing at its configured path"
        );
        assert!(!missing.public.contains('/'), "{}", missing.public);
        assert!(
            missing.detail.starts_with(&missing.public)
                && missing.detail.contains(&path.display().to_string()),
            "{}",
            missing.detail
        );

        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let inert = locate_launcher(Some(&path), None).unwrap_err();
        assert_eq!(
            inert.public,
            "the code-mode launcher openclaw-tool-search-launcher at its configured path is not executable"
        );
        assert!(inert.detail.contains(&path.display().to_string()));
        assert_eq!(find_launcher(Some(&path), None), None);

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(locate_launcher(Some(&path), None), Ok(path.clone()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_operator_detail_lists_where_the_launcher_was_looked_for() {
        let many = [
            PathBuf::from("/a/openclaw-tool-search-launcher"),
            PathBuf::from("/b/openclaw-tool-search-launcher"),
            PathBuf::from("/c/openclaw-tool-search-launcher"),
        ];
        let problem = LauncherProblem::missing(" beside the addon", &many);
        assert_eq!(
            problem.public,
            "the code-mode launcher openclaw-tool-search-launcher is missing beside the addon"
        );
        assert_eq!(
            problem.detail,
            "the code-mode launcher openclaw-tool-search-launcher is missing beside the addon (looked for /a/openclaw-tool-search-launcher and in 2 other places)"
        );
    }
}
