// Code-mode child prelude, run by `node --permission -e` inside the launcher's containment.
// It locks the process down (defence in depth, not the boundary), checks the permission model,
// says `ready` on fd 3, then waits on fd 4 for exactly one `run` frame.
'use strict';
(() => {
  const fs = require('fs');
  const util = require('util');
  const vm = require('vm');
  const v8 = require('v8');
  const { Writable } = require('stream');
  const { builtinModules } = require('module');
  const OUT = 3;
  const IN = 4;
  const exit = process.reallyExit.bind(process);
  // Intrinsics the cell could replace, taken before it runs: every frame is built from these, so
  // patching globals cannot make the prelude write malformed or extra frames.
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const toStr = String;
  const bufferFrom = Buffer.from.bind(Buffer);
  const byteLength = Buffer.byteLength.bind(Buffer);
  const PromiseCtor = Promise;
  const allSettled = Promise.allSettled.bind(Promise);
  const promiseReject = Promise.reject.bind(Promise);
  const arrayFrom = Array.from;
  const setImmediateHere = setImmediate;
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const objectKeys = Object.keys;
  const isArray = Array.isArray;
  const numberIsFinite = Number.isFinite;
  const bufferToString = Buffer.prototype.toString;
  const stringIndexOf = String.prototype.indexOf;
  const stringSlice = String.prototype.slice;
  const mapEntries = Map.prototype.entries;
  const setValues = Set.prototype.values;
  const { isMap, isSet, isNativeError, isBoxedPrimitive, isNumberObject, isStringObject, isBooleanObject, isBigIntObject } = util.types;
  const numberValueOf = Number.prototype.valueOf;
  const stringValueOf = String.prototype.valueOf;
  const booleanValueOf = Boolean.prototype.valueOf;
  const bigintValueOf = BigInt.prototype.valueOf;
  const bigintToString = BigInt.prototype.toString;
  const objectToString = Object.prototype.toString;
  const BaseError = Error;
  const BaseTypeError = TypeError;
  const BaseRangeError = RangeError;

  // Written as a string: no Buffer of ours passes through getters the cell can patch (which could
  // rewrite a frame's bytes). The rest of a partial write (a signal mid-write) goes as bytes.
  const writeFrame = (text) => {
    const line = text + '\n';
    const written = fs.writeSync(OUT, line);
    const total = byteLength(line);
    if (written >= total) return;
    const buf = bufferFrom(line, 'utf8');
    let off = written;
    while (off < total) off += fs.writeSync(OUT, buf, off, total - off);
  };
  const send = (obj) => writeFrame(stringify(obj));

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
      try { defineProperty(obj, key, { value: undefined, writable: false, configurable: false }); } catch {}
    }
  };
  // `stdin` (an fs.ReadStream whose Symbol(kFs) is the whole fs module), the active handle and
  // request lists (the bridge's fd 4 stream), `mainModule` and `report` are routes from `process`
  // to fs or raw fds; stdout/stderr are replaced below before their lazy getters ever run.
  for (const key of ['kill', '_kill', '_debugProcess', '_debugEnd', 'dlopen', 'binding', '_linkedBinding',
    'execve', 'setuid', 'setgid', 'seteuid', 'setegid', 'setgroups', 'initgroups', 'getBuiltinModule',
    'reallyExit', 'abort', 'chdir', 'setSourceMapsEnabled', '_startProfilerIdleNotifier',
    '_stopProfilerIdleNotifier', 'openStdin', 'loadEnvFile', 'stdin', '_getActiveHandles',
    '_getActiveRequests', 'getActiveResourcesInfo', 'mainModule', 'report']) {
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
  // stdout/stderr (fd 1/2, the diagnostics pipe): Node's lazy streams would carry the fd (and fs),
  // so they are replaced, before first use, by fd-less streams that write synchronously: a flood
  // blocks on the pipe and the parent's byte cap ends it, instead of queueing in memory.
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const [name, fd] of [['stdout', 1], ['stderr', 2]]) {
    const writeAll = (chunk, encoding) => {
      // libuv makes these pipes non-blocking: wait out EAGAIN so a flood really blocks.
      try {
        const buf = typeof chunk === 'string' ? bufferFrom(chunk, typeof encoding === 'string' ? encoding : 'utf8') : bufferFrom(chunk);
        let off = 0;
        while (off < buf.length) {
          try { off += fs.writeSync(fd, buf, off, buf.length - off); } catch (e) {
            if (e.code !== 'EAGAIN') throw e;
            Atomics.wait(pause, 0, 0, 1);
          }
        }
      } catch {}
    };
    const stream = new Writable({ write(chunk, encoding, callback) { writeAll(chunk, encoding); callback(); } });
    const write = (chunk, encoding, callback) => {
      writeAll(chunk, encoding);
      const cb = typeof encoding === 'function' ? encoding : callback;
      if (typeof cb === 'function') process.nextTick(cb);
      return true;
    };
    try {
      defineProperty(stream, 'write', { value: write, writable: false, configurable: false });
      defineProperty(process, name, { value: stream, writable: false, configurable: false, enumerable: true });
    } catch {
      strip(process, name);
    }
  }

  let done = false;
  let caps = { resultBytes: 262144, logBytes: 65536, logLines: 500, argBytes: 1048576, jsonDepth: 63 };
  let nextId = 0;
  // id → { resolve, reject, promise } of every bridge request not answered yet.
  const pending = new Map();

  const finish = (frameText) => {
    if (done) return;
    done = true;
    for (const p of pending.values()) p.reject(bridgeError(BaseError, 'run finished', 'run_finished'));
    pending.clear();
    writeFrame(frameText);
  };

  // An Error for cell code with no stack frames of this prelude: its stack is `Name: message`.
  const bridgeError = (Ctor, message, code) => {
    const e = new Ctor(message);
    if (code !== undefined) e.code = code;
    defineProperty(e, 'stack', { value: toStr(e.name) + ': ' + toStr(e.message), writable: true, configurable: true, enumerable: false });
    return e;
  };

  // Reads that cannot throw: `get` runs inside the try (a hostile getter or proxy trap).
  const str = (get, max) => { try { return toStr(get()).slice(0, max); } catch { return '[unprintable]'; } };
  const errorInfo = (e) => {
    let isError = false;
    try { isError = e instanceof BaseError || isNativeError(e); } catch {}
    if (isError) {
      // Only the cell's own frames: the prelude's and Node's internals are not the model's business.
      const stack = str(() => e.stack, 16000).split('\n').filter((line) => !/^\s+at /.test(line) || line.includes('tool_search_code.js'));
      return { __proto__: null, name: str(() => e.name, 200), message: str(() => e.message, 4000), stack: str(() => stack.join('\n'), 4000) };
    }
    return { __proto__: null, name: 'Thrown', message: str(() => util.inspect(e, { depth: 2 }), 4000), stack: '' };
  };
  const errorFrame = (info) => stringify({ __proto__: null, t: 'result', ok: false, error: info });

  // JSON for the returned value, by an explicit walk (JSON.stringify cannot be bounded, and its
  // replacer sees a Map's own keys, not its entries): toJSON is honoured; BigInt → string; a cycle
  // → "[Circular]"; Error → {name, message}; Map → [[key, value], …]; Set → [value, …]; functions,
  // symbols and undefined are dropped (null in arrays) as JSON does. Nesting is bounded by
  // `maxDepth`, output by `maxChars`; a throwing getter, toJSON or proxy trap becomes an error
  // naming the path. Only strings from `stringify` and literals reach the output.
  // JSON string literal; most strings need no escaping, and skipping the call is 3x faster.
  const needsEscape = /["\\\u0000-\u001f\ud800-\udfff]/;
  const quote = (text) => (needsEscape.test(text) ? stringify(text) : '"' + text + '"');
  class TooLarge { constructor(chars) { this.chars = chars; } }
  class NotSerializable { constructor(message) { this.message = message; } }
  const toJson = (root, maxDepth, maxChars) => {
    let out = '';
    let steps = 0;
    const maxSteps = maxChars * 4 + 1000;
    const ancestors = [];
    const trail = [];
    // What the walk is doing where cell code may run (getters, toJSON, proxy traps, iterators):
    // one try/catch around the walk names it and the path when that code throws.
    let doing = '';
    // The path of the value being written, for error messages (bounded: keys are untrusted).
    const here = () => {
      let path = '$';
      for (const key of trail) {
        if (typeof key === 'number') path += '[' + key + ']';
        else if (/^[A-Za-z_$][\w$]{0,40}$/.test(key)) path += '.' + key;
        else path += '[' + stringify(key.length > 40 ? key.slice(0, 40) + '…' : key) + ']';
        if (path.length > 400) return path.slice(0, 400) + '…';
      }
      return path;
    };
    const emit = (text) => {
      out += text;
      if (out.length > maxChars) throw new TooLarge(out.length);
    };
    // Emits `value` (held under `key`); false when JSON would omit it.
    const write = (value, key, depth) => {
      if (++steps > maxSteps) throw new NotSerializable('it has too many elements');
      if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
        doing = 'reading toJSON of';
        const toJSON = value.toJSON;
        if (typeof toJSON === 'function') {
          doing = 'calling toJSON of';
          value = apply(toJSON, value, [key]);
        }
      }
      if (typeof value === 'object' && value !== null && isBoxedPrimitive(value)) {
        if (isNumberObject(value)) value = apply(numberValueOf, value, []);
        else if (isStringObject(value)) value = apply(stringValueOf, value, []);
        else if (isBooleanObject(value)) value = apply(booleanValueOf, value, []);
        else if (isBigIntObject(value)) value = apply(bigintValueOf, value, []);
      }
      switch (typeof value) {
        case 'string': emit(quote(value)); return true;
        // A number primitive converts without running cell code, as JSON writes it.
        case 'number': emit(numberIsFinite(value) ? '' + value : 'null'); return true;
        case 'boolean': emit(value ? 'true' : 'false'); return true;
        case 'bigint': emit(stringify(apply(bigintToString, value, []))); return true;
        case 'undefined': case 'function': case 'symbol': return false;
        default: break;
      }
      if (value === null) { emit('null'); return true; }
      if (ancestors.includes(value)) { emit('"[Circular]"'); return true; }
      if (depth >= maxDepth) throw new NotSerializable('it is nested deeper than ' + maxDepth + ' levels at ' + here());
      ancestors.push(value);
      doing = 'checking the type of';
      if (value instanceof BaseError || isNativeError(value)) {
        doing = 'reading the name of';
        const name = toStr(value.name);
        doing = 'reading the message of';
        const message = toStr(value.message);
        emit('{"name":' + stringify(name) + ',"message":' + stringify(message) + '}');
      } else if (isMap(value) || isSet(value)) {
        const map = isMap(value);
        const iterator = apply(map ? mapEntries : setValues, value, []);
        emit('[');
        for (let i = 0; ; i++) {
          doing = 'iterating';
          const step = iterator.next();
          if (step.done) break;
          if (i > 0) emit(',');
          trail.push(i);
          if (map) {
            const entry = step.value;
            emit('[');
            trail.push(0);
            if (!write(entry[0], '0', depth + 2)) emit('null');
            trail[trail.length - 1] = 1;
            emit(',');
            if (!write(entry[1], '1', depth + 2)) emit('null');
            trail.pop();
            emit(']');
          } else if (!write(step.value, toStr(i), depth + 1)) {
            emit('null');
          }
          trail.pop();
        }
        emit(']');
      } else if (isArray(value)) {
        doing = 'reading the length of';
        const length = value.length;
        emit('[');
        for (let i = 0; i < length; i++) {
          if (i > 0) emit(',');
          trail.push(i);
          doing = 'reading';
          if (!write(value[i], toStr(i), depth + 1)) emit('null');
          trail.pop();
        }
        emit(']');
      } else {
        doing = 'listing the keys of';
        const keys = objectKeys(value);
        emit('{');
        let first = true;
        for (const key of keys) {
          trail.push(key);
          doing = 'reading';
          const item = value[key];
          const mark = out.length;
          if (!first) emit(',');
          emit(quote(key) + ':');
          if (write(item, key, depth + 1)) first = false;
          else out = out.slice(0, mark);
          trail.pop();
        }
        emit('}');
      }
      ancestors.pop();
      return true;
    };
    try {
      return write(root, '', 0) ? out : 'null';
    } catch (e) {
      if (e instanceof TooLarge || e instanceof NotSerializable) throw e;
      const info = errorInfo(e);
      throw new NotSerializable(doing + ' ' + here() + ' threw ' + info.name + ': ' + info.message);
    }
  };

  // The result frame for a returned value, or why there is none.
  const valueFrame = (value) => {
    let json;
    try {
      json = toJson(value, caps.jsonDepth, caps.resultBytes);
    } catch (e) {
      if (e instanceof TooLarge) return stringify({ __proto__: null, t: 'overflow', what: 'result', bytes: e.chars });
      const info = e instanceof NotSerializable
        ? { __proto__: null, name: 'TypeError', message: e.message }
        : errorInfo(e);
      info.message = 'the returned value is not serializable: ' + info.message;
      info.stack = info.name + ': ' + info.message;
      return errorFrame(info);
    }
    const bytes = byteLength(json);
    if (bytes > caps.resultBytes) return stringify({ __proto__: null, t: 'overflow', what: 'result', bytes });
    return '{"t":"result","ok":true,"value":' + json + '}';
  };

  // The cell's outcome is decided once (its return, its throw, or an uncaught error), and sent
  // only after every bridge request it started has settled, including requests started by the
  // continuations of those (a macrotask turn between checks lets every microtask chain run).
  // Once sent, `done` is set and a new request is refused without being sent.
  let outcome = null;
  const conclude = (makeFrame) => {
    if (outcome !== null || done) return;
    outcome = makeFrame;
    (async () => {
      try {
        for (;;) {
          if (pending.size > 0) {
            await allSettled(arrayFrom(pending.values(), (p) => p.promise));
            continue;
          }
          await new PromiseCtor((resolve) => setImmediateHere(resolve));
          if (pending.size === 0) break;
        }
      } catch {}
      let text;
      try { text = outcome(); } catch (e) { text = errorFrame(errorInfo(e)); }
      finish(text);
    })();
  };

  // OpenClaw's child's log format (`logStyle: 'json'`): strings as they are, any other value as
  // JSON (undefined → null; what JSON cannot write → its message or String()), joined by spaces.
  const jsonLogItem = (value) => {
    if (typeof value === 'string') return value;
    let safe;
    if (value === undefined) safe = null;
    else {
      try { safe = parse(stringify(value)); } catch {
        if (value instanceof BaseError) safe = toStr(value.message);
        else if (value === null) safe = null;
        else if (typeof value === 'object') safe = apply(objectToString, value, []);
        else safe = toStr(value);
      }
    }
    if (typeof safe === 'string') return safe;
    const json = stringify(safe);
    return typeof json === 'string' ? json : 'null';
  };
  const jsonLogText = (args) => {
    let text = '';
    for (let i = 0; i < args.length; i++) text += (i > 0 ? ' ' : '') + jsonLogItem(args[i]);
    return text;
  };

  let logBytes = 0;
  let logLines = 0;
  let logsDropped = false;
  const log = (level) => (...args) => {
    if (done) return;
    let text;
    try { text = caps.logStyle === 'json' ? jsonLogText(args) : util.format(...args); } catch { text = '[unformattable]'; }
    if (logLines >= caps.logLines || logBytes >= caps.logBytes) {
      if (!logsDropped) { logsDropped = true; send({ __proto__: null, t: 'overflow', what: 'logs', bytes: 0 }); }
      return;
    }
    text = text.slice(0, caps.logBytes - logBytes);
    logLines += 1;
    logBytes += byteLength(text);
    send({ __proto__: null, t: 'log', level, text });
  };
  const consoleShim = Object.freeze({
    log: log('log'), info: log('log'), debug: log('log'), warn: log('warn'), error: log('error'),
  });
  try {
    defineProperty(globalThis, 'console', { value: consoleShim, writable: false, configurable: false });
  } catch {}

  const ignore = () => {};
  const bridge = (op, args) => {
    if (done) return promiseReject(bridgeError(BaseError, 'bridge closed: the run has finished', 'bridge_closed'));
    let text;
    try {
      text = stringify({ __proto__: null, t: 'call', id: nextId + 1, op, args });
    } catch (e) {
      return promiseReject(bridgeError(BaseTypeError, 'bridge request not serializable: ' + str(() => e.message, 500), 'invalid_args'));
    }
    if (byteLength(text) > caps.argBytes) {
      return promiseReject(bridgeError(BaseRangeError, 'bridge request too large', 'args_too_large'));
    }
    const id = ++nextId;
    let entry;
    const promise = new PromiseCtor((resolve, reject) => { entry = { resolve, reject, promise: null }; });
    entry.promise = promise;
    // A request the cell never awaits must not fail the cell as an unhandled rejection.
    promise.then(ignore, ignore);
    pending.set(id, entry);
    writeFrame(text);
    return promise;
  };
  const openclaw = Object.freeze({
    tools: Object.freeze({
      search: (query, options) => {
        if (options != null && (typeof options !== 'object' || Array.isArray(options))) {
          return promiseReject(bridgeError(BaseTypeError, 'search options must be an object', 'invalid_args'));
        }
        return bridge('search', { __proto__: null, query: toStr(query), options: options ?? null });
      },
      describe: (id) => bridge('describe', { __proto__: null, id: toStr(id) }),
      call: (id, args) => bridge('call', { __proto__: null, id: toStr(id), args: args ?? null }),
    }),
  });

  const onReply = (frame) => {
    const p = pending.get(frame.id);
    if (!p) return;
    pending.delete(frame.id);
    if (frame.ok) p.resolve(frame.value);
    else p.reject(bridgeError(BaseError, str(() => frame.error?.message, 4000), frame.error?.code));
  };

  const run = async (code) => {
    stripGlobals();
    let fn;
    try {
      // compileFunction without importModuleDynamically: `import()` in the code is refused.
      fn = vm.compileFunction('return (async () => {\n' + code + '\n})();', ['openclaw', 'console'], {
        filename: 'tool_search_code.js',
        lineOffset: -1, // the wrapper's first line: the cell's line 1 is reported as line 1
      });
    } catch (e) {
      const info = errorInfo(e);
      return conclude(() => errorFrame(info));
    }
    let value;
    try {
      value = await fn(openclaw, consoleShim);
    } catch (e) {
      const info = errorInfo(e);
      return conclude(() => errorFrame(info));
    }
    // Serialized when sent, so continuations of pending requests may still fill the value in.
    conclude(() => valueFrame(value));
  };

  const onUncaught = (e) => {
    const info = errorInfo(e);
    conclude(() => errorFrame(info));
  };
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);

  // Frames from the parent, read with plain fs.read calls into a private buffer: a stream object
  // would pass through EventEmitter/Readable methods the cell can patch (and hand it `this`, a
  // stream holding the fd and fs). Bytes are kept as latin1 text (one char per byte) and each
  // complete line is decoded as UTF-8, so a character split across reads is never mangled.
  let started = false;
  const readBuf = Buffer.allocUnsafe(65536);
  let pendingBytes = '';
  const onLine = (line) => {
    let frame;
    try { frame = parse(line); } catch { return; }
    if (frame.t === 'reply') onReply(frame);
    else if (frame.t === 'run' && !started) {
      started = true;
      if (frame.caps) caps = { ...caps, ...frame.caps };
      run(toStr(frame.code));
    }
  };
  const onRead = (err, n) => {
    if (err) exit(71);
    if (n === 0) exit(0);
    pendingBytes += apply(bufferToString, readBuf, ['latin1', 0, n]);
    let nl;
    while ((nl = apply(stringIndexOf, pendingBytes, ['\n'])) >= 0) {
      const line = apply(bufferToString, bufferFrom(apply(stringSlice, pendingBytes, [0, nl]), 'latin1'), ['utf8']);
      pendingBytes = apply(stringSlice, pendingBytes, [nl + 1]);
      onLine(line);
    }
    fs.read(IN, readBuf, 0, 65536, null, onRead);
  };
  fs.read(IN, readBuf, 0, 65536, null, onRead);

  // Warm the paths a cell takes (compile, serialize, frame) so the first cell does not pay for it.
  try {
    vm.compileFunction('return (async () => {\n1\n})();', ['openclaw', 'console'], { filename: 'warmup.js' })();
    toJson({ a: [1, 'x', 2n, { b: null }], m: new Map([[1, new Set([2])]]) }, 8, 4096);
    parse(stringify({ t: 'reply', id: 1, ok: true, value: [{ id: 'x' }] }));
  } catch {}

  send({ __proto__: null, t: 'ready', node: process.versions.node, permission: true });
})();
