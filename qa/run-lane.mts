// One gateway run: build the catalog through the policy, open a Tool Search session for the lane,
// render what the model sees, and loop model request → tool calls → tool outputs until the model
// answers. Uses the package exactly as a gateway would, from its built entry point.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ToolCatalog, ToolSearchSession, codeModeCapability, probeCodeMode, resolveToolSearchConfig, type ModelSurface, type ResolvedToolSearchConfig, type ToolResult } from '../index.js';
import { buildQaCatalog, docsTools, LIVE_CHANGED_SERVER, LIVE_DOWN_SERVER, LIVE_DOWN_TOOL, LIVE_REMOVED, LIVE_TARGET, QA_TARGET, OK_PREFIX, trackerToolsAfter, trackerToolsBefore, type QaCatalog, type QaTool } from './fake-plugin.mjs';
import { FakeGateway } from './gateway.mjs';
import { LiveMcpCatalog } from './live-catalog.mjs';
import { FakeMcpServer } from './mcp-server.mjs';
import { postResponses, QA_MODEL, type ResponsesFunctionCall } from './provider-client.mjs';
import { SessionLog } from './session-log.mjs';

/** The mode lanes: the same task in each mode (also the parallel runs' lanes). */
export const LANES = ['direct', 'code', 'tools', 'directory'] as const;
/** The live-catalog lane: tools mode while MCP servers change their tools mid-run. */
export const LIVE_LANE = 'live';
export type Lane = (typeof LANES)[number] | typeof LIVE_LANE;

/** The raw `tools.toolSearch` value each lane runs with. */
export const LANE_CONFIG: Record<Lane, unknown> = {
  direct: false,
  code: { mode: 'code' },
  tools: { mode: 'tools' },
  directory: { mode: 'directory' },
  live: { mode: 'tools' },
};

/** The mode a lane runs in when nothing falls back. */
export function laneMode(lane: string): string {
  return lane === LIVE_LANE ? 'tools' : lane;
}

/** The tool whose OK line ends a successful run of the lane. */
export function laneTarget(lane: string): string {
  return lane === LIVE_LANE ? LIVE_TARGET : QA_TARGET;
}

export type Scenario = 'normal' | 'policy-denied' | 'vanish' | 'approval-block' | 'loop';

export type Outcome = 'ok' | 'not-found' | 'call-failed' | 'no-answer' | 'error';

export interface RunOptions {
  lane: Lane;
  providerUrl: string;
  runId: string;
  logDir: string;
  catalogSize?: number;
  /** Prebuilt catalog (shared by parallel runs); built from catalogSize when absent. */
  qaCatalog?: QaCatalog;
  stream?: boolean;
  scenario?: Scenario;
  codeTimeoutMs?: number;
  maxTurns?: number;
  /** Code and tools modes: the session's capability directory on or off (absent: the addon's default). */
  capabilityDirectory?: boolean;
}

export interface ToolCallRecord {
  callId: string;
  name: string;
  args: unknown;
  status: 'ok' | 'error' | 'blocked' | 'timeout';
  outputBytes: number;
  output: string;
  resolved: { id: string; source: string; owner?: string } | null;
}

export interface RunResult {
  runId: string;
  lane: Lane;
  scenario: Scenario;
  mode: string;
  /** Why the lane ran in another mode than it asked for (code mode unavailable on this host). */
  fallbackReason: string | null;
  outcome: Outcome;
  finalText: string;
  error: string | null;
  logPath: string;
  wallMs: number;
  modelRequests: number;
  /** Tool definitions declared in the first request. */
  declaredTools: string[];
  firstRequestBytes: number;
  totalRequestBytes: number;
  /** Bytes of the surface's prompt text (the directory, or the capability directory). */
  directoryPromptBytes: number;
  counts: { searches: number; describes: number; calls: number };
  finalTool: { id: string; source: string } | null;
  toolCalls: ToolCallRecord[];
  hydrated: string[];
  gateway: FakeGateway;
  qaCatalog: QaCatalog;
  telemetry: unknown;
}

export function qaPrompt(scenario: Scenario, lane: Lane = 'tools'): string {
  // The live lane also names the tools it will lose: one removed from its server, one whose server goes away.
  if (lane === LIVE_LANE) return `tool search qa check target=${LIVE_TARGET} stale=${LIVE_REMOVED} down=${LIVE_DOWN_TOOL}`;
  const base = `tool search qa check target=${QA_TARGET}`;
  return scenario === 'loop' ? `${base} cell=loop-first` : base;
}

const SYSTEM_PROMPT = 'You are the OpenClaw QA agent. Use the available tools to do what the user asks, then answer with the tool\'s result text.';

/** Catalog input: the registry's tools without the harness-only fields. */
export function catalogInput(tools: QaTool[]) {
  return tools.map(({ kind: _kind, ...tool }) => tool);
}

/** The policy a run is built under: the denied-target scenario removes the target at the agent layer. */
function policyFor(scenario: Scenario) {
  if (scenario === 'policy-denied') return { agent: { deny: [QA_TARGET] } };
  return undefined;
}

/** A neutral tool definition (from `hydrate`) in the Responses API shape the surface uses. */
function responsesDefinition(d: { name: string; description: string; parameters: unknown; strict?: boolean | null }) {
  return { type: 'function', name: d.name, description: d.description, parameters: d.parameters, strict: d.strict ?? false };
}

function classify(text: string, target: string): Outcome {
  if (text.startsWith(`${OK_PREFIX} ${target} `)) return 'ok';
  if (text.startsWith('QA_TARGET_NOT_FOUND')) return 'not-found';
  if (text.startsWith('QA_CALL_FAILED')) return 'call-failed';
  return 'no-answer';
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function errorInfo(err: unknown): { code: string | null; message: string } {
  const e = err as { code?: unknown; message?: unknown };
  return { code: typeof e?.code === 'string' ? e.code : null, message: typeof e?.message === 'string' ? e.message : String(err) };
}

/** Status of a session result; a code cell killed at its deadline counts as `timeout`. */
function resultStatus(result: ToolResult): ToolCallRecord['status'] {
  if (result.status === 'blocked') return 'blocked';
  if (result.ok) return 'ok';
  const cell = result.value as { error?: { kind?: string } } | undefined;
  if (result.error?.code === 'timeout' || cell?.error?.kind === 'timeout') return 'timeout';
  return 'error';
}

/** The catalog tool a `tool_call` (or direct call) result says ran: `{ tool, result }`. */
function resolvedTool(value: unknown): ToolCallRecord['resolved'] {
  const tool = (value as { tool?: { id?: unknown; source?: unknown; sourceName?: unknown } } | null | undefined)?.tool;
  if (tool && typeof tool.id === 'string') {
    return { id: tool.id, source: String(tool.source ?? ''), owner: typeof tool.sourceName === 'string' ? tool.sourceName : undefined };
  }
  return null;
}

export async function runLane(options: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const scenario = options.scenario ?? 'normal';
  const lane = options.lane;
  const qa = options.qaCatalog ?? buildQaCatalog(options.catalogSize);
  const log = new SessionLog(join(options.logDir, `${options.runId}.jsonl`), options.runId, lane);
  const gateway = new FakeGateway(qa);
  if (scenario === 'approval-block') gateway.denyApproval(QA_TARGET);

  const prompt = qaPrompt(scenario, lane);
  let opened: OpenedSession;
  try {
    opened = await openSession(options, qa, scenario, gateway, log, prompt);
  } catch (err) {
    // A run that cannot even start (bad config, name collision, catalog error) is a failed run.
    const message = errorInfo(err).message;
    const wallMs = round(performance.now() - started);
    log.write('run.end', { outcome: 'error', finalText: '', error: message, modelRequests: 0, totalRequestBytes: 0, gatewayAttempts: gateway.attempts, wallMs });
    log.close();
    return {
      runId: options.runId, lane, scenario, mode: 'unknown', fallbackReason: null, outcome: 'error', finalText: '', error: message, logPath: log.path, wallMs,
      modelRequests: 0, declaredTools: [], firstRequestBytes: 0, totalRequestBytes: 0, directoryPromptBytes: 0, counts: { searches: 0, describes: 0, calls: 0 },
      finalTool: null, toolCalls: [], hydrated: [], gateway, qaCatalog: qa, telemetry: null,
    };
  }
  const { config, catalog, session, surface, tools, instructions, hydrated, live } = opened;
  const directOnly = qa.directOnly;
  const declaredTools = tools.map((t) => (t as { name: string }).name);
  log.write('run.start', {
    scenario,
    mode: config.mode,
    requestedMode: lane,
    config,
    codeMode: lane === 'code' ? codeModeCapability() : undefined,
    catalogSize: catalog.size,
    fingerprint: catalog.fingerprint,
    catalogTelemetry: catalog.telemetry(),
    declaredTools: declaredTools.length,
    declaredToolNames: declaredTools.length <= 64 ? declaredTools : undefined,
    hydrated,
    surfaceBytes: surface.bytes,
    toolsBytes: Buffer.byteLength(JSON.stringify(tools)),
    instructionsBytes: Buffer.byteLength(instructions),
  });

  const input: unknown[] = [{ role: 'user', content: [{ type: 'input_text', text: prompt }] }];
  const toolCalls: ToolCallRecord[] = [];
  const requestSizes: number[] = [];
  let finalText = '';
  let error: string | null = null;
  const maxTurns = options.maxTurns ?? (live ? 12 : 8);
  let roundTrips = 0;
  try {
    for (let turn = 1; turn <= maxTurns && finalText === ''; turn += 1) {
      const body = { model: QA_MODEL, instructions, input, tools, tool_choice: 'auto', parallel_tool_calls: false, stream: options.stream ?? true };
      const t0 = performance.now();
      const { response, requestBytes, events } = await postResponses(options.providerUrl, body, { 'x-qa-run-id': options.runId });
      requestSizes.push(requestBytes);
      session.recordRequestBytes(requestBytes);
      log.write('model.request', {
        turn,
        requestBytes,
        declaredTools: tools.length,
        stream: body.stream,
        sseEvents: events.length,
        responseId: response.id,
        output: response.output.map((item) => (item.type === 'function_call' ? { type: item.type, name: item.name, callId: item.call_id } : { type: item.type })),
        ms: round(performance.now() - t0),
        sessionTelemetry: session.telemetry(),
      });
      for (const item of response.output) {
        if (item.type === 'message') {
          finalText = item.content.map((c) => c.text).join('');
          continue;
        }
        input.push({ type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments });
        const record = await runToolCall(item, lane, session, gateway, directOnly, log);
        toolCalls.push(record);
        input.push({ type: 'function_call_output', call_id: item.call_id, output: record.output });
        // The vanish scenario: the tool goes away right after the model has found it.
        if (scenario === 'vanish' && item.name === 'tool_search') gateway.vanish(QA_TARGET);
        roundTrips += 1;
        if (live) await live.afterRoundTrip(roundTrips);
      }
    }
    if (finalText === '') error = `no final answer after ${maxTurns} model requests`;
  } catch (err) {
    error = errorInfo(err).message;
  }

  const telemetry = session.telemetry();
  const counts = { searches: telemetry.searches, describes: telemetry.describes, calls: telemetry.calls };
  const executed = gateway.attempts.filter((a) => a.executed);
  const last = executed.at(-1);
  const finalTool = last ? { id: last.id, source: last.source } : null;
  const outcome: Outcome = error !== null ? 'error' : classify(finalText, laneTarget(lane));
  const wallMs = round(performance.now() - started);
  log.write('run.end', {
    outcome,
    finalText,
    error,
    modelRequests: requestSizes.length,
    totalRequestBytes: sum(requestSizes),
    counts,
    finalTool,
    gatewayAttempts: gateway.attempts,
    telemetry,
    catalogTelemetry: (live?.client.catalog ?? catalog).telemetry(),
    wallMs,
  });
  log.close();
  return {
    runId: options.runId,
    lane,
    scenario,
    mode: String(config.mode),
    fallbackReason: config.fallbackReason ?? null,
    outcome,
    finalText,
    error,
    logPath: log.path,
    wallMs,
    modelRequests: requestSizes.length,
    declaredTools,
    firstRequestBytes: requestSizes[0] ?? 0,
    totalRequestBytes: sum(requestSizes),
    directoryPromptBytes: surface.bytes.directoryPrompt,
    counts,
    finalTool,
    toolCalls,
    hydrated,
    gateway,
    qaCatalog: qa,
    telemetry,
  };
}

interface OpenedSession {
  config: ResolvedToolSearchConfig;
  catalog: ToolCatalog;
  session: ToolSearchSession;
  surface: ModelSurface;
  tools: unknown[];
  instructions: string;
  hydrated: string[];
  /** The live lane's MCP servers and the gateway's reaction to them. */
  live: LiveServers | null;
}

/**
 * The live lane's servers: qa_tracker re-lists its tools after the model's first tool round trip
 * (one tool removed, one added), docs disconnects after the second. Each change is applied before
 * the next model request, so the run is deterministic.
 */
class LiveServers {
  readonly tracker = new FakeMcpServer(LIVE_CHANGED_SERVER, trackerToolsBefore());
  readonly docs = new FakeMcpServer(LIVE_DOWN_SERVER, docsTools());

  constructor(readonly client: LiveMcpCatalog) {}

  async connect(): Promise<void> {
    await this.client.connect(this.tracker);
    await this.client.connect(this.docs);
  }

  async afterRoundTrip(n: number): Promise<void> {
    if (n === 1) this.tracker.changeTools(trackerToolsAfter());
    if (n === 2) this.docs.disconnect();
    await this.client.settled();
  }
}

/** Config, catalog through the policy, session, and what the first request declares. */
async function openSession(options: RunOptions, qa: QaCatalog, scenario: Scenario, gateway: FakeGateway, log: SessionLog, prompt: string): Promise<OpenedSession> {
  const raw = LANE_CONFIG[options.lane];
  const withTimeout = typeof raw === 'object' && raw !== null && options.codeTimeoutMs !== undefined ? { ...raw, codeTimeoutMs: options.codeTimeoutMs } : raw;
  // A gateway probes code mode once at start-up (cached afterwards); until then code resolves to tools.
  await probeCodeMode();
  const config = resolveToolSearchConfig(withTimeout);
  // Built off the event loop, as a gateway should: the 5,000-tool runs share the loop with 19 others.
  let catalog = await ToolCatalog.build(catalogInput(qa.tools), { policy: policyFor(scenario) });
  let live: LiveServers | null = null;
  if (options.lane === LIVE_LANE) {
    // The gateway connects its MCP servers: each one's tools/list goes in with withSource.
    live = new LiveServers(new LiveMcpCatalog(catalog, gateway, log));
    await live.connect();
    catalog = live.client.catalog;
  }

  // Every lane goes through the session: in direct mode it renders every allowed schema and runs
  // exact-name calls, so the direct lane is the gateway without Tool Search, measured the same way.
  const session = new ToolSearchSession(catalog, config, {
    executor: gateway.executor,
    ...(options.capabilityDirectory === undefined ? {} : { capabilityDirectory: options.capabilityDirectory }),
    directTools: qa.directOnly.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    onEvent: (event: unknown) => {
      log.write('session.event', { event });
    },
  });
  live?.client.attach(session);
  let instructions = SYSTEM_PROMPT;
  let hydrated: string[] = [];
  let hydratedTools: unknown[] = [];
  if (options.lane === 'directory') {
    // The turn's likely schemas, sent next to the surface (at most four, never MCP or client tools).
    const definitions = session.hydrate(prompt);
    hydrated = definitions.map((d) => d.name);
    hydratedTools = definitions.map(responsesDefinition);
  }
  // The turn's prompt orders the capability directory (code and tools modes, when it is on).
  const surface = session.surface('openai-responses', { prompt });
  const tools: unknown[] = [...(surface.tools as unknown[]), ...hydratedTools];
  if (surface.directoryPrompt) instructions = `${SYSTEM_PROMPT}\n\n${surface.directoryPrompt}`;
  return { config, catalog, session, surface, tools, instructions, hydrated, live };
}

async function runToolCall(
  item: ResponsesFunctionCall,
  lane: Lane,
  session: ToolSearchSession,
  gateway: FakeGateway,
  directOnly: QaTool[],
  log: SessionLog,
): Promise<ToolCallRecord> {
  const args = parseArgs(item.arguments);
  // Direct-only tools are the gateway's own: it runs them. Everything else goes through the session.
  const byGateway = directOnly.some((t) => t.name === item.name);
  log.write('tool.call', { callId: item.call_id, name: item.name, via: byGateway ? 'gateway' : 'session', argsBytes: Buffer.byteLength(item.arguments) });
  let output: string;
  let status: ToolCallRecord['status'];
  let resolved: ToolCallRecord['resolved'] = null;
  let errorCode: string | null = null;
  let codeTelemetry: unknown;
  let childRunning: boolean | null = null;
  let childGone: boolean | null = null;
  if (byGateway) {
    try {
      output = JSON.stringify(await gateway.runDirect(item.name, args, item.call_id));
      status = 'ok';
    } catch (err) {
      const info = errorInfo(err);
      output = info.message;
      status = 'error';
      errorCode = info.code;
    }
    const attempt = gateway.attempts.find((a) => a.toolCallId === item.call_id);
    if (attempt?.id) resolved = { id: attempt.id, source: attempt.source, owner: attempt.owner };
  } else {
    const result = await session.handle(item.name, args, { toolCallId: item.call_id });
    output = result.content;
    status = resultStatus(result);
    errorCode = result.error?.code ?? null;
    resolved = resolvedTool(result.value);
    if (lane === 'code' && item.name === 'tool_search_code') {
      codeTelemetry = (result.value as { telemetry?: unknown } | undefined)?.telemetry ?? null;
      const pid = (codeTelemetry as { childPid?: unknown } | null)?.childPid;
      childRunning = processRunning(pid);
      // A cell killed at its deadline cannot end by itself: check from outside that its process goes away.
      if (status === 'timeout') childGone = await processGone(pid, CHILD_GONE_WAIT_MS);
    }
  }
  const record: ToolCallRecord = { callId: item.call_id, name: item.name, args, status, outputBytes: Buffer.byteLength(output), output, resolved };
  log.write('tool.result', {
    callId: item.call_id,
    name: item.name,
    status,
    errorCode,
    outputBytes: record.outputBytes,
    resolved,
    codeTelemetry,
    // Seen from the gateway: the cell's child process when the result arrived, and (timeouts) whether it went away.
    codeChildRunningAtResult: childRunning,
    codeChildGone: childGone,
    sessionTelemetry: session.telemetry(),
  });
  return record;
}

/** Whether a process is running (a zombie or a missing pid is not); null when unknown. */
function processRunning(pid: unknown): boolean | null {
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return null;
  try {
    // Field 3 of /proc/<pid>/stat is the state; the command name before it may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

const CHILD_GONE_WAIT_MS = 5_000;

/** Polls until the process is no longer running; false if it still is after `waitMs`. */
async function processGone(pid: unknown, waitMs: number): Promise<boolean | null> {
  if (processRunning(pid) === null) return null;
  const deadline = performance.now() + waitMs;
  while (processRunning(pid)) {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
