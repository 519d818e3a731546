//! The frame the launcher writes on fd 3 just before `execve`: which layers it applied.
//! Written before any untrusted code runs, so the runner trusts it for the capability report;
//! it is still parsed strictly.

use serde::{Deserialize, Serialize};

/// Containment layers applied by the launcher for one child.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LauncherReport {
    pub setsid: bool,
    /// Every fd except 0-4 closed (close_range or a loop).
    pub close_range: bool,
    /// core 0, fsize 0, nofile, cpu (soft = hard), and AS when configured.
    pub rlimits: bool,
    /// "applied", "off" or "unavailable: <reason>".
    pub netns: String,
    /// "applied", "not root", "off" or "unavailable: <reason>".
    pub uid_drop: String,
    /// Effective uid/gid node runs with.
    pub uid: u32,
    pub gid: u32,
    /// No capabilities after execve (unprivileged uid, or an emptied bounding set).
    pub caps_dropped: bool,
    /// "applied (abi N)", "off" or "unavailable: <reason>".
    pub landlock: String,
    pub pdeathsig: bool,
    pub seccomp: bool,
    pub no_new_privs: bool,
    /// IPC namespace (SysV objects and POSIX message queues of other cells out of sight):
    /// "applied", "off" (with `netns` off) or "unavailable: <reason>"; seccomp denies those
    /// syscalls either way.
    pub ipcns: String,
    /// Ambient and inheritable capability sets emptied before execve.
    pub ambient_caps_cleared: bool,
    /// Landlock reads: "limited to N paths" (node, its loader and library directory, loader
    /// cache, time zone, its own /proc directory, /proc/meminfo, /dev/null, /dev/urandom), "off"
    /// or "unavailable: <reason>".
    pub landlock_reads: String,
    /// seccomp: `execve` denied and `execveat` only for the launcher's own exec of node.
    pub exec_only_node: bool,
    /// seccomp: every x32 syscall number denied (x86_64; other architectures have no x32).
    pub x32_denied: bool,
    /// seccomp: SysV shared memory, semaphores, message queues and POSIX message queues denied.
    pub ipc_denied: bool,
    /// seccomp: setpriority/ioprio_set only for the child's own process or process group.
    pub priority_scoped: bool,
    /// seccomp: `prctl(PR_SET_PDEATHSIG)` denied, so the parent-death signal cannot be cleared.
    pub pdeathsig_locked: bool,
    /// The child's nice value, read back after setting it (every thread node starts inherits it).
    pub nice: i32,
    /// The child's scheduling policy, read back: "other", "batch" or "idle".
    pub sched_policy: String,
    /// The autogroup `setsid` gave the child: "nice N" (lowered like the child), "off" (the
    /// kernel does not group by session) or "unavailable: <reason>".
    pub autogroup: String,
    /// The child cannot raise its priority back: RLIMIT_NICE 0 (soft = hard), no capabilities,
    /// and seccomp denies `sched_setscheduler`, `sched_setparam` and `sched_setattr`.
    pub priority_locked: bool,
}
