// A headless Chromium for the tests that must see a page as a browser runs it (the audit's HTML):
// found on PATH (or CHROMIUM_PATH), driven over the DevTools protocol on a pipe (fds 3 and 4,
// `--remote-debugging-pipe`), so no port and no WebSocket client are needed on any Node version.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

const NAMES = ['chromium-headless-shell', 'chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']

/** The browser binary, or undefined. */
export function findChromium() {
  if (process.env.CHROMIUM_PATH) return existsSync(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : undefined
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of NAMES) if (dir && existsSync(join(dir, name))) return join(dir, name)
  }
  return undefined
}

/** Set by scripts/setup.mjs when it could not provide a browser: why (the browser test's skip says it). */
export const BROWSER_UNAVAILABLE_ENV = 'OPENCLAW_TOOL_SEARCH_BROWSER_UNAVAILABLE'

/** node:test `skip` for a test that needs the browser: false when there is one, else why there is none. */
export function browserSkip(binary = findChromium()) {
  if (binary) return false
  if (process.env.CHROMIUM_PATH) return `CHROMIUM_PATH=${process.env.CHROMIUM_PATH} does not exist`
  return process.env[BROWSER_UNAVAILABLE_ENV] || "no headless Chromium on PATH (`pnpm test` installs Debian's chromium-headless-shell when it runs as root with apt-get; or set CHROMIUM_PATH)"
}

/**
 * Opens `url` in a fresh headless browser and resolves with `{ evaluate(expression), click(selector),
 * exceptions, close() }` once the page has loaded. `evaluate` returns the expression's value (JSON).
 */
export async function openPage(binary, url) {
  const profile = mkdtempSync(join(tmpdir(), 'ots-chromium-'))
  // Its own process group, so closing ends its helper processes too (they write into the profile).
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-crash-reporter', '--disable-breakpad', '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank']
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const input = child.stdio[3]
  const output = child.stdio[4]
  let nextId = 0
  const pending = new Map()
  const listeners = []
  let buffered = Buffer.alloc(0)
  output.on('data', (chunk) => {
    buffered = Buffer.concat([buffered, chunk])
    for (let end = buffered.indexOf(0); end >= 0; end = buffered.indexOf(0)) {
      const message = JSON.parse(buffered.subarray(0, end).toString('utf8'))
      buffered = buffered.subarray(end + 1)
      if (message.id !== undefined && pending.has(message.id)) {
        const { resolve, reject } = pending.get(message.id)
        pending.delete(message.id)
        if (message.error) reject(new Error(`${message.error.message} (${message.error.code})`))
        else resolve(message.result)
      } else {
        for (const listener of listeners) listener(message)
      }
    }
  })
  const failed = new Promise((_, reject) => {
    exited.then((code) => reject(new Error(`the browser exited (${code}): ${stderr}`)))
  })
  failed.catch(() => {})
  const send = (method, params = {}, sessionId) => {
    const id = ++nextId
    const reply = new Promise((resolve, reject) => pending.set(id, { resolve, reject }))
    input.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`)
    return Promise.race([reply, failed])
  }
  const close = async () => {
    send('Browser.close').catch(() => {})
    const ended = await Promise.race([exited.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 5000))])
    try {
      process.kill(-child.pid, 'SIGKILL') // the group: helpers still running after the browser exited
    } catch {
      // none left
    }
    if (!ended) await exited
    // Its helper processes may still be finishing writes into the profile for a moment.
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })
  }
  try {
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' })
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true })
    const exceptions = []
    listeners.push((message) => {
      if (message.sessionId === sessionId && message.method === 'Runtime.exceptionThrown') exceptions.push(message.params.exceptionDetails)
    })
    await send('Runtime.enable', {}, sessionId)
    await send('Page.enable', {}, sessionId)
    const loaded = new Promise((resolve) => listeners.push((message) => message.sessionId === sessionId && message.method === 'Page.loadEventFired' && resolve()))
    await send('Page.navigate', { url }, sessionId)
    await Promise.race([loaded, failed])
    const evaluate = async (expression) => {
      const { result, exceptionDetails } = await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)
      if (exceptionDetails) throw new Error(`${expression}: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`)
      return result.value
    }
    return { evaluate, exceptions, close }
  } catch (error) {
    await close()
    throw error
  }
}
