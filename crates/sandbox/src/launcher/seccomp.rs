//! The launcher's seccomp filters (seccompiler 0.5).
//!
//! Three stacked filters, because one seccompiler filter has a single "match" action:
//! - `EPERM` for signals/priority changes aimed outside the child's own process, process-inspection
//!   and kernel-surface syscalls, privilege changes, and fork-like `clone` (threads stay allowed);
//! - `EACCES` for `socket()` (every family: netlink and packet sockets too);
//! - `ENOSYS` for `clone3`, so glibc falls back to `clone` where the flag rule applies
//!   (EPERM there makes Node abort).
//!
//! Pids are compared as 32-bit values so that `-self` (a process-group target) matches.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Builds the three BPF programs for a child whose pid (and process group) is `self_pid`.
pub fn build_filters(self_pid: i32) -> Result<Vec<BpfProgram>, String> {
    let arch = target_arch()?;
    let eperm = errno_filter(eperm_rules(self_pid)?, libc::EPERM, arch)?;
    let socket = errno_filter(
        BTreeMap::from([(libc::SYS_socket, Vec::new())]),
        libc::EACCES,
        arch,
    )?;
    let clone3 = errno_filter(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
        arch,
    )?;
    Ok(vec![eperm, socket, clone3])
}

/// Installs the filters on the calling thread (sets `no_new_privs` first).
pub fn install(filters: &[BpfProgram]) -> Result<(), String> {
    for program in filters {
        seccompiler::apply_filter(program).map_err(|e| format!("seccomp: {e}"))?;
    }
    Ok(())
}

fn target_arch() -> Result<TargetArch, String> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| format!("seccomp arch: {e:?}"))
}

fn errno_filter(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<BpfProgram, String> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .map_err(|e| format!("seccomp filter: {e}"))?;
    BpfProgram::try_from(filter).map_err(|e| format!("seccomp compile: {e}"))
}

fn cond(arg: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| format!("seccomp condition: {e}"))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| format!("seccomp rule: {e}"))
}

/// "argument `arg` (a pid) is none of `allowed`": the syscall is denied.
fn pid_not_in(arg: u8, allowed: &[i32]) -> Result<Vec<SeccompRule>, String> {
    let conditions = allowed
        .iter()
        .map(|pid| cond(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, *pid as u32 as u64))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(vec![rule(conditions)?])
}

fn eperm_rules(self_pid: i32) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // Signals: only to itself, its own group (0) or -self. Denying kill outright breaks abort().
    rules.insert(libc::SYS_kill, pid_not_in(0, &[self_pid, 0, -self_pid])?);
    rules.insert(libc::SYS_tgkill, pid_not_in(0, &[self_pid])?);
    rules.insert(libc::SYS_tkill, pid_not_in(0, &[self_pid])?);
    rules.insert(libc::SYS_rt_sigqueueinfo, pid_not_in(0, &[self_pid])?);
    rules.insert(libc::SYS_rt_tgsigqueueinfo, pid_not_in(0, &[self_pid])?);
    rules.insert(libc::SYS_pidfd_open, pid_not_in(0, &[self_pid])?);
    // Priority / scheduling of other processes (`os.setPriority(ppid)`): only 0 or self.
    rules.insert(libc::SYS_setpriority, pid_not_in(1, &[0, self_pid])?);
    rules.insert(libc::SYS_ioprio_set, pid_not_in(1, &[0, self_pid])?);
    for sys in [
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setattr,
        libc::SYS_prlimit64,
    ] {
        rules.insert(sys, pid_not_in(0, &[0, self_pid])?);
    }
    // Fork-like clone (no CLONE_THREAD) is denied; threads are fine.
    rules.insert(
        libc::SYS_clone,
        vec![rule(vec![cond(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
            0,
        )?])?],
    );
    for sys in denied_outright() {
        rules.insert(sys, Vec::new());
    }
    Ok(rules)
}

fn denied_outright() -> Vec<i64> {
    #[allow(unused_mut)]
    let mut list = vec![
        libc::SYS_pidfd_send_signal,
        libc::SYS_pidfd_getfd,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_process_madvise,
        libc::SYS_kcmp,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_userfaultfd,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_fanotify_init,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_syslog,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_move_pages,
        libc::SYS_migrate_pages,
        libc::SYS_memfd_secret,
        // Privilege changes (`process.setuid` etc. when the uid could not be dropped).
        libc::SYS_setuid,
        libc::SYS_setgid,
        libc::SYS_setreuid,
        libc::SYS_setregid,
        libc::SYS_setresuid,
        libc::SYS_setresgid,
        libc::SYS_setgroups,
        libc::SYS_setfsuid,
        libc::SYS_setfsgid,
        libc::SYS_capset,
    ];
    #[cfg(target_arch = "x86_64")]
    list.extend([
        libc::SYS_fork,
        libc::SYS_vfork,
        libc::SYS_iopl,
        libc::SYS_ioperm,
        libc::SYS_uselib,
    ]);
    list
}
