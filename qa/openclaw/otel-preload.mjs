// `--import` preload of the gateway in the QA's telemetry lanes: an OpenTelemetry SDK registered
// in the gateway process before OpenClaw starts, as an operator's own preload does (OpenClaw's
// diagnostics-otel plugin then runs with OPENCLAW_OTEL_PRELOADED=1). Spans go out one by one and
// metrics every half second as OTLP/HTTP JSON to QA_OTLP_URL (the QA's receiver, otlp-receiver.mjs).
// OpenClaw's public diagnostic events of type `tool_search.*` are forwarded there too, subscribed
// through OpenClaw's own plugin SDK (QA_OPENCLAW_DIAGNOSTICS: its plugin-sdk/diagnostic-runtime.js).
import { pathToFileURL } from 'node:url'
import api from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace'

const base = process.env.QA_OTLP_URL
if (base) {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  api.trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${base}/v1/traces` }) })] }))
  const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics` }), exportIntervalMillis: 500, exportTimeoutMillis: 400 })
  api.metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))

  const sdk = process.env.QA_OPENCLAW_DIAGNOSTICS
  if (sdk) {
    const { onDiagnosticEvent } = await import(pathToFileURL(sdk).href)
    onDiagnosticEvent((event) => {
      if (typeof event?.type !== 'string' || !event.type.startsWith('tool_search.')) return
      fetch(`${base}/diagnostic-events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) }).catch(() => {})
    })
  }
}
