// The mock provider's "model" for the OpenClaw QA (OpenAI chat-completions requests, as OpenClaw's
// `openai-completions` providers send them). A deterministic script: it follows the prompt
//   tool search qa check target=<tool name> task="<what to search for>" marker=<m> [cell=<variant>]
// and nothing else, using only what a real model sees: the declared tools and the tool messages.
//   - the target declared directly: call it;
//   - tool_search + tool_call declared: one tool_search with two queries (the task, and an unrelated
//     one), then tool_call with the id of the hit named like the target;
//   - tool_search_code declared: one cell that searches, describes and calls the target
//     (cell=loop-first: a cell that never ends first; cell=escape: a cell that tries to read a
//     file and reach the network first; cell=memory-first: a cell that fills its heap first; then
//     the ordinary cell, whose note carries the first cell's tool message as the model read it);
//   - after a tool message holding `FAKE_PLUGIN_OK <target>`: answer with that line.
// Each decision carries `note` (what the model saw: the target's rank in its first search), which
// the provider records for the QA table.

export const OK_PREFIX = 'FAKE_PLUGIN_OK'
const PROMPT = /tool search qa check target=([A-Za-z0-9_.:-]{1,128}) task="([^"]{1,200})" marker=([A-Za-z0-9_-]{1,64})(?: cell=([a-z-]{1,32}))?/
const MAX_STEPS = 8

function textOf(content) {
  if (content == null) return ''
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part) => (typeof part === 'string' ? part : part?.text ?? '')).join('\n')
  return JSON.stringify(content)
}

/**
 * The MCP lanes' prompt: `mcp qa plan=<base64url JSON>`, the plan `{ m: marker, s: [queries to
 * search and report], c: [{ q: query, t: tool name (OpenClaw's safe form), a?: args }], limit? }`.
 */
const PLAN_PROMPT = /mcp qa plan=([A-Za-z0-9_-]{1,20000})/

/** The plan of an MCP lane's prompt, base64url JSON (see PLAN_PROMPT). */
export function encodePlan(plan) {
  return `mcp qa plan=${Buffer.from(JSON.stringify(plan)).toString('base64url')}`
}

/** The scenario's prompt (OpenClaw adds a context message after it, so search from the end). */
export function scenarioOf(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role !== 'user') continue
    const text = textOf(messages[i].content)
    const match = PROMPT.exec(text)
    if (match) return { at: i, target: match[1], task: match[2], marker: match[3], cell: match[4] }
    const plan = PLAN_PROMPT.exec(text)
    if (plan) {
      try {
        const parsed = JSON.parse(Buffer.from(plan[1], 'base64url').toString('utf8'))
        if (typeof parsed?.m === 'string') return { at: i, plan: parsed, marker: parsed.m }
      } catch {
        // not a plan
      }
    }
  }
  return undefined
}

/**
 * An MCP lane's one cell: the plan's searches (each hit list's ids, for the ranking check), then
 * for each wanted tool a search for its request, the hit named like it, and a call; the cell
 * returns what it saw.
 */
function planCell(plan) {
  return [
    `const plan = ${JSON.stringify(plan)};`,
    `const out = { marker: plan.m, probes: [], calls: [] };`,
    `for (const query of plan.s ?? []) out.probes.push((await openclaw.tools.search(query, { limit: plan.limit ?? 10 })).map((hit) => hit.id));`,
    `for (const want of plan.c ?? []) {`,
    `  const hits = await openclaw.tools.search(want.q, { limit: 10 });`,
    `  const at = hits.findIndex((hit) => hit.name === want.t || hit.name.endsWith('__' + want.t));`,
    `  const row = { tool: want.t, rank: at + 1 };`,
    `  if (at < 0) { row.ids = hits.slice(0, 5).map((hit) => hit.id); out.calls.push(row); continue; }`,
    `  row.id = hits[at].id;`,
    `  try { const done = await openclaw.tools.call(row.id, want.a ?? { marker: plan.m }); row.ok = true; row.text = JSON.stringify(done?.result ?? done).slice(0, 400); }`,
    `  catch (error) { row.ok = false; row.error = String(error?.message ?? error).slice(0, 400); }`,
    `  out.calls.push(row);`,
    `}`,
    `return out;`,
  ].join('\n')
}

/** The MCP lanes' script: one cell, then the cell's value as the answer. */
function decidePlan(scenario, declared, toolMessages) {
  if (!declared.has('tool_search_code')) return { content: `QA_NO_USABLE_TOOL ${[...declared].slice(0, 20).join(',')}`, note: { step: 'no-tool' } }
  if (toolMessages.length === 0) return { toolCalls: [{ name: 'tool_search_code', arguments: JSON.stringify({ code: planCell(scenario.plan) }) }], note: { step: 'plan-cell' } }
  const value = jsonIn(toolMessages[0])
  const out = value?.marker === scenario.marker ? value : (value?.result ?? value?.value ?? value)
  if (out && typeof out === 'object' && out.marker === scenario.marker) return { content: `MCP_QA_DONE ${JSON.stringify(out)}`, note: { step: 'plan-done' } }
  return { content: `MCP_QA_FAILED ${toolMessages[0].slice(0, 600)}`, note: { step: 'plan-failed' } }
}

/** `FAKE_PLUGIN_OK <target> {...}` in a tool message (often JSON-escaped inside a bigger result). */
export function okLine(text, target) {
  const plain = text.replace(/\\"/g, '"')
  const at = plain.indexOf(`${OK_PREFIX} ${target} `)
  if (at < 0) return undefined
  const end = plain.indexOf('}', at)
  return end < 0 ? undefined : plain.slice(at, end + 1)
}

/**
 * The JSON in a tool message. OpenClaw wraps results that hold MCP (network) content in a notice
 * (`SECURITY NOTICE … <<<EXTERNAL_UNTRUSTED_CONTENT …>>>`), so the JSON may sit inside other text.
 */
function jsonIn(text) {
  try {
    return JSON.parse(text)
  } catch {
    // look for the JSON inside
  }
  for (const [open, close] of [['{', '}'], ['[', ']']]) {
    const start = text.indexOf(open)
    const end = text.lastIndexOf(close)
    if (start < 0 || end <= start) continue
    try {
      return JSON.parse(text.slice(start, end + 1))
    } catch {
      // try the other bracket
    }
  }
  return undefined
}

/** The hits of a tool_search result (a list, or a batch's first group). */
function hitsOf(text, group = 0) {
  const parsed = jsonIn(text)
  if (Array.isArray(parsed)) return parsed
  if (Array.isArray(parsed?.results)) return parsed.results[group]?.candidates ?? []
  return undefined
}

const SECOND_QUERY = 'open a support ticket'

function normalCell(scenario) {
  const { target, task, marker } = scenario
  return [
    `const hits = await openclaw.tools.search(${JSON.stringify(task)}, { limit: 8 });`,
    `const rank = hits.findIndex((hit) => hit.name === ${JSON.stringify(target)}) + 1;`,
    `if (rank === 0) return { rank, names: hits.map((hit) => hit.name) };`,
    `const tool = await openclaw.tools.describe(hits[rank - 1].id);`,
    `const out = await openclaw.tools.call(tool.id, { marker: ${JSON.stringify(marker)} });`,
    `return { rank, result: out.result };`,
  ].join('\n')
}

// Tries what model-written code must not be able to do: read a file, reach the network, start a
// process. Reports what happened; the QA checks nothing leaked and nothing connected.
function escapeCell(canaryPort) {
  return [
    `const report = {};`,
    `const attempt = async (name, fn) => { try { report[name] = String(await fn()).slice(0, 200); } catch (e) { report[name] = 'refused: ' + String(e && e.message).slice(0, 120); } };`,
    `await attempt('import fs', async () => (await import('node:fs')).readFileSync('/etc/passwd', 'utf8'));`,
    `await attempt('require fs', () => require('fs').readFileSync('/etc/passwd', 'utf8'));`,
    `await attempt('process.binding', () => process.binding('fs'));`,
    `await attempt('getBuiltinModule', () => process.getBuiltinModule('fs').readFileSync('/etc/passwd', 'utf8'));`,
    `await attempt('constructor escape', () => this.constructor.constructor('return process')().mainModule.require('fs').readFileSync('/etc/passwd', 'utf8'));`,
    `await attempt('fetch', async () => (await fetch('http://127.0.0.1:${canaryPort}/')).status);`,
    `await attempt('child_process', async () => (await import('node:child_process')).execSync('id').toString());`,
    `return report;`,
  ].join('\n')
}

/**
 * The next assistant turn: `{ content }` or `{ toolCalls: [{ name, arguments }] }`, and `note`.
 * @param {{ messages: any[], tools?: any[] }} body the chat-completions request
 * @param {{ canaryPort?: number }} options
 */
export function decide(body, options = {}) {
  const messages = Array.isArray(body?.messages) ? body.messages : []
  const declared = new Set((body?.tools ?? []).map((tool) => tool?.function?.name ?? tool?.name).filter(Boolean))
  const scenario = scenarioOf(messages)
  if (!scenario) return { content: 'QA_NO_TARGET', note: { step: 'no-target' } }
  const after = messages.slice(scenario.at + 1)
  const toolMessages = after.filter((m) => m?.role === 'tool').map((m) => textOf(m.content))
  if (scenario.plan) return decidePlan(scenario, declared, toolMessages)
  const steps = after.filter((m) => m?.role === 'assistant' && m.tool_calls?.length).length
  for (const text of toolMessages) {
    const line = okLine(text, scenario.target)
    // A code cell returns the target's rank in its search beside the result.
    if (line) return { content: `Done. ${line}`, note: { step: 'done', rank: cellRank(text) } }
  }
  if (steps >= MAX_STEPS) return { content: 'QA_GAVE_UP', note: { step: 'gave-up' } }
  const { target, task, marker } = scenario
  const call = (name, args, note) => ({ toolCalls: [{ name, arguments: JSON.stringify(args) }], note })

  if (declared.has(target)) return call(target, { marker }, { step: 'direct-call' })

  if (declared.has('tool_search') && declared.has('tool_call')) {
    if (toolMessages.length === 0) {
      return call('tool_search', { queries: [{ query: task }, { query: SECOND_QUERY }] }, { step: 'search' })
    }
    const hits = hitsOf(toolMessages[0]) ?? []
    const rank = hits.findIndex((hit) => hit?.name === target) + 1
    if (toolMessages.length === 1) {
      // Not listed (e.g. denied by policy): a model would still try the name it was given.
      const id = rank > 0 ? hits[rank - 1].id : target
      return call('tool_call', { id, args: { marker } }, { step: 'call', rank })
    }
    return { content: `QA_CALL_FAILED ${toolMessages.at(-1).slice(0, 300)}`, note: { step: 'call-failed' } }
  }

  if (declared.has('tool_search_code')) {
    const cells = toolMessages.length
    if (scenario.cell === 'loop-first' && cells === 0) return call('tool_search_code', { code: 'while (true) {}' }, { step: 'loop-cell' })
    if (scenario.cell === 'escape' && cells === 0) {
      return call('tool_search_code', { code: escapeCell(options.canaryPort ?? 9) }, { step: 'escape-cell' })
    }
    if (scenario.cell === 'memory-first' && cells === 0) {
      return call('tool_search_code', { code: 'const kept = []; while (true) kept.push(new Array(1e6).fill(1));' }, { step: 'memory-cell' })
    }
    const extra = ['loop-first', 'escape', 'memory-first'].includes(scenario.cell) ? 1 : 0
    if (cells === extra) return call('tool_search_code', { code: normalCell(scenario) }, { step: 'cell', ...(extra ? { previous: toolMessages[0].slice(0, 4000) } : {}) })
    return { content: `QA_CALL_FAILED ${toolMessages.at(-1).slice(0, 300)}`, note: { step: 'cell-failed', rank: cellRank(toolMessages.at(-1)) } }
  }
  return { content: `QA_NO_USABLE_TOOL ${[...declared].slice(0, 20).join(',')}`, note: { step: 'no-tool' } }
}

/** The target's rank in a code cell's returned value (`{ rank, result }`), from a tool message. */
export function cellRank(text) {
  const match = /"rank"\s*:\s*(\d+)/.exec(text.replace(/\\"/g, '"'))
  return match ? Number(match[1]) : undefined
}
