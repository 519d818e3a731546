// The QA gateway's tools: the contract's fake plugin (36 `fake_plugin_tool_NN` tools), a few MCP and
// client tools, a direct-only tool, and for larger runs a generated filler catalog spread over
// other plugins, MCP servers and the client. Everything is deterministic: same size, same catalog.

import type { CatalogTool } from '../index.js';

export const FAKE_PLUGIN_OWNER = 'fake_plugin';
export const FAKE_TOOL_COUNT = 36;
export const QA_TARGET = 'fake_plugin_tool_17';
export const QA_TARGET_ID = `openclaw:${FAKE_PLUGIN_OWNER}:${QA_TARGET}`;
export const DIRECT_ONLY_TOOL = 'qa_gateway_status';
export const OK_PREFIX = 'FAKE_PLUGIN_OK';
export const SUPPORTED_SIZES = [36, 500, 5000] as const;

type JsonSchema = Record<string, unknown>;

/** One tool as the fake gateway registers it: catalog metadata plus which implementation runs it. */
export interface QaTool extends CatalogTool {
  id: string;
  source: 'openclaw' | 'mcp' | 'client';
  owner: string;
  name: string;
  description: string;
  parameters: JsonSchema;
  /** `mcp-server`: runs on its MCP server (`tools/call`), see ./mcp-server.mts. */
  kind: 'fake-plugin' | 'filler' | 'direct-only' | 'mcp-server';
}

export interface QaCatalog {
  /** Everything the gateway registers, in id order (direct-only tool included). */
  tools: QaTool[];
  /** The contract's 36 fake plugin tools. */
  fakePluginTools: QaTool[];
  /** Tools that stay visible to the model in every mode. */
  directOnly: QaTool[];
  /** Number of catalogable tools (everything but direct-only). */
  catalogSize: number;
}

export const MARKER_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    marker: { type: 'string', description: 'Opaque marker echoed back in the result.' },
  },
  required: ['marker'],
  additionalProperties: false,
};

function fakePluginTool(n: number): QaTool {
  const nn = String(n).padStart(2, '0');
  const name = `fake_plugin_tool_${nn}`;
  return {
    id: `openclaw:${FAKE_PLUGIN_OWNER}:${name}`,
    source: 'openclaw',
    owner: FAKE_PLUGIN_OWNER,
    name,
    label: `Fake plugin tool ${nn}`,
    description: `QA fake plugin tool number ${nn}. Echoes the marker it is given as FAKE_PLUGIN_OK ${name}.`,
    parameters: MARKER_SCHEMA,
    kind: 'fake-plugin',
  };
}

/** Extra tools present at every size: two MCP tools and one client tool (untrusted sources). */
function fixedExtras(): QaTool[] {
  const issueSchema: JsonSchema = {
    type: 'object',
    properties: {
      repo: { type: 'string', description: 'owner/name' },
      title: { type: 'string' },
      body: { type: 'string' },
    },
    required: ['repo', 'title'],
  };
  return [
    {
      id: 'mcp:qa_tracker:tracker_create_issue',
      source: 'mcp',
      owner: 'qa_tracker',
      name: 'tracker_create_issue',
      description: 'Create an issue in the QA tracker.',
      parameters: issueSchema,
      kind: 'filler',
    },
    {
      id: 'mcp:qa_tracker:tracker_search_issues',
      source: 'mcp',
      owner: 'qa_tracker',
      name: 'tracker_search_issues',
      description: 'Search issues in the QA tracker by text.',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      kind: 'filler',
    },
    {
      id: 'client:client:client_pick_file',
      source: 'client',
      owner: 'client',
      name: 'client_pick_file',
      description: 'Ask the user to pick a file in the client app.',
      parameters: { type: 'object', properties: { accept: { type: 'string' } } },
      kind: 'filler',
    },
  ];
}

function directOnlyTool(): QaTool {
  return {
    id: `openclaw:core:${DIRECT_ONLY_TOOL}`,
    source: 'openclaw',
    owner: 'core',
    name: DIRECT_ONLY_TOOL,
    description: 'Report the gateway status. Always visible to the model.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    catalogMode: 'direct-only',
    kind: 'direct-only',
  };
}

const PLUGIN_DOMAINS = ['calendar', 'crm', 'billing', 'docs', 'deploy', 'analytics', 'inventory', 'support', 'hr', 'travel'];
const MCP_SERVERS = ['github', 'linear', 'jira', 'slack', 'notion'];
const VERBS = ['create', 'update', 'delete', 'list', 'get', 'search', 'archive', 'export', 'import', 'sync', 'share', 'assign', 'approve', 'close', 'restore', 'merge'];
const NOUNS = ['event', 'contact', 'invoice', 'page', 'release', 'report', 'item', 'ticket', 'employee', 'booking', 'comment', 'label', 'project', 'note', 'task', 'file', 'team', 'webhook', 'channel', 'dashboard', 'order', 'shipment', 'policy', 'quota', 'secret', 'schedule', 'survey', 'template', 'workflow', 'invoice_line', 'budget', 'milestone'];

// Client (app-supplied) tools are few in practice, and directory mode keeps them all visible:
// the filler adds at most this many, so the directory lane measures deferral, not client count.
const MAX_FILLER_CLIENT_TOOLS = 8;

/** Generated filler tool `i`: about 60% plugin and 40% MCP tools, a few client tools, unique names. */
function fillerTool(i: number): QaTool {
  const verb = VERBS[i % VERBS.length]!;
  const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length]!;
  const round = Math.floor(i / (VERBS.length * NOUNS.length));
  const bucket = i % 10 === 9 && i < MAX_FILLER_CLIENT_TOOLS * 10 ? 9 : i % 10 === 9 ? 8 : i % 10;
  const prefix = bucket < 6
    ? PLUGIN_DOMAINS[i % PLUGIN_DOMAINS.length]!
    : bucket < 9
      ? MCP_SERVERS[i % MCP_SERVERS.length]!
      : 'app';
  const name = `${prefix}_${verb}_${noun}${round > 0 ? `_v${round + 1}` : ''}_${String(i).padStart(4, '0')}`;
  const parameters: JsonSchema = {
    type: 'object',
    properties: {
      [`${noun}_id`]: { type: 'string', description: `Identifier of the ${noun.replace('_', ' ')}.` },
      note: { type: 'string', description: 'Free-text note stored with the change.' },
      ...(i % 3 === 0 ? { dry_run: { type: 'boolean', description: 'Validate without applying.' } } : {}),
      ...(i % 4 === 0 ? { priority: { type: 'string', enum: ['low', 'normal', 'high', 'urgent'] } } : {}),
    },
    required: [`${noun}_id`],
    additionalProperties: false,
  };
  const description = `${verb[0]!.toUpperCase()}${verb.slice(1)} a ${noun.replace('_', ' ')} in ${prefix}. Generated QA filler tool ${i}.`;
  if (bucket < 6) {
    return { id: `openclaw:${prefix}:${name}`, source: 'openclaw', owner: prefix, name, description, parameters, kind: 'filler' };
  }
  if (bucket < 9) {
    return { id: `mcp:${prefix}:${name}`, source: 'mcp', owner: prefix, name, description, parameters, kind: 'filler' };
  }
  return { id: `client:client:${name}`, source: 'client', owner: 'client', name, description, parameters, kind: 'filler' };
}

/**
 * Builds the QA catalog of `size` catalogable tools: the 36 fake plugin tools, the fixed MCP and
 * client extras, and generated filler up to `size`; plus the direct-only tool (not counted).
 */
export function buildQaCatalog(size: number = FAKE_TOOL_COUNT): QaCatalog {
  if (!Number.isInteger(size) || size < FAKE_TOOL_COUNT || size > 50_000) {
    throw new Error(`catalog size must be an integer from ${FAKE_TOOL_COUNT} to 50000, got ${size}`);
  }
  const fakePluginTools = Array.from({ length: FAKE_TOOL_COUNT }, (_, i) => fakePluginTool(i + 1));
  // At the contract's size the catalog is exactly the fake plugin plus the fixed extras.
  const extras = fixedExtras();
  const fillerCount = Math.max(0, size - FAKE_TOOL_COUNT - extras.length);
  const filler = Array.from({ length: fillerCount }, (_, i) => fillerTool(i));
  const directOnly = [directOnlyTool()];
  const catalogable = [...fakePluginTools, ...extras, ...filler];
  const tools = [...catalogable, ...directOnly].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { tools, fakePluginTools, directOnly, catalogSize: catalogable.length };
}

/** What the fake plugin returns: the shape of an OpenClaw tool result. */
export interface FakeToolResult {
  content: { type: 'text'; text: string }[];
  details: Record<string, unknown>;
}

/** Validates `{ marker: string }` like the real plugin would, before doing anything. */
export function checkMarkerArgs(name: string, args: unknown): { marker: string } {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw new Error(`${name}: arguments must be an object`);
  }
  const record = args as Record<string, unknown>;
  const extra = Object.keys(record).filter((k) => k !== 'marker');
  if (extra.length > 0) throw new Error(`${name}: unexpected argument(s) ${extra.join(', ')}`);
  if (typeof record.marker !== 'string') throw new Error(`${name}: marker must be a string`);
  return { marker: record.marker };
}

/** Runs a registered tool's implementation (the plugin code; no policy here, that is the gateway's job). */
export function runImplementation(tool: QaTool, args: unknown): FakeToolResult {
  if (tool.kind === 'fake-plugin') {
    const checked = checkMarkerArgs(tool.name, args);
    return {
      content: [{ type: 'text', text: `${OK_PREFIX} ${tool.name} ${JSON.stringify(checked)}` }],
      details: { tool: tool.name, marker: checked.marker },
    };
  }
  if (tool.kind === 'direct-only') {
    return { content: [{ type: 'text', text: 'gateway ok' }], details: { status: 'ok' } };
  }
  return { content: [{ type: 'text', text: `done: ${tool.name}` }], details: { tool: tool.name, args } };
}

// The live lane (issue #15): MCP servers whose tools change while a run goes on.

/** A tool as an MCP server's `tools/list` answer carries it (the raw shape `withSource` accepts). */
export interface McpListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  annotations?: Record<string, unknown>;
  /** Servers may send more (outputSchema, _meta): it passes through as listed. */
  [field: string]: unknown;
}

/** The server whose tools/list changes mid-run: the scenario's existing MCP owner. */
export const LIVE_CHANGED_SERVER = 'qa_tracker';
/** Listed after the change only: the model must find it through tool_search and call it. */
export const LIVE_TARGET = 'tracker_link_pull_request';
export const LIVE_TARGET_ID = `mcp:${LIVE_CHANGED_SERVER}:${LIVE_TARGET}`;
/** Listed before the change only: the model saw its id in a search and calls it afterwards. */
export const LIVE_REMOVED = 'tracker_search_issues';
export const LIVE_REMOVED_ID = `mcp:${LIVE_CHANGED_SERVER}:${LIVE_REMOVED}`;
/** The server that disconnects mid-run; the live lane connects it at start, next to the normal catalog. */
export const LIVE_DOWN_SERVER = 'docs';
export const LIVE_DOWN_TOOL = 'docs_get_page';
export const LIVE_DOWN_ID = `mcp:${LIVE_DOWN_SERVER}:${LIVE_DOWN_TOOL}`;
export const LIVE_DOWN_REASON = `server ${LIVE_DOWN_SERVER} disconnected`;

/** qa_tracker's tools/list before the change: the same two tools the normal catalog has. */
export function trackerToolsBefore(): McpListedTool[] {
  return fixedExtras()
    .filter((t) => t.source === 'mcp' && t.owner === LIVE_CHANGED_SERVER)
    .map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters }));
}

/** qa_tracker's tools/list after the change: tracker_search_issues gone, tracker_link_pull_request new. */
export function trackerToolsAfter(): McpListedTool[] {
  return [
    ...trackerToolsBefore().filter((t) => t.name !== LIVE_REMOVED),
    {
      name: LIVE_TARGET,
      title: 'Link pull request',
      description: `Link a pull request to an issue in the QA tracker. Echoes the marker it is given as ${OK_PREFIX} ${LIVE_TARGET}.`,
      inputSchema: MARKER_SCHEMA,
      annotations: { readOnlyHint: false, idempotentHint: true },
    },
  ];
}

/** The docs server's tools/list (it never changes; the server goes away). */
export function docsTools(): McpListedTool[] {
  return [
    {
      name: LIVE_DOWN_TOOL,
      title: 'Get docs page',
      description: 'Fetch one page of the product documentation by its path.',
      inputSchema: { type: 'object', properties: { marker: { type: 'string' } } },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'docs_search_pages',
      description: 'Search the product documentation pages by text.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      annotations: { readOnlyHint: true },
    },
  ];
}

/** What a live-lane server answers to `tools/call`: the target echoes the QA OK line, the rest a receipt. */
export function mcpServerCall(server: string, name: string, args: unknown): FakeToolResult {
  if (server === LIVE_CHANGED_SERVER && name === LIVE_TARGET) {
    const checked = checkMarkerArgs(name, args);
    return { content: [{ type: 'text', text: `${OK_PREFIX} ${name} ${JSON.stringify(checked)}` }], details: { tool: name, marker: checked.marker } };
  }
  return { content: [{ type: 'text', text: `done: ${server}/${name}` }], details: { tool: name, args } };
}
