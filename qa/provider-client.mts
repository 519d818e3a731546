// Starts the mock provider as a child process and talks to it over HTTP like a gateway's
// OpenAI Responses client: JSON or SSE, with the stream checked for order and consistency.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const QA_MODEL = 'qa-scripted-model';
const PROVIDER_SCRIPT = fileURLToPath(new URL('./mock-provider.mjs', import.meta.url));
const START_TIMEOUT_MS = 15_000;
const REQUEST_TIMEOUT_MS = 120_000;

export interface ResponsesFunctionCall {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: string;
}

export interface ResponsesMessage {
  type: 'message';
  id: string;
  role: 'assistant';
  content: { type: 'output_text'; text: string }[];
}

export type ResponsesOutputItem = ResponsesFunctionCall | ResponsesMessage;

export interface ResponsesResponse {
  id: string;
  object: 'response';
  status: string;
  output: ResponsesOutputItem[];
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
}

/** One request as the provider recorded it (GET /debug/requests). */
export interface RecordedRequest {
  seq: number;
  method: string;
  path: string;
  runId: string | null;
  rawBytes: number;
  status: number;
  stream?: boolean;
  body?: any;
  declaredTools?: string[];
  toolsBytes?: number;
  instructionsBytes?: number;
  plan?: { kind: 'function_call'; name: string; arguments: unknown; callId: string; note: string } | { kind: 'message'; text: string; note: string };
  responseId?: string;
  error?: { message: string; type: string; param: string | null; code: string | null };
}

export class ProviderError extends Error {
  constructor(readonly status: number, readonly body: unknown) {
    super(`provider answered HTTP ${status}: ${JSON.stringify(body).slice(0, 500)}`);
  }
}

/** A running mock provider process. */
export class MockProvider {
  private constructor(readonly url: string, private readonly child: ChildProcess) {}

  static async start(options: { apiKey?: string } = {}): Promise<MockProvider> {
    const args = [PROVIDER_SCRIPT, '--port', '0', '--host', '127.0.0.1'];
    if (options.apiKey) args.push('--api-key', options.apiKey);
    // stdin stays piped: the provider exits when this process goes away.
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('mock provider did not start in time')), START_TIMEOUT_MS);
      const lines = createInterface({ input: child.stdout! });
      lines.once('line', (line) => {
        clearTimeout(timer);
        try {
          const ready = JSON.parse(line) as { event: string; url: string };
          if (ready.event !== 'listening') throw new Error(`unexpected first line: ${line}`);
          resolve(ready.url);
        } catch (err) {
          reject(err);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`mock provider exited early with code ${code}`));
      });
    });
    const provider = new MockProvider(url, child);
    await provider.warmUp();
    return provider;
  }

  /** One models call and one JSON and one SSE response, so the first lane does not pay for client start-up. */
  private async warmUp(): Promise<void> {
    const models = await fetch(`${this.url}/v1/models`, { headers: { authorization: 'Bearer qa-local-key' } });
    if (!models.ok) throw new ProviderError(models.status, await models.text());
    await models.json();
    for (const stream of [false, true]) {
      await postResponses(this.url, { model: QA_MODEL, input: 'warm-up', stream }, { 'x-qa-run-id': 'warm-up' });
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin?.end();
    this.child.kill('SIGTERM');
    await exited;
  }

  async debugRequests(runId?: string): Promise<RecordedRequest[]> {
    const query = runId === undefined ? '' : `?run=${encodeURIComponent(runId)}`;
    const res = await fetch(`${this.url}/debug/requests${query}`);
    if (!res.ok) throw new ProviderError(res.status, await res.text());
    const body = (await res.json()) as { requests: RecordedRequest[] };
    return body.requests;
  }
}

export interface PostResult {
  response: ResponsesResponse;
  /** Serialized request body size in bytes, as sent on the wire. */
  requestBytes: number;
  /** SSE event types in order (empty for JSON responses). */
  events: string[];
}

/** POSTs a Responses request; with `stream: true` in the body, reads and checks the SSE stream. */
export async function postResponses(url: string, body: Record<string, unknown>, headers: Record<string, string>): Promise<PostResult> {
  const payload = JSON.stringify(body);
  const requestBytes = Buffer.byteLength(payload);
  const res = await fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer qa-local-key', ...headers },
    body: payload,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (!res.ok) {
    let errorBody: unknown;
    try {
      errorBody = await res.json();
    } catch {
      errorBody = null;
    }
    throw new ProviderError(res.status, errorBody);
  }
  if (body.stream !== true) {
    return { response: (await res.json()) as ResponsesResponse, requestBytes, events: [] };
  }
  const contentType = res.headers.get('content-type') ?? '';
  if (!contentType.startsWith('text/event-stream')) throw new Error(`expected an SSE stream, got ${contentType}`);
  const { response, events } = assembleStream(await res.text());
  return { response, requestBytes, events };
}

interface SseEvent {
  event: string;
  data: any;
}

function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    events.push({ event, data: JSON.parse(data.join('\n')) });
  }
  return events;
}

/**
 * Rebuilds the response from SSE events the way a client does (items from output_item.done, text
 * from deltas) and checks it against `response.completed`, so a malformed stream fails the run.
 */
export function assembleStream(text: string): { response: ResponsesResponse; events: string[] } {
  const events = parseSse(text);
  const types = events.map((e) => e.event);
  if (types[0] !== 'response.created') throw new Error(`stream must start with response.created, got ${types[0]}`);
  const last = events.at(-1);
  if (!last || last.event !== 'response.completed') throw new Error(`stream must end with response.completed, got ${last?.event}`);
  events.forEach((e, i) => {
    if (e.data.type !== e.event) throw new Error(`event ${i}: type ${e.data.type} under event: ${e.event}`);
    if (e.data.sequence_number !== i) throw new Error(`event ${i}: sequence_number ${e.data.sequence_number}`);
  });
  const items: ResponsesOutputItem[] = [];
  const added = new Set<number>();
  const deltas = new Map<string, string>();
  for (const { event, data } of events) {
    if (event === 'response.output_item.added') added.add(data.output_index);
    if (event === 'response.output_text.delta' || event === 'response.function_call_arguments.delta') {
      deltas.set(data.item_id, (deltas.get(data.item_id) ?? '') + data.delta);
    }
    if (event === 'response.output_item.done') {
      if (!added.has(data.output_index)) throw new Error(`output_item.done before output_item.added for index ${data.output_index}`);
      items[data.output_index] = data.item;
    }
  }
  const completed = last.data.response as ResponsesResponse;
  if (JSON.stringify(completed.output) !== JSON.stringify(items)) {
    throw new Error('response.completed output differs from the streamed output items');
  }
  for (const item of items) {
    const whole = item.type === 'message' ? item.content.map((c) => c.text).join('') : item.arguments;
    const key = item.type === 'message' ? item.id : item.id ?? '';
    if ((deltas.get(key) ?? '') !== whole) throw new Error(`streamed deltas of ${key} do not add up to the finished item`);
  }
  return { response: completed, events: types };
}
