// The QA's OTLP receiver: a local HTTP server that takes OTLP/HTTP JSON (`/<lane>/v1/traces`,
// `/<lane>/v1/metrics`) and the diagnostic events the gateway preload forwards
// (`/<lane>/diagnostic-events`), and keeps each lane's spans, metric names, events and raw bodies.
import http from 'node:http'

/** A span attribute's value as JSON (OTLP's AnyValue). */
function anyValue(value) {
  if (!value || typeof value !== 'object') return undefined
  if ('stringValue' in value) return value.stringValue
  if ('boolValue' in value) return value.boolValue
  if ('intValue' in value) return Number(value.intValue)
  if ('doubleValue' in value) return value.doubleValue
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(anyValue)
  return undefined
}

const attributes = (list) => Object.fromEntries((list ?? []).map((a) => [a.key, anyValue(a.value)]))

export async function startReceiver() {
  /** lane -> { spans, metrics, events, bodies } */
  const lanes = new Map()
  const lane = (name) => {
    if (!lanes.has(name)) lanes.set(name, { spans: [], metrics: new Set(), events: [], bodies: [] })
    return lanes.get(name)
  }
  const server = http.createServer((request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const match = /^\/([^/]+)\/(v1\/traces|v1\/metrics|diagnostic-events)$/.exec(request.url ?? '')
      const text = Buffer.concat(chunks).toString('utf8')
      let body
      try {
        body = JSON.parse(text)
      } catch {
        body = undefined
      }
      if (request.method !== 'POST' || !match || body === undefined) {
        response.writeHead(400).end()
        return
      }
      const into = lane(decodeURIComponent(match[1]))
      into.bodies.push(text)
      if (match[2] === 'v1/traces') {
        for (const resource of body.resourceSpans ?? []) {
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              into.spans.push({ scope: scope.scope?.name, name: span.name, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId, attributes: attributes(span.attributes), status: span.status })
            }
          }
        }
      } else if (match[2] === 'v1/metrics') {
        for (const resource of body.resourceMetrics ?? []) {
          for (const scope of resource.scopeMetrics ?? []) for (const metric of scope.metrics ?? []) into.metrics.add(metric.name)
        }
      } else {
        into.events.push(body)
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    url: (name) => `http://127.0.0.1:${port}/${encodeURIComponent(name)}`,
    received: (name) => lane(name),
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}
