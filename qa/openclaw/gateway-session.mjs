// A long-lived `openclaw gateway run` for the QA's fleet lanes and soak: started once (and
// restarted on the same state), turns sent through the gateway's own HTTP API
// (`/v1/chat/completions`, token auth, the agent named per request, the turn aborted by closing
// the request), OpenClaw's log read as it grows, gateway methods called with OpenClaw's CLI, and
// the process's memory read from /proc. An event-loop probe preloaded into the gateway
// (loop-probe.mjs) records the longest gap it saw.
import { spawn } from 'node:child_process'
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, waitForPort } from './openclaw-run.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const TOKEN = 'qa-token'
const LOOP_PROBE = join(HERE, 'loop-probe.mjs')

/** Resident memory of a process (bytes), from /proc; undefined when it is gone. */
export function rssOf(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

/** Pids of a process's descendants (from /proc), e.g. code cells left running. */
export function descendantsOf(pid) {
  const children = new Map()
  for (const entry of safeList('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (!children.has(parent)) children.set(parent, [])
      children.get(parent).push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  const out = []
  const walk = (p) => {
    for (const child of children.get(p) ?? []) {
      out.push(child)
      walk(child)
    }
  }
  walk(pid)
  return out
}

function safeList(dir) {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/** The command line of a process (NUL-separated in /proc), or ''. */
export function commandOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
  } catch {
    return ''
  }
}

/**
 * One gateway: `start()` runs `openclaw gateway run` with `config` (its port, token auth and the
 * chat-completions endpoint filled in) in `dir` (HOME, TMPDIR, state), `turn()` sends one.
 */
export class GatewaySession {
  constructor({ openclaw, node, dir, config, env = {}, nodeOptions }) {
    Object.assign(this, { openclaw, node, dir, config, env, nodeOptions })
    this.logFile = config.logging.file
    this.logOffset = 0
    this.logCarry = ''
    this.probeFile = join(dir, 'loop-probe.jsonl')
    this.starts = 0
  }

  async start() {
    for (const sub of ['home/.openclaw', 'tmp', 'workspace']) mkdirSync(join(this.dir, sub), { recursive: true })
    this.port = await freePort()
    this.config.gateway = {
      mode: 'local',
      port: this.port,
      bind: 'loopback',
      auth: { mode: 'token', token: TOKEN },
      http: { endpoints: { chatCompletions: { enabled: true } } },
    }
    this.configFile = join(this.dir, 'home', '.openclaw', 'openclaw.json')
    writeFileSync(this.configFile, `${JSON.stringify(this.config, null, 2)}\n`)
    const options = ['--expose-gc', `--import=${LOOP_PROBE}`, this.nodeOptions].filter(Boolean).join(' ')
    this.processEnv = {
      PATH: `${dirname(this.node)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: join(this.dir, 'home'),
      TMPDIR: join(this.dir, 'tmp'),
      LANG: 'C.UTF-8',
      NO_COLOR: '1',
      OPENCLAW_CONFIG_PATH: this.configFile,
      OPENCLAW_GATEWAY_TOKEN: TOKEN,
      ...this.env,
    }
    for (const key of ['OPENCLAW_TOOL_SEARCH_NODE', 'OPENCLAW_TOOL_SEARCH_MODEL_DIR']) if (process.env[key]) this.processEnv[key] = process.env[key]
    const started = performance.now()
    this.stderr = ''
    this.child = spawn(this.node, [join(this.openclaw, 'openclaw.mjs'), 'gateway', 'run', '--port', String(this.port), '--bind', 'loopback', '--auth', 'token'], {
      env: { ...this.processEnv, NODE_OPTIONS: options, QA_LOOP_PROBE_FILE: this.probeFile },
      cwd: this.dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    this.child.stderr.setEncoding('utf8').on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-20_000)
    })
    this.exited = new Promise((resolve) => this.child.on('close', (code, signal) => resolve({ code, signal })))
    this.starts += 1
    const deadline = Date.now() + 180_000
    if (!(await waitForPort(this.port, deadline))) throw new Error(`the gateway did not listen within 180 s: ${this.stderr.slice(-800)}`)
    // OpenClaw listens before its channels and sidecars are up ("gateway ready"); its own restart
    // probe waits for /readyz to answer 200, and so do the lanes.
    const ready = await this.waitReady(deadline)
    if (!ready.ok) throw new Error(`the gateway listened but /readyz did not answer 200 within 180 s (last: ${ready.last}): ${this.stderr.slice(-800)}`)
    this.startupMs = performance.now() - started
    return this
  }

  /** Polls `GET /readyz` until 200 (a release without the route, 404, counts as ready). */
  async waitReady(deadline) {
    let last = 'no answer'
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) return { ok: false, last: `the gateway exited (${this.child.exitCode})` }
      try {
        const response = await fetch(`http://127.0.0.1:${this.port}/readyz`, { signal: AbortSignal.timeout(5000) })
        await response.arrayBuffer()
        if (response.status === 200 || response.status === 404) return { ok: true, last: response.status }
        last = response.status
      } catch (error) {
        last = String(error?.message ?? error)
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    return { ok: false, last }
  }

  get pid() {
    return this.child?.pid
  }

  /**
   * One turn as an HTTP client sends it: `{ status, text, ms, aborted }`. `abortAfterMs` closes
   * the request mid-turn (OpenClaw aborts the run with its signal); `session` names the
   * conversation it belongs to.
   */
  async turn({ agent, prompt, abortAfterMs, session, timeoutMs = 240_000 }) {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new Error('turn timed out')), abortAfterMs ?? timeoutMs)
    const started = performance.now()
    try {
      const response = await fetch(`http://127.0.0.1:${this.port}/v1/chat/completions`, {
        method: 'POST',
        signal: controller.signal,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'x-openclaw-agent-id': agent },
        // `user` keeps a conversation's session (agent:<id>:openai-user:<user>); without it each
        // request is a session of its own.
        body: JSON.stringify({ model: `openclaw/${agent}`, messages: [{ role: 'user', content: prompt }], ...(session ? { user: session } : {}) }),
      })
      const body = await response.text()
      let text = body
      try {
        text = JSON.parse(body)?.choices?.[0]?.message?.content ?? body
      } catch {
        // not JSON: the body is the answer
      }
      return { status: response.status, text: String(text), ms: performance.now() - started, aborted: false }
    } catch (error) {
      return { status: 0, text: String(error?.message ?? error), ms: performance.now() - started, aborted: controller.signal.aborted }
    } finally {
      clearTimeout(timer)
    }
  }

  /** `openclaw gateway call <method> --json` against this gateway: its JSON answer. */
  async call(method, params) {
    const args = [join(this.openclaw, 'openclaw.mjs'), 'gateway', 'call', method, '--json', '--port', String(this.port), ...(params ? ['--params', JSON.stringify(params)] : [])]
    const child = spawn(this.node, args, { env: { ...this.processEnv, NODE_OPTIONS: '' }, cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    const code = await new Promise((resolve) => child.on('close', resolve))
    clearTimeout(timer)
    const start = stdout.indexOf('{')
    let output
    try {
      output = start >= 0 ? JSON.parse(stdout.slice(start)) : undefined
    } catch {
      output = undefined
    }
    return { code, output, stdout, stderr: stderr.slice(-2000) }
  }

  /** OpenClaw's log lines written since the last call (its `message` field, or the line). */
  newLogLines() {
    if (!existsSync(this.logFile)) return []
    const size = statSync(this.logFile).size
    if (size <= this.logOffset) return []
    const fd = openSync(this.logFile, 'r')
    const buffer = Buffer.alloc(size - this.logOffset)
    readSync(fd, buffer, 0, buffer.length, this.logOffset)
    closeSync(fd)
    this.logOffset = size
    const text = this.logCarry + buffer.toString('utf8')
    const lines = text.split('\n')
    this.logCarry = lines.pop() ?? ''
    return lines.filter(Boolean).map((line) => {
      try {
        const record = JSON.parse(line)
        return typeof record?.message === 'string' ? record.message : line
      } catch {
        return line
      }
    })
  }

  /** The probe's samples so far: `{ pid, t, gapMs, p99Ms, rss, heapUsed, forced? }` per second. */
  loopSamples() {
    if (!existsSync(this.probeFile)) return []
    return readFileSync(this.probeFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
  }

  /**
   * The longest event-loop gap the probe saw in this gateway process (ms), since `since` (a
   * `Date.now()`), forced collections' pauses left out.
   */
  maxLoopGap(since = 0) {
    const samples = this.loopSamples().filter((s) => s.pid === this.pid && s.t >= since)
    return Math.max(0, ...samples.filter((s, i) => !s.forced && !samples[i - 1]?.forced).map((s) => s.gapMs))
  }

  /**
   * The gateway's memory after a full garbage collection (the probe's forced sample): what it
   * retains. Undefined when the probe did not answer within 10 s.
   */
  async retainedMemory() {
    const before = this.loopSamples().length
    writeFileSync(`${this.probeFile}.gc.${this.pid}`, '')
    for (let waited = 0; waited < 10_000; waited += 200) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const forced = this.loopSamples().slice(before).find((s) => s.forced && s.pid === this.pid)
      if (forced) return forced
    }
    return undefined
  }

  async stop() {
    if (!this.child || this.child.exitCode !== null) return
    this.child.kill('SIGTERM')
    const stopped = await Promise.race([this.exited.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 20_000))])
    if (!stopped) {
      this.child.kill('SIGKILL')
      await this.exited
    }
    appendFileSync(join(this.dir, 'gateway-stderr.txt'), this.stderr)
  }
}
