// The seam into OpenClaw's bundled Tool Search: a source-to-source patch of the one module that
// declares OpenClaw's Tool Search runtime, applied by an ESM load hook (openclaw/hooks.mjs).
// OpenClaw has no supported seam for a Tool Search engine (docs/openclaw-upstream-proposal.md
// proposes one); this patch is the smallest that hands the engine what it needs.
//
// Everything is found by structure, never by text: the module is parsed (acorn) and each point
// is a declaration found by its name and shape. The names are the ones OpenClaw's source has kept
// since the runtime split (2026.8.1); the statements around them change from release to release
// and are never matched. The points:
//   1. ranking: inside `ToolSearchRuntime`'s constructor, the `this.search = async (query,
//      options) => {...}` arrow; after its top-level `limit` and `entries` locals (OpenClaw has
//      counted the search, read the limit, filtered the visible entries) the engine is asked for
//      the ranked entries, which are returned through the same function the arrow's own final
//      `return ....map(f)` uses (the hit shape and, from 2026.9.6, network-content tracking);
//   2. code mode: the module-scope `runCodeModeChild(params)` is wrapped: the engine runs the cell,
//      OpenClaw's own child stays as `__otsBuiltinRunCodeModeChild` for the engine to fall back on;
//      the engine gets `runCodeModeBridgeRequest` and the function OpenClaw's child makes bridge
//      values JSON-safe with (whatever the module calls it);
//   3. catalog registered: the module-scope `registerToolSearchCatalog(params)` is wrapped: after
//      it, the engine gets the run's new catalog (`params.catalogRef.current`), so its index is
//      prepared before the first search;
//   4. run end: the module-scope `clearToolSearchCatalog(params)` is wrapped: before it, the
//      engine writes its one summary line for the run;
//   5. calls: inside `ToolSearchRuntime`'s constructor, right after the one `this.callEntry = ...`
//      assignment (the function every search-found call runs through: `tool_call`, a cell's
//      bridged call), `this.callEntry` is wrapped: the engine sees the entry called and the call's
//      promise (learned ranking; OpenClaw's result is returned untouched). The position of its
//      `entry` parameter differs by release and is read from the function;
//   6. a marker at the end tells the engine the patched module was evaluated, and which release
//      semantics it found (`RELEASE_CASES`).
// A point that is missing, ambiguous inside its function, or of another shape leaves the module
// as it is, with the reason.
import { Parser } from 'acorn'

export const SEAM_VERSION = 2
/** The first OpenClaw release with the runtime split this seam serves (older ones keep their own engine). */
export const OLDEST_SUPPORTED_OPENCLAW = '2026.8.1'
/** OpenClaw releases proven release by release (`pnpm qa:openclaw`'s release matrix). */
export const TESTED_OPENCLAW_VERSIONS = Object.freeze(['2026.8.1', '2026.8.2', '2026.9.1', '2026.9.2', '2026.9.3', '2026.9.4', '2026.9.5', '2026.9.6'])
export const ENGINE_KEY = 'openclaw-tool-search.engine'
export const MARKER = `/* openclaw-tool-search seam v${SEAM_VERSION} */`
/** Modules larger than this are not parsed (OpenClaw's Tool Search module is ~100 KB, its single-file worker bundles ~50 MB). */
export const MAX_MODULE_BYTES = 4 * 1024 * 1024

const ENGINE = `globalThis[Symbol.for(${JSON.stringify(ENGINE_KEY)})]`
const PREFIX = '__otsBuiltin_'
/** Names the patch declares; a module that already has one is left alone. */
const OWN_NAMES = Object.freeze([PREFIX, '__otsRanked', '__otsCell', '__otsRelease', '__otsCall'])

/**
 * Where the releases differ in what the engine must reproduce, each case as the module shows it:
 * - `hitCompaction`: `closure` when `search` maps its hits through a closure of its own (2026.9.6:
 *   `compactEntry`, which also records network content for the parent call), `module` when through
 *   a module-level function (up to 2026.9.5: `compactToolSearchCatalogEntry`);
 * - `exactMatch`: `id-first` when `search` looks up the spelled id before names (2026.9.5 on: an
 *   entry whose id equals the trimmed query is the only exact match), `id-or-name` when any entry
 *   whose id or name equals the query ignoring case is exact (up to 2026.9.4);
 * - `cellJsonSafe`: `runCodeMode` when `runCodeMode` passes the child's value through the JSON-safe
 *   function (up to 2026.9.2), `child` when only the child does (2026.9.3 on);
 * - `callEntry`: `catalog-entry` when `this.callEntry` takes `(catalog, entry, input, options)` (up
 *   to 2026.9.2), `entry` when it takes `(entry, input, options)` (2026.9.3 on).
 */
export const RELEASE_CASES = Object.freeze({
  hitCompaction: Object.freeze(['closure', 'module']),
  exactMatch: Object.freeze(['id-first', 'id-or-name']),
  cellJsonSafe: Object.freeze(['runCodeMode', 'child']),
  callEntry: Object.freeze(['catalog-entry', 'entry']),
})

// ------------------------------------------------------------------ releases

/** `2026.9.6`, `2026.7.1-1` (a hot fix), `2026.9.1-beta.1` (a beta) → its parts, or undefined. */
export function parseRelease(version) {
  const match = /^(\d+)\.(\d+)\.(\d+)(?:-beta\.(\d+)|-(\d+))?$/.exec(typeof version === 'string' ? version.trim() : '')
  if (!match) return undefined
  const [, year, month, day, beta, fix] = match
  return {
    base: [Number(year), Number(month), Number(day)],
    kind: beta !== undefined ? 'beta' : fix !== undefined ? 'hotfix' : 'release',
    number: Number(beta ?? fix ?? 0),
  }
}

/** Orders two parsed releases: a beta before its release, a hot fix after it. */
function compareRelease(a, b) {
  for (let i = 0; i < 3; i++) if (a.base[i] !== b.base[i]) return a.base[i] - b.base[i]
  const rank = { beta: 0, release: 1, hotfix: 2 }
  return rank[a.kind] - rank[b.kind] || a.number - b.number
}

/**
 * What this package does with an OpenClaw version:
 * - `unsupported`: unknown, unparseable, or before the runtime split (its 2026.8.1 betas count as
 *   2026.8.1's line): OpenClaw's own engine, with the reason;
 * - `tested`: one of TESTED_OPENCLAW_VERSIONS;
 * - `untested`: any other release from 2026.8.1 on (newer releases, betas, hot fixes): served when
 *   every structural check passes, unless the plugin's `requireTestedRelease` is set.
 * @returns {{ support: 'unsupported' | 'tested' | 'untested', reason?: string }}
 */
export function releaseSupport(version) {
  if (typeof version !== 'string' || !version) return { support: 'unsupported', reason: 'the OpenClaw version is unknown' }
  const release = parseRelease(version)
  if (!release) return { support: 'unsupported', reason: `OpenClaw ${version} is not a release version this package can read (YYYY.M.D, -N hot fixes, -beta.N)` }
  const oldest = parseRelease(OLDEST_SUPPORTED_OPENCLAW)
  if (compareRelease({ ...release, kind: 'release', number: 0 }, oldest) < 0) {
    return { support: 'unsupported', reason: `OpenClaw ${version} predates ${OLDEST_SUPPORTED_OPENCLAW}, the oldest release this package serves` }
  }
  if (TESTED_OPENCLAW_VERSIONS.includes(version)) return { support: 'tested' }
  const newest = TESTED_OPENCLAW_VERSIONS[TESTED_OPENCLAW_VERSIONS.length - 1]
  const newer = compareRelease(release, parseRelease(newest)) > 0
  const what = release.kind === 'beta' ? 'a beta' : release.kind === 'hotfix' ? 'a hot fix' : newer ? 'newer than the newest tested release' : 'not a tested release'
  return { support: 'untested', reason: `OpenClaw ${version} is ${what} (tested: ${OLDEST_SUPPORTED_OPENCLAW} to ${newest})` }
}

// ------------------------------------------------------------------ finding the module

const DECLARATIONS = Object.freeze({
  runtime: 'ToolSearchRuntime',
  register: 'registerToolSearchCatalog',
  clear: 'clearToolSearchCatalog',
  child: 'runCodeModeChild',
  bridge: 'runCodeModeBridgeRequest',
})
const NAME_BYTES = [DECLARATIONS.runtime, DECLARATIONS.child, DECLARATIONS.register].map((name) => Buffer.from(name))

/**
 * A cheap first look (no parse): whether a module's source or bytes mention the names OpenClaw's
 * Tool Search module declares. Only such modules are parsed.
 */
export function mightBeToolSearchModule(source) {
  if (typeof source === 'string') return NAME_BYTES.every((name) => source.includes(name.toString()))
  if (!source || typeof source.byteLength !== 'number') return false
  const bytes = Buffer.isBuffer(source) ? source : Buffer.from(source.buffer ?? source, source.byteOffset ?? 0, source.byteLength)
  return NAME_BYTES.every((name) => bytes.indexOf(name) >= 0)
}

/** Whether `source` was already patched (a second hook must not patch twice). */
export function isPatched(source) {
  return source.includes(MARKER)
}

function parse(source) {
  return Parser.parse(source, { ecmaVersion: 'latest', sourceType: 'module', allowHashBang: true, allowAwaitOutsideFunction: true })
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression'])

/**
 * Every node under `root` (depth first, in source order), not entering nested functions unless
 * `nested`. An array, not a generator: the module's few thousand nodes are walked a few times.
 */
function walk(root, { nested = false } = {}) {
  const out = []
  const stack = [root]
  while (stack.length > 0) {
    const node = stack.pop()
    if (node !== root) {
      out.push(node)
      if (!nested && FUNCTIONS.has(node.type)) continue
    }
    const below = []
    for (const key in node) {
      if (key === 'type' || key === 'start' || key === 'end') continue
      const value = node[key]
      if (value === null || typeof value !== 'object') continue
      if (Array.isArray(value)) {
        for (const item of value) if (item !== null && typeof item?.type === 'string') below.push(item)
      } else if (typeof value.type === 'string') {
        below.push(value)
      }
    }
    for (let i = below.length - 1; i >= 0; i--) stack.push(below[i])
  }
  return out
}

const isIdentifier = (node, name) => node?.type === 'Identifier' && (name === undefined || node.name === name)
const isMember = (node, property) => node?.type === 'MemberExpression' && !node.computed && isIdentifier(node.property, property)

/** Module-scope bindings: declarations (with the export statement that holds them) and imports. */
function moduleScope(program) {
  const declared = new Map()
  const bindings = new Set()
  const add = (name, node, exported) => {
    bindings.add(name)
    const list = declared.get(name) ?? []
    list.push({ node, exported })
    declared.set(name, list)
  }
  for (const statement of program.body) {
    const exported = statement.type === 'ExportNamedDeclaration' && statement.declaration ? statement : undefined
    const node = exported ? statement.declaration : statement
    if (node.type === 'ImportDeclaration') {
      for (const specifier of node.specifiers) bindings.add(specifier.local.name)
    } else if ((node.type === 'FunctionDeclaration' || node.type === 'ClassDeclaration') && node.id) {
      add(node.id.name, node, exported)
    } else if (node.type === 'VariableDeclaration') {
      for (const declarator of node.declarations) {
        if (isIdentifier(declarator.id)) add(declarator.id.name, declarator, exported)
        else for (const id of walk(declarator.id)) if (isIdentifier(id)) bindings.add(id.name)
      }
    }
  }
  return { declared, bindings }
}

class Miss extends Error {}
const miss = (message) => {
  throw new Miss(message)
}

/** The one module-scope function declaration called `name` with at least `arity` parameters. */
function moduleFunction(scope, name, arity) {
  const found = scope.declared.get(name) ?? []
  if (found.length === 0) miss(`no module-scope declaration of ${name}`)
  if (found.length > 1) miss(`${found.length} module-scope declarations of ${name}`)
  const [{ node, exported }] = found
  if (node.type !== 'FunctionDeclaration') miss(`${name} is not a function declaration`)
  if (node.params.length < arity || !node.params.slice(0, arity).every((p) => isIdentifier(p))) {
    miss(`${name} does not take ${arity} named parameter${arity === 1 ? '' : 's'}`)
  }
  return { node, exported }
}

/** The one `this.<property> = <value>` statement at the top of ToolSearchRuntime's constructor. */
function constructorAssignment(scope, property) {
  const found = scope.declared.get(DECLARATIONS.runtime) ?? []
  if (found.length !== 1) miss(`${found.length} module-scope declarations of ${DECLARATIONS.runtime}`)
  const { node } = found[0]
  const cls = node.type === 'ClassDeclaration' ? node : node.init?.type === 'ClassExpression' ? node.init : undefined
  if (!cls) miss(`${DECLARATIONS.runtime} is not a class`)
  const constructors = cls.body.body.filter((m) => m.type === 'MethodDefinition' && m.kind === 'constructor')
  if (constructors.length !== 1) miss(`${DECLARATIONS.runtime} has no constructor`)
  const assignments = []
  for (const statement of constructors[0].value.body.body) {
    const expression = statement.type === 'ExpressionStatement' ? statement.expression : undefined
    if (expression?.type === 'AssignmentExpression' && expression.operator === '=' && isMember(expression.left, property) && expression.left.object.type === 'ThisExpression') {
      assignments.push({ statement, value: expression.right })
    }
  }
  if (assignments.length !== 1) miss(`${DECLARATIONS.runtime}'s constructor assigns this.${property} ${assignments.length} times (expected once)`)
  return assignments[0]
}

/** Point 5: the `this.callEntry = (..., entry, ...) => ...` assignment; where its entry parameter is. */
function findCalls(scope) {
  const { statement, value } = constructorAssignment(scope, 'callEntry')
  if (!FUNCTIONS.has(value.type)) miss('this.callEntry is not a function')
  const position = value.params.findIndex((p) => isIdentifier(p, 'entry'))
  if (position < 0 || !value.params.slice(0, position + 1).every((p) => isIdentifier(p))) miss('this.callEntry takes no named entry parameter')
  if (position > 1) miss(`this.callEntry takes its entry as parameter ${position + 1} (expected 1 or 2)`)
  return { at: statement.end, entry: position, callEntry: position === 0 ? 'entry' : 'catalog-entry' }
}

/** The `this.search = async (query, options) => {...}` arrow inside ToolSearchRuntime's constructor. */
function searchArrow(scope) {
  const arrow = constructorAssignment(scope, 'search').value
  if (!FUNCTIONS.has(arrow.type) || !arrow.async || arrow.body.type !== 'BlockStatement') miss('this.search is not an async function with a body')
  if (arrow.params.length < 1 || !arrow.params.every((p) => isIdentifier(p))) miss('this.search does not take (query, options)')
  return arrow
}

/** The top-level `const|let name = ...` declarations of a function body, by name. */
function locals(body) {
  const byName = new Map()
  body.body.forEach((statement, index) => {
    if (statement.type !== 'VariableDeclaration') return
    for (const declarator of statement.declarations) {
      if (!isIdentifier(declarator.id)) continue
      const list = byName.get(declarator.id.name) ?? []
      list.push({ declarator, statement, index })
      byName.set(declarator.id.name, list)
    }
  })
  return byName
}

function oneLocal(byName, name, where) {
  const list = byName.get(name) ?? []
  if (list.length !== 1) miss(`${where} declares ${name} ${list.length} times at its top level (expected once)`)
  return list[0]
}

/** Identifiers a function expression reads from outside itself (names it does not bind). */
function freeNames(fn) {
  const own = new Set()
  for (const param of fn.params) for (const id of [param, ...walk(param)]) if (isIdentifier(id)) own.add(id.name)
  for (const node of walk(fn, { nested: true })) {
    if (node.type === 'VariableDeclarator') for (const id of [node.id, ...walk(node.id)]) if (isIdentifier(id)) own.add(id.name)
    if (FUNCTIONS.has(node.type)) for (const param of node.params) for (const id of [param, ...walk(param)]) if (isIdentifier(id)) own.add(id.name)
  }
  const names = new Set()
  const skip = new Set()
  for (const node of walk(fn, { nested: true })) {
    if (node.type === 'MemberExpression' && !node.computed) skip.add(node.property)
    if (node.type === 'Property' && !node.computed && !node.shorthand) skip.add(node.key)
    if (isIdentifier(node) && !skip.has(node) && !own.has(node.name)) names.add(node.name)
  }
  return names
}

const GLOBALS = new Set(['undefined', 'Array', 'Object', 'String', 'Number', 'Boolean', 'JSON', 'Math', 'Promise', 'Error', 'Symbol', 'globalThis'])

/** Point 1: where the ranking hook goes in `search`, and what it returns hits through. */
function findRanking(scope, source) {
  const arrow = searchArrow(scope)
  const body = arrow.body
  const where = 'this.search'
  const byName = locals(body)
  const limit = oneLocal(byName, 'limit', where)
  const entries = oneLocal(byName, 'entries', where)
  const entriesInit = entries.declarator.init
  if (entriesInit?.type !== 'CallExpression' || !isIdentifier(entriesInit.arguments[0])) miss('this.search\'s entries are not computed from its catalog')
  const catalog = oneLocal(byName, entriesInit.arguments[0].name, where)
  if (catalog.index > entries.index) miss('this.search reads its catalog after its entries')
  // The function OpenClaw's own hits go through: the argument of the final `return <...>.map(f)`.
  const last = body.body[body.body.length - 1]
  const mapped = last?.type === 'ReturnStatement' ? last.argument : undefined
  if (mapped?.type !== 'CallExpression' || !isMember(mapped.callee, 'map') || mapped.arguments.length !== 1) miss("this.search does not end with `return <hits>.map(<compact>)`")
  const compactor = mapped.arguments[0]
  let after = Math.max(limit.index, entries.index)
  let hitCompaction
  if (isIdentifier(compactor) && byName.has(compactor.name)) {
    const local = oneLocal(byName, compactor.name, where)
    after = Math.max(after, local.index)
    hitCompaction = 'closure'
  } else if (isIdentifier(compactor) ? scope.bindings.has(compactor.name) : FUNCTIONS.has(compactor.type)) {
    hitCompaction = 'module'
  } else {
    miss('this.search maps its hits through something other than a function')
  }
  // Whatever the compactor reads must exist where the hook runs.
  if (FUNCTIONS.has(compactor.type)) {
    const visible = new Set(arrow.params.map((p) => p.name))
    for (const [name, list] of byName) if (list.some((l) => l.index <= after)) visible.add(name)
    for (const name of freeNames(compactor)) {
      if (!visible.has(name) && !scope.bindings.has(name) && !GLOBALS.has(name)) miss(`this.search's hit compaction reads ${name}, which the ranking hook cannot see`)
    }
  }
  for (const statement of body.body.slice(0, after + 1)) {
    if (statement.type === 'ReturnStatement') miss('this.search returns before its entries are ready')
  }
  // The hook returns early: OpenClaw's count of the search must come before it.
  for (const statement of body.body.slice(after + 1)) {
    for (const node of walk(statement, { nested: true })) {
      const target = node.type === 'UpdateExpression' ? node.argument : node.type === 'AssignmentExpression' ? node.left : undefined
      if (isMember(target, 'searchCount')) miss('this.search counts the search after its entries (the ranking hook would skip the count)')
    }
  }
  // 2026.9.5 on: `entries.find((entry) => entry.id === spelling)` before matching names.
  let idFirst = false
  for (const node of walk(body)) {
    if (node.type !== 'CallExpression' || !isMember(node.callee, 'find') || !isIdentifier(node.callee.object, 'entries')) continue
    const callback = node.arguments[0]
    const test = callback?.type === 'ArrowFunctionExpression' ? callback.body : undefined
    if (test?.type === 'BinaryExpression' && test.operator === '===' && (isMember(test.left, 'id') || isMember(test.right, 'id'))) idFirst = true
  }
  return {
    at: body.body[after].end,
    names: {
      query: arrow.params[0].name,
      options: arrow.params[1]?.name,
      limit: 'limit',
      entries: 'entries',
      catalog: catalog.declarator.id.name,
      compact: source.slice(compactor.start, compactor.end),
    },
    cases: { hitCompaction, exactMatch: idFirst ? 'id-first' : 'id-or-name' },
  }
}

/** Whether a function assigns `<param>.catalogRef.current = ...` exactly once (outside nested functions). */
function assignsCatalog(fn) {
  const param = fn.params[0].name
  let count = 0
  for (const node of walk(fn.body)) {
    if (node.type !== 'AssignmentExpression' || node.operator !== '=') continue
    const left = node.left
    if (isMember(left, 'current') && isMember(left.object, 'catalogRef') && isIdentifier(left.object.object, param)) count += 1
  }
  return count
}

/** Point 2: the code-mode child, the bridge, and the JSON-safe function of bridge values. */
function findCodeMode(scope) {
  const child = moduleFunction(scope, DECLARATIONS.child, 1)
  moduleFunction(scope, DECLARATIONS.bridge, 4)
  // `{ type: "bridge-result", ..., value: jsonSafe(value) }` in the child's message handler.
  const names = new Set()
  for (const node of walk(child.node.body, { nested: true })) {
    if (node.type !== 'ObjectExpression') continue
    const property = (key) => node.properties.find((p) => p.type === 'Property' && !p.computed && (isIdentifier(p.key, key) || p.key.value === key))
    const type = property('type')
    const value = property('value')
    if (type?.value?.value !== 'bridge-result' || value?.value?.type !== 'CallExpression' || !isIdentifier(value.value.callee)) continue
    names.add(value.value.callee.name)
  }
  if (names.size !== 1) miss(`${DECLARATIONS.child} makes bridge values JSON-safe through ${names.size} functions (expected one)`)
  const [jsonSafe] = names
  if (!scope.bindings.has(jsonSafe)) miss(`${DECLARATIONS.child}'s JSON-safe function ${jsonSafe} is not a module-scope binding`)
  return { child, jsonSafe }
}

/**
 * Whether the function that runs the child (`runCodeMode`) passes the child's value through
 * `jsonSafe`: `jsonSafe(await runCodeModeChild(...))`, or a local holding that value.
 */
function callerMakesCellJsonSafe(program, source, jsonSafe) {
  const childCall = (node) => {
    const call = node?.type === 'AwaitExpression' ? node.argument : node
    return call?.type === 'CallExpression' && isIdentifier(call.callee, DECLARATIONS.child)
  }
  for (const statement of program.body) {
    const fn = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement
    if (fn?.type !== 'FunctionDeclaration' || fn.id?.name === DECLARATIONS.child) continue
    const text = source.slice(fn.start, fn.end)
    if (!text.includes(DECLARATIONS.child) || !text.includes(jsonSafe)) continue
    const nodes = walk(fn.body)
    const holders = new Set()
    for (const node of nodes) if (node.type === 'VariableDeclarator' && isIdentifier(node.id) && childCall(node.init)) holders.add(node.id.name)
    for (const node of nodes) {
      if (node.type !== 'CallExpression' || !isIdentifier(node.callee, jsonSafe)) continue
      const argument = node.arguments[0]
      if (childCall(argument) || (isIdentifier(argument) && holders.has(argument.name))) return true
    }
  }
  return false
}

/**
 * Finds every point of the seam in a module's source.
 * @returns {{ ok: true, toolSearch: true, edits: { start: number, end: number, text: string }[], cases: object }
 *   | { ok: false, toolSearch: boolean, reason: string }}
 */
export function findSeam(source) {
  let program
  try {
    program = parse(source)
  } catch (error) {
    return { ok: false, toolSearch: false, reason: `the module does not parse (${error.message})` }
  }
  const scope = moduleScope(program)
  if (!scope.declared.has(DECLARATIONS.runtime)) return { ok: false, toolSearch: false, reason: `the module does not declare ${DECLARATIONS.runtime}` }
  try {
    const ranking = findRanking(scope, source)
    const register = moduleFunction(scope, DECLARATIONS.register, 1)
    const registers = assignsCatalog(register.node)
    if (registers !== 1) miss(`${DECLARATIONS.register} assigns its catalogRef.current ${registers} times (expected once)`)
    const clear = moduleFunction(scope, DECLARATIONS.clear, 1)
    const code = findCodeMode(scope)
    const calls = findCalls(scope)
    const cases = {
      ...ranking.cases,
      cellJsonSafe: callerMakesCellJsonSafe(program, source, code.jsonSafe) ? 'runCodeMode' : 'child',
      callEntry: calls.callEntry,
    }
    const n = ranking.names
    const rankCall =
      `\n\t\t\tlet __otsRanked;\n` +
      `\t\t\ttry { __otsRanked = await ${ENGINE}?.rank?.({ runtime: this, catalog: ${n.catalog}, entries: ${n.entries}, query: ${n.query}, limit: ${n.limit}, options: ${n.options ?? 'undefined'}, release: __otsRelease }); } catch {}\n` +
      `\t\t\tif (Array.isArray(__otsRanked)) return __otsRanked.map(${n.compact});`
    // OpenClaw's own call runs first and its result (a promise) is returned as it is.
    const callHook =
      `\n\t\t{ const __otsCallEntry = this.callEntry;\n` +
      `\t\tthis.callEntry = (...__otsCallArgs) => {\n` +
      `\t\t\tconst __otsCalled = __otsCallEntry(...__otsCallArgs);\n` +
      `\t\t\ttry { ${ENGINE}?.toolCalled?.({ runtime: this, entry: __otsCallArgs[${calls.entry}], result: __otsCalled, release: __otsRelease }); } catch {}\n` +
      `\t\t\treturn __otsCalled;\n\t\t}; }`
    const edits = [
      { start: ranking.at, end: ranking.at, text: rankCall },
      { start: calls.at, end: calls.at, text: callHook },
      ...wrap(register, (builtin) => `(params, ...rest) {\n\tconst result = ${builtin}(params, ...rest);\n\ttry { ${ENGINE}?.catalogRegistered?.(params?.catalogRef?.current); } catch {}\n\treturn result;\n}`),
      ...wrap(clear, (builtin) => `(params, ...rest) {\n\ttry { ${ENGINE}?.runEnded?.(params); } catch {}\n\treturn ${builtin}(params, ...rest);\n}`),
      ...wrap(code.child, (builtin) =>
        `(params) {\n\tlet __otsCell;\n` +
        `\ttry { __otsCell = ${ENGINE}?.runCodeModeChild?.(params, { runCodeModeBridgeRequest: ${DECLARATIONS.bridge}, toToolSearchJsonSafe: ${code.jsonSafe}, builtin: ${builtin}, release: __otsRelease }); } catch {}\n` +
        `\treturn __otsCell ?? ${builtin}(params);\n}`,
      ),
    ]
    return { ok: true, toolSearch: true, edits, cases }
  } catch (error) {
    if (error instanceof Miss) return { ok: false, toolSearch: true, reason: error.message }
    throw error
  }
}

/**
 * Wraps a module-scope function declaration: the original is renamed `__otsBuiltin_<name>`, and a
 * function of the original name (exported the same way) is declared right after it.
 */
function wrap({ node, exported }, body) {
  const name = node.id.name
  const builtin = `${PREFIX}${name}`
  const edits = [{ start: node.id.start, end: node.id.end, text: builtin }]
  let prefix = 'function '
  if (exported) {
    edits.push({ start: exported.start, end: node.start, text: '' })
    prefix = 'export function '
  }
  edits.push({ start: node.end, end: node.end, text: `\n${prefix}${name}${body(builtin)}` })
  return edits
}

/**
 * Patches OpenClaw's Tool Search module.
 * @param {string} source the module's source
 * @param {{ version?: string, url?: string }} context the OpenClaw version the module belongs to
 * @returns {{ ok: true, source: string, cases: object, support: string, note?: string }
 *   | { ok: false, toolSearch: boolean, reason: string }}
 */
export function patchToolSearchModule(source, { version, url } = {}) {
  if (isPatched(source)) return { ok: true, source, cases: undefined, support: 'patched' }
  // OpenClaw's single-file worker bundles (dist/worker/*.mjs, ~50 MB) carry a copy of Tool Search
  // only through shared imports: their turns have a fixed tool set, plugins off, and run in a
  // child process on a node host. Not parsed, and not reported as a refused Tool Search module.
  if (source.length > MAX_MODULE_BYTES) {
    return { ok: false, toolSearch: false, reason: `${url ?? 'a module'} is ${(source.length / 1048576).toFixed(0)} MB, over the ${MAX_MODULE_BYTES / 1048576} MB the seam parses` }
  }
  const found = findSeam(source)
  if (!found.toolSearch) return found
  // A release this package does not serve is named as such, whatever its structure.
  const release = releaseSupport(version)
  if (release.support === 'unsupported') return { ok: false, toolSearch: true, reason: release.reason }
  if (!found.ok) return found
  // The patch only adds statements after whole statements and renames declarations, so it
  // parses when its own names are new to the module (the tests also parse every release's output).
  const taken = OWN_NAMES.find((name) => source.includes(name))
  if (taken) return { ok: false, toolSearch: true, reason: `the module already uses the name ${taken}` }
  let patched = source
  for (const edit of [...found.edits].sort((a, b) => b.start - a.start || b.end - a.end)) {
    patched = patched.slice(0, edit.start) + edit.text + patched.slice(edit.end)
  }
  const releaseInfo = { version, support: release.support, ...found.cases }
  patched +=
    `\n${MARKER}\nvar __otsRelease = Object.freeze(${JSON.stringify(releaseInfo)});\n` +
    `try { ${ENGINE}?.seamLoaded?.(${JSON.stringify(url ?? '')}, __otsRelease); } catch {}\n`
  return { ok: true, source: patched, cases: found.cases, support: release.support, ...(release.reason ? { note: release.reason } : {}) }
}
