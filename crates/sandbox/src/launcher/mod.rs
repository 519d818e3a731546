//! The exec'd launcher: a tiny single-threaded process that applies the OS containment layers to
//! itself and then `execve`s node. It exists so the (possibly large) gateway never forks: the runner
//! spawns it through the posix_spawn fast path (no `pre_exec`).
//!
//! Order matters: setsid → fds → node's exec fd (above the coming RLIMIT_NOFILE) → rlimits
//! (RLIMIT_NICE 0 among them) → CPU priority (nice, scheduling policy, the new session's
//! autogroup; before any code of node runs, inherited by every thread) → net and IPC namespaces (need root) → uid drop → capabilities (bounding set when still root;
//! ambient and inheritable always) → chdir → PR_SET_PDEATHSIG (a uid change clears it) + parent
//! check → no_new_privs → landlock → seccomp (last: it forbids setuid, capset and every exec but
//! the one prepared in [`exec::ExecGate`]) → report frame on fd 3 → `execveat` of node with an
//! empty environment.
//!
//! File descriptors on entry: 0 = parent→child bridge pipe, 1 = child→parent bridge pipe,
//! 2 = diagnostics pipe. On exec: 0 = /dev/null, 1 and 2 = diagnostics, 3 = child→parent,
//! 4 = parent→child, nothing else.

pub mod args;
pub mod exec;
pub mod landlock;
pub mod report;
pub mod seccomp;

use std::ffi::{CString, OsString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;

use exec::ExecGate;

pub use args::{LauncherArgs, Want};
pub use report::LauncherReport;

/// Exit status when containment could not be applied (the run reports `runtime_unavailable`).
pub const EXIT_CONTAINMENT_FAILED: i32 = 121;

/// Entry point of `openclaw-tool-search-launcher`.
pub fn main() -> ! {
    let argv: Vec<OsString> = std::env::args_os().skip(1).collect();
    let result = LauncherArgs::parse(argv).and_then(|args| contain_and_exec(&args));
    let message = match result {
        Ok(never) => match never {},
        Err(message) => message,
    };
    let _ = writeln!(
        std::io::stderr(),
        "openclaw-tool-search-launcher: {message}"
    );
    // SAFETY: plain process exit, no destructors needed.
    unsafe { libc::_exit(EXIT_CONTAINMENT_FAILED) }
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

fn contain_and_exec(args: &LauncherArgs) -> Result<std::convert::Infallible, String> {
    let mut report = LauncherReport::default();

    // New session and process group: kill(0, …) and group kills stay inside the child.
    // SAFETY: no arguments; failure is reported.
    if unsafe { libc::setsid() } < 0 {
        return Err(os_err("setsid"));
    }
    report.setsid = true;

    arrange_fds()?;
    report.close_range = true;

    let exec = ExecGate::open(args)?;
    set_rlimits(args)?;
    report.rlimits = true;

    (report.nice, report.sched_policy, report.autogroup) = lower_cpu_priority(args)?;

    report.netns = apply_netns(args.netns)?;
    report.ipcns = apply_ipcns(args.netns);
    report.uid_drop = drop_uid(args)?;
    // SAFETY: getters without arguments.
    (report.uid, report.gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if report.uid == 0 {
        drop_capability_bounding_set()?;
        report.caps_dropped = true;
    } else {
        report.caps_dropped = true; // a non-root uid holds no capabilities after execve
    }
    clear_ambient_and_inheritable_caps()?;
    report.ambient_caps_cleared = true;

    let cwd = CString::new(args.cwd.as_os_str().as_bytes()).map_err(|_| "cwd contains NUL")?;
    // SAFETY: valid C string.
    if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
        return Err(os_err("chdir"));
    }

    // After the uid change (which clears it). Fires when the spawning thread of the runner exits.
    // SAFETY: plain prctl.
    if unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    } != 0
    {
        return Err(os_err("PR_SET_PDEATHSIG"));
    }
    // SAFETY: getter.
    if unsafe { libc::getppid() } != args.parent_pid {
        return Err("the runner exited before the child started".into());
    }
    report.pdeathsig = true;

    // SAFETY: plain prctl; required by landlock_restrict_self and seccomp without privileges.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(os_err("PR_SET_NO_NEW_PRIVS"));
    }
    (report.landlock, report.landlock_reads) = apply_landlock(args)?;

    // SAFETY: getter.
    let self_pid = unsafe { libc::getpid() };
    let filters = seccomp::build_filters(self_pid, exec.allowance())?;
    seccomp::install(&filters)?;
    report.seccomp = true;
    report.no_new_privs = true;
    report.exec_only_node = true;
    report.x32_denied = seccomp::X32_DENIED;
    report.ipc_denied = true;
    report.priority_scoped = true;
    report.pdeathsig_locked = true;
    report.priority_locked = true; // RLIMIT_NICE 0 above, the seccomp rules, no capabilities

    let mut line = serde_json::to_vec(&report).map_err(|e| format!("report: {e}"))?;
    line.push(b'\n');
    write_all_fd(3, &line)?;
    Err(exec.exec())
}

/// Moves the bridge pipes to fds 3/4, points 0 at /dev/null and 1 at the diagnostics pipe, and
/// closes everything else (a leaked gateway fd is readable under `--permission`).
fn arrange_fds() -> Result<(), String> {
    // SAFETY: dup2/open/close_range on small integer fds; errors are checked.
    unsafe {
        if libc::dup2(1, 3) < 0 || libc::dup2(0, 4) < 0 {
            return Err(os_err("dup2 bridge"));
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null < 0 {
            return Err(os_err("open /dev/null"));
        }
        if libc::dup2(null, 0) < 0 || libc::dup2(2, 1) < 0 {
            return Err(os_err("dup2 stdio"));
        }
        if libc::syscall(libc::SYS_close_range, 5u32, u32::MAX, 0u32) != 0 {
            // Old kernels: close one by one up to the current limit.
            let mut limit: libc::rlimit = std::mem::zeroed();
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            let max = limit.rlim_cur.min(1 << 20) as i32;
            for fd in 5..max {
                libc::close(fd);
            }
        }
    }
    Ok(())
}

fn set_rlimits(args: &LauncherArgs) -> Result<(), String> {
    let mut limits = vec![
        (libc::RLIMIT_CORE, 0),
        (libc::RLIMIT_FSIZE, 0),
        (libc::RLIMIT_NOFILE, args.nofile),
        // soft = hard: a soft-only limit could be trapped via SIGXCPU.
        (libc::RLIMIT_CPU, args.cpu_secs.max(1)),
        // No nice value below 20 - 0: the child cannot lower its nice value (raise its
        // priority), nor leave SCHED_IDLE, whatever it was started with.
        (libc::RLIMIT_NICE, 0),
    ];
    if args.as_bytes > 0 {
        limits.push((libc::RLIMIT_AS, args.as_bytes));
    }
    for (resource, value) in limits {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: valid pointer to a local.
        if unsafe { libc::setrlimit(resource, &limit) } != 0 {
            return Err(os_err(&format!("setrlimit({resource})")));
        }
    }
    Ok(())
}

/// Lowers the child below the gateway before node runs: nice value, scheduling policy, and the
/// autogroup `setsid` just created (with autogroups on, the kernel weighs each session as a
/// whole, so an un-niced session of one child would weigh as much as the gateway's). Returns the
/// values read back: `(nice, policy, autogroup)`. Fails if the nice value or policy did not take.
fn lower_cpu_priority(args: &LauncherArgs) -> Result<(i32, String, String), String> {
    use args::SchedPolicy;
    // SAFETY: plain syscalls on the calling process; results are checked.
    unsafe {
        if libc::setpriority(libc::PRIO_PROCESS, 0, args.nice) != 0 {
            return Err(os_err("setpriority"));
        }
        let policy = match args.sched {
            SchedPolicy::Other => libc::SCHED_OTHER,
            SchedPolicy::Batch => libc::SCHED_BATCH,
            SchedPolicy::Idle => libc::SCHED_IDLE,
        };
        let param = libc::sched_param { sched_priority: 0 };
        if libc::sched_setscheduler(0, policy, &param) != 0 {
            return Err(os_err("sched_setscheduler"));
        }
        // 0..=19 requested: -1 (an error) never matches.
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        if nice != args.nice {
            return Err(format!("the nice value did not take: {nice}"));
        }
        let read_back = match libc::sched_getscheduler(0) {
            libc::SCHED_OTHER => SchedPolicy::Other,
            libc::SCHED_BATCH => SchedPolicy::Batch,
            libc::SCHED_IDLE => SchedPolicy::Idle,
            other => return Err(format!("unexpected scheduling policy {other}")),
        };
        if read_back != args.sched {
            return Err(format!(
                "the scheduling policy did not take: {}",
                read_back.as_str()
            ));
        }
        Ok((
            nice,
            read_back.as_str().to_string(),
            lower_autogroup(args.nice),
        ))
    }
}

fn lower_autogroup(nice: i32) -> String {
    match std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled") {
        Ok(on) if on.trim() == "0" => return "off".into(),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return "off".into(),
        Err(e) => return format!("unavailable: {e}"),
    }
    match std::fs::write("/proc/self/autogroup", nice.to_string()) {
        Ok(()) => {}
        Err(e) => return format!("unavailable: {e}"),
    }
    // "/autogroup-123 nice 10"
    match std::fs::read_to_string("/proc/self/autogroup") {
        Ok(text) => match text
            .split_whitespace()
            .last()
            .and_then(|n| n.parse::<i32>().ok())
        {
            Some(n) => format!("nice {n}"),
            None => format!("unavailable: unexpected /proc/self/autogroup {text:?}"),
        },
        Err(e) => format!("unavailable: {e}"),
    }
}

fn apply_netns(want: Want) -> Result<String, String> {
    if want == Want::Off {
        return Ok("off".into());
    }
    // SAFETY: plain syscall.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } == 0 {
        return Ok("applied".into());
    }
    let reason = os_err("unshare(CLONE_NEWNET)");
    if want == Want::Require {
        return Err(reason);
    }
    Ok(format!("unavailable: {reason}"))
}

/// IPC namespace: SysV objects and POSIX message queues of earlier cells are out of sight. A
/// second layer behind seccomp (which denies those syscalls), so it follows `--netns` but is
/// never required.
fn apply_ipcns(want: Want) -> String {
    if want == Want::Off {
        return "off".into();
    }
    // SAFETY: plain syscall.
    if unsafe { libc::unshare(libc::CLONE_NEWIPC) } == 0 {
        return "applied".into();
    }
    format!("unavailable: {}", os_err("unshare(CLONE_NEWIPC)"))
}

/// `(landlock, landlock_reads)` for the report.
fn apply_landlock(args: &LauncherArgs) -> Result<(String, String), String> {
    if args.landlock == Want::Off {
        return Ok(("off".into(), "off".into()));
    }
    match landlock::restrict(&args.node) {
        Ok(applied) => {
            let mut landlock = format!("applied (abi {})", applied.abi);
            if !applied.unavailable.is_empty() {
                landlock.push_str(&format!(
                    "; unavailable: {}",
                    applied.unavailable.join(", ")
                ));
            }
            Ok((landlock, format!("limited to {} paths", applied.read_rules)))
        }
        Err(reason) if args.landlock == Want::Try => Ok((
            format!("unavailable: {reason}"),
            "unavailable: no landlock".into(),
        )),
        Err(reason) => Err(reason),
    }
}

fn drop_uid(args: &LauncherArgs) -> Result<String, String> {
    if args.drop_uid == Want::Off {
        return Ok("off".into());
    }
    // SAFETY: getters and credential syscalls on plain integers; results are checked.
    unsafe {
        if libc::geteuid() != 0 {
            return Ok("not root".into());
        }
        let ok = libc::setgroups(0, std::ptr::null()) == 0
            && libc::setresgid(args.gid, args.gid, args.gid) == 0
            && libc::setresuid(args.uid, args.uid, args.uid) == 0;
        if ok && libc::geteuid() == args.uid && libc::getegid() == args.gid {
            return Ok("applied".into());
        }
    }
    let reason = os_err("setresuid");
    if args.drop_uid == Want::Require {
        return Err(reason);
    }
    Ok(format!("unavailable: {reason}"))
}

/// Still root: empty the bounding set so execve grants node no capabilities.
fn drop_capability_bounding_set() -> Result<(), String> {
    for cap in 0..64 {
        // SAFETY: plain prctl; EINVAL past the last capability ends the loop.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINVAL) && cap > 0 {
                return Ok(());
            }
            return Err(format!("PR_CAPBSET_DROP({cap}): {err}"));
        }
    }
    Ok(())
}

/// Empties the ambient and inheritable capability sets: an ambient capability (e.g. a gateway
/// started with `AmbientCapabilities=`) survives execve into a non-root program, and root keeps
/// its inheritable set across execve whatever the bounding set.
fn clear_ambient_and_inheritable_caps() -> Result<(), String> {
    // SAFETY: plain prctl. EINVAL: a kernel before 4.3 has no ambient set at all.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if rc != 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return Err(os_err("PR_CAP_AMBIENT_CLEAR_ALL"));
    }
    #[repr(C)]
    struct CapHeader {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct CapData {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: version-3 header and two data structs, as the ABI requires.
    if unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            data.as_mut_ptr(),
        )
    } != 0
    {
        return Err(os_err("capget"));
    }
    if data.iter().all(|d| d.inheritable == 0) {
        return Ok(());
    }
    for d in &mut data {
        d.inheritable = 0;
    }
    // SAFETY: as above; lowering the inheritable set needs no privilege.
    if unsafe {
        libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        )
    } != 0
    {
        return Err(os_err("capset (clear inheritable)"));
    }
    Ok(())
}

fn write_all_fd(fd: i32, mut bytes: &[u8]) -> Result<(), String> {
    while !bytes.is_empty() {
        // SAFETY: valid buffer and length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(os_err("write report"));
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}
