/**
 * node:fs/promises as the ACH rail sees it in a crash test's child process (outbox-crash-child.ts redirects the
 * rail's import here): the real functions, except that once armed, the process kills itself with SIGKILL half-way
 * through writing a file's temporary copy, or just after renaming it into place. Fault injection at the operating
 * system's edge; nothing of ours is replaced.
 */
import * as fs from 'node:fs/promises';

export * from 'node:fs/promises';

export type FileCrashPoint = 'file-half-written' | 'file-renamed';

let armed: { point: FileCrashPoint; crash: () => never } | undefined;

export function armFileCrash(point: FileCrashPoint, crash: () => never): void {
  armed = { point, crash };
}

export async function open(...args: Parameters<typeof fs.open>): Promise<fs.FileHandle> {
  const handle = await fs.open(...args);
  if (armed?.point !== 'file-half-written') return handle;
  const { crash } = armed;
  const writeFile = handle.writeFile.bind(handle);
  // Half the text reaches the file (and the disk), then the process dies: what a crash mid-write leaves.
  return Object.assign(handle, {
    async writeFile(data: string) {
      await writeFile(data.slice(0, Math.floor(data.length / 2)));
      await handle.sync();
      crash();
    },
  });
}

export async function rename(...args: Parameters<typeof fs.rename>): Promise<void> {
  await fs.rename(...args);
  if (armed?.point === 'file-renamed') armed.crash();
}
