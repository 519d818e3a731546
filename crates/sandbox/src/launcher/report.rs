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
}
