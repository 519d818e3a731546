// `npm pack` → install into a fresh TypeScript project → type-check and run.
// The main package holds the JS entry and types; the platform package holds the
// addon and the launcher (as published: `npm/linux-x64-gnu`).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { root } from './helpers.mjs'

const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

test('npm pack installs into a fresh TypeScript project that type-checks and runs', { timeout: 180_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'ots-pack-'))
  try {
    const packs = join(work, 'packs')
    mkdirSync(packs)
    run('npm', ['pack', '--pack-destination', packs, '--silent'], root)
    const platform = join(work, 'platform')
    cpSync(join(root, 'npm', 'linux-x64-gnu'), platform, { recursive: true })
    copyFileSync(join(root, 'openclaw-tool-search.linux-x64-gnu.node'), join(platform, 'openclaw-tool-search.linux-x64-gnu.node'))
    copyFileSync(join(root, 'openclaw-tool-search-launcher'), join(platform, 'openclaw-tool-search-launcher'))
    run('npm', ['pack', '--pack-destination', packs, '--silent'], platform)
    const tarballs = readdirSync(packs).map((f) => join(packs, f))
    assert.equal(tarballs.length, 2, `two tarballs: ${tarballs}`)

    const app = join(work, 'app')
    cpSync(join(root, '__test__', 'fixtures', 'pack-app'), app, { recursive: true })
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], app)
    // Type-check with the project's TypeScript against the installed package's index.d.ts.
    run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app)
    const out = run(process.execPath, [join(app, 'dist', 'main.js')], app)
    const result = JSON.parse(out)
    assert.equal(result.top, 'openclaw:fake-plugin:fake_plugin_tool_17')
    assert.equal(result.errorCode, 'TOOL_NOT_FOUND')
    assert.equal(result.mode, 'tools')
    const cli = run(process.execPath, [join(app, 'node_modules', '.bin', 'openclaw-tool-search'), '--help'], app)
    assert.match(cli, /Usage: openclaw-tool-search/)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
})
