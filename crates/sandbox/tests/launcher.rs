//! The launcher on its own: it applies its layers to any program it execs. Using /bin/sh as the
//! "node" shows what a child that escaped node's permission model could still do.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

use tool_search_sandbox::launcher::{LauncherArgs, LauncherReport, Want};

fn launch_sh(script: &str, workdir: &std::path::Path) -> (LauncherReport, i32, String) {
    let args = LauncherArgs {
        parent_pid: std::process::id() as i32,
        cwd: workdir.to_path_buf(),
        uid: 65534,
        gid: 65534,
        drop_uid: Want::Try,
        netns: Want::Try,
        landlock: Want::Try,
        nofile: 64,
        cpu_secs: 5,
        as_bytes: 0,
        node: "/bin/sh".into(),
        node_args: vec!["-c".into(), script.into()],
    };
    let mut child = Command::new(common::launcher_path())
        .args(args.to_args())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    let first = out.lines().next().unwrap_or_default();
    let report: LauncherReport = serde_json::from_str(first).unwrap_or_else(|e| panic!("{e}: {out:?} {err:?}"));
    (report, status.code().unwrap_or(-1), err)
}

fn workdir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sandbox-launcher-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    dir
}

#[test]
fn an_escaped_child_cannot_exec_other_programs_or_create_files() {
    let dir = workdir("escape");
    let (report, code, err) = launch_sh("exec /bin/cat /etc/hostname", &dir);
    assert!(report.seccomp && report.setsid && report.close_range);
    eprintln!("landlock on this host: {}", report.landlock);
    if report.landlock.starts_with("applied") {
        assert_eq!(code, 126, "exec of another program must be denied: {err}");
        let target = dir.join("created.txt");
        let (_, code, _) = launch_sh(&format!("echo x > {}", target.display()), &dir);
        assert_ne!(code, 0);
        assert!(!target.exists(), "a file was created");
        let (_, code, _) = launch_sh("kill -0 1", &dir);
        assert_ne!(code, 0, "signals outside the child are denied");
    } else {
        // The host has no Landlock: reported, not assumed (seccomp and the permission model remain).
        assert!(report.landlock.starts_with("unavailable") || report.landlock == "off", "{report:?}");
    }
    // Forking is denied by seccomp whatever the host.
    let (_, code, _) = launch_sh("/bin/true; echo forked", &dir);
    assert_ne!(code, 0, "fork must be denied");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn launcher_refuses_bad_arguments() {
    let output = Command::new(common::launcher_path()).args(["--bogus=1", "--", "/bin/true"]).env_clear().output().unwrap();
    assert_eq!(output.status.code(), Some(tool_search_sandbox::launcher::EXIT_CONTAINMENT_FAILED));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown launcher option"));
    // The runner's pid check: a parent pid that is not ours makes the launcher stop.
    let dir = workdir("args");
    let mut args = LauncherArgs::parse(vec![
        "--parent-pid=2".into(),
        format!("--cwd={}", dir.display()).into(),
        "--".into(),
        "/bin/true".into(),
    ])
    .unwrap()
    .to_args();
    args.insert(0, "--landlock=off".into());
    let output = Command::new(common::launcher_path()).args(args).env_clear().output().unwrap();
    assert_eq!(output.status.code(), Some(tool_search_sandbox::launcher::EXIT_CONTAINMENT_FAILED));
    assert!(String::from_utf8_lossy(&output.stderr).contains("exited before the child started"));
    let _ = std::fs::remove_dir_all(&dir);
}
