import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { LogEvent, Logger } from 'kysely';

const TRACER_NAME = 'ewa-server';
/** Statement texts are long; the start says which one it was. Values are never recorded: they carry personal data. */
const STATEMENT_TEXT_MAX = 500;

let tracing = false;

/** Set by tracing.ts when this process starts or stops tracing; read when a database is opened. */
export function traceStatements(on: boolean): void {
  tracing = on;
}

/** Kysely's `log` for a database opened now: spans when this process traces, nothing (no logging at all) otherwise. */
export function statementLog(): Logger | undefined {
  return tracing ? traceStatement : undefined;
}

/**
 * A database statement as a span under the work that ran it (Kysely's `log`, called once the statement has ended,
 * in the caller's context). Outside any trace, nothing is recorded.
 */
function traceStatement(event: LogEvent): void {
  if (!trace.getActiveSpan()) return;
  const end = performance.timeOrigin + performance.now();
  const text = event.query.sql;
  const span = trace.getTracer(TRACER_NAME).startSpan(operationOf(text), {
    kind: SpanKind.CLIENT,
    startTime: end - event.queryDurationMillis,
    attributes: {
      'db.system.name': 'postgresql',
      'db.query.text': text.length > STATEMENT_TEXT_MAX ? `${text.slice(0, STATEMENT_TEXT_MAX)}…` : text,
    },
  });
  if (event.level === 'error') {
    const error = event.error as { code?: unknown } | undefined;
    span.setStatus({ code: SpanStatusCode.ERROR });
    if (typeof error?.code === 'string') span.setAttribute('db.response.status_code', error.code);
  }
  span.end(end);
}

/** The statement's first word (select, insert, with, …): span names stay few, whatever the values. */
function operationOf(text: string): string {
  const word = /^\s*(?:\/\*.*?\*\/\s*)?([a-z]+)/i.exec(text)?.[1];
  return word ? word.toLowerCase() : 'statement';
}
