// README and docs code blocks are part of the tests: every ```ts block of README.md and
// docs/*.md must type-check under `tsc --strict` against the package's own index.d.ts, with
// only the free variables an example leaves to the reader declared here. Every relative link of
// those pages must reach an existing file, and a `#anchor` an existing heading of its target.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const tsc = join(root, 'node_modules', '.bin', 'tsc')

/** The pages: README.md and every docs/*.md, as repository-relative paths. */
const PAGES = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]

/** Pages whose ```ts blocks are not code against this package (their links are still checked). */
const NOT_THIS_PACKAGE = {
  'docs/openclaw-upstream-proposal.md': "sketches of OpenClaw's own source for a proposed seam, not calls of this package",
}

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

const read = (page) => readFileSync(join(root, page), 'utf8')

/** `line`: the line of the block's opening fence. */
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

const blocks = PAGES.filter((page) => !(page in NOT_THIS_PACKAGE)).flatMap((page) =>
  tsBlocks(read(page)).map((block) => ({ ...block, page })),
)

test('README has a TypeScript example, and README and docs together have several', () => {
  const inReadme = blocks.filter((b) => b.page === 'README.md').length
  assert.ok(inReadme >= 1, `found ${inReadme} \`\`\`ts blocks in README.md`)
  assert.ok(blocks.length >= 2, `found ${blocks.length} \`\`\`ts blocks in ${PAGES.join(', ')}`)
})

test('README and docs TypeScript examples type-check under tsc --strict against index.d.ts', () => {
  // typescript is a devDependency: a missing tsc is a broken checkout, not a skip.
  assert.ok(existsSync(tsc), `${tsc} is missing: run pnpm install --frozen-lockfile`)
  const dir = mkdtempSync(join(tmpdir(), 'readme-ts-'))
  try {
    const files = blocks.map((block, i) => {
      const file = `block-${i + 1}-${block.page.replace(/[^A-Za-z0-9]+/g, '-')}.ts`
      const head = `${prelude(block.code)}// ${block.page} line ${block.line}\n`
      // `export {}`: each block is its own module (top-level await, no shared names).
      writeFileSync(join(dir, file), `${head}${block.code}\nexport {}\n`)
      // A generated line N is the block's line N - headLines, i.e. page line fence + that.
      return { file, block, headLines: head.split('\n').length - 1 }
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
        files: files.map((f) => f.file),
      }),
    )
    const run = spawnSync(tsc, ['--strict', '--noEmit', '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: dir, encoding: 'utf8' })
    const output = `${run.stdout}${run.stderr}`.trim()
    // Each diagnostic restated at the page and line of the example it is about.
    const byFile = new Map(files.map((f) => [f.file, f]))
    const located = output
      .split('\n')
      .map((line) => {
        const m = /^(\S+\.ts)\((\d+),(\d+)\): (.*)$/.exec(line)
        const f = m && byFile.get(m[1])
        if (!f) return line
        const offset = Number(m[2]) - f.headLines
        const at = offset >= 1 ? `${f.block.page}:${f.block.line + offset}:${m[3]}` : `${f.block.page}:${f.block.line} (the declared free variables)`
        return `${at} (\`\`\`ts block at line ${f.block.line}): ${m[4]}`
      })
      .join('\n')
    const sources = files.map((f) => `${f.file} (${f.block.page} line ${f.block.line}):\n${readFileSync(join(dir, f.file), 'utf8')}`).join('\n')
    assert.equal(run.status, 0, `tsc --strict rejected a README or docs example:\n${located}\n\n${sources}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

/** The text with fenced blocks and inline code blanked out (newlines kept, so lines still count). */
function prose(markdown) {
  const blank = (s) => s.replace(/[^\n]/g, ' ')
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, blank)
    .replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)/g, blank)
}

/** GitHub's heading ids (github-slugger): the heading's text, lowercased, punctuation and symbols
 *  dropped (letters, digits, `_`, `-` and spaces kept), each space a `-`; a repeated id gets -1, -2, … */
function anchors(markdown) {
  const ids = new Set()
  const seen = new Map()
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
  for (const m of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const rendered = m[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '')
    const base = rendered.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    ids.add(n === 0 ? base : `${base}-${n}`)
  }
  for (const m of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) ids.add(m[1])
  return ids
}

/** `[text](target)` and `![alt](target)` links of a page, with their lines; reference definitions too. */
function links(markdown) {
  const text = prose(markdown)
  const found = []
  const lineOf = (index) => text.slice(0, index).split('\n').length
  for (const m of text.matchAll(/!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    found.push({ target: m[1], line: lineOf(m.index) })
  }
  for (const m of text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) {
    found.push({ target: m[1], line: lineOf(m.index) })
  }
  return found
}

test('every relative link of README and docs reaches a file, and every #anchor a heading of it', () => {
  const problems = []
  let checked = 0
  for (const page of PAGES) {
    for (const { target, line } of links(read(page))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
      checked++
      const hash = target.indexOf('#')
      const path = decodeURIComponent(hash >= 0 ? target.slice(0, hash) : target)
      const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : undefined
      const file = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), path))
      const where = `${page}:${line}: ${target}`
      if (file.startsWith('../') || !existsSync(join(root, file))) {
        problems.push(`${where}: no file ${file}`)
        continue
      }
      if (anchor === undefined) continue
      if (!file.endsWith('.md') || !statSync(join(root, file)).isFile()) {
        problems.push(`${where}: an anchor into ${file}, which is not a markdown page`)
        continue
      }
      if (!anchors(read(file)).has(anchor)) problems.push(`${where}: ${file} has no heading #${anchor}`)
    }
  }
  assert.ok(checked >= PAGES.length, `only ${checked} relative links found in ${PAGES.join(', ')}`)
  assert.deepEqual(problems, [], problems.join('\n'))
})

test('the heading ids follow GitHub (spot checks)', () => {
  const ids = anchors(
    [
      '# Configuration (`tools.toolSearch`)',
      "## Learned ranking: what the gateway's agents searched for and then called",
      '### Languages: accents, full-width letters, CJK',
      '## Code mode',
      '## Code mode',
      '```sh',
      '# not a heading',
      '```',
    ].join('\n'),
  )
  assert.deepEqual(
    [...ids],
    [
      'configuration-toolstoolsearch',
      'learned-ranking-what-the-gateways-agents-searched-for-and-then-called',
      'languages-accents-full-width-letters-cjk',
      'code-mode',
      'code-mode-1',
    ],
  )
})
