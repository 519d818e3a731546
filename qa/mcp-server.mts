// A fake MCP server for the live lane, as a gateway's MCP client sees one: JSON-RPC 2.0 messages
// (in process: the transport is not what the lane tests), `tools/list` in the MCP shape,
// `tools/call`, the `notifications/tools/list_changed` a server sends when its tools change, and a
// disconnect.

import { mcpServerCall, type McpListedTool } from './fake-plugin.mjs';

export interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
}

export class McpDisconnectedError extends Error {
  constructor(server: string) {
    super(`MCP server ${server} is disconnected`);
    this.name = 'McpDisconnectedError';
  }
}

export class FakeMcpServer {
  private tools: McpListedTool[];
  private connected = true;
  private readonly notificationListeners: ((message: JsonRpcMessage) => void)[] = [];
  private readonly closeListeners: (() => void)[] = [];
  /** Every message the client sent, in order (requests only). */
  readonly received: JsonRpcMessage[] = [];

  constructor(readonly name: string, tools: McpListedTool[]) {
    this.tools = structuredClone(tools);
  }

  get isConnected(): boolean {
    return this.connected;
  }

  /** The client's side of the connection: server-sent notifications. */
  onNotification(listener: (message: JsonRpcMessage) => void): void {
    this.notificationListeners.push(listener);
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  /** A client request and the server's answer. A disconnected server answers nothing. */
  async request(message: JsonRpcMessage): Promise<JsonRpcMessage> {
    if (!this.connected) throw new McpDisconnectedError(this.name);
    this.received.push(structuredClone(message));
    if (message.method === 'tools/list') {
      return { jsonrpc: '2.0', id: message.id, result: { tools: structuredClone(this.tools) } };
    }
    if (message.method === 'tools/call') {
      const name = String(message.params?.name ?? '');
      if (!this.tools.some((t) => t.name === name)) {
        return { jsonrpc: '2.0', id: message.id, error: { code: -32602, message: `Unknown tool: ${name}` } };
      }
      try {
        return { jsonrpc: '2.0', id: message.id, result: mcpServerCall(this.name, name, message.params?.arguments ?? {}) };
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        return { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text }], isError: true } };
      }
    }
    return { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `Method not found: ${String(message.method)}` } };
  }

  /** The server's tools change: it tells the client, which has to list them again. */
  changeTools(tools: McpListedTool[]): void {
    this.tools = structuredClone(tools);
    const notification: JsonRpcMessage = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
    for (const listener of this.notificationListeners) listener(notification);
  }

  /** The connection drops (process exited, socket closed). */
  disconnect(): void {
    if (!this.connected) return;
    this.connected = false;
    for (const listener of this.closeListeners) listener();
  }
}
