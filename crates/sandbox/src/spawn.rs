//! Starting, killing and reaping children.
//!
//! - Spawns happen on one process-wide, never-exiting thread: `PR_SET_PDEATHSIG` fires when the
//!   spawning *thread* exits, so spawning from a tokio blocking-pool thread (which retires when
//!   idle) would kill children early. The command has no `pre_exec`/uid/gid, so std uses the
//!   posix_spawn/vfork fast path even from a large gateway.
//! - Children are killed (SIGKILL to the process group and the pid, while still unreaped so the
//!   pid cannot be reused) and handed to one reaper thread that waits for them and removes their
//!   private working directory.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

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

fn submit_spawn(command: Command, reply: Box<dyn FnOnce(io::Result<Child>) + Send>) -> io::Result<()> {
    let sender = spawner().lock().map_err(|_| io::Error::other("spawner lock poisoned"))?;
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
    rx.await.map_err(|_| io::Error::other("the spawner thread dropped the request"))?
}

/// Spawns `command` on the spawner thread (blocking; not for use on an async worker).
pub fn spawn_blocking(command: Command) -> io::Result<Child> {
    let (tx, rx) = mpsc::channel();
    submit_spawn(command, Box::new(move |r| { let _ = tx.send(r); }))?;
    rx.recv().map_err(|_| io::Error::other("the spawner thread dropped the request"))?
}

/// What the reaper learned about a child.
#[derive(Clone, Debug)]
pub struct Reaped {
    pub exit: Option<String>,
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
                    let exit = child.wait().ok().map(describe_exit);
                    let workdir_clean = workdir.map(|dir| remove_workdir(&dir));
                    if let Some(reply) = reply {
                        let _ = reply.send(Reaped { exit, workdir_clean });
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
    let Ok(pid) = i32::try_from(child.id()) else { return };
    // SAFETY: signals to a pid we own and have not reaped (it cannot have been reused).
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Kills and hands the child to the reaper; `reply` gets the exit status once reaped.
pub fn kill_and_reap(child: Child, workdir: Option<PathBuf>, reply: Option<oneshot::Sender<Reaped>>) {
    kill_now(&child);
    hand_to_reaper(child, workdir, reply);
}

/// Hands an already-killed or already-exited child to the reaper.
fn hand_to_reaper(child: Child, workdir: Option<PathBuf>, reply: Option<oneshot::Sender<Reaped>>) {
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

/// Creates a fresh, empty, 0700 private working directory (owned by `owner` when given).
pub fn create_workdir(root: &Path, owner: Option<(u32, u32)>) -> io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    for _ in 0..16 {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let name = format!(
            "openclaw-code-{}-{}-{:08x}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            nanos
        );
        let dir = root.join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                if let Some((uid, gid)) = owner {
                    std::os::unix::fs::chown(&dir, Some(uid), Some(gid))?;
                }
                return Ok(dir);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("cannot create a private working directory"))
}

/// Removes empty `openclaw-code-<pid>-…` directories left in `root` by processes that are gone
/// (a gateway that exited with children in its pool, or was killed). Non-empty ones are left for
/// inspection; a reused pid only means a stale directory survives until the next sweep.
pub fn sweep_stale_workdirs(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten().take(10_000) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("openclaw-code-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only checks for existence.
        let gone = pid > 0
            && unsafe { libc::kill(pid, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone && entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Removes the working directory (never following symlinks); true if it was empty.
fn remove_workdir(dir: &Path) -> bool {
    let clean = std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()).unwrap_or(false);
    if let Err(e) = std::fs::remove_dir_all(dir) {
        tracing::warn!("cannot remove code-mode working directory {}: {e}", dir.display());
    }
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

    /// Still running (non-blocking check). An exited child is handed to the reaper at once, so
    /// its (now reusable) pid is never signalled.
    pub fn is_alive(&mut self) -> bool {
        match self.child.as_mut().map(|c| c.try_wait()) {
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
            return Reaped { exit: None, workdir_clean: None };
        };
        let (tx, rx) = oneshot::channel();
        kill_and_reap(child, self.workdir.take(), Some(tx));
        rx.await.unwrap_or(Reaped { exit: None, workdir_clean: None })
    }
}

impl Drop for ChildProc {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            kill_and_reap(child, self.workdir.take(), None);
        }
    }
}
