// The whole QA scenario: start the mock provider process, run each lane, the fail-closed
// scenarios and the parallel runs, then check every assertion on the recorded data together with
// its negative case. Returns a report; printing is ./table.mts's job.

import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as A from './assertions.mjs';
import * as N from './negatives.mjs';
import { buildQaCatalog, docsTools, LIVE_TARGET, QA_TARGET, trackerToolsAfter, type QaCatalog } from './fake-plugin.mjs';
import { MockProvider } from './provider-client.mjs';
import { SessionLog } from './session-log.mjs';
import { performance } from 'node:perf_hooks';
import { ToolCatalog, probeCodeMode, rankingCapability } from '../index.js';
import { catalogInput, LANES, LIVE_LANE, runLane, type Lane, type RunResult, type Scenario } from './run-lane.mjs';

export interface QaOptions {
  /** Catalogable tools: 36 (the contract's fake plugin plus extras), 500 or 5000. */
  tools: number;
  /** Directory for the JSONL session logs; a fresh subdirectory is made per invocation. */
  logRoot?: string;
  /** Parallel runs (the issue asks for 20). */
  parallel?: number;
  /** Deadline for code cells in the looping-cell scenario (clamped by the addon to ≥ 1000 ms). */
  loopTimeoutMs?: number;
}

export interface LaneRow {
  lane: Lane;
  mode: string;
  fallbackReason: string | null;
  outcome: string;
  modelRequests: number;
  declaredTools: number;
  firstRequestBytes: number;
  totalRequestBytes: number;
  savedBytes: number | null;
  savedPercent: number | null;
  searches: number;
  describes: number;
  calls: number;
  wallMs: number;
  logPath: string;
  error: string | null;
}

export interface CheckResult {
  name: string;
  passed: boolean;
  message: string | null;
  /** The negative case: must be 'failed as expected'. */
  negative: 'failed as expected' | 'DID NOT FAIL' | 'threw a non-assertion error' | 'none';
  negativeMessage: string | null;
}

/** One catalog change of the live lane's run, as its session log recorded it. */
export interface LiveChange {
  afterModelRequest: number;
  trigger: string;
  server: string;
  added: string[];
  removed: string[];
  reason: string | null;
  fingerprintBefore: string;
  fingerprintAfter: string;
  /** Wall time of withSource / withUnavailable, and of session.useCatalog (measured, not checked). */
  catalogMs: number;
  useCatalogMs: number;
}

/** One run of the capability-directory measurement (code and tools modes, directory on or off). */
export interface DirectoryRow {
  lane: Lane;
  directory: boolean;
  outcome: string;
  modelRequests: number;
  firstRequestBytes: number;
  totalRequestBytes: number;
  directoryPromptBytes: number;
}

export interface QaReport {
  tools: number;
  catalogSize: number;
  /** First build of the catalog's index, and a second construction of the unchanged catalog (reused). */
  catalogBuildMs: number;
  catalogReuseMs: number;
  /** The ranking every lane used: the configured one, the active one once vectors were ready, and why not hybrid. */
  ranking: { active: string; configured: string; state: string; reason: string | null };
  /** `catalog.audit()` of the QA gateway's catalog (what `openclaw-tool-search audit` prints), in the lanes' ranking. */
  audit: { ms: number; ranking: string; tools: number; withProblems: number; unfindable: number; emptyDescriptions: number; nameCollisions: number; targetRank: number | null };
  /** Whether this host can run code mode, and on which Node (probed once, before the lanes). */
  codeMode: { available: boolean; reason: string | null; node: string | null; probeMs: number };
  logDir: string;
  providerUrl: string;
  lanes: LaneRow[];
  /** The catalog changes the live lane's gateway applied mid-run. */
  liveChanges: LiveChange[];
  /** The code, tools and live lanes again with the capability directory off and on (measured, not checked). */
  capabilityDirectory: DirectoryRow[];
  checks: CheckResult[];
  ok: boolean;
}

const REPO_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

async function artifactsOf(provider: MockProvider, run: RunResult): Promise<A.RunArtifacts> {
  return { lane: run.lane, log: SessionLog.read(run.logPath), requests: await provider.debugRequests(run.runId) };
}

/** Runs an assertion and its negative case; both outcomes go into the report. */
function checkWithNegative(name: string, positive: () => unknown, negative: (() => unknown) | null): CheckResult {
  let passed = true;
  let message: string | null = null;
  try {
    positive();
  } catch (err) {
    passed = false;
    message = err instanceof Error ? err.message : String(err);
  }
  if (negative === null) return { name, passed, message, negative: 'none', negativeMessage: null };
  try {
    negative();
    return { name, passed: false, message: message ?? 'the negative case did not fail the assertion', negative: 'DID NOT FAIL', negativeMessage: null };
  } catch (err) {
    if (err instanceof A.QaAssertionError) return { name, passed, message, negative: 'failed as expected', negativeMessage: err.message };
    const text = err instanceof Error ? err.message : String(err);
    return { name, passed: false, message: message ?? `negative case crashed: ${text}`, negative: 'threw a non-assertion error', negativeMessage: text };
  }
}

function expectedCounts(lane: Lane, hydratedTarget: boolean): A.ExpectedCounts {
  if (lane === 'direct') return { searches: 0, describes: 0, calls: 1 };
  if (lane === 'code') return { searches: 1, describes: 1, calls: 1 };
  if (lane === 'directory' && hydratedTarget) return { searches: 0, describes: 0, calls: 1 };
  // One tool_search call carrying two queries counts as one search.
  return { searches: 1, describes: 0, calls: 1 };
}

function rowOf(run: RunResult, direct: RunResult | null): LaneRow {
  // Savings compare the same task; the live lane does another one (more tools, more turns).
  const sameTask = run.lane !== 'direct' && run.lane !== LIVE_LANE;
  const saved = direct && sameTask ? direct.totalRequestBytes - run.totalRequestBytes : null;
  return {
    lane: run.lane,
    mode: run.mode,
    fallbackReason: run.fallbackReason,
    outcome: run.outcome,
    modelRequests: run.modelRequests,
    declaredTools: run.declaredTools.length,
    firstRequestBytes: run.firstRequestBytes,
    totalRequestBytes: run.totalRequestBytes,
    savedBytes: saved,
    savedPercent: saved !== null && direct!.totalRequestBytes > 0 ? Math.round((saved / direct!.totalRequestBytes) * 1000) / 10 : null,
    searches: run.counts.searches,
    describes: run.counts.describes,
    calls: run.counts.calls,
    wallMs: run.wallMs,
    logPath: run.logPath,
    error: run.error,
  };
}

export async function runQa(options: QaOptions): Promise<QaReport> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const logDir = join(options.logRoot ?? join(REPO_ROOT, '.qa-logs'), `${stamp}-${options.tools}-${process.pid}`);
  mkdirSync(logDir, { recursive: true });
  const qa: QaCatalog = buildQaCatalog(options.tools);
  const provider = await MockProvider.start();
  try {
    return await runAll(provider, qa, logDir, options);
  } finally {
    await provider.stop();
  }
}

async function runAll(provider: MockProvider, qa: QaCatalog, logDir: string, options: QaOptions): Promise<QaReport> {
  const common = { providerUrl: provider.url, logDir, qaCatalog: qa };
  // Build the catalog once before the lanes: every run then reuses it (same fingerprint), so the
  // first lane's wall time is not the index build. Both numbers go into the report.
  let t0 = performance.now();
  const capability = await probeCodeMode();
  const codeMode = {
    available: capability.available,
    reason: capability.reason ?? null,
    node: capability.node ? `${capability.node.path} ${capability.node.version ?? ''}`.trim() : null,
    probeMs: Math.round((performance.now() - t0) * 10) / 10,
  };
  const input = catalogInput(qa.tools);
  t0 = performance.now();
  new ToolCatalog(input);
  const catalogBuildMs = Math.round((performance.now() - t0) * 10) / 10;
  t0 = performance.now();
  const reused = new ToolCatalog(input);
  const catalogReuseMs = Math.round((performance.now() - t0) * 10) / 10;
  // The product's default ranking (hybrid when the model package is installed): the lanes start
  // once the tool vectors are ready, so every lane ranks the same way.
  const status = await reused.whenRankingReady();
  const ranking = { active: status.active, configured: status.ranking, state: status.state, reason: status.error ?? (status.ranking === 'lexical' ? rankingCapability().reason ?? null : null) };
  t0 = performance.now();
  const catalogAudit = await reused.audit();
  const auditMs = Math.round(performance.now() - t0);
  const targetAudit = catalogAudit.tools.find((t) => t.name === QA_TARGET);
  const audit = {
    ms: auditMs,
    ranking: catalogAudit.ranking,
    tools: catalogAudit.totals.tools,
    withProblems: catalogAudit.totals.withProblems,
    unfindable: catalogAudit.totals.unfindable,
    emptyDescriptions: catalogAudit.totals.emptyDescriptions,
    nameCollisions: catalogAudit.totals.nameCollisions,
    targetRank: targetAudit?.bestRank ?? null,
  };
  const run = (lane: Lane, runId: string, scenario: Scenario = 'normal', extra: { stream?: boolean; codeTimeoutMs?: number } = {}) =>
    runLane({ ...common, lane, runId, scenario, ...extra });

  // The four lanes, one after another so wall times do not interfere. Direct and tools use JSON
  // responses, code and directory SSE, so both provider paths carry a full run.
  const runs = new Map<Lane, RunResult>();
  for (const lane of LANES) {
    runs.set(lane, await run(lane, `lane-${lane}`, 'normal', { stream: lane === 'code' || lane === 'directory' }));
  }
  const art = new Map<Lane, A.RunArtifacts>();
  for (const [lane, r] of runs) art.set(lane, await artifactsOf(provider, r));
  const direct = art.get('direct')!;
  const directOnly = qa.directOnly.map((t) => t.name);
  const clientTools = qa.tools.filter((t) => t.source === 'client').map((t) => t.name);
  const fakeNames = qa.fakePluginTools.map((t) => t.name);

  const checks: CheckResult[] = [];
  checks.push(
    checkWithNegative(
      'audit covers the catalog and finds the QA target by its own words',
      () => A.assertAuditFindsTarget(catalogAudit, qa.catalogSize, QA_TARGET),
      () => A.assertAuditFindsTarget(N.targetUnfindable(catalogAudit, QA_TARGET), qa.catalogSize, QA_TARGET),
    ),
  );
  checks.push(checkWithNegative('1 direct calls the fake tool', () => A.assertDirectCallsTarget(direct), () => A.assertDirectCallsTarget(N.targetNotExecuted(direct))));
  for (const lane of ['code', 'tools', 'directory'] as const) {
    const a = art.get(lane)!;
    checks.push(checkWithNegative(`2 ${lane} calls it through Tool Search`, () => A.assertSearchLaneCallsTarget(a), () => A.assertSearchLaneCallsTarget(N.targetRanOutsideSession(a))));
  }
  checks.push(checkWithNegative('3 direct sends every fake schema', () => A.assertDirectSendsAllSchemas(direct, fakeNames), () => A.assertDirectSendsAllSchemas(N.dropOneFakeSchema(direct), fakeNames)));
  for (const lane of ['code', 'tools', 'directory'] as const) {
    const a = art.get(lane)!;
    const extra = { directOnly, clientTools };
    checks.push(checkWithNegative(`4 ${lane} sends only control tools`, () => A.assertOnlyControlTools(a, extra), () => A.assertOnlyControlTools(N.leakFakeSchema(a), extra)));
  }
  for (const lane of ['code', 'tools', 'directory'] as const) {
    const a = art.get(lane)!;
    checks.push(checkWithNegative(`5 ${lane} payload smaller than direct`, () => A.assertSmallerPayload(a, direct), () => A.assertSmallerPayload(N.inflateFirstRequest(a, direct), direct)));
  }
  for (const lane of LANES) {
    const a = art.get(lane)!;
    const expected = expectedCounts(lane, runs.get(lane)!.hydrated.includes(QA_TARGET));
    checks.push(checkWithNegative(`6 ${lane} session log: counts, final tool`, () => A.assertSessionLog(a, expected), () => A.assertSessionLog(N.extraSearch(a), expected)));
  }
  checks.push(checkWithNegative('6 tools session log: wrong final source fails', () => A.assertSessionLog(art.get('tools')!, expectedCounts('tools', false)), () => A.assertSessionLog(N.wrongFinalSource(art.get('tools')!), expectedCounts('tools', false))));
  const untrusted = qa.tools.filter((t) => t.source !== 'openclaw').map((t) => ({ name: t.name, description: t.description }));
  for (const lane of ['code', 'tools', 'directory'] as const) {
    const a = art.get(lane)!;
    checks.push(checkWithNegative(`untrusted tools stay out of the ${lane} prompt`, () => A.assertUntrustedOutOfPrompt(a, untrusted), () => A.assertUntrustedOutOfPrompt(N.leakUntrustedName(a, untrusted[0]!.name), untrusted)));
  }
  checks.push(checkWithNegative('7 tools: two queries in one tool_search, then tool_call', () => A.assertTwoQueriesOneSearch(art.get('tools')!), () => A.assertTwoQueriesOneSearch(N.singleQuerySearch(art.get('tools')!))));

  // The live lane: an MCP server re-lists its tools and another disconnects while the run goes on.
  const liveRun = await run(LIVE_LANE, `lane-${LIVE_LANE}`, 'normal', { stream: true });
  const live = await artifactsOf(provider, liveRun);
  const liveUntrusted = [
    ...untrusted,
    ...[...trackerToolsAfter(), ...docsTools()].map((t) => ({ name: t.name, description: t.description ?? '' })),
  ];
  checks.push(checkWithNegative('live: new MCP tool found through tool_search and called', () => A.assertLiveNewToolCalled(live), () => A.assertLiveNewToolCalled(N.newToolMissingFromSearch(live))));
  checks.push(checkWithNegative('live: removed MCP tool fails closed before the executor', () => A.assertLiveRemovedFailsClosed(live), () => A.assertLiveRemovedFailsClosed(N.removedToolReachedExecutor(live))));
  checks.push(checkWithNegative('live: disconnected MCP server fails closed, search notes it', () => A.assertLiveDisconnectFailsClosed(live), () => A.assertLiveDisconnectFailsClosed(N.disconnectedToolRanAnyway(live))));
  checks.push(checkWithNegative('live: session telemetry continues across useCatalog', () => A.assertLiveTelemetryContinues(live), () => A.assertLiveTelemetryContinues(N.telemetryResetByUseCatalog(live))));
  const liveExtra = { directOnly, clientTools };
  checks.push(checkWithNegative('4 live sends only control tools', () => A.assertOnlyControlTools(live, liveExtra), () => A.assertOnlyControlTools(N.leakFakeSchema(live), liveExtra)));
  checks.push(checkWithNegative('untrusted tools stay out of the live prompt', () => A.assertUntrustedOutOfPrompt(live, liveUntrusted), () => A.assertUntrustedOutOfPrompt(N.leakUntrustedName(live, LIVE_TARGET), liveUntrusted)));

  // The capability directory of code and tools modes, off and on: the same tasks, measured (model
  // requests and request bytes) to decide its default; the scripted model calls a tool the directory
  // lists by name instead of searching for it.
  const capabilityDirectory: DirectoryRow[] = [];
  for (const lane of ['code', 'tools', LIVE_LANE] as const) {
    for (const on of [false, true]) {
      const r = await runLane({ ...common, lane, runId: `capability-directory-${on ? 'on' : 'off'}-${lane}`, scenario: 'normal', capabilityDirectory: on, stream: false });
      capabilityDirectory.push({
        lane, directory: on, outcome: r.outcome, modelRequests: r.modelRequests, firstRequestBytes: r.firstRequestBytes,
        totalRequestBytes: r.totalRequestBytes, directoryPromptBytes: r.directoryPromptBytes,
      });
    }
  }

  // Fail-closed scenarios.
  for (const lane of ['tools', 'code'] as const) {
    const denied = await artifactsOf(provider, await run(lane, `policy-denied-${lane}`, 'policy-denied'));
    checks.push(checkWithNegative(`policy-denied target never found or called (${lane})`, () => A.assertPolicyDenied(denied), () => A.assertPolicyDenied(N.leakDeniedTarget(denied))));
  }
  const vanished = await artifactsOf(provider, await run('tools', 'vanish-tools', 'vanish'));
  checks.push(checkWithNegative('vanished tool fails the call', () => A.assertVanishedFails(vanished), () => A.assertVanishedFails(N.vanishedRanAnyway(vanished))));
  const blocked = await artifactsOf(provider, await run('tools', 'approval-block-tools', 'approval-block'));
  checks.push(checkWithNegative('approval block reported as blocked', () => A.assertApprovalBlocked(blocked), () => A.assertApprovalBlocked(N.blockReportedAsError(blocked))));
  const looped = await artifactsOf(provider, await run('code', 'loop-code', 'loop', { codeTimeoutMs: options.loopTimeoutMs ?? 1000, stream: true }));
  checks.push(checkWithNegative('looping code cell killed, run continues', () => A.assertLoopKilledRunContinues(looped), () => A.assertLoopKilledRunContinues(N.loopNotKilled(looped))));

  // Parallel runs: every lane, JSON and SSE, one provider, one process.
  const parallel = options.parallel ?? 20;
  const parallelRuns = await Promise.all(
    Array.from({ length: parallel }, (_, i) => {
      const lane = LANES[i % LANES.length]!;
      return run(lane, `parallel-${String(i + 1).padStart(2, '0')}-${lane}`, 'normal', { stream: i % 2 === 0 });
    }),
  );
  const parallelArt = await Promise.all(parallelRuns.map((r) => artifactsOf(provider, r)));
  checks.push(checkWithNegative(`${parallel} parallel runs succeed`, () => A.assertParallelRuns(parallelArt, parallel), () => A.assertParallelRuns(N.oneParallelRunFailed(parallelArt), parallel)));

  const directRun = runs.get('direct')!;
  const lanes = [...LANES.map((lane) => rowOf(runs.get(lane)!, directRun)), rowOf(liveRun, directRun)];
  return {
    tools: options.tools,
    catalogSize: qa.catalogSize,
    catalogBuildMs,
    catalogReuseMs,
    ranking,
    audit,
    codeMode,
    logDir,
    providerUrl: provider.url,
    lanes,
    liveChanges: liveChangesOf(live),
    capabilityDirectory,
    checks,
    ok: checks.every((c) => c.passed) && lanes.every((l) => l.outcome === 'ok') && capabilityDirectory.every((r) => r.outcome === 'ok'),
  };
}

/** The live run's catalog changes, placed after the model request they followed. */
function liveChangesOf(a: A.RunArtifacts): LiveChange[] {
  return a.log
    .filter((l) => l.type === 'catalog.change')
    .map((l) => ({
      afterModelRequest: a.log.filter((m) => m.type === 'model.request' && m.seq < l.seq).length,
      trigger: String(l.trigger),
      server: String(l.server),
      added: (l.added as string[] | undefined) ?? [],
      removed: (l.removed as string[] | undefined) ?? [],
      reason: typeof l.reason === 'string' ? l.reason : null,
      fingerprintBefore: String(l.fingerprintBefore),
      fingerprintAfter: String(l.fingerprintAfter),
      catalogMs: Number(l.catalogMs),
      useCatalogMs: Number(l.useCatalogMs),
    }));
}
