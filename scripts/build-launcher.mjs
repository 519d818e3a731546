#!/usr/bin/env node
// Builds the code-mode launcher (an exec'd helper that contains the sandbox
// child) and puts it next to the addon, where the runner looks for it.
import { execFileSync } from 'node:child_process'
import { copyFileSync, chmodSync, renameSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const release = process.argv.includes('--release')
const target = 'x86_64-unknown-linux-gnu'
const name = 'openclaw-tool-search-launcher'
const args = ['build', '-p', 'tool-search-sandbox', '--bin', name, '--target', target, '--quiet']
if (release) args.push('--release')
execFileSync('cargo', args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
const built = join(root, 'target', target, release ? 'release' : 'debug', name)
// Copy then rename: a running launcher keeps its inode (no ETXTBSY).
const dest = join(root, name)
copyFileSync(built, `${dest}.tmp`)
chmodSync(`${dest}.tmp`, 0o755)
renameSync(`${dest}.tmp`, dest)
