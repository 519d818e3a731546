// The QA assertions. Each works only on recorded data: the JSONL session log read back from disk
// and what the provider says it received (GET /debug/requests). That keeps them honest (they see
// what a gateway operator would see) and lets every one be run against a deliberately broken copy
// of the data, which must make it fail (see ./negatives.mts).

import { isDeepStrictEqual } from 'node:util';
import type { CatalogAudit } from '../index.js';
import { MARKER_SCHEMA, QA_TARGET, QA_TARGET_ID, OK_PREFIX, LIVE_CHANGED_SERVER, LIVE_DOWN_ID, LIVE_DOWN_REASON, LIVE_DOWN_SERVER, LIVE_REMOVED, LIVE_REMOVED_ID, LIVE_TARGET, LIVE_TARGET_ID } from './fake-plugin.mjs';
import type { RecordedRequest } from './provider-client.mjs';
import { laneMode } from './run-lane.mjs';
import type { LogLine } from './session-log.mjs';
import type { GatewayAttempt } from './gateway.mjs';

export class QaAssertionError extends Error {
  constructor(readonly assertion: string, message: string) {
    super(`${assertion}: ${message}`);
    this.name = 'QaAssertionError';
  }
}

/** Everything recorded about one run. Plain JSON: safe to clone and corrupt for negative cases. */
export interface RunArtifacts {
  lane: string;
  log: LogLine[];
  requests: RecordedRequest[];
}

const CONTROL_TOOLS: Record<string, string[]> = {
  code: ['tool_search_code'],
  tools: ['tool_search', 'tool_describe', 'tool_call'],
  directory: ['tool_search', 'tool_describe', 'tool_call'],
  live: ['tool_search', 'tool_describe', 'tool_call'],
};
export const MAX_HYDRATED = 4;

function check(assertion: string, condition: unknown, message: string): asserts condition {
  if (!condition) throw new QaAssertionError(assertion, message);
}

function lines(a: RunArtifacts, type: LogLine['type']): LogLine[] {
  return a.log.filter((l) => l.type === type);
}

function one(a: RunArtifacts, type: 'run.start' | 'run.end', assertion: string): LogLine {
  const found = lines(a, type);
  check(assertion, found.length === 1, `expected exactly one ${type} line in the session log, found ${found.length}`);
  return found[0]!;
}

function attempts(a: RunArtifacts, assertion: string): GatewayAttempt[] {
  const end = one(a, 'run.end', assertion);
  check(assertion, Array.isArray(end.gatewayAttempts), 'run.end has no gatewayAttempts');
  return end.gatewayAttempts as GatewayAttempt[];
}

function modelRequests(a: RunArtifacts): RecordedRequest[] {
  return a.requests.filter((r) => r.path === '/v1/responses' && r.method === 'POST');
}

function okRequests(a: RunArtifacts, assertion: string): RecordedRequest[] {
  const reqs = modelRequests(a);
  check(assertion, reqs.length > 0, 'the provider received no model request for this run');
  const failed = reqs.filter((r) => r.status !== 200);
  check(assertion, failed.length === 0, `the provider rejected ${failed.length} request(s): ${JSON.stringify(failed[0]?.error)}`);
  return reqs;
}

/** The run must have used the mode its lane asks for (code mode falls back to tools when unavailable). */
function checkMode(a: RunArtifacts, assertion: string): void {
  const start = one(a, 'run.start', assertion);
  const config = start.config as { fallbackReason?: string } | undefined;
  check(assertion, start.mode === laneMode(a.lane), `lane ${a.lane} ran in mode ${String(start.mode)}${config?.fallbackReason ? ` (${config.fallbackReason})` : ''}`);
}

/** The final answer must be the fake tool's OK line for the target. */
function checkFinalOk(a: RunArtifacts, assertion: string, target: string = QA_TARGET): void {
  const end = one(a, 'run.end', assertion);
  check(assertion, end.outcome === 'ok', `run outcome is ${String(end.outcome)} (${String(end.error ?? end.finalText)})`);
  check(assertion, typeof end.finalText === 'string' && end.finalText.startsWith(`${OK_PREFIX} ${target} `), `final text does not start with "${OK_PREFIX} ${target}": ${String(end.finalText)}`);
  const last = modelRequests(a).at(-1);
  check(assertion, last?.plan?.kind === 'message' && last.plan.text === end.finalText, 'the provider did not plan the final answer the log reports');
}

/** The one executed attempt of the target, with the marker the model was told to send. */
function targetExecution(a: RunArtifacts, assertion: string, via: GatewayAttempt['via']): GatewayAttempt {
  const executed = attempts(a, assertion).filter((t) => t.executed);
  check(assertion, executed.length === 1, `expected exactly one executed tool, found ${executed.length}: ${executed.map((t) => t.name).join(', ')}`);
  const run = executed[0]!;
  check(assertion, run.name === QA_TARGET && run.id === QA_TARGET_ID, `the executed tool is ${run.id || run.name}, not ${QA_TARGET_ID}`);
  check(assertion, run.via === via, `the target ran via ${run.via}, expected ${via}`);
  check(assertion, isDeepStrictEqual(run.args, { marker: `qa-marker-${QA_TARGET}` }), `the target ran with ${JSON.stringify(run.args)}`);
  check(assertion, run.outcome === 'ok', `the target's execution outcome is ${run.outcome}`);
  return run;
}

/** A session `call` event as the log recorded it. */
interface CallEvent {
  type: 'call';
  via: string;
  toolCallId: string;
  parentToolCallId?: string;
  tool?: { id: string; name: string; source: string; owner: string };
  outcome: string;
}

function callEvents(a: RunArtifacts): CallEvent[] {
  return lines(a, 'session.event').map((l) => l.event as CallEvent).filter((e) => e?.type === 'call');
}

function toolCalls(a: RunArtifacts): { name: string; callId: string; via?: unknown }[] {
  return lines(a, 'tool.call').map((l) => ({ name: String(l.name), callId: String(l.callId), via: l.via }));
}

// 1. Direct mode calls the fake tool: the model calls it by name, the session runs it directly.
export function assertDirectCallsTarget(a: RunArtifacts): void {
  const name = '1 direct calls the fake tool';
  checkFinalOk(a, name);
  const run = targetExecution(a, name, 'session');
  const calls = toolCalls(a).filter((c) => c.name === QA_TARGET);
  check(name, calls.length === 1 && calls[0]!.callId === run.toolCallId, 'the log does not show the model calling the target by name');
  const event = callEvents(a).find((e) => e.toolCallId === run.toolCallId);
  check(name, event?.via === 'direct' && event.tool?.id === QA_TARGET_ID && event.outcome === 'ok', `session call event: ${JSON.stringify(event)}`);
  const result = lines(a, 'tool.result').find((l) => l.callId === run.toolCallId);
  check(name, result?.status === 'ok', `the target's tool.result status is ${String(result?.status)}`);
}

const LANE_VIA: Record<string, string[]> = { code: ['tool_search_code'], tools: ['tool_call'], directory: ['tool_call', 'direct'] };

// 2. Each Tool Search lane calls the same tool through the bridge or tool_call.
export function assertSearchLaneCallsTarget(a: RunArtifacts): void {
  const name = `2 ${a.lane} calls the fake tool through Tool Search`;
  checkMode(a, name);
  checkFinalOk(a, name);
  const run = targetExecution(a, name, 'session');
  const event = callEvents(a).find((e) => e.toolCallId === run.toolCallId && e.tool?.id === QA_TARGET_ID);
  check(name, event !== undefined && event.outcome === 'ok', `no successful session call event for the executor's call ${run.toolCallId}`);
  const vias = LANE_VIA[a.lane] ?? [];
  check(name, vias.includes(event.via), `the target was called via ${event.via}, expected ${vias.join(' or ')}`);
  // The model call that caused it: the code cell or the tool_call wrapper (the parent), or the
  // direct call itself.
  const origin = event.parentToolCallId ?? event.toolCallId;
  const modelCall = toolCalls(a).find((c) => c.callId === origin);
  check(name, modelCall !== undefined, `no model tool call ${String(origin)} in the log`);
  const expectedName = event.via === 'tool_search_code' ? 'tool_search_code' : event.via === 'tool_call' ? 'tool_call' : QA_TARGET;
  check(name, modelCall.name === expectedName, `the target ran from the model's ${modelCall.name} call, expected ${expectedName}`);
}

// 3. Direct sends every fake schema to the provider.
export function assertDirectSendsAllSchemas(a: RunArtifacts, fakeToolNames: string[]): void {
  const name = '3 direct sends every fake schema';
  const reqs = okRequests(a, name);
  const start = one(a, 'run.start', name);
  for (const req of reqs) {
    const tools = (req.body?.tools ?? []) as { name: string; description?: string; parameters?: unknown }[];
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const fake of fakeToolNames) {
      const tool = byName.get(fake);
      check(name, tool !== undefined, `request ${req.seq} does not declare ${fake}`);
      check(name, isDeepStrictEqual(tool.parameters, MARKER_SCHEMA), `request ${req.seq} declares ${fake} with a different schema`);
    }
    check(name, tools.length === start.declaredTools, `request ${req.seq} declares ${tools.length} tools, the log says ${String(start.declaredTools)}`);
    check(name, tools.length >= Number(start.catalogSize), `request ${req.seq} declares ${tools.length} tools for a catalog of ${String(start.catalogSize)}`);
  }
}

// 4. Tool Search lanes send only their control tools (plus direct-only, and in directory mode the
//    visible client tools and at most four hydrated schemas).
export function assertOnlyControlTools(a: RunArtifacts, extra: { directOnly: string[]; clientTools: string[] }): void {
  const name = `4 ${a.lane} sends only control tools`;
  checkMode(a, name);
  const control = CONTROL_TOOLS[a.lane];
  check(name, control !== undefined, `no control set for lane ${a.lane}`);
  const start = one(a, 'run.start', name);
  const hydrated = Array.isArray(start.hydrated) ? (start.hydrated as string[]) : [];
  check(name, a.lane === 'directory' || hydrated.length === 0, `${a.lane} hydrated schemas: ${hydrated.join(', ')}`);
  check(name, hydrated.length <= MAX_HYDRATED, `${hydrated.length} hydrated schemas, at most ${MAX_HYDRATED}`);
  const allowed = new Set([...control, ...extra.directOnly, ...(a.lane === 'directory' ? [...extra.clientTools, ...hydrated] : [])]);
  for (const req of okRequests(a, name)) {
    const declared = req.declaredTools ?? [];
    const unexpected = declared.filter((t) => !allowed.has(t));
    check(name, unexpected.length === 0, `request ${req.seq} declares ${unexpected.slice(0, 5).join(', ')}${unexpected.length > 5 ? ` and ${unexpected.length - 5} more` : ''}`);
    for (const c of control) check(name, declared.includes(c), `request ${req.seq} lacks the control tool ${c}`);
    for (const d of extra.directOnly) check(name, declared.includes(d), `request ${req.seq} lacks the direct-only tool ${d}`);
  }
}

// 5. Each Tool Search lane's payload is smaller than direct's: up front and over the whole run.
export function assertSmallerPayload(a: RunArtifacts, direct: RunArtifacts): { first: number; total: number; directFirst: number; directTotal: number } {
  const name = `5 ${a.lane} payload smaller than direct`;
  const mine = okRequests(a, name).map((r) => r.rawBytes);
  const theirs = okRequests(direct, name).map((r) => r.rawBytes);
  const sizes = { first: mine[0]!, total: sum(mine), directFirst: theirs[0]!, directTotal: sum(theirs) };
  check(name, sizes.first < sizes.directFirst, `first request ${sizes.first} B is not smaller than direct's ${sizes.directFirst} B`);
  check(name, sizes.total < sizes.directTotal, `run total ${sizes.total} B is not smaller than direct's ${sizes.directTotal} B`);
  const logged = lines(a, 'model.request').map((l) => Number(l.requestBytes));
  check(name, isDeepStrictEqual(logged, mine), `the log's request bytes ${JSON.stringify(logged)} differ from what the provider received ${JSON.stringify(mine)}`);
  return sizes;
}

export interface ExpectedCounts {
  searches: number;
  describes: number;
  calls: number;
}

// 6. The session log shows the expected counts, the final tool id and source, and (code lane) the
//    bridged-call telemetry.
export function assertSessionLog(a: RunArtifacts, expected: ExpectedCounts): void {
  const name = `6 ${a.lane} session log`;
  checkMode(a, name);
  const start = one(a, 'run.start', name);
  const end = one(a, 'run.end', name);
  const reqs = okRequests(a, name);
  check(name, lines(a, 'model.request').length === reqs.length, `${lines(a, 'model.request').length} model.request lines for ${reqs.length} provider requests`);
  const planned = reqs.filter((r) => r.plan?.kind === 'function_call').map((r) => (r.plan as { callId: string }).callId);
  const called = lines(a, 'tool.call').map((l) => l.callId);
  const results = lines(a, 'tool.result').map((l) => l.callId);
  check(name, isDeepStrictEqual(called, planned), `tool.call lines ${JSON.stringify(called)} do not match the model's calls ${JSON.stringify(planned)}`);
  check(name, isDeepStrictEqual(results, planned), `tool.result lines ${JSON.stringify(results)} do not match the model's calls ${JSON.stringify(planned)}`);
  check(name, start.declaredTools === (reqs[0]!.declaredTools ?? []).length, `run.start says ${String(start.declaredTools)} schemas up front, the provider saw ${(reqs[0]!.declaredTools ?? []).length}`);
  const counts = end.counts as ExpectedCounts;
  check(name, isDeepStrictEqual(counts, expected), `counts ${JSON.stringify(counts)}, expected ${JSON.stringify(expected)}`);
  const finalTool = end.finalTool as { id: string; source: string } | null;
  check(name, finalTool?.id === QA_TARGET_ID && finalTool.source === 'openclaw', `final tool ${JSON.stringify(finalTool)}, expected ${QA_TARGET_ID} from openclaw`);
  for (const l of lines(a, 'tool.result')) check(name, typeof l.outputBytes === 'number' && l.outputBytes > 0, `tool.result ${String(l.callId)} has no byte count`);
  const telemetry = end.telemetry as SessionTelemetryView | null;
  check(name, telemetry !== null && typeof telemetry === 'object', 'run.end has no session telemetry');
  check(name, telemetry.searches === expected.searches && telemetry.describes === expected.describes && telemetry.calls === expected.calls,
    `session telemetry counts ${telemetry.searches}/${telemetry.describes}/${telemetry.calls}, expected ${expected.searches}/${expected.describes}/${expected.calls}`);
  const providerBytes = sum(reqs.map((r) => r.rawBytes));
  check(name, telemetry.requestBytes?.total === providerBytes && telemetry.requestBytes.requests === reqs.length,
    `session telemetry records ${JSON.stringify(telemetry.requestBytes)} request bytes, the provider received ${providerBytes} in ${reqs.length} requests`);
  check(name, telemetry.schemasUpFront === (reqs[0]!.declaredTools ?? []).length, `telemetry says ${telemetry.schemasUpFront} schemas up front, the provider saw ${(reqs[0]!.declaredTools ?? []).length}`);
  const catalogUpFront = a.lane === 'direct' ? Number(start.catalogSize) : a.lane === 'directory' ? null : 0;
  if (catalogUpFront !== null) {
    check(name, telemetry.catalogSchemasUpFront === catalogUpFront, `telemetry says ${telemetry.catalogSchemasUpFront} catalog schemas up front, expected ${catalogUpFront}`);
  }
  if (a.lane !== 'directory') {
    // The surface's byte count is what the provider got as `tools` (directory adds hydrated schemas).
    check(name, telemetry.lastSurface?.toolBytes === reqs[0]!.toolsBytes, `surface tool bytes ${telemetry.lastSurface?.toolBytes} differ from the ${reqs[0]!.toolsBytes} B of tools the provider received`);
  }
  const finals = telemetry.toolsCalled ?? [];
  check(name, finals.some((f) => f.id === QA_TARGET_ID && f.source === 'openclaw' && f.ok === 1), `session telemetry's toolsCalled ${JSON.stringify(finals)} lacks one successful call of ${QA_TARGET_ID} (openclaw)`);
  if (a.lane === 'code') {
    const cell = lines(a, 'tool.result').find((l) => l.name === 'tool_search_code' && l.status === 'ok');
    check(name, cell !== undefined, 'no successful tool_search_code result in the log');
    const bridged = (cell.codeTelemetry as { bridgeCalls?: { search: number; describe: number; call: number } } | null)?.bridgeCalls;
    check(name, bridged !== undefined, `the code cell's result carries no bridged-call telemetry: ${JSON.stringify(cell.codeTelemetry)}`);
    check(name, bridged.search === 1 && bridged.describe === 1 && bridged.call === 1, `bridged calls ${JSON.stringify(bridged)}, expected one search, one describe and one call`);
  }
}

/** The parts of SessionTelemetry the assertions read. */
interface SessionTelemetryView {
  searches: number;
  describes: number;
  calls: number;
  schemasUpFront: number;
  catalogSchemasUpFront: number;
  lastSurface?: { toolBytes: number } | null;
  requestBytes?: { total: number; requests: number };
  toolsCalled?: { id: string; source: string; ok: number }[];
}

// 7. The structured lane resolves two queries in one tool_search call before tool_call.
export function assertTwoQueriesOneSearch(a: RunArtifacts): void {
  const name = '7 structured: two queries in one tool_search, then tool_call';
  const reqs = okRequests(a, name);
  const plans = reqs.map((r) => r.plan).filter((p) => p?.kind === 'function_call') as { name: string; arguments: any; callId: string }[];
  check(name, plans.length === 2, `the model made ${plans.length} tool calls, expected tool_search then tool_call`);
  const [search, call] = plans as [(typeof plans)[0], (typeof plans)[0]];
  check(name, search.name === 'tool_search' && call.name === 'tool_call', `tool calls were ${plans.map((p) => p.name).join(' → ')}`);
  check(name, Array.isArray(search.arguments?.queries) && search.arguments.queries.length === 2, `tool_search carried ${JSON.stringify(search.arguments)}`);
  // What the gateway answered, as the provider received it in the next request.
  const output = functionOutput(reqs, search.callId);
  check(name, output !== null, 'the tool_search output never reached the provider');
  const parsed = safeJson(output);
  const groups = parsed?.results;
  check(name, Array.isArray(groups) && groups.length === 2, `tool_search answered ${groups?.length ?? 'no'} result groups for two queries`);
  check(name, groups.some((g: any) => Array.isArray(g.candidates) && g.candidates.some((c: any) => c.id === QA_TARGET_ID)), 'no result group contains the target');
  check(name, call.arguments?.id === QA_TARGET_ID, `tool_call selected ${JSON.stringify(call.arguments?.id)}`);
  const order = lines(a, 'tool.result').map((l) => l.name);
  check(name, isDeepStrictEqual(order, ['tool_search', 'tool_call']), `the log shows ${order.join(' → ')}`);
}

// Trust: MCP and client tool names and descriptions never enter the prompt; the directory lane's
// prompt carries the directory.
export function assertUntrustedOutOfPrompt(a: RunArtifacts, untrusted: { name: string; description: string }[]): void {
  const name = `untrusted tools stay out of the ${a.lane} prompt`;
  checkMode(a, name);
  for (const req of okRequests(a, name)) {
    const instructions = String(req.body?.instructions ?? '');
    if (a.lane === 'directory') {
      check(name, instructions.includes('Available deferred-schema tools:'), `request ${req.seq}: no directory in the instructions`);
      // Large catalogs overflow the directory budget (rows are dropped by name), so no row is required.
      check(name, /\n- [A-Za-z0-9][\w.:-]* \(/.test(instructions), `request ${req.seq}: the directory lists no tool`);
    }
    for (const tool of untrusted) {
      check(name, !instructions.includes(tool.name), `request ${req.seq}: the prompt names the untrusted tool ${tool.name}`);
      check(name, !instructions.includes(tool.description), `request ${req.seq}: the prompt carries ${tool.name}'s description`);
    }
  }
}

// Fail closed: a policy-denied target is never found, described or called.
export function assertPolicyDenied(a: RunArtifacts): void {
  const name = `policy-denied target never found or called (${a.lane})`;
  checkMode(a, name);
  const end = one(a, 'run.end', name);
  check(name, end.outcome === 'not-found', `outcome ${String(end.outcome)}: ${String(end.finalText)}`);
  const touched = attempts(a, name).filter((t) => t.name === QA_TARGET || t.id === QA_TARGET_ID);
  check(name, touched.length === 0, 'the gateway executor was asked to run the denied target');
  for (const req of okRequests(a, name)) {
    for (const item of req.body?.input ?? []) {
      if (item.type !== 'function_call_output') continue;
      check(name, !String(item.output).includes(QA_TARGET_ID), `request ${req.seq}: a tool output names the denied target`);
    }
    check(name, !(req.declaredTools ?? []).includes(QA_TARGET), `request ${req.seq} declares the denied target`);
  }
  const start = one(a, 'run.start', name);
  check(name, !String(JSON.stringify(start.declaredToolNames ?? [])).includes(QA_TARGET), 'the denied target is in the surface');
}

// Fail closed: a tool that vanished between search and call fails the call.
export function assertVanishedFails(a: RunArtifacts): void {
  const name = 'vanished tool fails the call';
  const end = one(a, 'run.end', name);
  check(name, end.outcome === 'call-failed', `outcome ${String(end.outcome)}: ${String(end.finalText)}`);
  const target = attempts(a, name).filter((t) => t.name === QA_TARGET);
  check(name, target.length === 1 && target[0]!.outcome === 'missing' && !target[0]!.executed, `target attempts: ${JSON.stringify(target)}`);
  check(name, attempts(a, name).every((t) => !t.executed), 'some tool ran in its place');
  const call = lines(a, 'tool.result').find((l) => l.name === 'tool_call');
  check(name, call !== undefined && call.status === 'error' && call.errorCode === 'TOOL_UNAVAILABLE', `tool_call result ${String(call?.status)} ${String(call?.errorCode)}, expected error TOOL_UNAVAILABLE`);
  const event = callEvents(a).find((e) => e.tool?.id === QA_TARGET_ID);
  check(name, event?.outcome === 'unavailable', `the session's call event says ${String(event?.outcome)}, expected unavailable`);
}

// Fail closed: an approval block comes back as blocked, nothing runs.
export function assertApprovalBlocked(a: RunArtifacts): void {
  const name = 'approval block reported as blocked';
  const end = one(a, 'run.end', name);
  check(name, end.outcome === 'call-failed', `outcome ${String(end.outcome)}: ${String(end.finalText)}`);
  const target = attempts(a, name).filter((t) => t.name === QA_TARGET);
  check(name, target.length === 1 && target[0]!.outcome === 'blocked' && !target[0]!.executed, `target attempts: ${JSON.stringify(target)}`);
  const call = lines(a, 'tool.result').find((l) => l.name === 'tool_call');
  check(name, call !== undefined && call.status === 'blocked' && call.errorCode === 'TOOL_BLOCKED', `tool_call result ${String(call?.status)} ${String(call?.errorCode)}, expected blocked TOOL_BLOCKED`);
  const event = callEvents(a).find((e) => e.tool?.id === QA_TARGET_ID);
  check(name, event?.outcome === 'blocked', `the session's call event says ${String(event?.outcome)}, expected blocked`);
}

// A looping code cell is killed at the deadline and the run continues to the answer.
export function assertLoopKilledRunContinues(a: RunArtifacts): void {
  const name = 'looping code cell killed, run continues';
  checkMode(a, name);
  const cells = lines(a, 'tool.result').filter((l) => l.name === 'tool_search_code');
  check(name, cells.length === 2, `${cells.length} code cells, expected the looping one and the real one`);
  check(name, cells[0]!.status === 'timeout', `the looping cell's result status is ${String(cells[0]!.status)}, expected timeout`);
  check(name, cells[0]!.codeChildGone === true, `the looping cell's child process did not go away (codeChildGone: ${String(cells[0]!.codeChildGone)})`);
  check(name, cells[1]!.status === 'ok', `the second cell's status is ${String(cells[1]!.status)}`);
  checkFinalOk(a, name);
  targetExecution(a, name, 'session');
}

// 20 runs in parallel all succeed, each with its own requests and log.
export function assertParallelRuns(runs: RunArtifacts[], expectedRuns: number): void {
  const name = `${expectedRuns} parallel runs succeed`;
  check(name, runs.length === expectedRuns, `${runs.length} runs, expected ${expectedRuns}`);
  const ids = new Set<string>();
  for (const run of runs) {
    const end = one(run, 'run.end', name);
    check(name, end.outcome === 'ok', `run ${end.runId} (${run.lane}): ${String(end.outcome)} ${String(end.error ?? end.finalText)}`);
    check(name, !ids.has(end.runId), `duplicate run id ${end.runId}`);
    ids.add(end.runId);
    const reqs = okRequests(run, name);
    check(name, reqs.every((r) => r.runId === end.runId), `run ${end.runId} has requests from another run`);
    check(name, end.modelRequests === reqs.length, `run ${end.runId}: log says ${String(end.modelRequests)} requests, provider saw ${reqs.length}`);
  }
}

// The live lane (issue #15): MCP servers change their tools while the run goes on.

/** A `catalog.change` line: what the gateway applied and the telemetry on both sides of `useCatalog`. */
interface CatalogChangeLine extends LogLine {
  trigger: 'notifications/tools/list_changed' | 'disconnect';
  server: string;
  listed?: string[];
  reason?: string;
  added: string[];
  removed: string[];
  serverTools: string[];
  catalogTelemetryBefore: { counterScope: string; searchCount: number; describeCount: number; callCount: number };
  catalogTelemetryAfter: { counterScope: string; searchCount: number; describeCount: number; callCount: number };
  sessionTelemetryBefore: LiveTelemetryView;
  sessionTelemetryAfter: LiveTelemetryView;
}

interface LiveTelemetryView extends SessionTelemetryView {
  counterScope: string;
}

/** The one catalog change of this kind for this server. */
function catalogChange(a: RunArtifacts, assertion: string, trigger: CatalogChangeLine['trigger'], server: string): CatalogChangeLine {
  const found = lines(a, 'catalog.change').filter((l) => l.trigger === trigger && l.server === server) as CatalogChangeLine[];
  check(assertion, found.length === 1, `expected one ${trigger} change of ${server} in the session log, found ${found.length}`);
  return found[0]!;
}

/** One model tool call as the provider planned it, with its place in the session log and its result. */
interface ModelCall {
  callId: string;
  name: string;
  args: any;
  /** `seq` of the log's `tool.call` line: orders the call against `catalog.change` lines. */
  seq: number;
  result: LogLine | undefined;
  /** The output as the provider received it in the next request. */
  output: string | null;
}

function modelCalls(a: RunArtifacts, assertion: string, name: string): ModelCall[] {
  const reqs = okRequests(a, assertion);
  const out: ModelCall[] = [];
  for (const req of reqs) {
    const plan = req.plan;
    if (plan?.kind !== 'function_call' || plan.name !== name) continue;
    const logged = lines(a, 'tool.call').find((l) => l.callId === plan.callId);
    check(assertion, logged !== undefined, `the model's ${name} call ${plan.callId} is not in the session log`);
    out.push({
      callId: plan.callId,
      name,
      args: plan.arguments,
      seq: logged.seq,
      result: lines(a, 'tool.result').find((l) => l.callId === plan.callId),
      output: functionOutput(reqs, plan.callId),
    });
  }
  return out;
}

/** `tool_call`s of one catalog id. */
function callsOf(a: RunArtifacts, assertion: string, id: string): ModelCall[] {
  return modelCalls(a, assertion, 'tool_call').filter((c) => c.args?.id === id);
}

/** Candidate ids of a tool_search output; the JSON may be followed by a `Note: …` line for the model. */
function searchOutputIds(output: string | null): string[] | null {
  if (output === null) return null;
  const note = output.indexOf('\nNote: ');
  const parsed = safeJson(output) ?? (note < 0 ? null : safeJson(output.slice(0, note)));
  const groups = Array.isArray(parsed?.results) ? parsed.results : Array.isArray(parsed) ? [{ candidates: parsed }] : null;
  if (groups === null) return null;
  return groups.flatMap((g: any) => (Array.isArray(g?.candidates) ? g.candidates : [])).map((c: any) => String(c?.id));
}

/** The session's call event for a model tool_call (the event's parent is the model's call). */
function callEventOf(a: RunArtifacts, callId: string): CallEvent | undefined {
  return callEvents(a).find((e) => e.parentToolCallId === callId || e.toolCallId === callId);
}

/** The two searches of the live run: before and after the server's tool list changed. */
function liveSearches(a: RunArtifacts, assertion: string, change: CatalogChangeLine): { before: ModelCall; after: ModelCall } {
  const searches = modelCalls(a, assertion, 'tool_search');
  const before = searches.filter((s) => s.seq < change.seq);
  const after = searches.filter((s) => s.seq > change.seq);
  check(assertion, before.length === 1 && after.length === 1, `expected one tool_search before and one after the list change, found ${before.length} and ${after.length}`);
  return { before: before[0]!, after: after[0]! };
}

// Live: the tool an MCP server added mid-run is found through tool_search and called successfully.
export function assertLiveNewToolCalled(a: RunArtifacts): void {
  const name = 'live: new MCP tool found through tool_search and called';
  checkMode(a, name);
  checkFinalOk(a, name, LIVE_TARGET);
  const change = catalogChange(a, name, 'notifications/tools/list_changed', LIVE_CHANGED_SERVER);
  check(name, (change.listed ?? []).includes(LIVE_TARGET) && change.added.includes(LIVE_TARGET_ID), `the re-list did not add ${LIVE_TARGET_ID}: ${JSON.stringify({ listed: change.listed, added: change.added })}`);
  const { before, after } = liveSearches(a, name, change);
  const idsBefore = searchOutputIds(before.output);
  const idsAfter = searchOutputIds(after.output);
  check(name, idsBefore !== null && idsAfter !== null, 'a tool_search output that reached the provider is not a search result');
  check(name, !idsBefore.includes(LIVE_TARGET_ID), `the search before the change already listed ${LIVE_TARGET_ID}`);
  check(name, idsAfter.includes(LIVE_TARGET_ID), `the search after the change does not list ${LIVE_TARGET_ID}: ${idsAfter.join(', ')}`);
  const calls = callsOf(a, name, LIVE_TARGET_ID);
  check(name, calls.length === 1 && calls[0]!.seq > after.seq, `expected one tool_call of ${LIVE_TARGET_ID} after the second search, found ${calls.length}`);
  const call = calls[0]!;
  check(name, call.result?.status === 'ok', `the tool_call result is ${String(call.result?.status)} ${String(call.result?.errorCode ?? '')}`);
  const runs = attempts(a, name).filter((t) => t.id === LIVE_TARGET_ID);
  check(name, runs.length === 1, `expected one executor attempt of ${LIVE_TARGET_ID}, found ${runs.length}`);
  const run = runs[0]!;
  check(name, run.executed && run.outcome === 'ok' && run.via === 'session' && run.parentToolCallId === call.callId,
    `executor attempt ${JSON.stringify({ executed: run.executed, outcome: run.outcome, via: run.via, parent: run.parentToolCallId })}, expected an ok session run of call ${call.callId}`);
  check(name, isDeepStrictEqual(run.args, { marker: `qa-marker-${LIVE_TARGET}` }), `the new tool ran with ${JSON.stringify(run.args)}`);
  const event = callEventOf(a, call.callId);
  check(name, event?.outcome === 'ok' && event.tool?.id === LIVE_TARGET_ID && event.tool.source === 'mcp', `session call event: ${JSON.stringify(event)}`);
}

// Live: the tool an MCP server removed mid-run fails closed when the model calls it by the id it
// saw before the change: a clear TOOL_NOT_FOUND, and the gateway's executor is never invoked.
export function assertLiveRemovedFailsClosed(a: RunArtifacts): void {
  const name = 'live: removed MCP tool fails closed before the executor';
  checkMode(a, name);
  const change = catalogChange(a, name, 'notifications/tools/list_changed', LIVE_CHANGED_SERVER);
  check(name, change.removed.includes(LIVE_REMOVED_ID) && !change.serverTools.includes(LIVE_REMOVED_ID), `the re-list did not remove ${LIVE_REMOVED_ID}: ${JSON.stringify({ removed: change.removed, serverTools: change.serverTools })}`);
  const { before } = liveSearches(a, name, change);
  check(name, (searchOutputIds(before.output) ?? []).includes(LIVE_REMOVED_ID), `the search before the change did not show the model ${LIVE_REMOVED_ID}`);
  const calls = callsOf(a, name, LIVE_REMOVED_ID);
  check(name, calls.length === 1 && calls[0]!.seq > change.seq, `expected one tool_call of ${LIVE_REMOVED_ID} after the change, found ${calls.length}`);
  const call = calls[0]!;
  check(name, call.result?.status === 'error' && call.result.errorCode === 'TOOL_NOT_FOUND', `the tool_call result is ${String(call.result?.status)} ${String(call.result?.errorCode)}, expected error TOOL_NOT_FOUND`);
  check(name, call.output !== null && call.output.includes(`Unknown tool id: ${LIVE_REMOVED_ID}`), `the model was not told the id is unknown: ${String(call.output).slice(0, 200)}`);
  const touched = attempts(a, name).filter((t) => t.id === LIVE_REMOVED_ID || t.name === LIVE_REMOVED || t.parentToolCallId === call.callId);
  check(name, touched.length === 0, `the gateway executor was invoked for the removed tool: ${JSON.stringify(touched)}`);
  const event = callEventOf(a, call.callId);
  check(name, event?.outcome === 'error' && (event as { errorCode?: string }).errorCode === 'TOOL_NOT_FOUND' && event.tool === undefined, `session call event: ${JSON.stringify(event)}`);
}

const UNAVAILABLE_NOTE = new RegExp(`^Note: \\d+ matching tools? from server ${LIVE_DOWN_SERVER} (is|are) unavailable \\(${LIVE_DOWN_REASON}\\)`, 'm');

// Live: a disconnected MCP server's tools stay known but fail closed (TOOL_UNAVAILABLE with the
// reason, no executor), and a search that matches them tells the model.
export function assertLiveDisconnectFailsClosed(a: RunArtifacts): void {
  const name = 'live: disconnected MCP server fails closed, search notes it';
  checkMode(a, name);
  const listChange = catalogChange(a, name, 'notifications/tools/list_changed', LIVE_CHANGED_SERVER);
  const change = catalogChange(a, name, 'disconnect', LIVE_DOWN_SERVER);
  check(name, change.reason === LIVE_DOWN_REASON && change.added.length === 0 && change.removed.length === 0 && change.serverTools.includes(LIVE_DOWN_ID),
    `disconnect change ${JSON.stringify({ reason: change.reason, added: change.added, removed: change.removed, serverTools: change.serverTools })}`);
  const calls = callsOf(a, name, LIVE_DOWN_ID);
  check(name, calls.length === 2, `expected two tool_calls of ${LIVE_DOWN_ID}, found ${calls.length}`);
  const [up, down] = calls as [ModelCall, ModelCall];
  check(name, up.seq < change.seq && down.seq > change.seq, 'the two calls do not straddle the disconnect');
  check(name, up.result?.status === 'ok', `the call before the disconnect is ${String(up.result?.status)}`);
  check(name, down.result?.status === 'error' && down.result.errorCode === 'TOOL_UNAVAILABLE', `the call after the disconnect is ${String(down.result?.status)} ${String(down.result?.errorCode)}, expected error TOOL_UNAVAILABLE`);
  check(name, down.output !== null && down.output.includes(LIVE_DOWN_REASON), `the model was not told why: ${String(down.output).slice(0, 200)}`);
  const runs = attempts(a, name).filter((t) => t.id === LIVE_DOWN_ID || t.owner === LIVE_DOWN_SERVER);
  check(name, runs.length === 1 && runs[0]!.executed && runs[0]!.parentToolCallId === up.callId,
    `expected the executor to run ${LIVE_DOWN_ID} once, for the call before the disconnect: ${JSON.stringify(runs)}`);
  const event = callEventOf(a, down.callId);
  // Today a call refused for an unavailable owner is reported like an unknown id (outcome error,
  // errorCode TOOL_UNAVAILABLE, no tool); a tool the executor reports gone gets outcome unavailable.
  // Either says the same thing here.
  const refused = event?.outcome === 'unavailable' || (event?.outcome === 'error' && (event as { errorCode?: string }).errorCode === 'TOOL_UNAVAILABLE');
  check(name, refused, `session call event: ${JSON.stringify(event)}`);
  const { after } = liveSearches(a, name, listChange);
  check(name, after.seq > change.seq, 'the second search ran before the disconnect');
  check(name, after.output !== null && UNAVAILABLE_NOTE.test(after.output), `the search after the disconnect does not note the unavailable server: ${String(after.output).slice(-300)}`);
  const ids = searchOutputIds(after.output) ?? [];
  check(name, !ids.some((id) => id.startsWith(`mcp:${LIVE_DOWN_SERVER}:`)), `the search after the disconnect lists ${ids.filter((id) => id.startsWith(`mcp:${LIVE_DOWN_SERVER}:`)).join(', ')}`);
}

// Live: useCatalog keeps the session's telemetry. Each change leaves the counters as they were, and
// the run's final counters hold the calls from before and after both changes.
export function assertLiveTelemetryContinues(a: RunArtifacts): void {
  const name = 'live: session telemetry continues across useCatalog';
  const changes = lines(a, 'catalog.change') as CatalogChangeLine[];
  check(name, changes.length === 2, `expected two catalog changes, found ${changes.length}`);
  const results = lines(a, 'tool.result');
  const counted = (before: number | null, tool: string) => results.filter((l) => l.name === tool && (before === null || l.seq < before)).length;
  for (const change of changes) {
    const b = change.sessionTelemetryBefore;
    const t = change.sessionTelemetryAfter;
    check(name, b.searches === t.searches && b.describes === t.describes && b.calls === t.calls && isDeepStrictEqual(b.requestBytes, t.requestBytes) && b.counterScope === t.counterScope,
      `change ${String(change.change)} (${change.trigger}) reset the session telemetry: ${JSON.stringify({ before: pick(b), after: pick(t) })}`);
    check(name, b.searches === counted(change.seq, 'tool_search') && b.calls === counted(change.seq, 'tool_call'),
      `change ${String(change.change)}: telemetry ${b.searches}/${b.calls} searches/calls, the log has ${counted(change.seq, 'tool_search')}/${counted(change.seq, 'tool_call')} before it`);
    check(name, change.catalogTelemetryAfter.counterScope === change.catalogTelemetryBefore.counterScope && change.catalogTelemetryAfter.searchCount === change.catalogTelemetryBefore.searchCount,
      `change ${String(change.change)}: the new catalog does not continue the counter scope: ${JSON.stringify({ before: change.catalogTelemetryBefore, after: change.catalogTelemetryAfter })}`);
  }
  const [first, second] = changes as [CatalogChangeLine, CatalogChangeLine];
  check(name, first.sessionTelemetryBefore.searches >= 1 && second.sessionTelemetryBefore.calls >= 1, 'nothing was counted before the changes: the check would prove nothing');
  const end = one(a, 'run.end', name);
  const telemetry = end.telemetry as LiveTelemetryView | null;
  check(name, telemetry !== null && typeof telemetry === 'object', 'run.end has no session telemetry');
  const searches = counted(null, 'tool_search');
  const calls = counted(null, 'tool_call');
  check(name, telemetry.searches === searches && telemetry.calls === calls && telemetry.describes === counted(null, 'tool_describe'),
    `final telemetry ${telemetry.searches}/${telemetry.describes}/${telemetry.calls}, the log has ${searches}/${counted(null, 'tool_describe')}/${calls} searches/describes/calls`);
  check(name, isDeepStrictEqual(end.counts, { searches, describes: telemetry.describes, calls }), `run.end counts ${JSON.stringify(end.counts)}`);
  check(name, telemetry.counterScope === first.sessionTelemetryBefore.counterScope, 'the session ended in another counter scope than it started');
  const reqs = okRequests(a, name);
  const providerBytes = sum(reqs.map((r) => r.rawBytes));
  check(name, telemetry.requestBytes?.total === providerBytes && telemetry.requestBytes.requests === reqs.length,
    `final telemetry records ${JSON.stringify(telemetry.requestBytes)} request bytes, the provider received ${providerBytes} in ${reqs.length} requests`);
  const called = telemetry.toolsCalled ?? [];
  check(name, called.some((f) => f.id === LIVE_DOWN_ID && f.ok >= 1) && called.some((f) => f.id === LIVE_TARGET_ID && f.ok === 1),
    `toolsCalled ${JSON.stringify(called)} lacks the call from before the changes (${LIVE_DOWN_ID}) or the one after (${LIVE_TARGET_ID})`);
}

function pick(t: LiveTelemetryView) {
  return { searches: t.searches, describes: t.describes, calls: t.calls, requestBytes: t.requestBytes, counterScope: t.counterScope };
}

function functionOutput(reqs: RecordedRequest[], callId: string): string | null {
  for (const req of reqs) {
    for (const item of req.body?.input ?? []) {
      if (item.type === 'function_call_output' && item.call_id === callId) return String(item.output);
    }
  }
  return null;
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function sum(values: number[]): number {
  return values.reduce((x, y) => x + y, 0);
}

/** `catalog.audit()` lists every catalog tool once and ranks the QA target in the top 10 for its own words. */
export function assertAuditFindsTarget(audit: CatalogAudit, catalogSize: number, target: string): void {
  const A = 'audit';
  check(A, audit.tools.length === catalogSize && audit.totals.tools === catalogSize, `audit lists ${audit.tools.length} tools (totals ${audit.totals.tools}), the catalog has ${catalogSize}`);
  const tool = audit.tools.find((t) => t.name === target);
  check(A, tool, `audit has no ${target}`);
  check(A, tool.bestRank !== null && tool.bestRank <= 10 && !tool.problems.includes('unfindable'), `audit finds ${target} unfindable: ${JSON.stringify(tool.probes)}`);
}
