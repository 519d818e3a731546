#!/usr/bin/env node
// Mock OpenAI Responses API provider for the QA scenario: a real HTTP server, run as its own process.
//
//   node qa/mock-provider.mjs [--port 0] [--host 127.0.0.1] [--api-key KEY]
//
// Prints one JSON line `{"event":"listening","url":"http://127.0.0.1:PORT"}` on stdout when ready,
// then nothing else on stdout. Exits on SIGTERM/SIGINT and when its stdin closes (so it never
// outlives the harness that spawned it with a piped stdin).
//
// Endpoints: POST /v1/responses (JSON, or SSE with `stream: true`), GET /v1/models,
// GET /debug/requests[?run=<x-qa-run-id>] (everything received), DELETE /debug/requests.

import http from 'node:http';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { planNext } from './scripted-model.mjs';

export const MODEL_ID = 'qa-scripted-model';
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_RECORDED_REQUESTS = 10_000;
// OpenAI's rule for function names.
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TEXT_CHUNK = 24;

class RequestError extends Error {
  constructor(status, message, { type = 'invalid_request_error', param = null, code = null } = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.param = param;
    this.code = code;
  }
}

function errorBody(error) {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function requireType(value, check, param, expected) {
  if (!check(value)) {
    throw new RequestError(400, `Invalid type for '${param}': expected ${expected}, but got ${describeType(value)}.`, {
      param,
      code: 'invalid_type',
    });
  }
}

function describeType(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function missing(param) {
  return new RequestError(400, `Missing required parameter: '${param}'.`, { param, code: 'missing_required_parameter' });
}

/** Checks a function tool the way the Responses API does (flat shape, not Chat Completions'). */
function validateTool(tool, index, seen) {
  const p = `tools[${index}]`;
  requireType(tool, isObject, p, 'an object');
  if (tool.type === undefined) throw missing(`${p}.type`);
  if (tool.type !== 'function') {
    throw new RequestError(400, `Invalid value for '${p}.type': this mock supports only 'function' tools.`, {
      param: `${p}.type`,
      code: 'invalid_value',
    });
  }
  if (tool.function !== undefined) {
    throw new RequestError(400, `Unknown parameter: '${p}.function'. The Responses API takes 'name' and 'parameters' at the top level of a function tool.`, {
      param: `${p}.function`,
      code: 'unknown_parameter',
    });
  }
  if (tool.name === undefined) throw missing(`${p}.name`);
  requireType(tool.name, (v) => typeof v === 'string', `${p}.name`, 'a string');
  if (!FUNCTION_NAME.test(tool.name)) {
    throw new RequestError(400, `Invalid '${p}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' of at most 64 characters.`, {
      param: `${p}.name`,
      code: 'invalid_value',
    });
  }
  if (seen.has(tool.name)) {
    throw new RequestError(400, `Invalid 'tools': duplicate function name '${tool.name}'.`, { param: 'tools', code: 'invalid_value' });
  }
  seen.add(tool.name);
  if (tool.description !== undefined && tool.description !== null) {
    requireType(tool.description, (v) => typeof v === 'string', `${p}.description`, 'a string');
  }
  if (tool.strict !== undefined && tool.strict !== null) requireType(tool.strict, (v) => typeof v === 'boolean', `${p}.strict`, 'a boolean');
  if (tool.parameters !== undefined && tool.parameters !== null) {
    requireType(tool.parameters, isObject, `${p}.parameters`, 'an object');
    // Function tools are strict unless they say otherwise; strict schemas must be closed and fully required.
    if (tool.strict !== false) {
      const problem = strictSchemaProblem(tool.parameters, 0);
      if (problem) {
        throw new RequestError(400, `Invalid schema for function '${tool.name}': ${problem} (set "strict": false to send a non-strict schema).`, {
          param: `${p}.parameters`,
          code: 'invalid_function_parameters',
        });
      }
    }
    if (tool.parameters.type !== undefined && tool.parameters.type !== 'object') {
      throw new RequestError(400, `Invalid schema for function '${tool.name}': schema must be a JSON Schema of 'type: "object"', got 'type: "${tool.parameters.type}"'.`, {
        param: `${p}.parameters`,
        code: 'invalid_function_parameters',
      });
    }
  }
}

/** Why a schema cannot be used in strict mode, or null. Bounded: deeper schemas are refused. */
function strictSchemaProblem(schema, depth) {
  if (depth > 32) return 'schema nests too deeply';
  if (!isObject(schema)) return null;
  if (isObject(schema.properties)) {
    if (schema.additionalProperties !== false) return "'additionalProperties' is required to be supplied and to be false";
    const required = Array.isArray(schema.required) ? schema.required : [];
    const missingKeys = Object.keys(schema.properties).filter((k) => !required.includes(k));
    if (missingKeys.length > 0) return `'required' is required to be supplied and to be an array including every key in properties. Missing '${missingKeys[0]}'`;
    for (const value of Object.values(schema.properties)) {
      const problem = strictSchemaProblem(value, depth + 1);
      if (problem) return problem;
    }
  }
  for (const key of ['items', 'anyOf', '$defs', 'definitions']) {
    const child = schema[key];
    const children = Array.isArray(child) ? child : isObject(child) ? (key === 'items' ? [child] : Object.values(child)) : [];
    for (const value of children) {
      const problem = strictSchemaProblem(value, depth + 1);
      if (problem) return problem;
    }
  }
  return null;
}

function validateInputItem(item, index, callIds) {
  const p = `input[${index}]`;
  requireType(item, isObject, p, 'an object');
  const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
  if (type === undefined) throw missing(`${p}.type`);
  if (type === 'message') {
    if (!['user', 'system', 'developer', 'assistant'].includes(item.role)) {
      throw new RequestError(400, `Invalid value for '${p}.role': expected one of 'user', 'system', 'developer', 'assistant'.`, {
        param: `${p}.role`,
        code: 'invalid_value',
      });
    }
    if (typeof item.content === 'string') return;
    requireType(item.content, Array.isArray, `${p}.content`, 'a string or an array');
    item.content.forEach((part, j) => {
      requireType(part, isObject, `${p}.content[${j}]`, 'an object');
      if (!['input_text', 'output_text'].includes(part.type)) {
        throw new RequestError(400, `Invalid value for '${p}.content[${j}].type': this mock supports 'input_text' and 'output_text'.`, {
          param: `${p}.content[${j}].type`,
          code: 'invalid_value',
        });
      }
      requireType(part.text, (v) => typeof v === 'string', `${p}.content[${j}].text`, 'a string');
    });
    return;
  }
  if (type === 'function_call') {
    for (const key of ['call_id', 'name', 'arguments']) {
      if (item[key] === undefined) throw missing(`${p}.${key}`);
      requireType(item[key], (v) => typeof v === 'string', `${p}.${key}`, 'a string');
    }
    callIds.add(item.call_id);
    return;
  }
  if (type === 'function_call_output') {
    if (item.call_id === undefined) throw missing(`${p}.call_id`);
    if (item.output === undefined) throw missing(`${p}.output`);
    requireType(item.output, (v) => typeof v === 'string' || Array.isArray(v), `${p}.output`, 'a string or an array');
    if (!callIds.has(item.call_id)) {
      throw new RequestError(400, `No tool call found for function call output with call_id ${item.call_id}.`, { param: 'input' });
    }
    return;
  }
  throw new RequestError(400, `Invalid value for '${p}.type': '${type}' is not supported by this mock.`, {
    param: `${p}.type`,
    code: 'invalid_value',
  });
}

/** Validates a parsed `POST /v1/responses` body; throws a RequestError with an OpenAI-shaped message. */
export function validateResponsesBody(body) {
  if (!isObject(body)) throw new RequestError(400, 'The request body must be a JSON object.');
  if (body.model === undefined) throw missing('model');
  requireType(body.model, (v) => typeof v === 'string', 'model', 'a string');
  if (body.model !== MODEL_ID) {
    throw new RequestError(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, { param: 'model', code: 'model_not_found' });
  }
  if (body.input === undefined) throw missing('input');
  requireType(body.input, (v) => typeof v === 'string' || Array.isArray(v), 'input', 'a string or an array');
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    throw new RequestError(400, 'This mock is stateless: send the whole conversation in input instead of previous_response_id.', {
      param: 'previous_response_id',
      code: 'unsupported_parameter',
    });
  }
  if (Array.isArray(body.input)) {
    const callIds = new Set();
    body.input.forEach((item, i) => validateInputItem(item, i, callIds));
  }
  if (body.instructions !== undefined && body.instructions !== null) {
    requireType(body.instructions, (v) => typeof v === 'string', 'instructions', 'a string');
  }
  if (body.stream !== undefined && body.stream !== null) requireType(body.stream, (v) => typeof v === 'boolean', 'stream', 'a boolean');
  if (body.tools !== undefined && body.tools !== null) {
    requireType(body.tools, Array.isArray, 'tools', 'an array');
    const seen = new Set();
    body.tools.forEach((tool, i) => validateTool(tool, i, seen));
  }
}

function createIds() {
  let next = 0;
  return (prefix) => {
    next += 1;
    return `${prefix}_qa_${String(next).padStart(6, '0')}`;
  };
}

function buildOutputItem(plan, newId) {
  if (plan.kind === 'function_call') {
    return { type: 'function_call', id: newId('fc'), call_id: newId('call'), name: plan.name, arguments: plan.arguments, status: 'completed' };
  }
  return {
    type: 'message',
    id: newId('msg'),
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: plan.text, annotations: [] }],
  };
}

function buildResponse(body, item, id, rawBytes) {
  const outputTokens = Math.ceil(JSON.stringify(item).length / 4);
  const inputTokens = Math.ceil(rawBytes / 4);
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: body.model,
    output: [item],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    usage: { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens },
  };
}

/** The SSE events of one streamed response, in the order the Responses API sends them. */
export function streamEvents(response) {
  const events = [];
  const push = (type, payload) => events.push({ type, sequence_number: events.length, ...payload });
  const inProgress = { ...response, status: 'in_progress', output: [], usage: null };
  push('response.created', { response: inProgress });
  push('response.in_progress', { response: inProgress });
  const item = response.output[0];
  if (item.type === 'function_call') {
    push('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } });
    push('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: item.arguments });
    push('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: item.arguments });
  } else {
    const text = item.content[0].text;
    push('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    push('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (let at = 0; at < text.length; at += TEXT_CHUNK) {
      push('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text.slice(at, at + TEXT_CHUNK), logprobs: [] });
    }
    push('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text, logprobs: [] });
    push('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: item.content[0] });
  }
  push('response.output_item.done', { output_index: 0, item });
  push('response.completed', { response });
  return events;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new RequestError(413, `Request body too large: more than ${MAX_BODY_BYTES} bytes.`, { code: 'request_too_large' }));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Creates the provider server (not yet listening). `apiKey` null accepts any bearer token. */
export function createProvider({ apiKey = null } = {}) {
  const newId = createIds();
  const recorded = [];
  let sequence = 0;

  function record(entry) {
    if (recorded.length >= MAX_RECORDED_REQUESTS) recorded.shift();
    recorded.push(entry);
  }

  function checkAuth(req) {
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Bearer ') || header.length <= 7) {
      throw new RequestError(401, "You didn't provide an API key. Provide it in an Authorization header using Bearer auth.", { code: 'missing_api_key' });
    }
    if (apiKey !== null && header.slice(7) !== apiKey) {
      throw new RequestError(401, 'Incorrect API key provided.', { code: 'invalid_api_key' });
    }
  }

  async function handleResponses(req, res, entry) {
    checkAuth(req);
    const raw = await readBody(req);
    entry.rawBytes = raw.length;
    let body;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new RequestError(400, 'We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly. The OpenAI API expects a JSON payload.)');
    }
    entry.body = body;
    validateResponsesBody(body);
    entry.stream = body.stream === true;
    entry.declaredTools = (body.tools ?? []).map((t) => t.name);
    entry.toolsBytes = Buffer.byteLength(JSON.stringify(body.tools ?? []));
    entry.instructionsBytes = Buffer.byteLength(body.instructions ?? '');
    const plan = planNext(body);
    const item = buildOutputItem(plan, newId);
    entry.plan = plan.kind === 'function_call'
      ? { kind: plan.kind, name: plan.name, arguments: safeParse(plan.arguments), callId: item.call_id, note: plan.note }
      : { kind: plan.kind, text: plan.text, note: plan.note };
    const response = buildResponse(body, item, newId('resp'), raw.length);
    entry.responseId = response.id;
    entry.status = 200;
    if (!entry.stream) {
      sendJson(res, 200, response);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const event of streamEvents(response)) {
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    res.end();
  }

  async function route(req, res) {
    const url = new URL(req.url ?? '/', 'http://mock.invalid');
    const entry = {
      seq: ++sequence,
      method: req.method,
      path: url.pathname,
      runId: typeof req.headers['x-qa-run-id'] === 'string' ? req.headers['x-qa-run-id'] : null,
      receivedAt: new Date().toISOString(),
      rawBytes: 0,
      status: 0,
    };
    try {
      if (url.pathname === '/v1/responses') {
        if (req.method !== 'POST') throw new RequestError(405, `Invalid method for ${url.pathname}: use POST.`, { code: 'method_not_allowed' });
        record(entry);
        await handleResponses(req, res, entry);
        return;
      }
      if (url.pathname === '/v1/models' && req.method === 'GET') {
        checkAuth(req);
        sendJson(res, 200, { object: 'list', data: [{ id: MODEL_ID, object: 'model', created: 0, owned_by: 'openclaw-qa' }] });
        return;
      }
      if (url.pathname === '/debug/requests' && req.method === 'GET') {
        const run = url.searchParams.get('run');
        const requests = run === null ? recorded : recorded.filter((r) => r.runId === run);
        sendJson(res, 200, { object: 'list', requests });
        return;
      }
      if (url.pathname === '/debug/requests' && req.method === 'DELETE') {
        recorded.length = 0;
        sendJson(res, 200, { cleared: true });
        return;
      }
      throw new RequestError(404, `Invalid URL (${req.method} ${url.pathname})`);
    } catch (err) {
      const error = err instanceof RequestError ? err : new RequestError(500, 'The mock provider had an internal error.', { type: 'server_error' });
      if (!(err instanceof RequestError)) process.stderr.write(`mock-provider: ${err?.stack ?? err}\n`);
      entry.status = error.status;
      entry.error = errorBody(error).error;
      if (!res.headersSent) sendJson(res, error.status, errorBody(error));
      else res.end();
    }
  }

  return http.createServer((req, res) => {
    route(req, res);
  });
}

function safeParse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      'api-key': { type: 'string' },
      // Keep running when stdin closes (for manual runs with stdin from /dev/null).
      detached: { type: 'boolean', default: false },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`mock-provider: invalid --port ${values.port}\n`);
    process.exit(2);
  }
  const server = createProvider({ apiKey: values['api-key'] ?? null });
  const stop = () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The harness holds our stdin open; when it goes away, so do we.
  if (!values.detached) {
    process.stdin.on('end', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }
  server.listen(port, values.host, () => {
    const { port: bound } = server.address();
    process.stdout.write(`${JSON.stringify({ event: 'listening', url: `http://${values.host}:${bound}`, pid: process.pid })}\n`);
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main();
}
