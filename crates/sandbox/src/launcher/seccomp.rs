//! The launcher's seccomp filters (seccompiler 0.5, plus one hand-written program).
//!
//! Stacked filters, because one seccompiler filter has a single "match" action:
//! - `EPERM` for signals/priority changes aimed outside the child's own process (group), every
//!   scheduling-policy change (`sched_setscheduler`/`sched_setparam`/`sched_setattr`),
//!   process-inspection and kernel-surface syscalls, privilege changes, SysV IPC and POSIX message
//!   queues (they outlive the cell), `PR_SET_PDEATHSIG` changes, fork-like `clone` (threads stay
//!   allowed), `execve`, and every `execveat` but the launcher's own exec of node ([`ExecAllowance`]);
//! - `EACCES` for `socket()` (every family: netlink and packet sockets too);
//! - `ENOSYS` for `clone3`, so glibc falls back to `clone` where the flag rule applies
//!   (EPERM there makes Node abort);
//! - (x86_64) `EPERM` for every x32 syscall number (bit `__X32_SYSCALL_BIT`): the rules above are
//!   keyed on x86_64 numbers, which an x32 number never equals. seccompiler's own programs kill
//!   any other architecture (i386 `int 0x80`).
//!
//! Pids are compared as 32-bit values so that `-self` (a process-group target) matches.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The only exec the filters allow: `execveat(fd, pathname, argv, _, AT_EMPTY_PATH)` with these
/// exact values (see `exec.rs` for why the child cannot reproduce them).
#[derive(Clone, Copy, Debug)]
pub struct ExecAllowance {
    pub fd: i32,
    pub pathname: u64,
    pub argv: u64,
}

/// Builds the BPF programs for a child whose pid (and process group) is `self_pid`.
pub fn build_filters(self_pid: i32, exec: ExecAllowance) -> Result<Vec<BpfProgram>, String> {
    let arch = target_arch()?;
    let eperm = errno_filter(eperm_rules(self_pid, exec)?, libc::EPERM, arch)?;
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
    let mut filters = vec![eperm, socket, clone3];
    #[cfg(target_arch = "x86_64")]
    filters.push(deny_x32_program());
    Ok(filters)
}

/// Whether x32 syscall numbers are denied: always on x86_64, and other architectures have no x32.
pub const X32_DENIED: bool = true;

/// `EPERM` for any syscall number with the x32 bit; kill for a non-x86_64 arch (as seccompiler's
/// programs do); allow the rest (the other filters decide).
#[cfg(target_arch = "x86_64")]
fn deny_x32_program() -> BpfProgram {
    use seccompiler::sock_filter;
    // Opcodes from linux/bpf_common.h (BPF_LD = BPF_W = BPF_K = 0).
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const NR_OFFSET: u32 = 0; // seccomp_data.nr
    const ARCH_OFFSET: u32 = 4; // seccomp_data.arch
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    let op = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        op(LD_W_ABS, 0, 0, ARCH_OFFSET),
        op(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        op(RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS),
        op(LD_W_ABS, 0, 0, NR_OFFSET),
        op(JSET_K, 0, 1, X32_SYSCALL_BIT),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
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

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| format!("seccomp condition: {e}"))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| format!("seccomp rule: {e}"))
}

/// "argument `arg` (a pid) is none of `allowed`": the syscall is denied.
fn pid_not_in(arg: u8, allowed: &[i32]) -> Result<Vec<SeccompRule>, String> {
    let conditions = allowed
        .iter()
        .map(|pid| {
            cond(
                arg,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                *pid as u32 as u64,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(vec![rule(conditions)?])
}

/// "argument `arg` (an int) is none of `allowed`": the syscall is denied.
fn int_not_in(arg: u8, allowed: &[i32]) -> Result<SeccompRule, String> {
    let conditions = allowed
        .iter()
        .map(|v| {
            cond(
                arg,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                *v as u32 as u64,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    rule(conditions)
}

fn eperm_rules(
    self_pid: i32,
    exec: ExecAllowance,
) -> Result<BTreeMap<i64, Vec<SeccompRule>>, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // Signals: only to itself, its own group (0) or -self. Denying kill outright breaks abort().
    rules.insert(libc::SYS_kill, pid_not_in(0, &[self_pid, 0, -self_pid])?);
    rules.insert(libc::SYS_tgkill, pid_not_in(0, &[self_pid])?);
    rules.insert(libc::SYS_tkill, pid_not_in(0, &[self_pid])?);
    rules.insert(libc::SYS_rt_sigqueueinfo, pid_not_in(0, &[self_pid])?);
    rules.insert(libc::SYS_rt_tgsigqueueinfo, pid_not_in(0, &[self_pid])?);
    rules.insert(libc::SYS_pidfd_open, pid_not_in(0, &[self_pid])?);
    // Priority of other processes (`os.setPriority(ppid)`): only the child's own process or
    // process group (it is a group leader after setsid), by 0 or its pid; never PRIO_USER /
    // IOPRIO_WHO_USER, which reach every process of the sandbox uid.
    let mut setpriority = pid_not_in(1, &[0, self_pid])?;
    setpriority.push(int_not_in(
        0,
        &[libc::PRIO_PROCESS as i32, libc::PRIO_PGRP as i32],
    )?);
    rules.insert(libc::SYS_setpriority, setpriority);
    const IOPRIO_WHO_PROCESS: i32 = 1;
    const IOPRIO_WHO_PGRP: i32 = 2;
    let mut ioprio = pid_not_in(1, &[0, self_pid])?;
    ioprio.push(int_not_in(0, &[IOPRIO_WHO_PROCESS, IOPRIO_WHO_PGRP])?);
    rules.insert(libc::SYS_ioprio_set, ioprio);
    // The parent-death signal the launcher set must survive: the child may not change it.
    rules.insert(
        libc::SYS_prctl,
        vec![rule(vec![cond(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::PR_SET_PDEATHSIG as u64,
        )?])?],
    );
    // Exec: only the launcher's own execveat of node (any of these differing denies it).
    rules.insert(
        libc::SYS_execveat,
        vec![
            int_not_in(0, &[exec.fd])?,
            rule(vec![cond(
                1,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::Ne,
                exec.pathname,
            )?])?,
            rule(vec![cond(
                2,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::Ne,
                exec.argv,
            )?])?,
            int_not_in(4, &[libc::AT_EMPTY_PATH])?,
        ],
    );
    for sys in [libc::SYS_sched_setaffinity, libc::SYS_prlimit64] {
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
        libc::SYS_execve,
        // SysV IPC and POSIX message queues: objects that outlive the cell and reach the next one.
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmdt,
        libc::SYS_shmctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_semctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgrcv,
        libc::SYS_msgctl,
        libc::SYS_mq_open,
        libc::SYS_mq_unlink,
        libc::SYS_mq_timedsend,
        libc::SYS_mq_timedreceive,
        libc::SYS_mq_notify,
        libc::SYS_mq_getsetattr,
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
        // The launcher set the child's policy (SCHED_BATCH / SCHED_IDLE) below the gateway:
        // node never changes it, and a child may not move itself back (SCHED_BATCH → OTHER needs
        // no privilege). Nice values are held by RLIMIT_NICE 0.
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
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
