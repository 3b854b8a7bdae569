import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirBusyError extends Error {
  override name = 'DataDirBusyError';
}

/** EWA_DATA_DIR names a place where the embedded database cannot live: said in one line, naming it. */
export class DataDirUnusableError extends Error {
  override name = 'DataDirUnusableError';

  constructor(dataDir: string, error: unknown) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'a file stands where it, or a folder above it, should be'
        : code === 'EACCES' || code === 'EPERM'
          ? 'this user may not write there'
          : code === 'EROFS'
            ? 'the file system is read-only'
            : (error as Error).message;
    super(
      `The embedded database's directory ${dataDir} (EWA_DATA_DIR) cannot be used: ${why}. ` +
        'Set EWA_DATA_DIR to a directory this user may write, or to one that does not exist yet.',
      { cause: error },
    );
  }
}

/**
 * The embedded database is files that one process may open at a time. This lock file beside them makes a
 * second process (a CLI command while the server runs) stop with a clear message instead of corrupting them.
 */
export function lockDataDir(dataDir: string): () => void {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    throw new DataDirUnusableError(dataDir, error);
  }
  const path = join(dataDir, 'owner.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      return createPidFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new DataDirUnusableError(dataDir, error);
      const owner = dataDirOwner(dataDir);
      if (owner !== undefined) throw dataDirBusy(dataDir, owner);
      rmSync(path, { force: true }); // left by a process that died: take it over
    }
  }
  throw new DataDirBusyError(`Could not lock ${dataDir}.`);
}

/**
 * Creates a lock file naming this process, and returns what removes it; throws EEXIST when the file is there
 * already (its process may be gone: livePidIn tells).
 */
export function createPidFile(path: string): () => void {
  const fd = openSync(path, 'wx');
  writeSync(fd, String(process.pid));
  closeSync(fd);
  return () => rmSync(path, { force: true });
}

/** The live process other than this one that a lock file names, if any. */
export function livePidIn(path: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : undefined;
}

/** The live process other than this one that holds the data directory, if any. */
export function dataDirOwner(dataDir: string): number | undefined {
  return livePidIn(join(dataDir, 'owner.pid'));
}

export function dataDirBusy(dataDir: string, owner: number): DataDirBusyError {
  return new DataDirBusyError(
    `The embedded database in ${dataDir} is open in process ${owner} (probably \`ewa serve\`). ` +
      'Once it prints that it is running, `ewa` runs its commands through it; or stop it first.',
  );
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
