// Code-mode child prelude, run by `node --permission -e` inside the launcher's containment.
// It locks the process down (defence in depth, not the boundary), checks the permission model,
// says `ready` on fd 3, then waits on fd 4 for exactly one `run` frame.
'use strict';
(() => {
  const fs = require('fs');
  const util = require('util');
  const vm = require('vm');
  const v8 = require('v8');
  const { builtinModules } = require('module');
  const OUT = 3;
  const IN = 4;
  const exit = process.reallyExit.bind(process);

  const writeFrame = (text) => {
    const buf = Buffer.from(text + '\n', 'utf8');
    let off = 0;
    while (off < buf.length) off += fs.writeSync(OUT, buf, off, buf.length - off);
  };
  const send = (obj) => writeFrame(JSON.stringify(obj));

  // The permission model must be on with no grants.
  const perm = process.permission;
  const scopes = ['fs', 'fs.read', 'fs.write', 'child', 'worker', 'wasi', 'addon'];
  if (!perm || typeof perm.has !== 'function' || scopes.some((s) => { try { return perm.has(s); } catch { return false; } })) {
    send({ t: 'log', level: 'error', text: 'permission model not active' });
    exit(70);
  }

  // Remove what a contained child must not reach (the OS layers hold without this).
  const strip = (obj, key) => {
    try { delete obj[key]; } catch {}
    if (key in obj) {
      try { Object.defineProperty(obj, key, { value: undefined, writable: false, configurable: false }); } catch {}
    }
  };
  for (const key of ['kill', '_kill', '_debugProcess', '_debugEnd', 'dlopen', 'binding', '_linkedBinding',
    'execve', 'setuid', 'setgid', 'seteuid', 'setegid', 'setgroups', 'initgroups', 'getBuiltinModule',
    'reallyExit', 'abort', 'chdir', 'setSourceMapsEnabled', '_startProfilerIdleNotifier',
    '_stopProfilerIdleNotifier', 'openStdin', 'loadEnvFile']) {
    strip(process, key);
  }
  strip(v8, 'setFlagsFromString');
  // `node -e` puts require/module/… and every builtin module (`fs`, `child_process`, `v8`, …) on
  // the global object, and its wrapper restores `module` after this script: strip now and again
  // right before the code runs.
  const stripGlobals = () => {
    for (const key of ['require', 'module', 'exports', '__filename', '__dirname']) strip(globalThis, key);
    for (const name of builtinModules) {
      if (!name.includes('/') && !['process', 'console', 'crypto'].includes(name)) strip(globalThis, name);
    }
  };
  stripGlobals();
  // stdout/stderr (fd 1/2, the diagnostics pipe) written synchronously: a flood blocks on the pipe
  // and the parent's byte cap ends it, instead of queueing in memory until the heap dies.
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const [stream, fd] of [[process.stdout, 1], [process.stderr, 2]]) {
    const write = (chunk, encoding, callback) => {
      // libuv makes these pipes non-blocking: wait out EAGAIN so a flood really blocks.
      try {
        const buf = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : Buffer.from(chunk);
        let off = 0;
        while (off < buf.length) {
          try { off += fs.writeSync(fd, buf, off, buf.length - off); } catch (e) {
            if (e.code !== 'EAGAIN') throw e;
            Atomics.wait(pause, 0, 0, 1);
          }
        }
      } catch {}
      const cb = typeof encoding === 'function' ? encoding : callback;
      if (typeof cb === 'function') process.nextTick(cb);
      return true;
    };
    try { Object.defineProperty(stream, 'write', { value: write, writable: false, configurable: false }); } catch {}
  }

  let done = false;
  let caps = { resultBytes: 262144, logBytes: 65536, logLines: 500, argBytes: 1048576 };
  let nextId = 0;
  const pending = new Map();

  const finish = (frameText) => {
    if (done) return;
    done = true;
    for (const p of pending.values()) p.reject(new Error('run finished'));
    pending.clear();
    writeFrame(frameText);
  };

  const errorInfo = (e) => {
    const str = (v, max) => { try { return String(v).slice(0, max); } catch { return '[unprintable]'; } };
    if (e instanceof Error) {
      return { name: str(e.name, 200), message: str(e.message, 4000), stack: str(e.stack, 4000) };
    }
    return { name: 'Thrown', message: str(util.inspect(e, { depth: 2 }), 4000), stack: '' };
  };

  // JSON for values that JSON.stringify alone mishandles: BigInt → string, cycles → "[Circular]",
  // Errors → {name, message}, Map/Set → arrays; functions and symbols are dropped as usual.
  const toJson = (value) => {
    const ancestors = [];
    const json = JSON.stringify(value, function (key, v) {
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'object' && v !== null) {
        while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
        if (ancestors.includes(v)) return '[Circular]';
        ancestors.push(v);
        if (v instanceof Error) return { name: String(v.name), message: String(v.message) };
        if (v instanceof Map) return Array.from(v.entries());
        if (v instanceof Set) return Array.from(v.values());
      }
      return v;
    });
    return json === undefined ? 'null' : json;
  };

  let logBytes = 0;
  let logLines = 0;
  let logsDropped = false;
  const log = (level) => (...args) => {
    if (done) return;
    let text;
    try { text = util.format(...args); } catch { text = '[unformattable]'; }
    if (logLines >= caps.logLines || logBytes >= caps.logBytes) {
      if (!logsDropped) { logsDropped = true; send({ t: 'overflow', what: 'logs', bytes: 0 }); }
      return;
    }
    text = text.slice(0, caps.logBytes - logBytes);
    logLines += 1;
    logBytes += Buffer.byteLength(text);
    send({ t: 'log', level, text });
  };
  const consoleShim = Object.freeze({
    log: log('log'), info: log('log'), debug: log('log'), warn: log('warn'), error: log('error'),
  });
  try {
    Object.defineProperty(globalThis, 'console', { value: consoleShim, writable: false, configurable: false });
  } catch {}

  const bridge = (op, args) => {
    if (done) return Promise.reject(new Error('bridge closed: the run has finished'));
    let text;
    try {
      const id = ++nextId;
      text = JSON.stringify({ t: 'call', id, op, args });
      if (Buffer.byteLength(text) > caps.argBytes) throw new RangeError('bridge request too large');
      const promise = new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
      writeFrame(text);
      return promise;
    } catch (e) {
      return Promise.reject(e);
    }
  };
  const openclaw = Object.freeze({
    tools: Object.freeze({
      search: (query, options) => {
        if (options != null && (typeof options !== 'object' || Array.isArray(options))) {
          return Promise.reject(new TypeError('search options must be an object'));
        }
        return bridge('search', { query: String(query), options: options ?? null });
      },
      describe: (id) => bridge('describe', { id: String(id) }),
      call: (id, args) => bridge('call', { id: String(id), args: args ?? null }),
    }),
  });

  const onReply = (frame) => {
    const p = pending.get(frame.id);
    if (!p) return;
    pending.delete(frame.id);
    if (frame.ok) p.resolve(frame.value);
    else p.reject(Object.assign(new Error(String(frame.error?.message)), { code: frame.error?.code }));
  };

  const run = async (code) => {
    stripGlobals();
    let fn;
    try {
      // compileFunction without importModuleDynamically: `import()` in the code is refused.
      fn = vm.compileFunction('return (async () => {\n' + code + '\n})();', ['openclaw', 'console'], {
        filename: 'tool_search_code.js',
      });
    } catch (e) {
      return finish(JSON.stringify({ t: 'result', ok: false, error: errorInfo(e) }));
    }
    let value;
    try {
      value = await fn(openclaw, consoleShim);
    } catch (e) {
      return finish(JSON.stringify({ t: 'result', ok: false, error: errorInfo(e) }));
    }
    let json;
    try {
      json = toJson(value);
    } catch (e) {
      const info = errorInfo(e);
      info.message = 'the returned value is not serializable: ' + info.message;
      info.stack = info.name + ': ' + info.message;
      return finish(JSON.stringify({ t: 'result', ok: false, error: info }));
    }
    const bytes = Buffer.byteLength(json);
    if (bytes > caps.resultBytes) return finish(JSON.stringify({ t: 'overflow', what: 'result', bytes }));
    finish('{"t":"result","ok":true,"value":' + json + '}');
  };

  process.on('uncaughtException', (e) => finish(JSON.stringify({ t: 'result', ok: false, error: errorInfo(e) })));
  process.on('unhandledRejection', (e) => finish(JSON.stringify({ t: 'result', ok: false, error: errorInfo(e) })));

  let started = false;
  let pendingText = '';
  const input = fs.createReadStream(null, { fd: IN, highWaterMark: 65536, autoClose: false, encoding: 'utf8' });
  input.on('data', (chunk) => {
    pendingText += chunk;
    let nl;
    while ((nl = pendingText.indexOf('\n')) >= 0) {
      const line = pendingText.slice(0, nl);
      pendingText = pendingText.slice(nl + 1);
      let frame;
      try { frame = JSON.parse(line); } catch { continue; }
      if (frame.t === 'reply') onReply(frame);
      else if (frame.t === 'run' && !started) {
        started = true;
        if (frame.caps) caps = frame.caps;
        run(String(frame.code));
      }
    }
  });
  input.on('error', () => exit(71));
  input.on('end', () => exit(0));

  // Warm the paths a cell takes (compile, serialize, frame) so the first cell does not pay for it.
  try {
    vm.compileFunction('return (async () => {\n1\n})();', ['openclaw', 'console'], { filename: 'warmup.js' })();
    toJson({ a: [1, 'x', 2n, { b: null }] });
    JSON.parse(JSON.stringify({ t: 'reply', id: 1, ok: true, value: [{ id: 'x' }] }));
  } catch {}

  send({ t: 'ready', node: process.versions.node, permission: true });
})();
