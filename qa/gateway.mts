// The fake gateway's tool runtime: a registry of tool implementations, an approval gate, and the
// executor that ToolSearchSession calls back into. It records every attempt, so the assertions
// can tell what actually ran from what was merely asked for.

import { runImplementation, type QaCatalog, type QaTool } from './fake-plugin.mjs';

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
    try {
      attempt.executed = true;
      return runImplementation(tool, attempt.args);
    } catch (err) {
      attempt.outcome = 'error';
      attempt.message = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }
}
