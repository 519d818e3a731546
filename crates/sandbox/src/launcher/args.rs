//! The launcher's command line: written by the runner, parsed by the launcher.
//!
//! `openclaw-tool-search-launcher --parent-pid=P --cwd=DIR [--uid=U --gid=G] --nofile=N
//!  --cpu-secs=S [--as-bytes=B] --netns=… --landlock=… --drop-uid=require|try|off
//!  --nice=0..19 --sched=other|batch|idle -- /abs/node args...`
//!
//! Only the runner writes these arguments; nothing model-written reaches them (code goes over the
//! bridge).

use std::ffi::OsString;
use std::path::PathBuf;

/// Scheduling policy the launcher gives every child (and its threads) before node starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SchedPolicy {
    /// `SCHED_OTHER`: only the nice value lowers the child.
    Other,
    /// `SCHED_BATCH`: treated as CPU-bound, never preempts the gateway on wake-up.
    #[default]
    Batch,
    /// `SCHED_IDLE`: runs only when nothing else on the CPU wants it (cells may then stall for
    /// as long as the machine is busy).
    Idle,
}

impl SchedPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            SchedPolicy::Other => "other",
            SchedPolicy::Batch => "batch",
            SchedPolicy::Idle => "idle",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "other" => Some(SchedPolicy::Other),
            "batch" => Some(SchedPolicy::Batch),
            "idle" => Some(SchedPolicy::Idle),
            _ => None,
        }
    }
}

/// How hard to insist on an optional containment layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Fail the launch if the layer cannot be applied.
    Require,
    /// Apply when the host allows; report when it does not.
    Try,
    /// Do not apply.
    Off,
}

impl Want {
    fn as_str(self) -> &'static str {
        match self {
            Want::Require => "require",
            Want::Try => "try",
            Want::Off => "off",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "require" => Some(Want::Require),
            "try" => Some(Want::Try),
            "off" => Some(Want::Off),
            _ => None,
        }
    }
}

/// Everything the launcher needs; see the module doc for the wire form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LauncherArgs {
    /// The runner's pid: after `PR_SET_PDEATHSIG` the launcher checks it is still the parent.
    pub parent_pid: i32,
    /// Fresh private working directory (created by the runner).
    pub cwd: PathBuf,
    /// Unprivileged uid/gid to switch to when running as root.
    pub uid: u32,
    pub gid: u32,
    pub drop_uid: Want,
    pub netns: Want,
    /// Landlock: execute only node (+ its ELF interpreter), no file creation/writes, no TCP,
    /// signals scoped to the child.
    pub landlock: Want,
    pub nofile: u64,
    pub cpu_secs: u64,
    /// RLIMIT_AS in bytes (bounds off-heap Buffers); 0 = unlimited.
    pub as_bytes: u64,
    /// Nice value of the child (0..=19), also given to its session's autogroup.
    pub nice: i32,
    /// Scheduling policy of the child.
    pub sched: SchedPolicy,
    /// Absolute path of node, then its arguments.
    pub node: PathBuf,
    pub node_args: Vec<OsString>,
}

impl LauncherArgs {
    /// The argument vector (without argv[0]).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![
            format!("--parent-pid={}", self.parent_pid).into(),
            {
                let mut s = OsString::from("--cwd=");
                s.push(self.cwd.as_os_str());
                s
            },
            format!("--uid={}", self.uid).into(),
            format!("--gid={}", self.gid).into(),
            format!("--drop-uid={}", self.drop_uid.as_str()).into(),
            format!("--netns={}", self.netns.as_str()).into(),
            format!("--landlock={}", self.landlock.as_str()).into(),
            format!("--nofile={}", self.nofile).into(),
            format!("--cpu-secs={}", self.cpu_secs).into(),
            format!("--as-bytes={}", self.as_bytes).into(),
            format!("--nice={}", self.nice).into(),
            format!("--sched={}", self.sched.as_str()).into(),
            "--".into(),
            self.node.clone().into_os_string(),
        ];
        out.extend(self.node_args.iter().cloned());
        out
    }

    /// Parses the argument vector (without argv[0]).
    pub fn parse(args: Vec<OsString>) -> Result<Self, String> {
        let mut parsed = LauncherArgs {
            parent_pid: 0,
            cwd: PathBuf::new(),
            uid: 65534,
            gid: 65534,
            drop_uid: Want::Try,
            netns: Want::Try,
            landlock: Want::Try,
            nofile: 64,
            cpu_secs: 60,
            as_bytes: 0,
            nice: 10,
            sched: SchedPolicy::Batch,
            node: PathBuf::new(),
            node_args: Vec::new(),
        };
        let mut iter = args.into_iter();
        loop {
            let arg = iter.next().ok_or("missing `--` before the node path")?;
            if arg == "--" {
                break;
            }
            let arg = arg.into_string().map_err(|_| "non-UTF-8 launcher option")?;
            let (key, value) = arg
                .strip_prefix("--")
                .and_then(|a| a.split_once('='))
                .ok_or_else(|| format!("bad launcher option {arg:?}"))?;
            let num = || {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("bad number for --{key}"))
            };
            let want = || Want::parse(value).ok_or_else(|| format!("bad value for --{key}"));
            match key {
                "parent-pid" => {
                    parsed.parent_pid = value.parse::<i32>().map_err(|_| "bad --parent-pid")?
                }
                "cwd" => parsed.cwd = PathBuf::from(value),
                "uid" => parsed.uid = u32::try_from(num()?).map_err(|_| "bad --uid")?,
                "gid" => parsed.gid = u32::try_from(num()?).map_err(|_| "bad --gid")?,
                "drop-uid" => parsed.drop_uid = want()?,
                "netns" => parsed.netns = want()?,
                "landlock" => parsed.landlock = want()?,
                "nofile" => parsed.nofile = num()?,
                "cpu-secs" => parsed.cpu_secs = num()?,
                "as-bytes" => parsed.as_bytes = num()?,
                "nice" => {
                    parsed.nice = value
                        .parse::<i32>()
                        .ok()
                        .filter(|n| (0..=19).contains(n))
                        .ok_or("--nice must be 0..=19")?
                }
                "sched" => {
                    parsed.sched = SchedPolicy::parse(value).ok_or("bad value for --sched")?
                }
                _ => return Err(format!("unknown launcher option --{key}")),
            }
        }
        parsed.node = PathBuf::from(iter.next().ok_or("missing node path")?);
        parsed.node_args = iter.collect();
        if parsed.parent_pid <= 1 {
            return Err("missing --parent-pid".into());
        }
        if !parsed.cwd.is_absolute() || !parsed.node.is_absolute() {
            return Err("--cwd and the node path must be absolute".into());
        }
        if parsed.nofile < 32 {
            // Node aborts without a clean error below its minimum.
            return Err("--nofile must be at least 32".into());
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let args = LauncherArgs {
            parent_pid: 42,
            cwd: "/tmp/x".into(),
            uid: 1,
            gid: 2,
            drop_uid: Want::Require,
            netns: Want::Off,
            landlock: Want::Require,
            nofile: 64,
            cpu_secs: 3,
            as_bytes: 4096,
            nice: 7,
            sched: SchedPolicy::Idle,
            node: "/usr/bin/node".into(),
            node_args: vec!["--permission".into(), "-e".into(), "1".into()],
        };
        assert_eq!(LauncherArgs::parse(args.to_args()).unwrap(), args);
    }

    #[test]
    fn rejects_relative_and_unknown() {
        assert!(LauncherArgs::parse(vec![
            "--parent-pid=5".into(),
            "--cwd=rel".into(),
            "--".into(),
            "/n".into()
        ])
        .is_err());
        assert!(LauncherArgs::parse(vec!["--bogus=1".into(), "--".into(), "/n".into()]).is_err());
        assert!(LauncherArgs::parse(vec!["--parent-pid=5".into()]).is_err());
        // A nice value that would raise the child's priority, or an unknown policy.
        for bad in ["--nice=-1", "--nice=20", "--sched=fifo"] {
            let args = vec![
                "--parent-pid=5".into(),
                "--cwd=/tmp".into(),
                bad.into(),
                "--".into(),
                "/n".into(),
            ];
            assert!(LauncherArgs::parse(args).is_err(), "{bad}");
        }
    }
}
