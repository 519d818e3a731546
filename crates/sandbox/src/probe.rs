//! Which node the runner may use: version, flag spellings, and whether its permission model has
//! the known bypasses fixed (>= 22.23, >= 24.17, >= 26.3.1; odd and older lines are refused).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::version::{fmt, is_sound, parse_version};

/// What `probe_node` found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSupport {
    pub path: PathBuf,
    /// e.g. "24.22.3"; `None` when node could not be run.
    pub version: Option<String>,
    /// `--permission` or `--experimental-permission`; `None` without a permission model.
    pub permission_flag: Option<String>,
    /// The node accepts these hardening flags.
    pub no_sqlite_flag: bool,
    pub no_ffi_flag: bool,
    pub disable_sigusr1_flag: bool,
    pub no_addons_flag: bool,
    /// Usable for code mode.
    pub sound: bool,
    /// Why not, when `sound` is false.
    pub reason: Option<String>,
}

const PROBE_JS: &str = "const f=process.allowedNodeEnvironmentFlags;\
console.log(JSON.stringify({v:process.versions.node,p:f.has('--permission'),\
e:f.has('--experimental-permission'),s:f.has('--no-experimental-sqlite'),\
x:f.has('--no-experimental-ffi'),u:f.has('--disable-sigusr1'),a:f.has('--no-addons')}))";

/// A node that has not answered `--version`-like probing by then is treated as unusable (a hung
/// or very slow binary must not hang the gateway's code-mode set-up).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// `node -e PROBE_JS` with an empty environment, killed after `timeout`.
fn run_with_timeout(path: &Path, timeout: Duration) -> std::io::Result<Output> {
    let mut child = Command::new(path)
        .args(["-e", PROBE_JS])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdout = child.stdout.take();
    // Read on a thread: a child that fills the pipe must not block the wait.
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(pipe) = stdout.as_mut() {
            let _ = pipe.take(64 * 1024).read_to_end(&mut out);
        }
        out
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            let _ = reader.join();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("node did not answer within {} s", timeout.as_secs()),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = reader.join().unwrap_or_default();
    Ok(Output {
        status,
        stdout,
        stderr: Vec::new(),
    })
}

/// Runs `node -e` once (empty environment) and classifies the binary.
pub fn probe_node(path: &Path) -> NodeSupport {
    let mut support = NodeSupport {
        path: path.to_path_buf(),
        ..Default::default()
    };
    if !path.is_absolute() {
        support.reason = Some("the node path must be absolute".into());
        return support;
    }
    let output = match run_with_timeout(path, PROBE_TIMEOUT) {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            support.reason = Some(format!("node exited with {}", o.status));
            return support;
        }
        Err(e) => {
            support.reason = Some(format!("cannot run node: {e}"));
            return support;
        }
    };
    let parsed: serde_json::Value = match serde_json::from_slice(&output.stdout) {
        Ok(v) => v,
        Err(_) => {
            support.reason = Some("unexpected output from node".into());
            return support;
        }
    };
    let flag = |k: &str| parsed.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
    let version = parsed
        .get("v")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    support.permission_flag = if flag("p") {
        Some("--permission".into())
    } else if flag("e") {
        Some("--experimental-permission".into())
    } else {
        None
    };
    support.no_sqlite_flag = flag("s");
    support.no_ffi_flag = flag("x");
    support.disable_sigusr1_flag = flag("u");
    support.no_addons_flag = flag("a");
    let verdict = match parse_version(&version) {
        Some(v) if support.permission_flag.is_none() => {
            Err(format!("node {} has no permission model", fmt(v)))
        }
        Some(v) => is_sound(v),
        None => Err(format!("unrecognised node version {version:?}")),
    };
    support.version = Some(version);
    match verdict {
        Ok(()) => support.sound = true,
        Err(reason) => support.reason = Some(reason),
    }
    support
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soundness_thresholds() {
        assert!(is_sound((20, 20, 2)).is_err());
        assert!(is_sound((22, 22, 9)).is_err());
        assert!(is_sound((22, 23, 0)).is_ok());
        assert!(is_sound((23, 11, 0)).is_err());
        assert!(is_sound((24, 16, 9)).is_err());
        assert!(is_sound((24, 17, 0)).is_ok());
        assert!(is_sound((25, 9, 0)).is_err());
        assert!(is_sound((26, 3, 0)).is_err());
        assert!(is_sound((26, 3, 1)).is_ok());
        assert!(is_sound((28, 0, 0)).is_ok());
    }

    #[test]
    fn a_hung_binary_is_refused_after_the_timeout() {
        let dir = std::env::temp_dir().join(format!("openclaw-probe-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("hung-node");
        std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let err = run_with_timeout(&script, Duration::from_millis(300)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parses_versions() {
        assert_eq!(parse_version("v24.22.3"), Some((24, 22, 3)));
        assert_eq!(parse_version("26.3.1-pre"), Some((26, 3, 1)));
        assert_eq!(parse_version("garbage"), None);
    }
}
