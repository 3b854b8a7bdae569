import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPidFile, DataDirBusyError, livePidIn } from './data-dir-lock.ts';

/** How long a process waits for another to finish closing the embedded database's files before it gives up. */
const CLOSING_WAIT_MS = 15_000;

/**
 * The lock of the embedded database's files themselves, held by the process that has them open (the database's
 * own process, pglite-process-child.ts), beside the data directory's lock (owner.pid, the server's). A server killed
 * releases its lock at once, while its database's process is still closing the files for a moment: a server started
 * then waits here for that to end, instead of opening files another process is still writing. A holder that died
 * (killed itself) leaves the file behind with its id; it is taken over.
 */
export async function holdDatabaseFiles(dataDir: string, waitMs = CLOSING_WAIT_MS): Promise<() => void> {
  const path = join(dataDir, 'database.pid');
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return createPidFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = livePidIn(path);
    if (holder === undefined) {
      rmSync(path, { force: true }); // left by a process that died: take it over
      continue;
    }
    if (Date.now() >= deadline) {
      throw new DataDirBusyError(
        `The embedded database's files in ${dataDir} are still open in process ${holder}, which did not close ` +
          `them within ${Math.round(waitMs / 1000)} s. Stop that process, then try again.`,
      );
    }
    await sleep(50);
  }
}
