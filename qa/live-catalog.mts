// The gateway's MCP client side of the live lane: connects MCP servers into the catalog, and while
// a run goes on reacts to `notifications/tools/list_changed` (list again, `withSource`) and to a
// disconnect (`withUnavailable`), moving the running session to the result with `useCatalog`.
// Every change is logged as a `catalog.change` line with the session's telemetry on both sides.

import { performance } from 'node:perf_hooks';
import type { ToolCatalog, ToolSearchSession } from '../index.js';
import type { McpListedTool, QaTool } from './fake-plugin.mjs';
import type { FakeGateway } from './gateway.mjs';
import type { FakeMcpServer } from './mcp-server.mjs';
import type { SessionLog } from './session-log.mjs';

// A server's tools/list answer is untrusted: bound it before it reaches the catalog.
const MAX_LISTED_TOOLS = 1000;

export type CatalogChangeTrigger = 'notifications/tools/list_changed' | 'disconnect';

export class LiveMcpCatalog {
  private session: ToolSearchSession | null = null;
  private pending: Promise<void> = Promise.resolve();
  private rpcId = 0;
  private changes = 0;

  constructor(private current: ToolCatalog, private readonly gateway: FakeGateway, private readonly log: SessionLog) {}

  get catalog(): ToolCatalog {
    return this.current;
  }

  /** Connects a server before the session opens: its listed tools join the catalog. */
  async connect(server: FakeMcpServer): Promise<void> {
    server.onNotification((message) => {
      if (message.method === 'notifications/tools/list_changed') this.enqueue(() => this.relist(server));
    });
    server.onClose(() => this.enqueue(async () => this.markUnavailable(server)));
    this.gateway.connectMcp(server);
    const tools = await this.listTools(server);
    this.current = this.current.withSource({ source: 'mcp', owner: server.name }, tools);
    this.gateway.replaceOwner('mcp', server.name, tools.map((t) => registryTool(server.name, t)));
  }

  /** The session that follows the catalog from now on. */
  attach(session: ToolSearchSession): void {
    this.session = session;
  }

  /** Resolves once every notification received so far has been applied (rejects if one failed). */
  settled(): Promise<void> {
    return this.pending;
  }

  private enqueue(work: () => Promise<void>): void {
    this.pending = this.pending.then(work);
  }

  private async listTools(server: FakeMcpServer): Promise<McpListedTool[]> {
    const answer = await server.request({ jsonrpc: '2.0', id: ++this.rpcId, method: 'tools/list', params: {} });
    const tools = (answer.result as { tools?: unknown } | undefined)?.tools;
    if (answer.error || !Array.isArray(tools)) throw new Error(`MCP server ${server.name}: tools/list failed: ${JSON.stringify(answer.error ?? answer.result)}`);
    if (tools.length > MAX_LISTED_TOOLS) throw new Error(`MCP server ${server.name} listed ${tools.length} tools, more than ${MAX_LISTED_TOOLS}`);
    return tools as McpListedTool[];
  }

  private async relist(server: FakeMcpServer): Promise<void> {
    const tools = await this.listTools(server);
    const t0 = performance.now();
    // The raw tools/list shape goes straight in; the selector supplies source and owner.
    const next = this.current.withSource({ source: 'mcp', owner: server.name }, tools);
    const catalogMs = round(performance.now() - t0);
    this.gateway.replaceOwner('mcp', server.name, tools.map((t) => registryTool(server.name, t)));
    this.apply(next, { trigger: 'notifications/tools/list_changed', server: server.name, listed: tools.map((t) => t.name), catalogMs });
  }

  private markUnavailable(server: FakeMcpServer): void {
    const reason = `server ${server.name} disconnected`;
    const t0 = performance.now();
    const next = this.current.withUnavailable({ source: 'mcp', owner: server.name }, reason);
    this.apply(next, { trigger: 'disconnect', server: server.name, reason, catalogMs: round(performance.now() - t0) });
  }

  /** `catalogMs`: the wall time of withSource / withUnavailable (on the event loop), for the log. */
  private apply(next: ToolCatalog, info: { trigger: CatalogChangeTrigger; server: string; listed?: string[]; reason?: string; catalogMs: number }): void {
    const session = this.session;
    if (!session) throw new Error('a catalog change arrived before the session was attached');
    const before = this.current;
    const beforeIds = new Set(before.ids());
    const afterIds = next.ids();
    const sessionTelemetryBefore = session.telemetry();
    const t0 = performance.now();
    session.useCatalog(next);
    const useCatalogMs = round(performance.now() - t0);
    const sessionTelemetryAfter = session.telemetry();
    this.current = next;
    this.changes += 1;
    this.log.write('catalog.change', {
      change: this.changes,
      ...info,
      added: afterIds.filter((id) => !beforeIds.has(id)),
      removed: [...beforeIds].filter((id) => !afterIds.includes(id)),
      serverTools: afterIds.filter((id) => id.startsWith(`mcp:${info.server}:`)),
      useCatalogMs,
      sizeBefore: before.size,
      sizeAfter: next.size,
      fingerprintBefore: before.fingerprint,
      fingerprintAfter: next.fingerprint,
      catalogTelemetryBefore: before.telemetry(),
      catalogTelemetryAfter: next.telemetry(),
      sessionTelemetryBefore,
      sessionTelemetryAfter,
    });
  }
}

/** The gateway's registry entry for a listed tool: it runs on its server. */
function registryTool(server: string, listed: McpListedTool): QaTool {
  return {
    id: `mcp:${server}:${listed.name}`,
    source: 'mcp',
    owner: server,
    name: listed.name,
    description: listed.description ?? '',
    parameters: listed.inputSchema,
    kind: 'mcp-server',
  };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
