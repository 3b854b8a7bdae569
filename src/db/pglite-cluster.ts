import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import { extract } from 'tar';
import { NotAClusterError } from './not-a-cluster-error.ts';
import { initdbInChildProcess } from './pglite-initdb.ts';

/** How the cluster a process opened came to be: already there, loaded from the template, or made by initdb. */
export type ClusterOrigin = 'existing' | 'template' | 'initdb';

export interface OpenedCluster {
  pglite: PGlite;
  origin: ClusterOrigin;
}

export interface ClusterOptions {
  /** The directory of the cluster's files, or undefined for a cluster in memory. */
  pgdata: string | undefined;
  /** Where fresh-cluster templates are kept; undefined makes every new cluster with initdb. */
  templateDir: string | undefined;
  pgliteOptions: PGliteOptions;
}

/** Bumped when what a template holds changes; PGlite's own version is in the file name too. */
const TEMPLATE_FORMAT = 1;

const gunzipAsync = promisify(gunzip);

/**
 * Opens the embedded database's cluster, making it first when there is none. PGlite makes a cluster by running
 * initdb: a second PostgreSQL and initdb, both WebAssembly, beside the first, which takes seconds and hundreds of MB
 * (docs/design/performance.md#memory); on disk it runs in a process of its own. So a new cluster is loaded from a template:
 * a fresh cluster this machine made once with the same PGlite, kept as a tarball in the template directory. A
 * cluster on disk is made in `<pgdata>.new` and renamed into place once whole, so that a process killed meanwhile
 * leaves no half-made cluster to be opened later.
 */
export async function openCluster(options: ClusterOptions): Promise<OpenedCluster> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pgdata, pgliteOptions } = options;
  if (pgdata === undefined) return makeClusterInMemory(PGlite, options);
  if (await exists(join(pgdata, 'PG_VERSION')))
    return { pglite: await PGlite.create(pgdata, pgliteOptions), origin: 'existing' };
  await removeIfEmpty(pgdata);
  await mkdir(dirname(pgdata), { recursive: true });
  const staging = `${pgdata}.new`;
  await rm(staging, { recursive: true, force: true }); // left by a process killed while it made a cluster
  const origin = await makeClusterOnDisk(staging, options);
  await rename(staging, pgdata);
  return { pglite: await PGlite.create(pgdata, pgliteOptions), origin };
}

type PGliteClass = typeof PGlite;

/** A cluster in memory: PGlite loads the template's tarball itself. */
async function makeClusterInMemory(PGlite: PGliteClass, options: ClusterOptions): Promise<OpenedCluster> {
  const { templateDir, pgliteOptions } = options;
  const file = templateDir === undefined ? undefined : await templateFile(templateDir);
  const template = file === undefined ? undefined : await readTemplate(file);
  if (file !== undefined && template !== undefined) {
    try {
      return {
        pglite: await PGlite.create(undefined, { ...pgliteOptions, loadDataDir: template }),
        origin: 'template',
      };
    } catch {
      // Damaged on disk: made by initdb instead, whose cluster replaces it.
    }
  }
  const pglite = await PGlite.create(undefined, pgliteOptions);
  if (file !== undefined) await keepAsTemplate(pglite, file);
  return { pglite, origin: 'initdb' };
}

/**
 * A cluster on disk, made in `where` and closed: the template's files written there as they are (no PostgreSQL
 * started for it), or, without a template, initdb's cluster, made in a process of its own, which becomes the
 * template.
 */
async function makeClusterOnDisk(where: string, options: ClusterOptions): Promise<ClusterOrigin> {
  const { templateDir, pgliteOptions } = options;
  const file = templateDir === undefined ? undefined : await templateFile(templateDir);
  // A template directory that cannot be read is as none: the template only saves time.
  if (file !== undefined && (await exists(file).catch(() => false))) {
    try {
      await extractTemplate(file, where);
      return 'template';
    } catch {
      // Damaged on disk, or this disk full: made by initdb instead, whose cluster replaces the template if it can
      // be made. maxRetries: a write of the failed extraction may still be under way.
      await rm(where, { recursive: true, force: true, maxRetries: 5 });
    }
  }
  await initdbInChildProcess({ where, templateFile: file, startParams: pgliteOptions.startParams });
  return 'initdb';
}

/**
 * Writes the template's files into `where`. PGlite names them from the root (`/PG_VERSION`); tar makes them
 * relative to `where` and says so, which is not a problem. Anything else it reports (a damaged or cut archive) is.
 */
async function extractTemplate(file: string, where: string): Promise<void> {
  await mkdir(where, { recursive: true, mode: 0o700 });
  const problems: string[] = [];
  await extract({
    file,
    cwd: where,
    onwarn: (code, message) => {
      if (code !== 'TAR_ENTRY_INFO') problems.push(`${code}: ${message}`);
    },
  });
  if (problems.length > 0) throw new Error(`template ${file}: ${problems.join('; ')}`);
  if (!(await exists(join(where, 'PG_VERSION')))) throw new Error(`template ${file}: no PG_VERSION`);
}

async function templateFile(templateDir: string): Promise<string> {
  return join(templateDir, `pglite-${await pgliteVersion()}-cluster-${TEMPLATE_FORMAT}.tar.gz`);
}

/**
 * The template kept in `file`, or undefined when there is none or it is damaged. Uncompressed here, so that a
 * damaged template fails where it is caught, not in PGlite's stream; not kept after, since it is 40 MB.
 */
function readTemplate(file: string): Promise<Blob | undefined> {
  return readFile(file)
    .then((bytes) => gunzipAsync(bytes))
    .then(
      (tar) => new Blob([tar], { type: 'application/x-tar' }),
      () => undefined,
    );
}

/**
 * Keeps a cluster initdb has just made as the template, before anything is written to it. Written to a file of its
 * own and renamed, so that a reader never sees half a template, and two processes keeping one at once both succeed.
 * A template directory this process cannot write leaves the next new cluster to initdb again.
 */
export async function keepAsTemplate(fresh: PGlite, file: string): Promise<void> {
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  try {
    await fresh.exec('checkpoint');
    const template = await fresh.dumpDataDir('gzip');
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(partial, Buffer.from(await template.arrayBuffer()), { mode: 0o600 });
    await rename(partial, file);
  } catch {
    await rm(partial, { force: true }).catch(() => {});
  }
}

let version: Promise<string> | undefined;

function pgliteVersion(): Promise<string> {
  version ??= readFile(new URL('../package.json', import.meta.resolve('@electric-sql/pglite')), 'utf8').then(
    (text) => String((JSON.parse(text) as { version: unknown }).version),
  );
  return version;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function removeIfEmpty(pgdata: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(pgdata);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (entries.length > 0)
    throw new NotAClusterError(
      `${pgdata} holds files but no database (no PG_VERSION): move it away, or choose another EWA_DATA_DIR.`,
    );
  await rmdir(pgdata);
}
