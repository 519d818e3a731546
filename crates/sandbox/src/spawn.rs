//! Starting, killing and reaping children.
//!
//! - Spawns happen on one process-wide, never-exiting thread: `PR_SET_PDEATHSIG` fires when the
//!   spawning *thread* exits, so spawning from a tokio blocking-pool thread (which retires when
//!   idle) would kill children early. The command has no `pre_exec`/uid/gid, so std uses the
//!   posix_spawn/vfork fast path even from a large gateway.
//! - Children are killed (SIGKILL to the process group and the pid, while still unreaped so the
//!   pid cannot be reused) and handed to one reaper thread that waits for them and removes their
//!   private working directory.
//! - Every private working directory and every unreaped child is in a process-wide registry, so
//!   [`shutdown`] can kill the children and remove the directories when the gateway exits.

use std::collections::HashSet;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use tokio::net::unix::pipe;
use tokio::sync::oneshot;

use crate::launcher::{LauncherArgs, LauncherReport};

type SpawnJob = (Command, Box<dyn FnOnce(io::Result<Child>) + Send>);

fn spawner() -> &'static Mutex<mpsc::Sender<SpawnJob>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnJob>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnJob>();
        let started = std::thread::Builder::new()
            .name("openclaw-code-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    reply(command.spawn());
                }
            });
        if let Err(e) = started {
            tracing::error!("cannot start the code-mode spawner thread: {e}");
        }
        Mutex::new(tx)
    })
}

fn submit_spawn(
    command: Command,
    reply: Box<dyn FnOnce(io::Result<Child>) + Send>,
) -> io::Result<()> {
    let sender = spawner()
        .lock()
        .map_err(|_| io::Error::other("spawner lock poisoned"))?;
    sender
        .send((command, reply))
        .map_err(|_| io::Error::other("the spawner thread is gone"))
}

/// Spawns `command` on the spawner thread (async). If the caller stops waiting (its future was
/// dropped), the child is killed and reaped and `workdir` removed.
pub async fn spawn_async(command: Command, workdir: PathBuf) -> io::Result<Child> {
    let (tx, rx) = oneshot::channel::<io::Result<Child>>();
    submit_spawn(
        command,
        Box::new(move |r| {
            if let Err(Ok(orphan)) = tx.send(r) {
                kill_and_reap(orphan, Some(workdir), None);
            }
        }),
    )?;
    rx.await
        .map_err(|_| io::Error::other("the spawner thread dropped the request"))?
}

/// Spawns `command` on the spawner thread (blocking; not for use on an async worker).
pub fn spawn_blocking(command: Command) -> io::Result<Child> {
    let (tx, rx) = mpsc::channel();
    submit_spawn(
        command,
        Box::new(move |r| {
            let _ = tx.send(r);
        }),
    )?;
    rx.recv()
        .map_err(|_| io::Error::other("the spawner thread dropped the request"))?
}

/// What the reaper learned about a child.
#[derive(Clone, Debug)]
pub struct Reaped {
    pub exit: Option<String>,
    /// The status itself (what [`crate::fault`] reads), when the child was reaped.
    pub status: Option<ExitStatus>,
    pub workdir_clean: Option<bool>,
}

type ReapJob = (Child, Option<PathBuf>, Option<oneshot::Sender<Reaped>>);

fn reaper() -> &'static Mutex<mpsc::Sender<ReapJob>> {
    static REAPER: OnceLock<Mutex<mpsc::Sender<ReapJob>>> = OnceLock::new();
    REAPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<ReapJob>();
        let started = std::thread::Builder::new()
            .name("openclaw-code-reaper".into())
            .spawn(move || {
                for (mut child, workdir, reply) in rx {
                    let status = child.wait().ok();
                    let workdir_clean = workdir.map(|dir| remove_workdir(&dir));
                    if let Some(reply) = reply {
                        let _ = reply.send(Reaped {
                            exit: status.map(describe_exit),
                            status,
                            workdir_clean,
                        });
                    }
                }
            });
        if let Err(e) = started {
            tracing::error!("cannot start the code-mode reaper thread: {e}");
        }
        Mutex::new(tx)
    })
}

fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("code {code}"),
        (_, Some(signal)) => format!("signal {signal}"),
        _ => "unknown".into(),
    }
}

/// SIGKILL the child's process group and the child itself. Only call while it is unreaped.
fn kill_now(child: &Child) {
    kill_pid(child.id());
}

/// SIGKILL the process group `pid` leads and `pid` itself. Only for an unreaped child of ours.
fn kill_pid(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else { return };
    if pid <= 0 {
        return;
    }
    // SAFETY: signals to a pid we own and have not reaped (it cannot have been reused).
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Kills and hands the child to the reaper; `reply` gets the exit status once reaped.
pub fn kill_and_reap(
    child: Child,
    workdir: Option<PathBuf>,
    reply: Option<oneshot::Sender<Reaped>>,
) {
    kill_now(&child);
    hand_to_reaper(child, workdir, reply);
}

/// Hands an already-killed or already-exited child to the reaper.
fn hand_to_reaper(child: Child, workdir: Option<PathBuf>, reply: Option<oneshot::Sender<Reaped>>) {
    // From here on the child may be reaped at any time: [`shutdown`] must no longer signal it.
    registry().children.remove(&child.id());
    let job = (child, workdir, reply);
    let sent = match reaper().lock() {
        Ok(sender) => sender.send(job).map_err(|e| e.0),
        Err(_) => Err(job),
    };
    if let Err((mut child, workdir, _)) = sent {
        // No reaper: wait here (the child is SIGKILLed, so this is short).
        let _ = child.wait();
        if let Some(dir) = workdir {
            remove_workdir(&dir);
        }
    }
}

/// Where the private working directories go by default: `/dev/shm` when it is a writable
/// tmpfs, else the system temp dir. The directories stay empty (the child cannot create files),
/// so a tmpfs costs no memory, and creating and removing one there never touches a disk: on a
/// disk mounted with `discard` (this kind of machine's root file system), each removal issued a
/// synchronous discard (~4 ms, up to 1.4 s under load, measured), which queued every other
/// read of the disk behind the reaper, page faults of the gateway's own code included.
pub fn default_work_root() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if is_writable_tmpfs(shm) {
        return shm.to_path_buf();
    }
    std::env::temp_dir()
}

fn is_writable_tmpfs(dir: &Path) -> bool {
    const TMPFS_MAGIC: libc::c_long = 0x0102_1994;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: valid C string and out-pointer.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(path.as_ptr(), &mut stat) } != 0
        || stat.f_type as libc::c_long != TMPFS_MAGIC
    {
        return false;
    }
    // SAFETY: valid C string.
    unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

/// Prefix of every private working directory (the stale sweep only looks at these).
const WORKDIR_PREFIX: &str = "openclaw-code-";

/// An empty working directory older than this, with no process inside, is stale. Live ones are
/// younger (a pooled child is replaced after `pool_max_idle`) or are some process's cwd.
const STALE_AGE: Duration = Duration::from_secs(3600);

/// What this process owns: private working directories not yet removed, and children not yet
/// handed to the reaper (so their pids cannot have been reused).
#[derive(Default)]
struct Registry {
    workdirs: HashSet<PathBuf>,
    children: HashSet<u32>,
    shut_down: bool,
}

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What [`shutdown`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Children (pooled, idle or running) that were sent SIGKILL.
    pub children_killed: usize,
    /// Private working directories removed.
    pub workdirs_removed: usize,
}

/// Gateway exit: SIGKILLs every code-mode child of this process (pooled, idle or running) and
/// removes every private working directory, synchronously (no runtime needed; a few syscalls per
/// child). Afterwards no new child can start in this process: runs fail as `runtime_unavailable`.
/// Process-wide, so call it once, when the process is about to exit (the main environment's
/// cleanup hook), not when one of several environments (e.g. a worker thread) goes away.
pub fn shutdown() -> ShutdownReport {
    let (children_killed, workdirs) = {
        let mut registry = registry();
        registry.shut_down = true;
        // Under the lock: these pids are unreaped (removal from the set precedes any wait), so
        // they cannot belong to another process.
        for &pid in &registry.children {
            kill_pid(pid);
        }
        (
            registry.children.len(),
            std::mem::take(&mut registry.workdirs),
        )
    };
    let mut workdirs_removed = 0;
    for dir in workdirs {
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => workdirs_removed += 1,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(
                "cannot remove code-mode working directory {}: {e}",
                dir.display()
            ),
        }
    }
    ShutdownReport {
        children_killed,
        workdirs_removed,
    }
}

/// Whether [`shutdown`] has run in this process (no child starts any more).
pub fn is_shut_down() -> bool {
    registry().shut_down
}

/// A random directory name (128 bits from the kernel): nothing about the gateway, unguessable.
fn random_workdir_name() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: writes at most `len - filled` bytes into our buffer.
        let n = unsafe {
            libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0)
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        filled += n as usize;
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{WORKDIR_PREFIX}{hex}"))
}

/// Creates a fresh, empty, 0700 private working directory (owned by `owner` when given) with a
/// random name, registered until it is removed.
pub fn create_workdir(root: &Path, owner: Option<(u32, u32)>) -> io::Result<PathBuf> {
    for _ in 0..16 {
        let dir = root.join(random_workdir_name()?);
        let mut registry = registry();
        if registry.shut_down {
            return Err(io::Error::other("code mode has shut down in this process"));
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                if let Some((uid, gid)) = owner {
                    if let Err(e) = std::os::unix::fs::chown(&dir, Some(uid), Some(gid)) {
                        let _ = std::fs::remove_dir(&dir);
                        return Err(e);
                    }
                }
                registry.workdirs.insert(dir.clone());
                return Ok(dir);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(
        "cannot create a private working directory",
    ))
}

/// Removes stale private working directories in `root`: ours by prefix, real directories (not
/// symlinks), empty, last modified over an hour ago, not registered here and not the working
/// directory of any process (as far as /proc shows). They are what a killed gateway leaves; a
/// live gateway's directories fail at least one test. Non-empty ones are left for inspection.
pub fn sweep_stale_workdirs(root: &Path) {
    sweep_workdirs_older_than(root, STALE_AGE);
}

fn sweep_workdirs_older_than(root: &Path, age: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let now = SystemTime::now();
    let candidates: Vec<PathBuf> = entries
        .flatten()
        .take(10_000)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(WORKDIR_PREFIX))
        })
        .filter(|entry| {
            // DirEntry::metadata does not follow symlinks.
            entry.metadata().is_ok_and(|m| {
                m.is_dir()
                    && m.modified()
                        .is_ok_and(|t| now.duration_since(t).is_ok_and(|d| d > age))
            })
        })
        .map(|entry| entry.path())
        .collect();
    if candidates.is_empty() {
        return 0;
    }
    let in_use = process_working_dirs();
    let registered = registry().workdirs.clone();
    let mut removed = 0;
    for dir in candidates {
        if registered.contains(&dir) || in_use.contains(&dir) {
            continue;
        }
        // remove_dir only removes an empty directory.
        if std::fs::remove_dir(&dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The working directories of the processes /proc lets us see.
fn process_working_dirs() -> HashSet<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashSet::new();
    };
    entries
        .flatten()
        .take(100_000)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|entry| std::fs::read_link(entry.path().join("cwd")).ok())
        .collect()
}

/// Removes the working directory (never following symlinks); true if it was empty.
fn remove_workdir(dir: &Path) -> bool {
    let clean = std::fs::read_dir(dir)
        .map(|mut entries| entries.next().is_none())
        .unwrap_or(false);
    match std::fs::remove_dir_all(dir) {
        // NotFound: [`shutdown`] got there first.
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => tracing::warn!(
            "cannot remove code-mode working directory {}: {e}",
            dir.display()
        ),
    }
    registry().workdirs.remove(dir);
    clean
}

/// The launcher command: empty environment, piped stdio (0 = to child, 1 = from child, 2 = diag).
pub fn launcher_command(launcher: &Path, args: &LauncherArgs) -> Command {
    let mut command = Command::new(launcher);
    command
        .args(args.to_args())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A started child with its bridge pipes. Dropping it kills and reaps it.
pub struct ChildProc {
    child: Option<Child>,
    pub pid: u32,
    /// Taken by the run's writer task.
    pub to_child: Option<pipe::Sender>,
    pub from_child: crate::protocol::FrameReader<pipe::Receiver>,
    pub diag: pipe::Receiver,
    pub workdir: Option<PathBuf>,
    pub launcher: Option<LauncherReport>,
    pub node_version: Option<String>,
    pub ready_at: Instant,
}

impl ChildProc {
    /// Wraps a freshly spawned child; must run inside a tokio runtime (registers the pipes).
    pub fn new(mut child: Child, workdir: PathBuf, frame_cap: usize) -> io::Result<Self> {
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
            kill_and_reap(child, Some(workdir), None);
            return Err(io::Error::other("child pipes missing"));
        };
        let converted = (|| {
            Ok::<_, io::Error>((
                pipe::Sender::from_owned_fd(OwnedFd::from(stdin))?,
                pipe::Receiver::from_owned_fd(OwnedFd::from(stdout))?,
                pipe::Receiver::from_owned_fd(OwnedFd::from(stderr))?,
            ))
        })();
        let (to_child, from_child, diag) = match converted {
            Ok(p) => p,
            Err(e) => {
                kill_and_reap(child, Some(workdir), None);
                return Err(e);
            }
        };
        {
            let mut registry = registry();
            if registry.shut_down {
                drop(registry);
                kill_and_reap(child, Some(workdir), None);
                return Err(io::Error::other("code mode has shut down in this process"));
            }
            registry.children.insert(child.id());
        }
        Ok(ChildProc {
            pid: child.id(),
            child: Some(child),
            to_child: Some(to_child),
            from_child: crate::protocol::FrameReader::new(from_child, frame_cap),
            diag,
            workdir: Some(workdir),
            launcher: None,
            node_version: None,
            ready_at: Instant::now(),
        })
    }

    /// Still running and usable (non-blocking check; false after [`shutdown`], which killed it).
    /// An exited child is handed to the reaper at once, so its (now reusable) pid is never
    /// signalled.
    pub fn is_alive(&mut self) -> bool {
        // try_wait may reap: under the registry lock, so [`shutdown`] never signals a reaped pid.
        let status = {
            let mut registry = registry();
            if registry.shut_down {
                return false;
            }
            let status = self.child.as_mut().map(|c| c.try_wait());
            if let (Some(Ok(Some(_))), Some(child)) = (&status, &self.child) {
                registry.children.remove(&child.id());
            }
            status
        };
        match status {
            Some(Ok(None)) => true,
            Some(Ok(Some(_))) => {
                if let Some(child) = self.child.take() {
                    hand_to_reaper(child, self.workdir.take(), None);
                }
                false
            }
            _ => false,
        }
    }

    /// SIGKILL now (the group and the pid), without reaping yet.
    pub fn kill(&mut self) {
        if let Some(child) = self.child.as_ref() {
            kill_now(child);
        }
    }

    /// Kills, reaps and removes the working directory; resolves once done.
    pub async fn finish(mut self) -> Reaped {
        let Some(child) = self.child.take() else {
            return Reaped {
                exit: None,
                status: None,
                workdir_clean: None,
            };
        };
        let (tx, rx) = oneshot::channel();
        kill_and_reap(child, self.workdir.take(), Some(tx));
        rx.await.unwrap_or(Reaped {
            exit: None,
            status: None,
            workdir_clean: None,
        })
    }
}

impl Drop for ChildProc {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            kill_and_reap(child, self.workdir.take(), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spawn-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn age(dir: &Path, by: Duration) {
        let then = SystemTime::now() - by;
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(then)
            .unwrap();
    }

    #[test]
    fn workdirs_have_random_private_names_and_are_registered_until_removed() {
        let root = scratch("names");
        let a = create_workdir(&root, None).unwrap();
        let b = create_workdir(&root, None).unwrap();
        for dir in [&a, &b] {
            let name = dir.file_name().unwrap().to_str().unwrap();
            let hex = name.strip_prefix(WORKDIR_PREFIX).expect("our prefix");
            assert_eq!(hex.len(), 32, "{name}");
            assert!(hex.bytes().all(|c| c.is_ascii_hexdigit()), "{name}");
            assert!(
                !name.contains(&std::process::id().to_string()),
                "{name} carries the pid"
            );
            let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700);
            assert!(registry().workdirs.contains(dir.as_path()));
        }
        assert_ne!(a, b);
        assert!(remove_workdir(&a));
        assert!(!a.exists() && !registry().workdirs.contains(&a));
        // Already gone (shutdown got there first): no error, still unregistered.
        std::fs::remove_dir(&b).unwrap();
        assert!(!remove_workdir(&b));
        assert!(!registry().workdirs.contains(&b));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn stale_sweep_removes_only_old_empty_unused_directories_of_ours() {
        let root = scratch("sweep");
        let make = |name: &str, old: bool| {
            let dir = root.join(name);
            std::fs::create_dir(&dir).unwrap();
            if old {
                age(&dir, Duration::from_secs(2 * 3600));
            }
            dir
        };
        let stale = make("openclaw-code-00112233445566778899aabbccddeeff", true);
        let fresh = make("openclaw-code-ffeeddccbbaa99887766554433221100", false);
        let full = make("openclaw-code-0123456789abcdef0123456789abcdef", false);
        std::fs::write(full.join("kept"), "x").unwrap();
        age(&full, Duration::from_secs(2 * 3600));
        let foreign = make("other-dir", true);
        let used = make("openclaw-code-a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0", true);
        let mut inside = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(&used)
            .spawn()
            .unwrap();
        // A live directory of this process (a pooled child's) that is old.
        let live = create_workdir(&root, None).unwrap();
        age(&live, Duration::from_secs(2 * 3600));
        let link = root.join("openclaw-code-link");
        std::os::unix::fs::symlink(&foreign, &link).unwrap();

        let removed = sweep_workdirs_older_than(&root, STALE_AGE);
        let _ = inside.kill();
        let _ = inside.wait();
        assert_eq!(removed, 1);
        assert!(!stale.exists(), "the stale directory was kept");
        for kept in [&fresh, &full, &foreign, &used, &live, &link] {
            assert!(
                kept.symlink_metadata().is_ok(),
                "{} was removed",
                kept.display()
            );
        }
        assert!(remove_workdir(&live));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
