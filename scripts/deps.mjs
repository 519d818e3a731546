// The JS dev dependencies (napi CLI, TypeScript, tsx), shared by scripts/setup.mjs and
// scripts/package.mjs: installed with pnpm when node_modules is missing or older than
// the lockfile (pnpm fetched by npx when it is not installed).
import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const PNPM = 'pnpm@12.4.2'

function hasCommand(cmd) {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

export function ensureDependencies() {
  const marker = join(root, 'node_modules', '.modules.yaml')
  const lock = join(root, 'pnpm-lock.yaml')
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return
  const [cmd, args] = hasCommand('pnpm') ? ['pnpm', []] : ['npx', ['--yes', PNPM]]
  execFileSync(cmd, [...args, 'install', '--frozen-lockfile'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
}
