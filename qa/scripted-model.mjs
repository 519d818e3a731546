// The mock provider's "model": a deterministic script that plans the next output item from what a
// Responses API request carries (the user text, the declared tools, and the tool outputs so far).
// It behaves like a small tool-using model that follows the QA prompt
// `tool search qa check target=<name>` and nothing else; it never sees the gateway's internals.

export const QA_OK_PREFIX = 'FAKE_PLUGIN_OK';
export const NOT_FOUND_PREFIX = 'QA_TARGET_NOT_FOUND';
export const CALL_FAILED_PREFIX = 'QA_CALL_FAILED';
export const NO_TOOLS_PREFIX = 'QA_NO_USABLE_TOOL';
export const NO_TARGET_PREFIX = 'QA_NO_TARGET';

const TARGET_PATTERN = /tool search qa check target=([A-Za-z0-9][A-Za-z0-9_.:-]{0,127})/;
// Optional scenario switches in the same user message, e.g. `cell=loop-first`.
const CELL_PATTERN = /\bcell=([a-z-]{1,32})/;
// The live-catalog script: `stale=<tool>` (removed from its server mid-run) and `down=<tool>` (its
// server disconnects mid-run), both used by the model next to the target.
const STALE_PATTERN = /\bstale=([A-Za-z0-9][A-Za-z0-9_.:-]{0,127})/;
const DOWN_PATTERN = /\bdown=([A-Za-z0-9][A-Za-z0-9_.:-]{0,127})/;
const MAX_EXCERPT = 300;

/** The text of every user message, in order. */
export function userTexts(input) {
  if (typeof input === 'string') return [input];
  const texts = [];
  for (const item of input) {
    if (item.role !== 'user') continue;
    if (typeof item.content === 'string') texts.push(item.content);
    else for (const part of item.content) if (part.type === 'input_text') texts.push(part.text);
  }
  return texts;
}

/** Function calls the model made earlier in this conversation, joined with their outputs. */
export function toolExchanges(input) {
  if (typeof input === 'string') return [];
  const calls = [];
  const byCallId = new Map();
  for (const item of input) {
    if (item.type === 'function_call') {
      const exchange = { callId: item.call_id, name: item.name, arguments: item.arguments, output: null };
      calls.push(exchange);
      byCallId.set(item.call_id, exchange);
    } else if (item.type === 'function_call_output') {
      const exchange = byCallId.get(item.call_id);
      if (exchange) exchange.output = outputText(item.output);
    }
  }
  return calls;
}

function outputText(output) {
  if (typeof output === 'string') return output;
  // Responses API also accepts an array of content parts as output.
  if (Array.isArray(output)) {
    return output.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('\n');
  }
  return '';
}

/**
 * Finds `FAKE_PLUGIN_OK <target> ...` in a tool output. Outputs are often JSON, where the text sits
 * inside an escaped string: decode JSON first and search the strings it contains.
 */
export function findOkLine(output, target) {
  const needle = `${QA_OK_PREFIX} ${target}`;
  const candidates = [];
  try {
    collectStrings(JSON.parse(output), candidates, 0);
  } catch {
    // not JSON: search the raw text
  }
  candidates.push(output);
  for (const text of candidates) {
    const at = text.indexOf(needle);
    if (at < 0) continue;
    const after = text.charAt(at + needle.length);
    // `fake_plugin_tool_1` must not match `fake_plugin_tool_17`.
    if (after !== '' && after !== ' ' && after !== '\n') continue;
    const end = text.indexOf('\n', at);
    return text.slice(at, end < 0 ? undefined : end).slice(0, MAX_EXCERPT * 2);
  }
  return null;
}

function collectStrings(value, out, depth) {
  if (depth > 32 || out.length > 1000) return;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out, depth + 1);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) collectStrings(v, out, depth + 1);
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The marker the model passes to the target: derived from the target so results are checkable. */
export function markerFor(target) {
  return `qa-marker-${target}`;
}

/** Two queries for one `tool_search` call: the exact name, and the words a user would type. */
export function searchQueriesFor(target) {
  const words = target.replace(/[_.:-]+/g, ' ').trim();
  return [
    { query: target, limit: 5 },
    { query: `${words} marker`, limit: 5 },
  ];
}

/**
 * Whether the system prompt's capability directory lists `target` by name on an owner's line
 * (`- owner (N tools): a, target, …`): a model that reads it can call the tool by name without
 * searching first (the arguments it passes are the QA convention's, as in every lane).
 */
export function directoryLists(instructions, target) {
  if (typeof instructions !== 'string') return false;
  return instructions.split('\n').some((line) => line.startsWith('- ') && /\(\d+ tools?\): /.test(line)
    && line.slice(line.indexOf('): ') + 3).split(', ').includes(target));
}

/** The code cell the model writes when it only has `tool_search_code`. */
export function codeCellFor(target, listed = false) {
  const t = JSON.stringify(target);
  const marker = JSON.stringify(markerFor(target));
  if (listed) {
    return [
      `const called = await openclaw.tools.call(${t}, { marker: ${marker} });`,
      'return { found: true, id: called?.tool?.id ?? null, called };',
    ].join('\n');
  }
  return [
    `const found = await openclaw.tools.search(${t}, { limit: 5 });`,
    'const hits = Array.isArray(found) ? found : (found?.results ?? found?.hits ?? []);',
    `const hit = hits.find((h) => h.name === ${t} || h.id === ${t});`,
    `if (!hit) return { found: false, target: ${t}, hits: hits.map((h) => h.id) };`,
    'const described = await openclaw.tools.describe(hit.id);',
    `const called = await openclaw.tools.call(hit.id, { marker: ${marker} });`,
    'return { found: true, id: hit.id, required: described?.parameters?.required ?? [], called };',
  ].join('\n');
}

/** A cell that never finishes on its own: the gateway's deadline has to kill it. */
export const LOOPING_CELL = 'let spins = 0;\nwhile (true) { spins += 1; }';

function callPlan(name, args, note) {
  return { kind: 'function_call', name, arguments: JSON.stringify(args), note };
}

function answerPlan(text, note) {
  return { kind: 'message', text, note };
}

function excerpt(text) {
  const flat = String(text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > MAX_EXCERPT ? `${flat.slice(0, MAX_EXCERPT)}...` : flat;
}

/**
 * A search output's JSON. A search that matched tools of an unavailable server, or whose best hits
 * match weakly, ends its text with lines for the model (`Note: ...`) after the JSON: read before
 * the first of them.
 */
function searchJson(output) {
  const parsed = safeJson(output);
  if (parsed !== undefined) return parsed;
  const note = output.indexOf('\nNote: ');
  return note < 0 ? undefined : safeJson(output.slice(0, note));
}

/** Candidates from a `tool_search` output (batch or single shape). */
function searchCandidates(output) {
  const parsed = searchJson(output);
  const out = [];
  const visit = (value, depth) => {
    if (!value || typeof value !== 'object' || depth > 6) return;
    if (Array.isArray(value)) {
      for (const v of value) visit(v, depth + 1);
      return;
    }
    if (typeof value.id === 'string' && typeof value.name === 'string') out.push(value);
    for (const key of ['results', 'candidates', 'hits', 'result', 'details', 'value']) visit(value[key], depth + 1);
  };
  visit(parsed, 0);
  return out;
}

/**
 * Plans the next output item for a validated Responses request.
 * @param {{ input: string | object[], tools?: object[] }} body
 * @returns {{ kind: 'function_call', name: string, arguments: string, note: string } | { kind: 'message', text: string, note: string }}
 */
export function planNext(body) {
  const texts = userTexts(body.input);
  const prompt = texts.join('\n');
  const match = TARGET_PATTERN.exec(prompt);
  if (!match) return answerPlan(`${NO_TARGET_PREFIX}: no "tool search qa check target=<name>" in the user message.`, 'no target');
  const target = match[1];
  const cellSwitch = CELL_PATTERN.exec(prompt)?.[1] ?? null;
  const declared = new Set((body.tools ?? []).filter((t) => t.type === 'function').map((t) => t.name));
  const exchanges = toolExchanges(body.input);

  for (const exchange of exchanges) {
    const ok = exchange.output === null ? null : findOkLine(exchange.output, target);
    if (ok) return answerPlan(ok, `tool output of ${exchange.name} contains the OK line`);
  }

  const last = exchanges.at(-1);
  const marker = markerFor(target);

  // The target's own schema is in the request: call it like any visible tool.
  if (declared.has(target)) {
    if (last && last.name === target) {
      return answerPlan(`${CALL_FAILED_PREFIX} ${target}: ${excerpt(last.output)}`, 'direct call did not succeed');
    }
    return callPlan(target, { marker }, 'target declared directly');
  }

  if (declared.has('tool_search_code')) {
    const cells = exchanges.filter((e) => e.name === 'tool_search_code');
    if (cellSwitch === 'loop-first' && cells.length === 0) {
      return callPlan('tool_search_code', { code: LOOPING_CELL }, 'looping cell first (scenario switch)');
    }
    const realCells = cellSwitch === 'loop-first' ? cells.slice(1) : cells;
    if (realCells.length === 0) {
      if (directoryLists(body.instructions, target)) {
        return callPlan('tool_search_code', { code: codeCellFor(target, true) }, 'code cell: call the tool the directory lists');
      }
      return callPlan('tool_search_code', { code: codeCellFor(target) }, 'code cell: search, describe, call');
    }
    const output = realCells.at(-1).output ?? '';
    if (/"found"\s*:\s*false/.test(output)) return answerPlan(`${NOT_FOUND_PREFIX} ${target}`, 'code cell did not find the target');
    return answerPlan(`${CALL_FAILED_PREFIX} ${target}: ${excerpt(output)}`, 'code cell ran without the OK line');
  }

  const stale = STALE_PATTERN.exec(prompt)?.[1] ?? null;
  const down = DOWN_PATTERN.exec(prompt)?.[1] ?? null;
  if (stale && down && declared.has('tool_search') && declared.has('tool_call')) {
    return livePlan(target, stale, down, exchanges);
  }

  if (declared.has('tool_search') && declared.has('tool_call')) {
    const searches = exchanges.filter((e) => e.name === 'tool_search');
    const calls = exchanges.filter((e) => e.name === 'tool_call');
    if (calls.length > 0) {
      return answerPlan(`${CALL_FAILED_PREFIX} ${target}: ${excerpt(calls.at(-1).output)}`, 'tool_call ran without the OK line');
    }
    if (searches.length === 0) {
      if (directoryLists(body.instructions, target)) {
        return callPlan('tool_call', { id: target, args: { marker } }, 'structured: call the tool the directory lists, by name');
      }
      return callPlan('tool_search', { queries: searchQueriesFor(target) }, 'structured: one search, two queries');
    }
    const candidates = searchCandidates(searches.at(-1).output ?? '');
    const hit = candidates.find((c) => c.name === target || c.id === target);
    if (!hit) return answerPlan(`${NOT_FOUND_PREFIX} ${target}`, 'search results do not contain the target');
    return callPlan('tool_call', { id: hit.id, args: { marker } }, 'structured: call the hit by id');
  }

  return answerPlan(`${NO_TOOLS_PREFIX} ${target}: no tool that can reach it is declared.`, 'no usable tool');
}

/**
 * The live-catalog script (structured tools), one step per model request:
 * 1. search for the target, the stale tool and the down tool (the target is not listed yet);
 * 2. call the down tool; 3. call the stale tool by the id the first search gave;
 * 4. search again for the target and the down tool; 5. call the down tool again by its old id;
 * 6. call the target found by the second search; then answer with its OK line.
 * Failed calls do not stop the script: the gateway, not the model, has to keep them from running.
 */
function livePlan(target, stale, down, exchanges) {
  const searches = exchanges.filter((e) => e.name === 'tool_search');
  const calls = exchanges.filter((e) => e.name === 'tool_call');
  const marker = markerFor(target);
  if (searches.length === 0) {
    const queries = [target, stale, down].map((query) => ({ query, limit: 5 }));
    return callPlan('tool_search', { queries }, 'live: search for the target and the two tools it also uses');
  }
  const before = searchCandidates(searches[0].output ?? '');
  const staleHit = before.find((c) => c.name === stale);
  const downHit = before.find((c) => c.name === down);
  if (!staleHit || !downHit) return answerPlan(`${NOT_FOUND_PREFIX} ${!staleHit ? stale : down}`, 'live: the first search lacks a tool it needs');
  if (calls.length === 0) return callPlan('tool_call', { id: downHit.id, args: { marker } }, 'live: call the down tool while its server is up');
  if (calls.length === 1) return callPlan('tool_call', { id: staleHit.id, args: { marker } }, 'live: call the stale tool by the id the first search gave');
  if (searches.length === 1) {
    return callPlan('tool_search', { queries: [target, down].map((query) => ({ query, limit: 5 })) }, 'live: search again for the target and the down tool');
  }
  if (calls.length === 2) return callPlan('tool_call', { id: downHit.id, args: { marker } }, 'live: call the down tool again by its old id');
  const hit = searchCandidates(searches[1].output ?? '').find((c) => c.name === target || c.id === target);
  if (!hit) return answerPlan(`${NOT_FOUND_PREFIX} ${target}`, 'live: the second search does not contain the target');
  if (calls.length === 3) return callPlan('tool_call', { id: hit.id, args: { marker } }, 'live: call the target found by the second search');
  return answerPlan(`${CALL_FAILED_PREFIX} ${target}: ${excerpt(calls.at(-1).output)}`, 'live: the target ran without the OK line');
}
