// Deliberately wrong copies of recorded runs: each assertion must fail on its corruption, which
// proves the assertion can fail at all. Every corruption is one small, realistic regression.

import { LIVE_DOWN_ID, LIVE_DOWN_SERVER, LIVE_REMOVED, LIVE_REMOVED_ID, LIVE_TARGET_ID, QA_TARGET, QA_TARGET_ID } from './fake-plugin.mjs';
import type { RunArtifacts } from './assertions.mjs';
import type { CatalogAudit } from '../index.js';
import type { GatewayAttempt } from './gateway.mjs';
import type { LogLine } from './session-log.mjs';

function clone(a: RunArtifacts): RunArtifacts {
  return structuredClone(a);
}

function endLine(a: RunArtifacts): LogLine {
  const end = a.log.find((l) => l.type === 'run.end');
  if (!end) throw new Error('corruption needs a run.end line');
  return end;
}

function targetAttempt(a: RunArtifacts): GatewayAttempt {
  const attempt = (endLine(a).gatewayAttempts as GatewayAttempt[]).find((t) => t.name === QA_TARGET);
  if (!attempt) throw new Error('corruption needs an attempt of the target');
  return attempt;
}

/** The target never actually ran (e.g. the executor swallowed the call). */
export function targetNotExecuted(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  targetAttempt(copy).executed = false;
  return copy;
}

/** The target was run by the gateway directly, bypassing the session. */
export function targetRanOutsideSession(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  targetAttempt(copy).via = 'direct';
  return copy;
}

/** One fake schema is missing from the first direct request. */
export function dropOneFakeSchema(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const req = copy.requests.find((r) => r.path === '/v1/responses');
  if (!req?.body?.tools) throw new Error('corruption needs a request with tools');
  req.body.tools = req.body.tools.filter((t: { name: string }) => t.name !== 'fake_plugin_tool_05');
  req.declaredTools = (req.declaredTools ?? []).filter((n) => n !== 'fake_plugin_tool_05');
  return copy;
}

/** A fake plugin schema leaked into a Tool Search request. */
export function leakFakeSchema(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const req = copy.requests.find((r) => r.path === '/v1/responses');
  if (!req) throw new Error('corruption needs a request');
  req.declaredTools = [...(req.declaredTools ?? []), 'fake_plugin_tool_05'];
  return copy;
}

/** The lane's first request is as large as direct's. */
export function inflateFirstRequest(a: RunArtifacts, direct: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const req = copy.requests.find((r) => r.path === '/v1/responses');
  const directFirst = direct.requests.find((r) => r.path === '/v1/responses');
  if (!req || !directFirst) throw new Error('corruption needs requests');
  req.rawBytes = directFirst.rawBytes + 1;
  return copy;
}

/** One search too many in the counts. */
export function extraSearch(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const end = endLine(copy);
  const counts = end.counts as { searches: number };
  counts.searches += 1;
  return copy;
}

/** The final tool is reported from the wrong source. */
export function wrongFinalSource(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  endLine(copy).finalTool = { id: QA_TARGET_ID, source: 'mcp' };
  return copy;
}

/** The structured lane searched with one query only. */
export function singleQuerySearch(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const req = copy.requests.find((r) => r.plan?.kind === 'function_call' && r.plan.name === 'tool_search');
  if (!req || req.plan?.kind !== 'function_call') throw new Error('corruption needs a tool_search plan');
  const args = req.plan.arguments as { queries: unknown[] };
  req.plan.arguments = { queries: args.queries.slice(0, 1) };
  return copy;
}

/** A search result leaked the denied target to the model. */
export function leakDeniedTarget(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const req = copy.requests.find((r) => (r.body?.input ?? []).some((i: { type: string }) => i.type === 'function_call_output'));
  if (!req) throw new Error('corruption needs a request carrying a tool output');
  const item = req.body.input.find((i: { type: string }) => i.type === 'function_call_output');
  item.output = `${item.output} ${QA_TARGET_ID}`;
  return copy;
}

/** The vanished tool ran anyway. */
export function vanishedRanAnyway(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const attempt = targetAttempt(copy);
  attempt.outcome = 'ok';
  attempt.executed = true;
  return copy;
}

/** An approval block reported as a plain error. */
export function blockReportedAsError(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const result = copy.log.find((l) => l.type === 'tool.result' && l.name === 'tool_call');
  if (!result) throw new Error('corruption needs a tool_call result');
  result.status = 'error';
  return copy;
}

/** The looping cell's child survived the deadline. */
export function loopNotKilled(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const first = copy.log.find((l) => l.type === 'tool.result' && l.name === 'tool_search_code');
  if (!first) throw new Error('corruption needs a code cell result');
  first.codeChildGone = false;
  return copy;
}

/** One of the parallel runs did not reach the answer. */
export function oneParallelRunFailed(runs: RunArtifacts[]): RunArtifacts[] {
  const copy = runs.map(clone);
  const end = copy[copy.length - 1] ? endLine(copy[copy.length - 1]!) : null;
  if (!end) throw new Error('corruption needs runs');
  end.outcome = 'call-failed';
  return copy;
}

/** An MCP tool's name leaked into the prompt. */
export function leakUntrustedName(a: RunArtifacts, untrustedName: string): RunArtifacts {
  const copy = clone(a);
  const req = copy.requests.find((r) => r.path === '/v1/responses' && r.body);
  if (!req) throw new Error('corruption needs a request body');
  req.body.instructions = `${req.body.instructions ?? ''}\n- ${untrustedName} (mcp): injected`;
  return copy;
}

// The live lane.

/** The model's tool_call of a catalog id (the provider's plan), or throws. */
function plannedToolCall(a: RunArtifacts, id: string, nth = 0): string {
  const plans = a.requests.filter((r) => r.plan?.kind === 'function_call' && r.plan.name === 'tool_call' && (r.plan.arguments as { id?: unknown })?.id === id);
  const plan = plans[nth]?.plan;
  if (plan?.kind !== 'function_call') throw new Error(`corruption needs tool_call #${nth + 1} of ${id}`);
  return plan.callId;
}

/** The search after the list change does not list the new tool (the change never reached the session). */
export function newToolMissingFromSearch(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const searches = new Set(copy.requests.flatMap((r) => (r.plan?.kind === 'function_call' && r.plan.name === 'tool_search' ? [r.plan.callId] : [])));
  let changed = 0;
  for (const req of copy.requests) {
    for (const item of req.body?.input ?? []) {
      if (item.type !== 'function_call_output' || !searches.has(item.call_id) || !String(item.output).includes(LIVE_TARGET_ID)) continue;
      item.output = String(item.output).replaceAll(LIVE_TARGET_ID, 'mcp:qa_tracker:tracker_create_issue');
      changed += 1;
    }
  }
  if (changed === 0) throw new Error('corruption needs a search output listing the new tool');
  return copy;
}

/** The removed tool's stale id reached the gateway executor (which no longer knows it). */
export function removedToolReachedExecutor(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const callId = plannedToolCall(copy, LIVE_REMOVED_ID);
  (endLine(copy).gatewayAttempts as GatewayAttempt[]).push({
    via: 'session', id: LIVE_REMOVED_ID, name: LIVE_REMOVED, source: 'mcp', owner: 'qa_tracker',
    toolCallId: `tool_call:${callId}:${LIVE_REMOVED}`, parentToolCallId: callId, args: {},
    outcome: 'missing', executed: false, message: `tool ${LIVE_REMOVED_ID} is not available in this gateway`,
  });
  return copy;
}

/** The disconnected server's tool ran anyway on the call after the disconnect. */
export function disconnectedToolRanAnyway(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const callId = plannedToolCall(copy, LIVE_DOWN_ID, 1);
  (endLine(copy).gatewayAttempts as GatewayAttempt[]).push({
    via: 'session', id: LIVE_DOWN_ID, name: 'docs_get_page', source: 'mcp', owner: LIVE_DOWN_SERVER,
    toolCallId: `tool_call:${callId}:docs_get_page`, parentToolCallId: callId, args: {}, outcome: 'ok', executed: true,
  });
  return copy;
}

/**
 * The session's counters restarted at the last catalog change: the run's final telemetry holds only
 * what came after it. (The change line itself is left intact, so the check of the final totals is
 * what has to catch it.)
 */
export function telemetryResetByUseCatalog(a: RunArtifacts): RunArtifacts {
  const copy = clone(a);
  const changes = copy.log.filter((l) => l.type === 'catalog.change');
  const last = changes.at(-1);
  if (!last) throw new Error('corruption needs a catalog.change line');
  const before = last.sessionTelemetryBefore as { searches: number; calls: number; requestBytes: { total: number; requests: number } };
  const end = endLine(copy);
  const telemetry = end.telemetry as { searches: number; calls: number; requestBytes: { total: number; requests: number }; toolsCalled: { id: string }[] };
  telemetry.searches -= before.searches;
  telemetry.calls -= before.calls;
  telemetry.requestBytes = { ...telemetry.requestBytes, total: telemetry.requestBytes.total - before.requestBytes.total, requests: telemetry.requestBytes.requests - before.requestBytes.requests };
  telemetry.toolsCalled = telemetry.toolsCalled.filter((t) => t.id !== LIVE_DOWN_ID);
  end.counts = { searches: telemetry.searches, describes: 0, calls: telemetry.calls };
  return copy;
}

/** The audit as if the QA target were unfindable (no probe ranks it). */
export function targetUnfindable(audit: CatalogAudit, target: string): CatalogAudit {
  return {
    ...audit,
    tools: audit.tools.map((t) =>
      t.name === target ? { ...t, bestRank: null, problems: ['unfindable', ...t.problems], probes: t.probes.map((p) => ({ ...p, rank: null })) } : t,
    ),
  };
}
