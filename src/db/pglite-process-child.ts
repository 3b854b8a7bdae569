/**
 * The process that holds an on-disk embedded database (started by pglite-process.ts). Its order, one JSON argument:
 * the cluster's directory and the template directory. It opens the cluster as the serving process would, says
 * `ready` (or `failed`, with the error), then answers query, exec, batch and close messages one at a time, in order. It
 * closes the database and exits when told to close, or when the process that started it is gone.
 */
import { dirname } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { holdDatabaseFiles } from './database-files-lock.ts';
import { openCluster, shippedTemplateFile } from './pglite-cluster.ts';
import { embeddedOptions } from './pglite-options.ts';
import type { ChildMessage, ErrorShape, Order, ParentMessage } from './pglite-process-messages.ts';
import { runStatements } from './session-statements.ts';

const order = JSON.parse(process.argv[2] ?? '') as Order;
let pglite: PGlite | undefined;
/** Releases the lock of the database's files (database-files-lock.ts), once they are closed. */
let releaseFiles = () => {};
/** The statements in the order they came: each starts once the one before it has answered. */
let queue: Promise<void> = Promise.resolve();
let closing = false;

function send(message: ChildMessage): void {
  try {
    process.send?.(message);
  } catch (error) {
    // A field of an error, or a value of a row, that cannot be copied: the answer goes, as an error, without it.
    if ('id' in message) process.send?.({ id: message.id, error: shapeOf(error) });
  }
}

/** An error as data: name, message and every own enumerable field that can be copied across (code, constraint…). */
function shapeOf(error: unknown): ErrorShape {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    try {
      fields[key] = structuredClone(value);
    } catch {} // a function (PGlite's parsers in queryOptions): not needed across
  }
  return { name: error.name, message: error.message, stack: error.stack, fields };
}

async function close(): Promise<void> {
  closing = true;
  await queue;
  await pglite?.close();
  releaseFiles();
}

async function answer(message: Extract<ParentMessage, { id: number }>, db: PGlite): Promise<void> {
  try {
    if (message.op === 'query') {
      const result = await db.query(message.sql, message.parameters);
      send({ id: message.id, result: { rows: result.rows, affectedRows: result.affectedRows } });
    } else if (message.op === 'batch') {
      const outcomes = await runStatements(db, message.statements);
      send({
        id: message.id,
        outcomes: outcomes.map((outcome) =>
          outcome.ok
            ? { ok: true, result: { rows: outcome.result.rows, affectedRows: outcome.result.affectedRows } }
            : { ok: false, error: shapeOf(outcome.error) },
        ),
      });
    } else {
      const results = await db.exec(message.sql);
      send({ id: message.id, results: results.map((r) => ({ rows: r.rows, affectedRows: r.affectedRows })) });
    }
  } catch (error) {
    send({ id: message.id, error: shapeOf(error) });
  }
}

// A terminal's Ctrl+C (SIGINT) and a service manager's stop (SIGTERM, often sent to the whole group) reach this
// process with its server's: the server closes the database in order, by its message, once its requests are done, and
// this process must not end before it. A server that ends without closing it disconnects (below).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});

// The process that started this one is gone (killed, say): the database is closed so that its files are whole.
process.on('disconnect', () => {
  close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});

try {
  releaseFiles = await holdDatabaseFiles(dirname(order.pgdata));
  ({ pglite } = await openCluster({
    pgdata: order.pgdata,
    templateDir: order.templateDir ?? undefined,
    shippedTemplate: order.shippedTemplate ? await shippedTemplateFile() : undefined,
    pgliteOptions: await embeddedOptions(),
  }));
} catch (error) {
  releaseFiles();
  process.send?.({ type: 'failed', error: shapeOf(error) } satisfies ChildMessage, () => process.exit(1));
  await new Promise(() => {}); // exits once the parent has the reason
}
const db = pglite as PGlite;
process.on('message', (message: ParentMessage) => {
  // The parent waits for the exit: code 0 once the database is closed.
  if (message.op === 'close') {
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`closing the embedded database failed: ${shapeOf(error).message}\n`);
        process.exit(1);
      },
    );
    return;
  }
  if (closing) return send({ id: message.id, error: shapeOf(new Error('the embedded database is closing')) });
  queue = queue.then(() => answer(message, db));
});
send({ type: 'ready' });
