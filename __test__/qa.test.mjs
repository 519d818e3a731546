// The QA scenario under node:test: the mock provider on its own (a real process over real HTTP),
// then the full gateway scenario against the built addon, one test per check.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tsImport } from 'tsx/esm/api';

const providerClient = await tsImport('../qa/provider-client.mts', import.meta.url);
const { MockProvider, postResponses, assembleStream, ProviderError, QA_MODEL } = providerClient;

const USER = 'tool search qa check target=fake_plugin_tool_17';
const fn = (name) => ({ type: 'function', name, description: `${name} tool`, parameters: { type: 'object', properties: {} }, strict: false });

async function raw(url, path, init = {}) {
  const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: 'Bearer t', 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: await res.json() };
}

describe('mock OpenAI Responses provider (separate process)', () => {
  let provider;
  before(async () => {
    provider = await MockProvider.start();
  });
  after(async () => {
    await provider?.stop();
  });

  test('lists its model', async () => {
    const { status, body } = await raw(provider.url, '/v1/models');
    assert.equal(status, 200);
    assert.deepEqual(body.data.map((m) => m.id), [QA_MODEL]);
  });

  test('structured tools: one tool_search call carrying two queries', async () => {
    const { response } = await postResponses(provider.url, { model: QA_MODEL, input: USER, tools: [fn('tool_search'), fn('tool_describe'), fn('tool_call')] }, {});
    assert.equal(response.object, 'response');
    const [item] = response.output;
    assert.equal(item.type, 'function_call');
    assert.equal(item.name, 'tool_search');
    assert.equal(JSON.parse(item.arguments).queries.length, 2);
  });

  test('structured tools: calls the hit found by tool_search, by id', async () => {
    const search = { type: 'function_call', call_id: 'c1', name: 'tool_search', arguments: '{}' };
    const found = { results: [{ query: 'q', candidates: [{ id: 'openclaw:fake_plugin:fake_plugin_tool_17', name: 'fake_plugin_tool_17' }] }, { query: 'r', candidates: [] }] };
    const input = [{ role: 'user', content: USER }, search, { type: 'function_call_output', call_id: 'c1', output: JSON.stringify(found) }];
    const { response } = await postResponses(provider.url, { model: QA_MODEL, input, tools: [fn('tool_search'), fn('tool_call')] }, {});
    const args = JSON.parse(response.output[0].arguments);
    assert.equal(response.output[0].name, 'tool_call');
    assert.deepEqual(args, { id: 'openclaw:fake_plugin:fake_plugin_tool_17', args: { marker: 'qa-marker-fake_plugin_tool_17' } });
  });

  test('structured tools: a search without the target ends with QA_TARGET_NOT_FOUND', async () => {
    const search = { type: 'function_call', call_id: 'c1', name: 'tool_search', arguments: '{}' };
    const input = [{ role: 'user', content: USER }, search, { type: 'function_call_output', call_id: 'c1', output: '{"results":[]}' }];
    const { response } = await postResponses(provider.url, { model: QA_MODEL, input, tools: [fn('tool_search'), fn('tool_call')] }, {});
    assert.equal(response.output[0].type, 'message');
    assert.equal(response.output[0].content[0].text, 'QA_TARGET_NOT_FOUND fake_plugin_tool_17');
  });

  test('live script: one search for the target and the tools it will lose, then calls by the ids found (a trailing Note line is read around)', async () => {
    const prompt = `${USER.replace('fake_plugin_tool_17', 'tracker_link_pull_request')} stale=tracker_search_issues down=docs_get_page`;
    const tools = [fn('tool_search'), fn('tool_call')];
    const first = await postResponses(provider.url, { model: QA_MODEL, input: prompt, tools }, {});
    assert.equal(first.response.output[0].name, 'tool_search');
    assert.deepEqual(JSON.parse(first.response.output[0].arguments).queries.map((q) => q.query), ['tracker_link_pull_request', 'tracker_search_issues', 'docs_get_page']);
    const candidates = [{ id: 'mcp:qa_tracker:tracker_search_issues', name: 'tracker_search_issues' }, { id: 'mcp:docs:docs_get_page', name: 'docs_get_page' }];
    const output = `${JSON.stringify({ results: [{ query: 'q', candidates }] })}\nNote: 2 matching tools from server x are unavailable (server x disconnected); they cannot be called now.`;
    const search = { type: 'function_call', call_id: 'c1', name: 'tool_search', arguments: '{}' };
    const input = [{ role: 'user', content: prompt }, search, { type: 'function_call_output', call_id: 'c1', output }];
    const second = await postResponses(provider.url, { model: QA_MODEL, input, tools }, {});
    assert.equal(second.response.output[0].name, 'tool_call');
    assert.equal(JSON.parse(second.response.output[0].arguments).id, 'mcp:docs:docs_get_page');
  });

  test('code mode: a cell that searches, describes and calls the target', async () => {
    const { response } = await postResponses(provider.url, { model: QA_MODEL, input: USER, tools: [fn('tool_search_code')] }, {});
    const code = JSON.parse(response.output[0].arguments).code;
    assert.equal(response.output[0].name, 'tool_search_code');
    assert.match(code, /openclaw\.tools\.search\("fake_plugin_tool_17"/);
    assert.match(code, /openclaw\.tools\.describe\(hit\.id\)/);
    assert.match(code, /openclaw\.tools\.call\(hit\.id, \{ marker: "qa-marker-fake_plugin_tool_17" \}\)/);
  });

  test('target declared directly: calls it, then answers with the OK line (not a prefix match)', async () => {
    const tools = [fn('fake_plugin_tool_17'), fn('tool_search')];
    const first = await postResponses(provider.url, { model: QA_MODEL, input: USER, tools }, {});
    assert.equal(first.response.output[0].name, 'fake_plugin_tool_17');
    const call = { type: 'function_call', call_id: 'c1', name: 'fake_plugin_tool_17', arguments: '{}' };
    const wrong = [{ role: 'user', content: USER }, call, { type: 'function_call_output', call_id: 'c1', output: 'FAKE_PLUGIN_OK fake_plugin_tool_1 {}' }];
    const notOk = await postResponses(provider.url, { model: QA_MODEL, input: wrong, tools }, {});
    assert.match(notOk.response.output[0].content[0].text, /^QA_CALL_FAILED/);
    const output = JSON.stringify({ content: [{ type: 'text', text: 'FAKE_PLUGIN_OK fake_plugin_tool_17 {"marker":"m"}' }] });
    const right = [{ role: 'user', content: USER }, call, { type: 'function_call_output', call_id: 'c1', output }];
    const ok = await postResponses(provider.url, { model: QA_MODEL, input: right, tools }, {});
    assert.equal(ok.response.output[0].content[0].text, 'FAKE_PLUGIN_OK fake_plugin_tool_17 {"marker":"m"}');
  });

  test('SSE: documented event order, and the stream adds up to response.completed', async () => {
    const res = await fetch(`${provider.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ model: QA_MODEL, input: 'no target here', stream: true }),
    });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const { response, events } = assembleStream(await res.text());
    assert.deepEqual(events.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    assert.ok(events.includes('response.output_text.delta'));
    assert.deepEqual(events.slice(-3), ['response.content_part.done', 'response.output_item.done', 'response.completed']);
    assert.match(response.output[0].content[0].text, /^QA_NO_TARGET/);
    const fc = await postResponses(provider.url, { model: QA_MODEL, input: USER, stream: true, tools: [fn('tool_search_code')] }, {});
    assert.ok(fc.events.includes('response.function_call_arguments.done'));
    assert.equal(fc.response.output[0].name, 'tool_search_code');
  });

  test('a corrupted stream is rejected by the client', async () => {
    const truncated = 'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{}}\n\n';
    assert.throws(() => assembleStream(truncated), /must end with response.completed/);
    const res = await fetch(`${provider.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ model: QA_MODEL, input: USER, stream: true, tools: [fn('tool_search'), fn('tool_call')] }),
    });
    const text = await res.text();
    assert.doesNotThrow(() => assembleStream(text));
    const tampered = text.replace('"delta":"{\\"queries', '"delta":"{\\"QUERIES');
    assert.notEqual(tampered, text);
    assert.throws(() => assembleStream(tampered), /do not add up/);
    const reordered = text.replace('"sequence_number":3', '"sequence_number":7');
    assert.throws(() => assembleStream(reordered), /sequence_number/);
  });

  test('malformed requests get OpenAI-shaped 4xx errors', async () => {
    const cases = [
      [{ input: USER }, 400, 'missing_required_parameter'],
      [{ model: 'gpt-unknown', input: USER }, 404, 'model_not_found'],
      [{ model: QA_MODEL }, 400, 'missing_required_parameter'],
      [{ model: QA_MODEL, input: USER, tools: [{ type: 'function', function: { name: 'x' } }] }, 400, 'unknown_parameter'],
      [{ model: QA_MODEL, input: USER, tools: [fn('a'), fn('a')] }, 400, 'invalid_value'],
      [{ model: QA_MODEL, input: USER, tools: [fn('bad name!')] }, 400, 'invalid_value'],
      [{ model: QA_MODEL, input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] }, 400, null],
      [{ model: QA_MODEL, input: USER, stream: 'yes' }, 400, 'invalid_type'],
      // Strict by default: a schema with an optional property needs "strict": false.
      [{ model: QA_MODEL, input: USER, tools: [{ type: 'function', name: 'opt', parameters: { type: 'object', properties: { a: { type: 'string' } } } }] }, 400, 'invalid_function_parameters'],
    ];
    for (const [body, status, code] of cases) {
      const res = await raw(provider.url, '/v1/responses', { method: 'POST', body: JSON.stringify(body) });
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.code, code, JSON.stringify(res.body));
      assert.equal(typeof res.body.error.message, 'string');
    }
    const notJson = await raw(provider.url, '/v1/responses', { method: 'POST', body: '{oops' });
    assert.equal(notJson.status, 400);
    const noAuth = await fetch(`${provider.url}/v1/responses`, { method: 'POST', body: '{}' });
    assert.equal(noAuth.status, 401);
    assert.equal((await noAuth.json()).error.code, 'missing_api_key');
    const wrongMethod = await raw(provider.url, '/v1/responses', { method: 'GET' });
    assert.equal(wrongMethod.status, 405);
    const wrongPath = await raw(provider.url, '/v1/chat/nowhere', { method: 'POST', body: '{}' });
    assert.equal(wrongPath.status, 404);
    await assert.rejects(postResponses(provider.url, { input: USER }, {}), ProviderError);
    const closed = { type: 'object', properties: { marker: { type: 'string' } }, required: ['marker'], additionalProperties: false };
    const strictOk = await raw(provider.url, '/v1/responses', { method: 'POST', body: JSON.stringify({ model: QA_MODEL, input: USER, tools: [{ type: 'function', name: 's', parameters: closed }] }) });
    assert.equal(strictOk.status, 200);
  });

  test('/debug/requests records raw bytes, body, declared tools and the planned call per run id', async () => {
    const body = { model: QA_MODEL, input: USER, tools: [fn('tool_search_code')] };
    const { requestBytes } = await postResponses(provider.url, body, { 'x-qa-run-id': 'debug-check' });
    const [rec] = await provider.debugRequests('debug-check');
    assert.equal(rec.rawBytes, requestBytes);
    assert.deepEqual(rec.body, body);
    assert.deepEqual(rec.declaredTools, ['tool_search_code']);
    assert.equal(rec.plan.kind, 'function_call');
    assert.equal(rec.plan.name, 'tool_search_code');
    assert.equal(rec.status, 200);
    assert.deepEqual(await provider.debugRequests('no-such-run'), []);
  });
});

// The full scenario against the built addon: every lane, every assertion with its negative case.
describe('gateway QA scenario (36 tools, built addon)', async () => {
  const { runQa } = await tsImport('../qa/scenario.mts', import.meta.url);
  const { laneMode, laneTarget } = await tsImport('../qa/run-lane.mts', import.meta.url);
  const report = await runQa({ tools: 36, parallel: 20 });

  test('every lane is in the report, the live lane included', () => {
    assert.deepEqual(report.lanes.map((l) => l.lane), ['direct', 'code', 'tools', 'directory', 'live']);
  });
  for (const lane of report.lanes) {
    test(`lane ${lane.lane} reaches FAKE_PLUGIN_OK ${laneTarget(lane.lane)}`, () => {
      assert.equal(lane.outcome, 'ok', lane.error ?? `log: ${lane.logPath}`);
      assert.equal(lane.mode, laneMode(lane.lane), `lane ${lane.lane} ran in mode ${lane.mode}`);
    });
  }
  for (const check of report.checks) {
    test(check.name, () => {
      assert.equal(check.negative, 'failed as expected', `negative case: ${check.negative} ${check.negativeMessage ?? ''}`);
      assert.ok(check.passed, check.message ?? 'failed');
    });
  }
});
