import { connect } from 'node:net';
import type { Answer } from './answer-shapes.ts';
import { ANSWER_MS } from './fuzz-settings.ts';

/** What came back on the socket: nothing, or an HTTP response, parsed. */
function parseResponse(method: string, raw: Buffer, ms: number): Answer {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no HTTP response: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const [statusLine = '', ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  if (!status) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = raw.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = body.indexOf('\r\n', at);
      const size = Number.parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
      if (lineEnd < 0 || !size) break;
      chunks.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
    body = Buffer.concat(chunks);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  return { method, status, headers, body: body.toString('utf8'), ms };
}

/**
 * Sends bytes on a new connection and reads one response: what inject cannot send (absolute-form targets,
 * conflicting framing headers, oversized headers, bytes the HTTP parser refuses). An answer that does not
 * come within the bound is a failure, not a hang.
 */
export function rawRequest(port: number, request: Buffer | string): Promise<Answer> {
  const bytes = typeof request === 'string' ? Buffer.from(request, 'latin1') : request;
  const method = bytes.subarray(0, bytes.indexOf(' ')).toString('latin1');
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${ANSWER_MS} ms`));
    }, ANSWER_MS + 50);
    const finish = () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(method, Buffer.concat(received), performance.now() - started));
      } catch (error) {
        reject(error);
      }
    };
    socket.on('data', (chunk) => {
      received.push(chunk);
      // One response is enough: stop at its end (by Content-Length) without waiting for the server to close.
      const all = Buffer.concat(received);
      const end = all.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(all.subarray(0, end).toString('latin1'))?.[1];
      if (end >= 0 && length !== undefined && all.length >= end + 4 + Number(length)) {
        socket.destroy();
        finish();
      }
    });
    socket.on('end', finish);
    socket.on('error', (error) => {
      clearTimeout(timer);
      if (received.length > 0) finish();
      else reject(error);
    });
    socket.write(bytes);
  });
}
