import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { type Answer, checkAnswer, describeAnswer, type Shape } from './answer-shapes.ts';
import { changedTables, type DatabaseWatch } from './database-fingerprint.ts';
import { ANSWER_MS, replayHint } from './fuzz-settings.ts';

/** One request as sent. */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Buffer | undefined;
}

function shorten(text: string, max = 240): string {
  const escaped = JSON.stringify(text).slice(1, -1);
  return escaped.length > max ? `${escaped.slice(0, max)}… (${text.length} chars)` : escaped;
}

/** The request in a few lines, long values cut, for a failure message. */
export function describeRequest(request: FuzzRequest): string {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `  ${name}: ${shorten(value, 160)}`)
    .join('\n');
  let body = '';
  if (request.body !== undefined) {
    const text = request.body.toString('utf8');
    const valid = Buffer.from(text).equals(request.body);
    body = valid
      ? `\n  body (${request.body.length} bytes): ${shorten(text, 600)}`
      : `\n  body (${request.body.length} bytes, not UTF-8; hex): ${request.body.subarray(0, 300).toString('hex')}${request.body.length > 300 ? '…' : ''}`;
  }
  return `${request.method} ${shorten(request.url, 400)}\n${headers}${body}`;
}

/**
 * Sends a request through `inject` (no socket) and times the answer; an answer that does not come within the
 * bound fails at the bound instead of hanging the suite.
 */
export async function injectTimed(app: FastifyInstance, request: FuzzRequest): Promise<Answer> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ANSWER_MS} ms`)), ANSWER_MS + 50);
  });
  try {
    const response = await Promise.race([
      app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.headers,
        ...(request.body === undefined ? {} : { payload: request.body }),
      }),
      late,
    ]);
    return {
      method: request.method,
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
      ms: performance.now() - started,
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends one fuzz request through `inject` and checks every property of its answer (see `exchangeChecked`).
 */
export function sendChecked(
  app: FastifyInstance,
  watch: DatabaseWatch,
  request: FuzzRequest,
  shape: Shape,
  operation: string,
): Promise<Answer> {
  return exchangeChecked(watch, describeRequest(request), () => injectTimed(app, request), shape, operation);
}

/**
 * Runs one exchange and checks every property of its answer: no 5xx, within the bound, the documented shape
 * of a failure, and no change in the database when it was refused. The failure names the request, the answer
 * and how to replay it.
 */
export async function exchangeChecked(
  watch: DatabaseWatch,
  description: string,
  send: () => Promise<Answer>,
  shape: Shape,
  operation: string,
): Promise<Answer> {
  const explain = (problem: string, answer?: Answer) =>
    new Error(
      `${operation}: ${problem}\n${description}\n→ ${answer ? describeAnswer(answer) : 'no answer'}\n${replayHint(operation)}`,
    );
  const before = await watch.before();
  let answer: Answer;
  try {
    answer = await send();
  } catch (error) {
    watch.forget();
    throw explain((error as Error).message);
  }
  const after = await watch.after();
  try {
    checkAnswer(answer, shape);
    if (answer.status >= 400) {
      const changed = changedTables(before, after);
      assert.deepEqual(changed, [], `a refused request changed ${changed.join(', ')}`);
    }
  } catch (error) {
    throw explain((error as Error).message.split('\n')[0]!, answer);
  }
  return answer;
}
