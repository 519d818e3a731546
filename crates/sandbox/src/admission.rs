//! Admission that follows the machine: how many cells run at once by default, from the CPU the
//! gateway process can really use.
//!
//! Cores available = the CPUs in the process's affinity mask (a cpuset restricts it too), lowered
//! to the CPU quota of the gateway's own cgroup and its ancestors where one is set (v2 `cpu.max`,
//! v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), rounded up. Default cells at once =
//! [`CELLS_PER_CORE`] × cores, within [`MIN_CELLS`]..=[`MAX_CELLS`].
//!
//! Why that many: a cell is mostly node's start-up (CPU, ~40-60 ms of one core) and then waiting
//! for bridged calls (the gateway's executor). With the children held below the gateway (see
//! `CpuIsolation`), two cells per core keep every core busy starting children while the others
//! wait on calls; more cells at once do not finish more cells per second on a saturated machine,
//! they only hold more memory (one node process each) and lengthen every cell's own latency.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Cells per core available to the gateway.
pub const CELLS_PER_CORE: usize = 2;
/// Floor: one cell may wait on a slow call while another runs.
pub const MIN_CELLS: usize = 2;
/// Ceiling of the default (a configured value may go up to 1024).
pub const MAX_CELLS: usize = 64;

/// The CPU the gateway process can use, and where the figure comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuBudget {
    /// CPUs in the affinity mask (`sched_getaffinity`).
    pub affinity_cpus: usize,
    /// The tightest CPU quota of the gateway's cgroup and its ancestors, in cores (quota /
    /// period), if any is set.
    pub cgroup_quota_cores: Option<f64>,
    /// Where the quota comes from (e.g. "v2 /sys/fs/cgroup/app/cpu.max").
    pub cgroup_quota_source: Option<String>,
    /// min(affinity, quota), at least 1 (fractional with a quota).
    pub cores: f64,
}

impl CpuBudget {
    /// Whole cores for admission: the quota rounded up, at least 1.
    pub fn whole_cores(&self) -> usize {
        (self.cores.ceil() as usize).max(1)
    }
}

/// Reads the affinity mask and the cgroup quotas (a few small files; cached by the callers).
pub fn cpu_budget() -> CpuBudget {
    let affinity_cpus = affinity_cpus();
    let quota = cgroup_quota();
    let mut cores = affinity_cpus as f64;
    if let Some((q, _)) = &quota {
        cores = cores.min(*q);
    }
    CpuBudget {
        affinity_cpus,
        cgroup_quota_cores: quota.as_ref().map(|(q, _)| *q),
        cgroup_quota_source: quota.map(|(_, s)| s),
        cores: cores.max(1.0),
    }
}

/// Default number of cells at once for `cores` whole cores.
pub fn cells_for(cores: usize) -> usize {
    (cores.max(1) * CELLS_PER_CORE).clamp(MIN_CELLS, MAX_CELLS)
}

/// Default number of cells at once on this machine.
pub fn default_concurrent_cells() -> usize {
    cells_for(cpu_budget().whole_cores())
}

fn affinity_cpus() -> usize {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let n = libc::CPU_COUNT(&set);
            if n > 0 {
                return n as usize;
            }
        }
    }
    std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
}

/// The tightest quota (cores, source) over the gateway's cgroup and its ancestors, v2 then v1.
fn cgroup_quota() -> Option<(f64, String)> {
    let mut found: Vec<(f64, String)> = Vec::new();
    for group in own_groups("cpu").ok()? {
        let read: fn(&Path) -> Option<(f64, String)> = match group.version {
            CgroupVersion::V2 => |dir| {
                let text = std::fs::read_to_string(dir.join("cpu.max")).ok()?;
                let mut parts = text.split_whitespace();
                let (quota, period) = (parts.next()?, parts.next()?);
                let cores = quota.parse::<f64>().ok()? / period.parse::<f64>().ok()?;
                Some((cores, format!("v2 {}", dir.join("cpu.max").display())))
            },
            CgroupVersion::V1 => |dir| {
                let read = |name: &str| -> Option<i64> {
                    std::fs::read_to_string(dir.join(name))
                        .ok()?
                        .trim()
                        .parse::<i64>()
                        .ok()
                };
                let (quota, period) = (read("cpu.cfs_quota_us")?, read("cpu.cfs_period_us")?);
                (quota > 0 && period > 0).then(|| {
                    (
                        quota as f64 / period as f64,
                        format!("v1 {}", dir.join("cpu.cfs_quota_us").display()),
                    )
                })
            },
        };
        walk_up(&group.dir, &group.mount, read, &mut found);
    }
    found
        .into_iter()
        .filter(|(c, _)| c.is_finite() && *c > 0.0)
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

fn walk_up(
    start: &Path,
    stop: &Path,
    read: impl Fn(&Path) -> Option<(f64, String)>,
    found: &mut Vec<(f64, String)>,
) {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if !d.starts_with(stop) {
            break;
        }
        found.extend(read(d));
        if d == stop {
            break;
        }
        dir = d.parent();
    }
}

/// Which cgroup hierarchy a group is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CgroupVersion {
    V2,
    V1,
}

impl CgroupVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            CgroupVersion::V2 => "v2",
            CgroupVersion::V1 => "v1",
        }
    }
}

/// This process's group in one mounted hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OwnGroup {
    pub version: CgroupVersion,
    /// The group's directory.
    pub dir: PathBuf,
    /// Where its hierarchy is mounted (a walk up stops there).
    pub mount: PathBuf,
}

/// This process's groups in the hierarchies that may hold `controller` (`memory`, `cpu`): every
/// cgroup2 mount first (whether the controller is enabled there is the caller's check), then
/// the v1 mounts holding it. The one discovery of the memory and cpu groups, the quota walk
/// and the gateway group's return; a container's mount root is honoured.
pub(crate) fn own_groups(controller: &str) -> Result<Vec<OwnGroup>, String> {
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("/proc/self/cgroup: {e}"))?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
    Ok(own_groups_in(&own, &mounts, controller))
}

fn own_groups_in(own: &str, mounts: &str, controller: &str) -> Vec<OwnGroup> {
    let mut groups = Vec::new();
    if let Some(rel) = own.lines().find_map(|l| l.strip_prefix("0::")) {
        for mount in cgroup_mounts(mounts, |fstype, _| fstype == "cgroup2") {
            groups.push(OwnGroup {
                version: CgroupVersion::V2,
                dir: mount.dir_for(rel),
                mount: mount.point,
            });
        }
    }
    if let Some(rel) = v1_path(own, controller) {
        for mount in cgroup_mounts(mounts, |fstype, options| {
            fstype == "cgroup" && has_token(options, controller)
        }) {
            groups.push(OwnGroup {
                version: CgroupVersion::V1,
                dir: mount.dir_for(&rel),
                mount: mount.point,
            });
        }
    }
    groups
}

/// A cgroup file-system mount: where it is mounted, and which cgroup its root is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CgroupMount {
    pub point: PathBuf,
    /// The cgroup path shown at the mount point (not "/" inside some containers).
    pub root: String,
}

impl CgroupMount {
    /// The directory of the cgroup `path` (as /proc/self/cgroup names it) under this mount.
    pub fn dir_for(&self, path: &str) -> PathBuf {
        let rel = if self.root != "/" {
            path.strip_prefix(self.root.as_str()).unwrap_or(path)
        } else {
            path
        };
        self.point.join(rel.trim_start_matches('/'))
    }
}

/// cgroup mounts in `/proc/self/mountinfo` text whose (fstype, super options) pass `wanted`.
fn cgroup_mounts(mountinfo: &str, wanted: impl Fn(&str, &str) -> bool) -> Vec<CgroupMount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let (fstype, _source, options) =
                (right.next()?, right.next()?, right.next().unwrap_or(""));
            if !wanted(fstype, options) || fields.len() < 5 {
                return None;
            }
            Some(CgroupMount {
                point: PathBuf::from(unescape(fields[4])),
                root: unescape(fields[3]),
            })
        })
        .collect()
}

/// The v1 path of the hierarchy holding `controller` in `/proc/self/cgroup` text.
fn v1_path(own: &str, controller: &str) -> Option<String> {
    own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        has_token(controllers, controller).then(|| path.to_string())
    })
}

fn has_token(list: &str, token: &str) -> bool {
    list.split(',').any(|t| t == token)
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value =
                (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(value);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_the_cores_within_bounds() {
        assert_eq!(cells_for(0), MIN_CELLS);
        assert_eq!(cells_for(1), 2);
        assert_eq!(cells_for(2), 4);
        assert_eq!(cells_for(8), 16);
        assert_eq!(cells_for(1000), MAX_CELLS);
    }

    #[test]
    fn the_budget_is_the_affinity_or_a_tighter_quota() {
        let budget = cpu_budget();
        assert!(budget.affinity_cpus >= 1);
        assert!(
            budget.cores >= 1.0 && budget.cores <= budget.affinity_cpus as f64,
            "{budget:?}"
        );
        match budget.cgroup_quota_cores {
            Some(q) => assert!(
                budget.cores <= q.max(1.0) + 1e-9 && budget.cgroup_quota_source.is_some(),
                "{budget:?}"
            ),
            None => assert_eq!(budget.cores, budget.affinity_cpus as f64, "{budget:?}"),
        }
        // Read independently: the affinity mask as the kernel reports it in /proc.
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap()
            .trim()
            .to_string();
        let count: usize = list
            .split(',')
            .map(|r| match r.split_once('-') {
                Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
                None => 1,
            })
            .sum();
        assert_eq!(budget.affinity_cpus, count, "{list}");
        assert_eq!(default_concurrent_cells(), cells_for(budget.whole_cores()));
    }

    #[test]
    fn mountinfo_lines_give_mount_points_and_roots() {
        let text = "\
30 24 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
31 24 0:27 / /sys/fs/cgroup/cpu rw,relatime shared:5 - cgroup cgroup rw,cpu
32 24 0:28 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
33 24 0:29 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset
34 24 0:30 / /mnt/with\\040space rw - cgroup cgroup rw,memory";
        let v1cpu = cgroup_mounts(text, |t, o| t == "cgroup" && has_token(o, "cpu"));
        assert_eq!(v1cpu.len(), 2, "cpuset must not match cpu: {v1cpu:?}");
        assert_eq!(v1cpu[0].point, PathBuf::from("/sys/fs/cgroup/cpu"));
        assert_eq!(
            v1cpu[1].dir_for("/docker/abc/x"),
            PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/x")
        );
        let v2 = cgroup_mounts(text, |t, _| t == "cgroup2");
        assert_eq!(
            v2[0].dir_for("/a/b"),
            PathBuf::from("/sys/fs/cgroup/unified/a/b")
        );
        let memory = cgroup_mounts(text, |t, o| t == "cgroup" && has_token(o, "memory"));
        assert_eq!(memory[0].point, PathBuf::from("/mnt/with space"));
        assert_eq!(
            v1_path("4:memory:/m\n1:cpu,cpuacct:/c\n0::/u", "cpu").as_deref(),
            Some("/c")
        );
        assert_eq!(v1_path("1:cpuset:/c", "cpu"), None);
    }

    #[test]
    fn own_groups_list_v2_first_then_the_v1_hierarchies_holding_the_controller() {
        let mounts = "\
30 24 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
31 24 0:27 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
32 24 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct";
        let own = "5:memory:/docker/abc/m\n4:cpu,cpuacct:/c\n0::/u";
        let group = |version, dir: &str, mount: &str| OwnGroup {
            version,
            dir: PathBuf::from(dir),
            mount: PathBuf::from(mount),
        };
        assert_eq!(
            own_groups_in(own, mounts, "memory"),
            vec![
                group(
                    CgroupVersion::V2,
                    "/sys/fs/cgroup/unified/u",
                    "/sys/fs/cgroup/unified"
                ),
                group(
                    CgroupVersion::V1,
                    "/sys/fs/cgroup/memory/m",
                    "/sys/fs/cgroup/memory"
                ),
            ]
        );
        assert_eq!(
            own_groups_in(own, mounts, "cpu")[1],
            group(
                CgroupVersion::V1,
                "/sys/fs/cgroup/cpu,cpuacct/c",
                "/sys/fs/cgroup/cpu,cpuacct"
            )
        );
        assert!(own_groups_in("1:cpuset:/c", mounts, "cpu").is_empty());
    }
}
