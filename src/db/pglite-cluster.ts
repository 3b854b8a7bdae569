import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip } from 'node:zlib';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import { extract } from 'tar';
import { NotAClusterError } from './not-a-cluster-error.ts';
import { initdbInChildProcess } from './pglite-initdb.ts';

/**
 * How the cluster a process opened came to be: already there, made from the template shipped with the project, from
 * the template this machine kept, or by initdb.
 */
export type ClusterOrigin = 'existing' | 'shipped' | 'template' | 'initdb';

export interface OpenedCluster {
  pglite: PGlite;
  origin: ClusterOrigin;
}

export interface ClusterOptions {
  /** The directory of the cluster's files, or undefined for a cluster in memory. */
  pgdata: string | undefined;
  /** Where fresh-cluster templates are kept; undefined keeps none. */
  templateDir: string | undefined;
  /** The template shipped with the project for this PGlite (shippedTemplateFile), or undefined to pass it over. */
  shippedTemplate: string | undefined;
  pgliteOptions: PGliteOptions;
}

/** Bumped when what a template holds changes; PGlite's own version is in the file name too. */
const TEMPLATE_FORMAT = 1;

const gunzipAsync = promisify(gunzip);
const brotliDecompressAsync = promisify(brotliDecompress);

/**
 * The fresh cluster shipped with the project for the installed PGlite (made by `npm run cluster-template`), or
 * undefined when there is none for it (PGlite upgraded, the template not made again).
 */
export async function shippedTemplateFile(): Promise<string | undefined> {
  const file = join(SHIPPED_TEMPLATE_DIR, await templateName('tar.br'));
  return (await exists(file).catch(() => false)) ? file : undefined;
}

export const SHIPPED_TEMPLATE_DIR = fileURLToPath(new URL('../../share/', import.meta.url));

/**
 * Opens the embedded database's cluster, making it first when there is none. PGlite makes a cluster by running
 * initdb: a second PostgreSQL and initdb, both WebAssembly, beside the first, which takes seconds and hundreds of MB
 * (docs/design/performance.md#memory); on disk it runs in a process of its own. So a new cluster is loaded from a
 * template, a fresh cluster made once with the same PGlite and kept as a tarball: the one shipped with the project
 * (share/), else the one this machine kept in the template directory the first time it ran initdb. A cluster on
 * disk is made in `<pgdata>.new` and renamed into place once whole, so that a process killed meanwhile leaves no
 * half-made cluster to be opened later.
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
  const { pgliteOptions } = options;
  const { file, candidates } = await templatesOf(options);
  for (const candidate of candidates) {
    const template = await readTemplate(candidate.file);
    if (template === undefined) continue;
    try {
      return {
        pglite: await PGlite.create(undefined, { ...pgliteOptions, loadDataDir: template }),
        origin: candidate.origin,
      };
    } catch {
      // Damaged: the next template, else initdb, whose cluster replaces the machine's template.
    }
  }
  const pglite = await PGlite.create(undefined, pgliteOptions);
  if (file !== undefined) await keepAsTemplate(pglite, file);
  return { pglite, origin: 'initdb' };
}

/**
 * A cluster on disk, made in `where` and closed: a template's files written there as they are (no PostgreSQL
 * started for it), or, without a template, initdb's cluster, made in a process of its own, which becomes the
 * machine's template.
 */
async function makeClusterOnDisk(where: string, options: ClusterOptions): Promise<ClusterOrigin> {
  const { pgliteOptions } = options;
  const { file, candidates } = await templatesOf(options);
  for (const candidate of candidates) {
    // A template that cannot be read is as none: a template only saves time.
    if (!(await exists(candidate.file).catch(() => false))) continue;
    try {
      await extractTemplate(candidate.file, where);
      return candidate.origin;
    } catch {
      // Damaged on disk, or this disk full: the next template, else initdb, whose cluster replaces the machine's
      // template if it can be made. maxRetries: a write of the failed extraction may still be under way.
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

/**
 * The templates a new cluster is made from, in the order tried: the shipped one, then this machine's; and the file
 * of this machine's, which initdb's cluster becomes when neither loads.
 */
async function templatesOf(options: ClusterOptions): Promise<{
  file: string | undefined;
  candidates: { file: string; origin: 'shipped' | 'template' }[];
}> {
  const file = options.templateDir === undefined ? undefined : await templateFile(options.templateDir);
  const candidates: { file: string; origin: 'shipped' | 'template' }[] = [];
  if (options.shippedTemplate !== undefined)
    candidates.push({ file: options.shippedTemplate, origin: 'shipped' });
  if (file !== undefined) candidates.push({ file, origin: 'template' });
  return { file, candidates };
}

async function templateFile(templateDir: string): Promise<string> {
  return join(templateDir, await templateName('tar.gz'));
}

/** A template's file name: the machine's are gzip (quick to make), the shipped one brotli (a third of the bytes). */
export async function templateName(extension: 'tar.gz' | 'tar.br'): Promise<string> {
  return `pglite-${await pgliteVersion()}-cluster-${TEMPLATE_FORMAT}.${extension}`;
}

/**
 * The template kept in `file`, or undefined when there is none or it is damaged. Uncompressed here, so that a
 * damaged template fails where it is caught, not in PGlite's stream; not kept after, since it is 40 MB.
 */
function readTemplate(file: string): Promise<Blob | undefined> {
  const uncompress = file.endsWith('.br') ? brotliDecompressAsync : gunzipAsync;
  return readFile(file)
    .then((bytes) => uncompress(bytes))
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
