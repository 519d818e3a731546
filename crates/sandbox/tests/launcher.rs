//! The launcher on its own: it applies its layers to any program it execs. Using /bin/sh, or a
//! small C probe (`fixtures/native_probe.c`), as the "node" shows what a child that escaped node's
//! permission model, or native code running in it, could still do.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tool_search_sandbox::launcher::{LauncherArgs, LauncherReport, Want};
use tool_search_sandbox::SchedPolicy;

fn launcher_args(
    program: &Path,
    program_args: Vec<OsString>,
    workdir: &Path,
    drop_uid: Want,
) -> LauncherArgs {
    LauncherArgs {
        parent_pid: std::process::id() as i32,
        cwd: workdir.to_path_buf(),
        uid: 65534,
        gid: 65534,
        drop_uid,
        netns: Want::Try,
        landlock: Want::Try,
        nofile: 64,
        cpu_secs: 5,
        as_bytes: 0,
        nice: 10,
        sched: SchedPolicy::Batch,
        node: program.to_path_buf(),
        node_args: program_args,
    }
}

/// Runs `command` (the launcher) to completion: its report line, the program's later fd-3 lines,
/// its exit code and the diagnostics pipe (the program's fds 1 and 2).
fn run_launcher(mut command: Command) -> (LauncherReport, Vec<String>, i32, String) {
    let mut child = command
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    let mut lines = out.lines().map(str::to_string);
    let first = lines.next().unwrap_or_default();
    let report: LauncherReport =
        serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}: {out:?} {err:?}"));
    (report, lines.collect(), status.code().unwrap_or(-1), err)
}

fn launch_sh(script: &str, workdir: &std::path::Path) -> (LauncherReport, i32, String) {
    let args = launcher_args(
        Path::new("/bin/sh"),
        vec!["-c".into(), script.into()],
        workdir,
        Want::Try,
    );
    let mut command = Command::new(common::launcher_path());
    command.args(args.to_args());
    let (report, _, code, err) = run_launcher(command);
    (report, code, err)
}

fn workdir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "sandbox-launcher-test-{tag}-{}",
        std::process::id()
    ));
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
        assert!(
            report.landlock.starts_with("unavailable") || report.landlock == "off",
            "{report:?}"
        );
    }
    // Forking is denied by seccomp whatever the host.
    let (_, code, _) = launch_sh("/bin/true; echo forked", &dir);
    assert_ne!(code, 0, "fork must be denied");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn launcher_refuses_bad_arguments() {
    let output = Command::new(common::launcher_path())
        .args(["--bogus=1", "--", "/bin/true"])
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(tool_search_sandbox::launcher::EXIT_CONTAINMENT_FAILED)
    );
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
    let output = Command::new(common::launcher_path())
        .args(args)
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(tool_search_sandbox::launcher::EXIT_CONTAINMENT_FAILED)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("exited before the child started"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The native-probe tests run only where build.rs found root and `cc` (or REQUIRE_CODE_MODE=1);
/// elsewhere they are reported as ignored. Once running, a missing piece fails the test.
fn missing(test: &str, reason: &str) -> ! {
    panic!("{test} cannot run on this host: {reason}");
}

/// Per probe case: (return value, errno, extra value).
type ProbeResults = BTreeMap<String, (i64, i32, Option<i64>)>;

/// `fixtures/native_probe.c` compiled with `cc` into a directory the sandbox uid can read.
struct NativeProbe {
    dir: PathBuf,
    binary: PathBuf,
}

impl NativeProbe {
    fn compile(test: &str) -> Self {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/native_probe.c");
        let dir = std::env::temp_dir().join(format!(
            "sandbox-native-probe-{test}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let binary = dir.join("native_probe");
        let compiled = Command::new("cc")
            .arg("-O1")
            .arg("-o")
            .arg(&binary)
            .arg(&source)
            .output();
        match compiled {
            Ok(output) if output.status.success() => NativeProbe { dir, binary },
            Ok(output) => panic!(
                "the probe does not compile: {}",
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                missing(test, &format!("no C compiler (`cc`: {e})"))
            }
        }
    }

    /// Runs the probe through the launcher (cases: all when empty); returns the report, one
    /// `(ret, errno, value)` per case, and the diagnostics output.
    fn run(
        &self,
        workdir: &Path,
        drop_uid: Want,
        cases: &[&str],
        before_launcher: Option<fn() -> std::io::Result<()>>,
    ) -> (LauncherReport, ProbeResults, String) {
        self.run_with(workdir, drop_uid, cases, before_launcher, |_| {})
    }

    fn run_with(
        &self,
        workdir: &Path,
        drop_uid: Want,
        cases: &[&str],
        before_launcher: Option<fn() -> std::io::Result<()>>,
        adjust: impl FnOnce(&mut LauncherArgs),
    ) -> (LauncherReport, ProbeResults, String) {
        let loader = tool_search_sandbox::launcher::landlock::elf_interpreter(&self.binary)
            .expect("the probe is a dynamic executable");
        let nofile = 64u64;
        let mut probe_args: Vec<OsString> =
            vec![loader.into_os_string(), nofile.to_string().into()];
        probe_args.extend(cases.iter().map(OsString::from));
        let mut args = launcher_args(&self.binary, probe_args, workdir, drop_uid);
        args.nofile = nofile;
        adjust(&mut args);
        let mut command = Command::new(common::launcher_path());
        command.args(args.to_args());
        if let Some(hook) = before_launcher {
            // SAFETY: the hook only makes raw syscalls (no allocation, no locks).
            unsafe { command.pre_exec(hook) };
        }
        let (report, lines, code, diag) = run_launcher(command);
        assert_eq!(code, 0, "the probe failed: {diag}");
        let mut results = BTreeMap::new();
        for line in lines {
            let v: serde_json::Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
            let case = v["case"].as_str().unwrap().to_string();
            results.insert(
                case,
                (
                    v["ret"].as_i64().unwrap(),
                    v["errno"].as_i64().unwrap() as i32,
                    v["value"].as_i64(),
                ),
            );
        }
        (report, results, diag)
    }
}

impl Drop for NativeProbe {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg_attr(
    not(native_probe_host),
    ignore = "needs root and a C compiler (cc); REQUIRE_CODE_MODE=1 makes this a failure"
)]
#[test]
fn native_code_in_the_child_is_denied_exec_ipc_priority_pdeathsig_x32_and_reads() {
    let probe = NativeProbe::compile("native_denials");
    let dir = workdir("native");
    let (report, results, diag) = probe.run(&dir, Want::Try, &[], None);
    eprintln!("launcher report: {report:?}");
    eprintln!("probe results: {results:?}");
    assert!(
        !diag.contains("ESCAPED"),
        "an exec attack ran another program: {diag}"
    );
    assert!(
        results.contains_key("done"),
        "the probe did not finish (an exec replaced it?): {results:?} {diag}"
    );
    assert!(
        report.seccomp
            && report.exec_only_node
            && report.x32_denied
            && report.ipc_denied
            && report.priority_scoped
            && report.pdeathsig_locked
            && report.ambient_caps_cleared,
        "{report:?}"
    );
    // SAFETY: getter.
    if unsafe { libc::geteuid() } == 0 {
        assert_eq!(report.uid_drop, "applied");
        assert_eq!(
            report.ipcns, "applied",
            "root can always unshare the IPC namespace"
        );
    }

    // Controls: the probe ran, and what node itself does still works.
    assert!(results["getpid"].0 > 0, "{results:?}");
    for control in [
        "setpriority_self",
        "setpriority_own_group",
        "prctl_set_name",
    ] {
        assert_eq!(
            results[control].0, 0,
            "{control} must stay allowed: {:?}",
            results[control]
        );
    }

    for attack in [
        "shmget",
        "msgget",
        "semget",
        "mq_open",
        "setpriority_user",
        "setpriority_pid1",
        "ioprio_user",
        "pdeathsig_clear",
        "x32_getpid",
        "x32_shmget",
        "x32_kill_pid1",
        "exec_loader",
        "exec_sh",
        "execveat_other_fd",
        "execveat_abs_loader",
        "execveat_abs_sh",
        "x32_execve",
    ] {
        // EPERM is the seccomp verdict (the kernel's own answers would be EACCES, ENOSYS, 0, …).
        assert_eq!(
            results[attack],
            (-1, libc::EPERM, results[attack].2),
            "{attack} must be denied by seccomp"
        );
    }
    assert_eq!(
        results["pdeathsig_after"].2,
        Some(libc::SIGKILL as i64),
        "the parent-death signal was changed"
    );
    for set in [
        "cap_effective",
        "cap_permitted",
        "cap_inheritable",
        "cap_ambient",
    ] {
        assert_eq!(results[set].2, Some(0), "{set} must be empty");
    }

    if report.landlock.starts_with("applied") {
        assert!(
            report.landlock_reads.starts_with("limited to"),
            "{report:?}"
        );
        assert_eq!(
            results["read_ld_so_cache"].0, 1,
            "the loader cache must stay readable"
        );
        for read in [
            "read_passwd",
            "read_hostname",
            "read_pid1_status",
            "list_root_dir",
        ] {
            assert_eq!(
                results[read],
                (-1, libc::EACCES, None),
                "{read} must be denied by Landlock"
            );
        }
    } else {
        eprintln!(
            "read rules not checked: Landlock on this host: {}",
            report.landlock
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Raises CAP_NET_BIND_SERVICE in the inheritable and ambient sets, as a gateway started with
/// `AmbientCapabilities=CAP_NET_BIND_SERVICE` would hold it.
fn raise_ambient_net_bind_service() -> std::io::Result<()> {
    const CAP_NET_BIND_SERVICE: u32 = 10;
    let mut header = [0x2008_0522u32, 0]; // _LINUX_CAPABILITY_VERSION_3, pid 0
    let mut data = [[0u32; 3]; 2]; // effective, permitted, inheritable
                                   // SAFETY: version-3 header and two data structs.
    unsafe {
        if libc::syscall(libc::SYS_capget, header.as_mut_ptr(), data.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        data[0][2] |= 1 << CAP_NET_BIND_SERVICE;
        if libc::syscall(libc::SYS_capset, header.as_mut_ptr(), data.as_ptr()) != 0
            || libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_RAISE as libc::c_ulong,
                CAP_NET_BIND_SERVICE as libc::c_ulong,
                0,
                0,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg_attr(
    not(native_probe_host),
    ignore = "needs root and a C compiler (cc); REQUIRE_CODE_MODE=1 makes this a failure"
)]
#[test]
fn ambient_and_inheritable_capabilities_do_not_reach_the_child() {
    // SAFETY: getter.
    if unsafe { libc::geteuid() } != 0 {
        missing(
            "ambient_caps",
            "raising an ambient capability for the launcher needs root",
        );
    }
    let probe = NativeProbe::compile("ambient_caps");
    let dir = workdir("ambient");
    // Without the uid drop root's inheritable and ambient sets would survive the execve even with
    // an empty bounding set.
    let cases = [
        "getpid",
        "cap_effective",
        "cap_permitted",
        "cap_inheritable",
        "cap_ambient",
        "done",
    ];
    let (report, results, diag) = probe.run(
        &dir,
        Want::Off,
        &cases,
        Some(raise_ambient_net_bind_service),
    );
    assert_eq!(
        (report.uid, report.uid_drop.as_str()),
        (0, "off"),
        "{report:?}"
    );
    assert!(
        report.ambient_caps_cleared && report.caps_dropped,
        "{report:?}"
    );
    assert!(results.contains_key("done"), "{results:?} {diag}");
    for set in [
        "cap_effective",
        "cap_permitted",
        "cap_inheritable",
        "cap_ambient",
    ] {
        assert_eq!(results[set].2, Some(0), "{set} must be empty: {results:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg_attr(
    not(native_probe_host),
    ignore = "needs root and a C compiler (cc); REQUIRE_CODE_MODE=1 makes this a failure"
)]
#[test]
fn native_code_in_the_child_cannot_raise_its_cpu_priority_back() {
    let probe = NativeProbe::compile("cpu_priority");
    let dir = workdir("cpu_priority");
    let cases = [
        "nice_initial",
        "policy_initial",
        "raise_nice",
        "raise_nice_group",
        "raise_rlimit_nice",
        "sched_other",
        "sched_setparam",
        "sched_setattr_other",
        "autogroup_raise",
        "nice_after",
        "policy_after",
        "done",
    ];
    for (nice, sched, policy_number) in [
        (10, SchedPolicy::Batch, libc::SCHED_BATCH),
        (15, SchedPolicy::Idle, libc::SCHED_IDLE),
    ] {
        let (report, results, diag) = probe.run_with(&dir, Want::Try, &cases, None, |args| {
            args.nice = nice;
            args.sched = sched;
        });
        eprintln!("launcher report: {report:?}");
        eprintln!("probe results: {results:?}");
        assert!(results.contains_key("done"), "{results:?} {diag}");
        // The launcher's record says what it applied, and the child sees exactly that.
        assert_eq!(
            (report.nice, report.sched_policy.as_str()),
            (nice, sched.as_str()),
            "{report:?}"
        );
        assert!(report.priority_locked, "{report:?}");
        assert_eq!(results["nice_initial"], (0, 0, Some(i64::from(nice))));
        assert_eq!(
            results["policy_initial"],
            (0, 0, Some(i64::from(policy_number)))
        );
        let autogroups = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
            .map(|t| t.trim() == "1")
            .unwrap_or(false);
        if autogroups {
            assert_eq!(report.autogroup, format!("nice {nice}"), "{report:?}");
        } else {
            assert_eq!(report.autogroup, "off", "{report:?}");
        }
        // The kernel refuses a lower nice value (RLIMIT_NICE 0, no CAP_SYS_NICE) and a higher
        // RLIMIT_NICE (no CAP_SYS_RESOURCE); seccomp refuses any policy change.
        assert_eq!(
            results["raise_nice"],
            (-1, libc::EACCES, None),
            "setpriority(self, 0) must fail"
        );
        assert_eq!(
            results["raise_nice_group"],
            (-1, libc::EACCES, None),
            "setpriority(own group, 0) must fail"
        );
        assert_eq!(
            results["raise_rlimit_nice"],
            (-1, libc::EPERM, None),
            "RLIMIT_NICE must stay 0"
        );
        for attack in ["sched_other", "sched_setparam", "sched_setattr_other"] {
            assert_eq!(
                results[attack],
                (-1, libc::EPERM, None),
                "{attack} must be denied by seccomp"
            );
        }
        if report.landlock.starts_with("applied") {
            assert_eq!(
                results["autogroup_raise"],
                (-1, libc::EACCES, None),
                "Landlock denies writing /proc/self/autogroup"
            );
        } else {
            eprintln!(
                "autogroup write not checked: Landlock on this host: {}",
                report.landlock
            );
        }
        assert_eq!(
            results["nice_after"].2,
            Some(i64::from(nice)),
            "the nice value changed"
        );
        assert_eq!(
            results["policy_after"].2,
            Some(i64::from(policy_number)),
            "the policy changed"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_launcher_refuses_a_nice_value_that_would_raise_the_child() {
    for bad in ["--nice=-5", "--nice=20", "--sched=fifo"] {
        let output = Command::new(common::launcher_path())
            .args(["--parent-pid=5", "--cwd=/tmp", bad, "--", "/bin/true"])
            .env_clear()
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(tool_search_sandbox::launcher::EXIT_CONTAINMENT_FAILED),
            "{bad}"
        );
    }
}
