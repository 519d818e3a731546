// Layer check for the JS side (issue #25): the package's own modules must not
// require or import each other in a circle. Reads the files, parses relative
// `require('./…')`, `import … from './…'`, `export … from './…'` and
// `import('./…')`, and looks for circles among the files below. The Rust side
// has the same check in crates/core/tests/layers.rs.
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Folders whose scripts are checked (with the top-level entry files). */
const FOLDERS = ['js', 'openclaw', 'bin', 'scripts']
const TOP_LEVEL = ['index.js', 'binding.js']
const SCRIPT = /\.(c|m)?js$/

function packageFiles() {
  const files = TOP_LEVEL.filter((f) => existsSync(join(root, f)))
  for (const folder of FOLDERS) {
    const dir = join(root, folder)
    if (!existsSync(dir)) continue
    for (const name of readdirSync(dir)) {
      const path = join(folder, name)
      // bin/ scripts may have no extension.
      if (statSync(join(root, path)).isFile() && (SCRIPT.test(name) || folder === 'bin')) {
        files.push(path)
      }
    }
  }
  return files.sort()
}

/** Comments blanked (strings kept: the specifiers are strings). */
function stripComments(text) {
  let out = ''
  let i = 0
  let quote = null
  while (i < text.length) {
    const c = text[i]
    if (quote) {
      out += c
      if (c === '\\') {
        out += text[i + 1] ?? ''
        i += 2
        continue
      }
      if (c === quote) quote = null
      i += 1
    } else if (c === '"' || c === "'" || c === '`') {
      quote = c
      out += c
      i += 1
    } else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i)
      i = end === -1 ? text.length : end
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2)
      i = end === -1 ? text.length : end + 2
    } else {
      out += c
      i += 1
    }
  }
  return out
}

/** Relative specifiers a script loads. */
export function relativeSpecifiers(text) {
  const code = stripComments(text)
  const patterns = [
    /\brequire\s*\(\s*(['"])(\.{1,2}\/[^'"]+)\1\s*\)/g,
    /\bimport\s*\(\s*(['"])(\.{1,2}\/[^'"]+)\1\s*\)/g,
    /\b(?:import|export)\s[^'";]*?\bfrom\s*(['"])(\.{1,2}\/[^'"]+)\1/g,
    /\bimport\s*(['"])(\.{1,2}\/[^'"]+)\1/g,
  ]
  const out = new Set()
  for (const pattern of patterns) {
    for (const match of code.matchAll(pattern)) out.add(match[2])
  }
  return [...out]
}

/** The file a specifier loads, as Node resolves a relative path. */
function resolveSpecifier(from, specifier) {
  const base = resolve(root, dirname(from), specifier)
  for (const candidate of [base, `${base}.js`, `${base}.mjs`, `${base}.cjs`, join(base, 'index.js')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(root, candidate)
  }
  return null
}

/** Circles of a graph (Map file → Set of files), each as the files in it. */
export function circles(graph) {
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  let next = 0
  const visit = (v) => {
    index.set(v, next)
    low.set(v, next)
    next += 1
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)))
      }
    }
    if (low.get(v) === index.get(v)) {
      const component = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      const selfLoop = (graph.get(v) ?? new Set()).has(v)
      if (component.length > 1 || selfLoop) found.push(component.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

function packageGraph() {
  const files = packageFiles()
  const known = new Set(files)
  const graph = new Map()
  for (const file of files) {
    const targets = new Set()
    for (const specifier of relativeSpecifiers(readFileSync(join(root, file), 'utf8'))) {
      const target = resolveSpecifier(file, specifier)
      if (target && known.has(target)) targets.add(target)
    }
    graph.set(file, targets)
  }
  return graph
}

test('package scripts do not require or import each other in a circle', () => {
  const graph = packageGraph()
  assert.ok(graph.has('index.js') && graph.get('index.js').has('js/catalog.js'), 'the scan sees index.js → js/catalog.js')
  assert.deepEqual(circles(graph), [])
})

test('the parser finds require, import, export-from and dynamic import, not comments', () => {
  const text = [
    "const a = require('./a.js')",
    "import { b } from '../b.mjs'",
    "import c, { d } from\n  './c.mjs'",
    "export { e } from './e.mjs'",
    "import './side.mjs'",
    "const f = await import('./f.mjs')",
    "// require('./commented.js')",
    "/* import x from './block.mjs' */",
    "const g = require('node:fs')",
    "const h = 'http://example.com/require(\\'./no.js\\')'",
  ].join('\n')
  assert.deepEqual(relativeSpecifiers(text).sort(), ['../b.mjs', './a.js', './c.mjs', './e.mjs', './f.mjs', './side.mjs'])
})

test('the circle finder reports circles and only circles', () => {
  const graph = new Map([
    ['a', new Set(['b'])],
    ['b', new Set(['c'])],
    ['c', new Set(['a'])],
    ['d', new Set(['a'])],
  ])
  assert.deepEqual(circles(graph), [['a', 'b', 'c']])
  graph.get('c').delete('a')
  assert.deepEqual(circles(graph), [])
})
