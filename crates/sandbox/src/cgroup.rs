//! One memory cgroup for all of a runner's children: an aggregate bound on what every cell
//! together can hold (RLIMIT_AS bounds one child's address space, not resident memory across
//! children, and zero-filled Buffers escape the V8 heap cap).
//!
//! Where the host allows it (root, a writable memory controller: cgroup v2 with `memory` in the
//! parent's subtree, or cgroup v1's `memory` hierarchy), the runner creates
//! `openclaw-tool-search-<pid>-<random>` beside itself in its own memory cgroup, sets the limit
//! there, and moves each child into it right after spawning it, before the child receives any
//! code (the launcher has not exec'd node's first user code by then: the code arrives only after
//! the `ready` handshake). Charges made before the move follow the child on v1
//! (`move_charge_at_immigrate`). When the limit is reached the kernel's OOM killer ends a child
//! of the group, never the gateway. The group is removed when the runner shuts down.
//! Anything else: not applied, and the reason is reported.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use serde::Serialize;

use crate::admission::{own_groups, CgroupVersion};

/// What the runner could set up, for the capability report.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryCgroupReport {
    pub applied: bool,
    /// `v1` or `v2` when applied.
    pub version: Option<String>,
    pub path: Option<PathBuf>,
    pub limit_bytes: u64,
    pub reason: Option<String>,
}

#[derive(Debug)]
pub(crate) struct ChildrenCgroup {
    procs: PathBuf,
    dir: PathBuf,
}

/// Groups made by this process, removed at shutdown.
fn created() -> &'static Mutex<Vec<PathBuf>> {
    static CREATED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    &CREATED
}

impl ChildrenCgroup {
    /// Creates the group with `limit_bytes`; `Err` says why it is not available here.
    pub(crate) fn create(limit_bytes: u64) -> Result<(ChildrenCgroup, MemoryCgroupReport), String> {
        if limit_bytes == 0 {
            return Err("off (children_memory_bytes = 0)".into());
        }
        // SAFETY: getter.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: no writable memory cgroup".into());
        }
        let groups = own_groups("memory")?;
        let name = format!(
            "openclaw-tool-search-{}-{:016x}",
            std::process::id(),
            random_u64()
        );
        let mut reasons = Vec::new();
        // v2 first: one hierarchy, memory.max.
        for group in groups {
            let tried = match group.version {
                CgroupVersion::V2 => try_v2(&group.dir, &name, limit_bytes),
                CgroupVersion::V1 => try_v1(&group.dir, &name, limit_bytes),
            };
            match tried {
                Ok(group) => return Ok(group),
                Err(e) => reasons.push(format!(
                    "{} at {}: {e}",
                    group.version.as_str(),
                    group.dir.display()
                )),
            }
        }
        if reasons.is_empty() {
            reasons.push("no memory controller found".into());
        }
        Err(reasons.join("; "))
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The `cgroup.procs` file a child's pid is written to.
    pub(crate) fn procs(&self) -> &Path {
        &self.procs
    }

    /// Children the kernel has OOM-killed in this group so far (v2 `memory.events`, v1
    /// `memory.oom_control`), if the kernel reports it.
    pub(crate) fn oom_kills(&self) -> Option<u64> {
        ["memory.events", "memory.oom_control"]
            .iter()
            .find_map(|file| {
                let text = std::fs::read_to_string(self.dir.join(file)).ok()?;
                text.lines()
                    .find_map(|line| line.strip_prefix("oom_kill ")?.trim().parse().ok())
            })
    }
}

fn try_v2(
    parent: &Path,
    name: &str,
    limit: u64,
) -> Result<(ChildrenCgroup, MemoryCgroupReport), String> {
    let controllers = std::fs::read_to_string(parent.join("cgroup.subtree_control"))
        .map_err(|e| e.to_string())?;
    if !controllers.split_whitespace().any(|c| c == "memory") {
        return Err("the memory controller is not enabled for child groups".into());
    }
    sweep_stale_groups(parent);
    let dir = parent.join(name);
    std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
    let set = std::fs::write(dir.join("memory.max"), limit.to_string())
        .and_then(|()| std::fs::write(dir.join("memory.swap.max"), "0").or(Ok(())));
    finish(dir, "cgroup.procs", "v2", limit, set)
}

fn try_v1(
    parent: &Path,
    name: &str,
    limit: u64,
) -> Result<(ChildrenCgroup, MemoryCgroupReport), String> {
    if !parent.join("memory.limit_in_bytes").is_file() {
        return Err("no memory.limit_in_bytes".into());
    }
    sweep_stale_groups(parent);
    let dir = parent.join(name);
    std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
    let set = std::fs::write(dir.join("memory.limit_in_bytes"), limit.to_string()).map(|()| {
        // Charges a child made before the move (node's start-up) go with it; optional.
        let _ = std::fs::write(dir.join("memory.move_charge_at_immigrate"), "1");
    });
    finish(dir, "cgroup.procs", "v1", limit, set)
}

fn finish(
    dir: PathBuf,
    procs: &str,
    version: &str,
    limit: u64,
    set: io::Result<()>,
) -> Result<(ChildrenCgroup, MemoryCgroupReport), String> {
    if let Err(e) = set {
        let _ = std::fs::remove_dir(&dir);
        return Err(format!("cannot set the limit: {e}"));
    }
    if let Ok(mut list) = created().lock() {
        list.push(dir.clone());
    }
    let report = MemoryCgroupReport {
        applied: true,
        version: Some(version.into()),
        path: Some(dir.clone()),
        limit_bytes: limit,
        reason: None,
    };
    Ok((
        ChildrenCgroup {
            procs: dir.join(procs),
            dir,
        },
        report,
    ))
}

impl Drop for ChildrenCgroup {
    fn drop(&mut self) {
        if let Ok(mut list) = created().lock() {
            list.retain(|d| d != &self.dir);
        }
        remove_dir_retrying(&self.dir);
    }
}

fn remove_dir_retrying(dir: &Path) {
    // Members may still be exiting after SIGKILL: retry briefly.
    for _ in 0..50 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    }
}

/// Removes every group this process made (their children must be gone: a group with live
/// members cannot be removed, and is left for the kernel to keep until they exit).
pub fn remove_all() {
    let dirs = created()
        .lock()
        .map(|mut list| std::mem::take(&mut *list))
        .unwrap_or_default();
    // Children's groups were made after the groups that hold them: innermost first.
    for dir in dirs.iter().rev() {
        if let Some(home) = gateway_home_of(dir) {
            leave_gateway_group(dir, &home);
        }
        remove_dir_retrying(dir);
    }
}

/// Removes the groups a gateway that exited without `shutdown` left in `parent`: ours by name
/// (`openclaw-tool-search-<pid>-…`), of a pid that is not running, innermost first. `rmdir` only
/// removes a group with no processes and no child groups, so a live one is never touched.
pub(crate) fn sweep_stale_groups(parent: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten().take(10_000) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("openclaw-tool-search-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // Its groups may hold groups of its own (a gateway started by a gateway inherits the
        // parent's gateway group and makes its own inside it): innermost first.
        if remove_empty_tree(&entry.path(), 8) {
            removed += 1;
        }
    }
    removed
}

/// Removes `dir` and every directory below it, depth first, down to `depth` levels; true if
/// `dir` is gone. A cgroup with members (or a non-empty plain directory) stays.
fn remove_empty_tree(dir: &Path, depth: usize) -> bool {
    if depth > 0 {
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten().take(1000) {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    remove_empty_tree(&entry.path(), depth - 1);
                }
            }
        }
    }
    std::fs::remove_dir(dir).is_ok()
}

fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: valid buffer; a short read leaves zeros, which only makes the name less unique
    // (the pid is in the name too).
    unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    u64::from_ne_bytes(bytes)
}

/// What the runner could set up to keep children below the gateway on the CPU, for the
/// capability report (the launcher's nice value and policy are reported per child).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuCgroupReport {
    pub applied: bool,
    /// `v1` or `v2` when applied.
    pub version: Option<String>,
    pub path: Option<PathBuf>,
    /// The configured weight (v2 `cpu.weight`; a process's group has 100).
    pub weight: u32,
    /// v1: the `cpu.shares` written (weight × 1024 / 100; a group has 1024).
    pub shares: Option<u64>,
    /// The cap as "quota period" in µs (`cpu.max`), `None` = no cap.
    pub max: Option<String>,
    /// v1: the cpu group the gateway process itself joined (inside the one it was started in),
    /// which holds the children's group, so that cells share the gateway's CPU below it.
    pub gateway_path: Option<PathBuf>,
    pub reason: Option<String>,
}

/// The children's cpu group: v1's own directory in the cpu hierarchy, or on v2 the memory
/// group's directory when there is one (one hierarchy), else a directory of its own.
#[derive(Debug)]
pub(crate) struct CpuCgroup {
    procs: PathBuf,
    /// Removed on drop (false when it is the memory group's directory).
    owned: Option<PathBuf>,
    /// v1: the group the gateway process joined, which holds the children's group.
    _gateway: Option<Arc<GatewayGroup>>,
}

/// cgroup v1: a cpu group of the gateway's own, inside the cgroup it was started in, that the
/// gateway process joins and that holds the children's groups. The children then share the
/// gateway's CPU (and sit below it, by their weight) instead of competing, at a low weight,
/// with every other process of the host: on a busy host a group of cells weighted a tenth of
/// one process's would barely run (measured here: 2 cells/s instead of 33 while two other
/// builds ran). Every limit on the cgroup the gateway was started in still applies (the new
/// group is inside it). One per process, shared by its runners; the gateway moves back and the
/// group is removed when the last runner goes (or at `shutdown`).
#[derive(Debug)]
pub(crate) struct GatewayGroup {
    dir: PathBuf,
    home: PathBuf,
}

/// Where the gateway was before it joined each gateway group (for `remove_all`).
fn gateway_homes() -> &'static Mutex<Vec<(PathBuf, PathBuf)>> {
    static HOMES: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());
    &HOMES
}

fn gateway_home_of(dir: &Path) -> Option<PathBuf> {
    gateway_homes()
        .lock()
        .ok()?
        .iter()
        .find(|(g, _)| g == dir)
        .map(|(_, home)| home.clone())
}

/// Moves the gateway back to `home` if it is still in `group` (someone may have moved it since).
fn leave_gateway_group(group: &Path, home: &Path) {
    let current = own_groups("cpu").ok().and_then(|groups| {
        groups
            .into_iter()
            .find(|g| g.version == CgroupVersion::V1)
            .map(|g| g.dir)
    });
    if current.as_deref() == Some(group) {
        if let Err(e) = std::fs::write(home.join("cgroup.procs"), std::process::id().to_string()) {
            tracing::warn!(
                "cannot move the gateway back to its cpu cgroup {}: {e}",
                home.display()
            );
        }
    }
    if let Ok(mut homes) = gateway_homes().lock() {
        homes.retain(|(g, _)| g != group);
    }
}

impl Drop for GatewayGroup {
    fn drop(&mut self) {
        leave_gateway_group(&self.dir, &self.home);
        if let Ok(mut list) = created().lock() {
            list.retain(|d| d != &self.dir);
        }
        remove_dir_retrying(&self.dir);
    }
}

/// The process's gateway group under `home` (the cgroup it was started in), made and joined
/// on first use.
fn gateway_group(home: &Path) -> Result<Arc<GatewayGroup>, String> {
    static SHARED: Mutex<Weak<GatewayGroup>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().map_err(|_| "gateway group lock poisoned")?;
    if let Some(group) = shared.upgrade() {
        return Ok(group);
    }
    sweep_stale_groups(home);
    let dir = home.join(format!(
        "openclaw-tool-search-{}-{:016x}",
        std::process::id(),
        random_u64()
    ));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create the gateway's cpu group: {e}"))?;
    if let Err(e) = std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string()) {
        let _ = std::fs::remove_dir(&dir);
        return Err(format!("cannot move the gateway into its cpu group: {e}"));
    }
    if let Ok(mut list) = created().lock() {
        list.push(dir.clone());
    }
    if let Ok(mut homes) = gateway_homes().lock() {
        homes.push((dir.clone(), home.to_path_buf()));
    }
    let group = Arc::new(GatewayGroup {
        dir,
        home: home.to_path_buf(),
    });
    *shared = Arc::downgrade(&group);
    Ok(group)
}

/// The cgroup the gateway was started in: its current one, minus our own gateway group.
fn home_of(current: &Path) -> PathBuf {
    let ours = format!("openclaw-tool-search-{}-", std::process::id());
    let mut home = current;
    while home
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(&ours))
    {
        match home.parent() {
            Some(parent) => home = parent,
            None => break,
        }
    }
    home.to_path_buf()
}

impl CpuCgroup {
    /// Creates (or, on v2, configures the memory group's directory as) the children's cpu group.
    /// `cores`: the cores available to the gateway, for `max_share`. `memory`: the memory
    /// group's directory and version, if there is one.
    pub(crate) fn create(
        cpu: &crate::config::CpuIsolation,
        cores: f64,
        memory: Option<(&Path, &str)>,
    ) -> Result<(CpuCgroup, CpuCgroupReport), String> {
        // SAFETY: getter.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: no writable cpu cgroup".into());
        }
        let groups = own_groups("cpu")?;
        let quota = cpu.max_share.map(|share| {
            let period: u64 = 100_000;
            let quota = ((share * cores * period as f64).round() as u64).max(1000);
            (quota, period)
        });
        let name = format!(
            "openclaw-tool-search-{}-{:016x}",
            std::process::id(),
            random_u64()
        );
        let mut reasons = Vec::new();
        for group in groups {
            let parent = &group.dir;
            let tried = match group.version {
                CgroupVersion::V2 => {
                    let shared = memory.filter(|(dir, version)| {
                        *version == "v2" && dir.parent() == Some(parent.as_path())
                    });
                    cpu_v2(parent, &name, cpu.weight, quota, shared.map(|(dir, _)| dir))
                }
                CgroupVersion::V1 => cpu_v1(parent, &name, cpu.weight, quota),
            };
            match tried {
                Ok(group) => return Ok(group),
                Err(e) => reasons.push(format!(
                    "{} at {}: {e}",
                    group.version.as_str(),
                    parent.display()
                )),
            }
        }
        if reasons.is_empty() {
            reasons.push("no cpu controller found".into());
        }
        Err(reasons.join("; "))
    }

    /// The `cgroup.procs` file a child's pid is written to.
    pub(crate) fn procs(&self) -> &Path {
        &self.procs
    }
}

fn cpu_v2(
    parent: &Path,
    name: &str,
    weight: u32,
    quota: Option<(u64, u64)>,
    shared: Option<&Path>,
) -> Result<(CpuCgroup, CpuCgroupReport), String> {
    let controllers = std::fs::read_to_string(parent.join("cgroup.subtree_control"))
        .map_err(|e| e.to_string())?;
    if !controllers.split_whitespace().any(|c| c == "cpu") {
        // Not enabled here by us: that would change how the host shares CPU among all the
        // parent's groups (and fails with EBUSY while the parent holds processes).
        return Err("the cpu controller is not enabled for child groups".into());
    }
    let (dir, owned) = match shared {
        Some(dir) => (dir.to_path_buf(), false),
        None => {
            sweep_stale_groups(parent);
            let dir = parent.join(name);
            std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
            (dir, true)
        }
    };
    let max = quota.map(|(q, p)| format!("{q} {p}"));
    let set =
        std::fs::write(dir.join("cpu.weight"), weight.to_string()).and_then(|()| match &max {
            Some(max) => std::fs::write(dir.join("cpu.max"), max),
            None => Ok(()),
        });
    if let Err(e) = set {
        if owned {
            let _ = std::fs::remove_dir(&dir);
        }
        return Err(format!("cannot set the weight: {e}"));
    }
    if owned {
        if let Ok(mut list) = created().lock() {
            list.push(dir.clone());
        }
    }
    let report = CpuCgroupReport {
        applied: true,
        version: Some("v2".into()),
        path: Some(dir.clone()),
        weight,
        shares: None,
        max,
        gateway_path: None,
        reason: None,
    };
    Ok((
        CpuCgroup {
            procs: dir.join("cgroup.procs"),
            owned: owned.then(|| dir.clone()),
            _gateway: None,
        },
        report,
    ))
}

fn cpu_v1(
    current: &Path,
    name: &str,
    weight: u32,
    quota: Option<(u64, u64)>,
) -> Result<(CpuCgroup, CpuCgroupReport), String> {
    if !current.join("cpu.shares").is_file() {
        return Err("no cpu.shares".into());
    }
    let gateway = gateway_group(&home_of(current))?;
    let parent = gateway.dir.clone();
    let dir = parent.join(name);
    std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
    let shares = (u64::from(weight) * 1024 / 100).max(2);
    let set =
        std::fs::write(dir.join("cpu.shares"), shares.to_string()).and_then(|()| match quota {
            Some((q, p)) => std::fs::write(dir.join("cpu.cfs_period_us"), p.to_string())
                .and_then(|()| std::fs::write(dir.join("cpu.cfs_quota_us"), q.to_string())),
            None => Ok(()),
        });
    if let Err(e) = set {
        let _ = std::fs::remove_dir(&dir);
        return Err(format!("cannot set the shares: {e}"));
    }
    if let Ok(mut list) = created().lock() {
        list.push(dir.clone());
    }
    let report = CpuCgroupReport {
        applied: true,
        version: Some("v1".into()),
        path: Some(dir.clone()),
        weight,
        shares: Some(shares),
        max: quota.map(|(q, p)| format!("{q} {p}")),
        gateway_path: Some(parent),
        reason: None,
    };
    Ok((
        CpuCgroup {
            procs: dir.join("cgroup.procs"),
            owned: Some(dir),
            _gateway: Some(gateway),
        },
        report,
    ))
}

impl Drop for CpuCgroup {
    fn drop(&mut self) {
        if let Some(dir) = self.owned.take() {
            if let Ok(mut list) = created().lock() {
                list.retain(|d| d != &dir);
            }
            remove_dir_retrying(&dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stale_sweep_removes_only_empty_groups_of_exited_gateways() {
        // A plain directory tree stands in for a cgroup hierarchy (rmdir semantics aside: a
        // non-empty directory is kept, as a group with members would be).
        let root = std::env::temp_dir().join(format!("cgroup-sweep-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // A pid that is not running: above pid_max.
        let gone = 4_194_305u32;
        let stale = root.join(format!("openclaw-tool-search-{gone}-00aa"));
        std::fs::create_dir_all(
            stale
                .join(format!("openclaw-tool-search-{gone}-00bb"))
                .join("openclaw-tool-search-7-00ff"),
        )
        .unwrap();
        let busy = root.join(format!("openclaw-tool-search-{gone}-00cc"));
        std::fs::create_dir(&busy).unwrap();
        std::fs::write(busy.join("member"), "x").unwrap();
        let ours = root.join(format!("openclaw-tool-search-{}-00dd", std::process::id()));
        std::fs::create_dir(&ours).unwrap();
        let live = root.join("openclaw-tool-search-1-00ee");
        std::fs::create_dir(&live).unwrap();
        let foreign = root.join("other-group");
        std::fs::create_dir(&foreign).unwrap();
        assert_eq!(sweep_stale_groups(&root), 1);
        assert!(!stale.exists());
        for kept in [&busy, &ours, &live, &foreign] {
            assert!(kept.exists(), "{} was removed", kept.display());
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_home_group_skips_our_own_gateway_groups() {
        let pid = std::process::id();
        let home = Path::new("/sys/fs/cgroup/cpu/app");
        assert_eq!(home_of(home), home);
        assert_eq!(
            home_of(&home.join(format!("openclaw-tool-search-{pid}-0011"))),
            home
        );
        let other = home.join("openclaw-tool-search-1-0011");
        assert_eq!(home_of(&other), other);
    }
}
