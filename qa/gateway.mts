// The fake gateway's tool runtime: a registry of tool implementations, an approval gate, and the
// executor that ToolSearchSession calls back into. It records every attempt, so the assertions
// can tell what actually ran from what was merely asked for.

import { runImplementation, type QaCatalog, type QaTool } from './fake-plugin.mjs';
import type { FakeMcpServer } from './mcp-server.mjs';

/** What the session hands the executor (the addon's `ExecutorCall`, restated for the log). */
export interface ExecutorCallInfo {
  id: string;
  name: string;
  source: string;
  owner: string;
  args: unknown;
  toolCallId: string;
  parentToolCallId?: string | null;
  signal?: AbortSignal | null;
}

export type AttemptOutcome = 'ok' | 'error' | 'blocked' | 'missing' | 'aborted';

export interface GatewayAttempt {
  via: 'session' | 'direct';
  id: string;
  name: string;
  source: string;
  owner: string;
  toolCallId: string;
  parentToolCallId: string | null;
  args: unknown;
  outcome: AttemptOutcome;
  /** True only when the tool's implementation actually ran. */
  executed: boolean;
  message?: string;
}

/** Thrown to the session when a tool is gone or refused; `code` says which. */
export class GatewayToolError extends Error {
  constructor(readonly code: 'TOOL_UNAVAILABLE' | 'TOOL_BLOCKED', message: string) {
    super(message);
    this.name = 'GatewayToolError';
  }
}

export class FakeGateway {
  private readonly byId = new Map<string, QaTool>();
  private readonly byName = new Map<string, QaTool>();
  private readonly approvalDenied = new Set<string>();
  private readonly mcpServers = new Map<string, FakeMcpServer>();
  private nextRpcId = 0;
  readonly attempts: GatewayAttempt[] = [];

  constructor(catalog: QaCatalog) {
    for (const tool of catalog.tools) {
      this.byId.set(tool.id, tool);
      this.byName.set(tool.name, tool);
    }
  }

  /** Unregisters a tool (a plugin unloaded, an MCP server went away) while the run goes on. */
  vanish(name: string): void {
    const tool = this.byName.get(name);
    if (!tool) return;
    this.byName.delete(name);
    this.byId.delete(tool.id);
  }

  /** Routes the calls of `mcp-server` tools owned by `server.name` to that server (`tools/call`). */
  connectMcp(server: FakeMcpServer): void {
    this.mcpServers.set(server.name, server);
  }

  /** Replaces every registered tool of one owner (an MCP server re-listed its tools). */
  replaceOwner(source: QaTool['source'], owner: string, tools: QaTool[]): void {
    for (const [id, tool] of this.byId) {
      if (tool.source !== source || tool.owner !== owner) continue;
      this.byId.delete(id);
      if (this.byName.get(tool.name) === tool) this.byName.delete(tool.name);
    }
    for (const tool of tools) {
      this.byId.set(tool.id, tool);
      this.byName.set(tool.name, tool);
    }
  }

  /** Makes the approval step deny this tool (as if the operator clicked "deny"). */
  denyApproval(name: string): void {
    this.approvalDenied.add(name);
  }

  isRegistered(name: string): boolean {
    return this.byName.has(name);
  }

  /** The executor given to ToolSearchSession: resolves by id, applies approval, runs the tool. */
  readonly executor = async (call: ExecutorCallInfo): Promise<unknown> => {
    const attempt: GatewayAttempt = {
      via: 'session',
      id: call.id,
      name: call.name,
      source: call.source,
      owner: call.owner,
      toolCallId: call.toolCallId,
      parentToolCallId: call.parentToolCallId ?? null,
      args: call.args,
      outcome: 'ok',
      executed: false,
    };
    this.attempts.push(attempt);
    return this.execute(this.byId.get(call.id), attempt, call.signal ?? null);
  };

  /** A direct call of a visible tool by name (direct mode, direct-only tools). */
  async runDirect(name: string, args: unknown, toolCallId: string): Promise<unknown> {
    const tool = this.byName.get(name);
    const attempt: GatewayAttempt = {
      via: 'direct',
      id: tool?.id ?? '',
      name,
      source: tool?.source ?? '',
      owner: tool?.owner ?? '',
      toolCallId,
      parentToolCallId: null,
      args,
      outcome: 'ok',
      executed: false,
    };
    this.attempts.push(attempt);
    return this.execute(tool, attempt, null);
  }

  private async execute(tool: QaTool | undefined, attempt: GatewayAttempt, signal: AbortSignal | null): Promise<unknown> {
    if (!tool) {
      attempt.outcome = 'missing';
      attempt.message = `tool ${attempt.id || attempt.name} is not available in this gateway`;
      throw new GatewayToolError('TOOL_UNAVAILABLE', attempt.message);
    }
    if (this.approvalDenied.has(tool.name)) {
      attempt.outcome = 'blocked';
      attempt.message = `approval denied for ${tool.name}`;
      throw new GatewayToolError('TOOL_BLOCKED', attempt.message);
    }
    if (signal?.aborted) {
      attempt.outcome = 'aborted';
      throw new Error(`call of ${tool.name} aborted before it ran`);
    }
    if (tool.kind === 'mcp-server') return this.callMcp(tool, attempt);
    try {
      attempt.executed = true;
      return runImplementation(tool, attempt.args);
    } catch (err) {
      attempt.outcome = 'error';
      attempt.message = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }

  /** Forwards a call to the tool's MCP server; a server that is gone makes the tool unavailable. */
  private async callMcp(tool: QaTool, attempt: GatewayAttempt): Promise<unknown> {
    const server = this.mcpServers.get(tool.owner);
    if (!server?.isConnected) {
      attempt.outcome = 'missing';
      attempt.message = `MCP server ${tool.owner} is not connected`;
      throw new GatewayToolError('TOOL_UNAVAILABLE', attempt.message);
    }
    attempt.executed = true;
    const answer = await server.request({ jsonrpc: '2.0', id: ++this.nextRpcId, method: 'tools/call', params: { name: tool.name, arguments: attempt.args } });
    const result = answer.result as { isError?: boolean; content?: { text?: string }[] } | undefined;
    if (answer.error || !result || result.isError) {
      attempt.outcome = 'error';
      attempt.message = answer.error?.message ?? result?.content?.map((c) => c.text ?? '').join('\n') ?? 'no result';
      throw new Error(attempt.message);
    }
    return result;
  }
}
