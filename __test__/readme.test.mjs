// README code blocks are part of the tests: every ```ts block must type-check
// under `tsc --strict` against the package's own index.d.ts, with only the
// free variables an example leaves to the reader declared here.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const tsc = join(root, 'node_modules', '.bin', 'tsc')

/** Types of the names README examples use without defining them (the reader's own objects);
 *  `Api` is the package's type namespace. */
const FREE_VARIABLES = {
  tools: 'Api.CatalogTool[]',
  moreTools: 'Api.CatalogTool[]',
  catalog: 'Api.ToolCatalog',
  openclawConfig: '{ tools?: { toolSearch?: unknown } }',
  gateway: '{ runTool(name: string, args: Record<string, unknown>, options: { signal: AbortSignal }): Promise<unknown> }',
  sessionLog: '{ write(text: string): void }',
  requestBody: 'string',
  call: '{ name: string; arguments: string; call_id: string }',
}

function tsBlocks(markdown) {
  const blocks = []
  const fence = /^```ts\s*\n([\s\S]*?)^```\s*$/gm
  for (let m = fence.exec(markdown); m; m = fence.exec(markdown)) {
    blocks.push({ line: markdown.slice(0, m.index).split('\n').length, code: m[1] })
  }
  return blocks
}

/** Whether the block itself binds `name` (import, const/let/var, function, class). */
function binds(code, name) {
  const decl = new RegExp(`\\b(?:const|let|var|function|class)\\s+${name}\\b`)
  const imported = new RegExp(`import\\s*(?:type\\s*)?\\{[^}]*\\b${name}\\b[^}]*\\}`)
  return decl.test(code) || imported.test(code)
}

function prelude(code) {
  const lines = ["import type * as Api from 'openclaw-tool-search'"]
  for (const [name, type] of Object.entries(FREE_VARIABLES)) {
    if (new RegExp(`\\b${name}\\b`).test(code) && !binds(code, name)) lines.push(`declare const ${name}: ${type}`)
  }
  return `${lines.join('\n')}\n`
}

const blocks = tsBlocks(readFileSync(join(root, 'README.md'), 'utf8'))

test('README has TypeScript examples', () => {
  assert.ok(blocks.length >= 2, `found ${blocks.length} \`\`\`ts blocks`)
})

test('README TypeScript examples type-check under tsc --strict against index.d.ts', () => {
  // typescript is a devDependency: a missing tsc is a broken checkout, not a skip.
  assert.ok(existsSync(tsc), `${tsc} is missing: run pnpm install --frozen-lockfile`)
  const dir = mkdtempSync(join(tmpdir(), 'readme-ts-'))
  try {
    const files = blocks.map((block, i) => {
      const file = `readme-block-${i + 1}.ts`
      // `export {}`: each block is its own module (top-level await, no shared names).
      writeFileSync(join(dir, file), `${prelude(block.code)}// README.md line ${block.line}\n${block.code}\nexport {}\n`)
      return file
    })
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          lib: ['ES2023'],
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          paths: { 'openclaw-tool-search': [join(root, 'index.d.ts')] },
        },
        files,
      }),
    )
    const run = spawnSync(tsc, ['--strict', '--noEmit', '-p', join(dir, 'tsconfig.json')], { cwd: dir, encoding: 'utf8' })
    const output = `${run.stdout}${run.stderr}`.trim()
    const sources = files.map((f) => `${f}:\n${readFileSync(join(dir, f), 'utf8')}`).join('\n')
    assert.equal(run.status, 0, `tsc --strict rejected a README example:\n${output}\n\n${sources}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
