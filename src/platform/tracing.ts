import { FastifyOtelInstrumentation } from '@fastify/otel';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { FastifyPluginCallback } from 'fastify';
import type { TracingConfig } from '../config.ts';
import { traceStatements } from './statement-spans.ts';

/**
 * OpenTelemetry traces, sent over OTLP/HTTP: a span for every request of the three listeners (@fastify/otel, which
 * continues a caller's W3C traceparent) and a span for every database statement under it. Nothing is patched: the
 * listeners register the plugin and the database reports its statements (statement-spans.ts). Loaded only when
 * tracing is configured.
 */
export class Tracing {
  readonly #provider: TracerProvider;
  readonly #fastify: FastifyOtelInstrumentation;

  private constructor(provider: TracerProvider, fastify: FastifyOtelInstrumentation) {
    this.#provider = provider;
    this.#fastify = fastify;
  }

  static #current: Tracing | undefined;

  /** The tracing of this process, if started. */
  static get current(): Tracing | undefined {
    return Tracing.#current;
  }

  /** Starts tracing for this process (once); before the database opens and the listeners are built. */
  static start(config: TracingConfig, serviceVersion: string): Tracing {
    if (Tracing.#current) return Tracing.#current;
    const provider = new TracerProvider({
      resource: resourceFromAttributes({
        'service.name': config.serviceName,
        'service.version': serviceVersion,
      }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
      spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: config.endpoint }) })],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    // One span per request and one for its handler; a span per hook would cost more than most requests do.
    const fastify = new FastifyOtelInstrumentation({
      registerOnInitialization: false,
      instrumentHooks: false,
      recordExceptions: false,
      // The id of the access log line and of the answer's X-Request-Id: a request found in one is found in the other.
      requestHook: (span, request) => span.setAttribute('ewa.request_id', request.id),
    });
    fastify.setTracerProvider(provider);
    traceStatements(true);
    Tracing.#current = new Tracing(provider, fastify);
    return Tracing.#current;
  }

  /** The plugin a listener registers before its routes. */
  fastifyPlugin(): FastifyPluginCallback {
    return this.#fastify.plugin();
  }

  /** Sends what is still buffered, then stops; spans after this are dropped. */
  async shutdown(): Promise<void> {
    Tracing.#current = undefined;
    traceStatements(false);
    await this.#provider.shutdown();
  }
}
