#!/usr/bin/env node
// Builds the code-mode launcher (an exec'd helper that contains the sandbox
// child) and puts it next to the addon, where the runner looks for it.
//
//   node scripts/build-launcher.mjs [--release] [--out DIR]   (DIR: default the repo root)
import { execFileSync } from 'node:child_process'
import { copyFileSync, chmodSync, renameSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const release = argv.includes('--release')
const outAt = argv.indexOf('--out')
const outDir = outAt >= 0 ? resolve(argv[outAt + 1]) : root
const target = 'x86_64-unknown-linux-gnu'
const name = 'openclaw-tool-search-launcher'
const args = ['build', '-p', 'tool-search-sandbox', '--bin', name, '--target', target, '--quiet', '--message-format=json-render-diagnostics']
if (release) args.push('--release')
// Cargo names the file it built: honours CARGO_TARGET_DIR and cargo config alike.
const messages = execFileSync('cargo', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 })
const built = messages
  .split('\n')
  .filter((line) => line.startsWith('{'))
  .map((line) => JSON.parse(line))
  .find((m) => m.reason === 'compiler-artifact' && m.target?.name === name && m.executable)?.executable
if (!built) throw new Error(`cargo did not report the ${name} executable`)
// Copy then rename: a running launcher keeps its inode (no ETXTBSY).
const dest = join(outDir, name)
copyFileSync(built, `${dest}.tmp`)
chmodSync(`${dest}.tmp`, 0o755)
renameSync(`${dest}.tmp`, dest)
