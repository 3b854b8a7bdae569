import { createServer } from 'node:net';

/** Ports this process has handed out: the system may give a closed port again at once, to the next caller. */
const handedOut = new Set<number>();

/**
 * A TCP port that was free a moment ago on 127.0.0.1, for tests and benchmarks that start real servers; never one
 * this process handed out before (three asked in a row for one server's listeners could be the same port).
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await portFreeNow();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function portFreeNow(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
