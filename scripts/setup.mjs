#!/usr/bin/env node
// One-step set-up used by `pnpm test`, `pnpm qa` and `pnpm bench`: installs the
// JS dev dependencies when missing or stale, then builds the addon and the
// code-mode launcher (cargo makes an unchanged build a quick no-op).
//   node scripts/setup.mjs            debug build (tests, qa)
//   node scripts/setup.mjs --release  release build (benchmarks, packaging)
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const release = process.argv.includes('--release')
const PNPM = 'pnpm@12.4.2'

function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts })
}

function hasCommand(cmd) {
  try {
    execFileSync(cmd, ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

// Dependencies: install when node_modules is missing or older than the lockfile.
const marker = join(root, 'node_modules', '.modules.yaml')
const lock = join(root, 'pnpm-lock.yaml')
if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
  if (hasCommand('pnpm')) run('pnpm', ['install', '--frozen-lockfile'])
  else run('npx', ['--yes', PNPM, 'install', '--frozen-lockfile'])
}

// Addon + launcher.
const napi = join(root, 'node_modules', '.bin', 'napi')
const napiArgs = ['build', '--platform', '--target', 'x86_64-unknown-linux-gnu']
if (release) napiArgs.push('--release')
run(napi, napiArgs, { stdio: ['ignore', 'ignore', 'inherit'] })
run(process.execPath, [join(root, 'scripts', 'build-launcher.mjs'), ...(release ? ['--release'] : [])])

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
if (process.env.CI !== 'true') {
  process.stderr.write(`${pkg.name}: ${release ? 'release' : 'debug'} build ready\n`)
}
