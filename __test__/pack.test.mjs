// The publish path end to end: `scripts/package.mjs` (what `pnpm run package` runs: a
// release build, then tarballs of the main package and of the platform package) →
// `npm install` of exactly those tarballs into a fresh strict TypeScript project →
// type-check → run a search and a code-mode cell from the installed copy.
import { before, after, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { binding, root } from './helpers.mjs'

const MAIN = 'openclaw-tool-search'
const PLATFORM = 'openclaw-tool-search-linux-x64-gnu'
const requireCodeMode = process.env.REQUIRE_CODE_MODE === '1'

const run = (cmd, args, cwd, env = process.env) =>
  execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 16 << 20 })
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))

let work
let app
let tarballs
let output

before(() => {
  work = mkdtempSync(join(tmpdir(), 'ots-pack-'))
  // mkdtemp makes 0700; install where an ordinary gateway would, readable by everyone.
  chmodSync(work, 0o755)
  const packs = join(work, 'packs')
  // A cold release build takes minutes; afterwards this is a no-op build plus two `npm pack`s.
  run(process.execPath, [join(root, 'scripts', 'package.mjs'), '--out', packs], root)
  tarballs = readdirSync(packs).map((f) => join(packs, f)).sort()

  app = join(work, 'app')
  cpSync(join(root, '__test__', 'fixtures', 'pack-app'), app, { recursive: true })
  // The two tarballs and the main package's declared dependencies (acorn, for the OpenClaw seam),
  // put in npm's cache first: --offline proves nothing else is fetched.
  for (const [name, range] of Object.entries(readJson(join(root, 'package.json')).dependencies ?? {})) run('npm', ['cache', 'add', `${name}@${range}`], app)
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], app)
  run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app)
  // The installed copy must find its own launcher, not one named by the test's environment.
  const env = { ...process.env }
  delete env.OPENCLAW_TOOL_SEARCH_LAUNCHER
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH
  output = JSON.parse(run(process.execPath, [join(app, 'dist', 'main.js')], app, env))
}, { timeout: 40 * 60_000 })

after(() => {
  if (work) rmSync(work, { recursive: true, force: true })
})

test('package writes one tarball per package, the binaries only in the platform one', () => {
  const version = readJson(join(root, 'package.json')).version
  assert.deepEqual(tarballs.map((t) => t.split('/').pop()), [`${MAIN}-${version}.tgz`, `${PLATFORM}-${version}.tgz`])
  const installed = join(app, 'node_modules')
  const main = readJson(join(installed, MAIN, 'package.json'))
  const platform = readJson(join(installed, PLATFORM, 'package.json'))
  assert.equal(main.version, version)
  assert.deepEqual(main.optionalDependencies, { [PLATFORM]: version })
  assert.equal(platform.version, version)
  assert.deepEqual([platform.os, platform.cpu, platform.libc], [['linux'], ['x64'], ['glibc']])
  assert.deepEqual(readdirSync(join(installed, MAIN)).filter((f) => f.endsWith('.node') || f.includes('launcher')), [])
  for (const file of [`${MAIN}.linux-x64-gnu.node`, `${MAIN}-launcher`]) {
    const mode = statSync(join(installed, PLATFORM, file)).mode
    assert.equal(mode & 0o755, 0o755, `${file} is ${mode.toString(8)}`)
  }
  // The app holds the two tarballs and the main package's own dependencies, nothing else.
  const lock = readJson(join(app, 'package-lock.json'))
  const dependencies = Object.keys(main.dependencies ?? {}).map((name) => `node_modules/${name}`)
  assert.deepEqual(dependencies, ['node_modules/@opentelemetry/api', 'node_modules/acorn'])
  assert.deepEqual(Object.keys(lock.packages).filter((p) => p).sort(), [...dependencies, `node_modules/${MAIN}`, `node_modules/${PLATFORM}`].sort())
})

test('the installed copy type-checks under strict and searches', () => {
  assert.equal(output.top, 'openclaw:fake-plugin:fake_plugin_tool_17')
  assert.equal(output.errorCode, 'TOOL_NOT_FOUND')
  assert.equal(output.mode, 'tools')
  assert.equal(output.size, 35)
  const cli = run(process.execPath, [join(app, 'node_modules', '.bin', MAIN), '--help'], app)
  assert.match(cli, /Usage: openclaw-tool-search/)
})

test('the installed copy runs a code-mode cell with its own launcher', (t) => {
  if (!output.codeMode.available) {
    // Unavailable from the tarballs but available from the dev build: the package is at fault.
    if (requireCodeMode || binding.codeModeCapability().available) {
      assert.fail(`code mode unavailable from the installed copy: ${output.codeMode.reason}`)
    }
    t.skip(`code mode unavailable on this host: ${output.codeMode.reason}`)
    return
  }
  assert.equal(output.codeMode.launcherPath, join(app, 'node_modules', PLATFORM, `${MAIN}-launcher`))
  const cell = output.cell
  assert.equal(cell.ok, true, JSON.stringify(cell))
  assert.deepEqual(cell.value.logs, ['found openclaw:fake-plugin:fake_plugin_tool_17'])
  assert.match(JSON.stringify(cell.value.value.result), /FAKE_PLUGIN_OK fake_plugin_tool_17 \{\\"marker\\":\\"packed\\"\}/)
})
