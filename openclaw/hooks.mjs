// Installs the seam (openclaw/seam.mjs) as an in-thread module load hook (`module.registerHooks`,
// Node >= 22.15 / 23.5; OpenClaw itself needs Node >= 24.16). Process-wide and idempotent: a
// second copy of this package, a second plugin load or `--import` plus the plugin install it
// once, and a module already patched is never patched again.
import { readFileSync } from 'node:fs'
import module from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { mightBeToolSearchModule, patchToolSearchModule } from './seam.mjs'

const STATE_KEY = Symbol.for('openclaw-tool-search.seam')

/**
 * The seam's process-wide state: whether the hook is installed, and what it did with each
 * Tool Search module it saw (`patched`, with the release's support and cases, or refused with
 * the reason).
 * @returns {{ installed: boolean, reason?: string, modules: { url: string, version?: string, patched: boolean, reason?: string, support?: string, note?: string, cases?: object }[], listeners: Set<Function> }}
 */
export function seamState() {
  globalThis[STATE_KEY] ??= { installed: false, modules: [], listeners: new Set() }
  return globalThis[STATE_KEY]
}

/** The version of the `openclaw` package a module file belongs to (nearest package.json named openclaw). */
const versions = new Map()
export function openclawVersionOf(url) {
  let dir
  try {
    dir = dirname(fileURLToPath(url))
  } catch {
    return undefined
  }
  for (let depth = 0; depth < 6; depth++) {
    if (versions.has(dir)) return versions.get(dir)
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      const version = pkg.name === 'openclaw' && typeof pkg.version === 'string' ? pkg.version : undefined
      versions.set(dir, version)
      if (pkg.name === 'openclaw') return version
    } catch {
      // no package.json here: look one folder up
    }
    const up = dirname(dir)
    if (up === dir) break
    dir = up
  }
  return undefined
}

function record(state, entry) {
  state.modules.push(entry)
  for (const listener of state.listeners) {
    try {
      listener(entry)
    } catch {
      // a listener's failure must not break module loading
    }
  }
}

/** Patches a loaded module's source when it is OpenClaw's Tool Search module. */
export function transformLoaded(url, result, state = seamState()) {
  const source = result?.source
  if (source == null || !url.startsWith('file:') || !mightBeToolSearchModule(source)) return result
  const text = typeof source === 'string' ? source : Buffer.from(source.buffer ?? source, source.byteOffset ?? 0, source.byteLength).toString('utf8')
  const version = openclawVersionOf(url)
  const patched = patchToolSearchModule(text, { version, url })
  if (!patched.ok) {
    // A module that only mentions the names (and does not declare the runtime) is not Tool Search's.
    if (patched.toolSearch) record(state, { url, version, patched: false, reason: patched.reason })
    return result
  }
  if (patched.source === text) return result
  record(state, { url, version, patched: true, support: patched.support, note: patched.note, cases: patched.cases })
  return { ...result, source: patched.source }
}

/**
 * Installs the load hook once per process. Returns the state; `state.reason` says why it could
 * not be installed (a Node without `module.registerHooks`).
 */
export function installSeamHooks() {
  const state = seamState()
  if (state.installed || state.reason) return state
  if (typeof module.registerHooks !== 'function') {
    state.reason = `Node ${process.version} has no module.registerHooks (OpenClaw needs Node >= 24.16)`
    return state
  }
  module.registerHooks({
    load(url, context, nextLoad) {
      const result = nextLoad(url, context)
      try {
        return transformLoaded(url, result, state)
      } catch (error) {
        record(state, { url, patched: false, reason: `the seam failed: ${error?.message ?? error}` })
        return result
      }
    },
  })
  state.installed = true
  return state
}
