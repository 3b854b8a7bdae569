import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { SHIPPED_TEMPLATE_DIR, templateName } from '../src/db/pglite-cluster.ts';
import { embeddedOptions } from '../src/db/pglite-options.ts';

/**
 * Makes the fresh embedded cluster shipped with the project (share/pglite-<version>-cluster-<n>.tar.br), from which
 * every new embedded database is made without initdb, and removes the templates of other PGlite versions. Run it
 * after upgrading PGlite: a test fails until the template for the installed version is there.
 *
 *   npm run cluster-template
 *
 * initdb runs here, once, in this process (about 4 s and 550 MB); brotli at its best takes about 30 s more and makes
 * the file about a third of gzip's.
 */

const pglite = await PGlite.create(undefined, await embeddedOptions());
await pglite.exec('checkpoint');
const tar = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer());
await pglite.close();
const compressed = brotliCompressSync(tar, {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
    [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
    [constants.BROTLI_PARAM_SIZE_HINT]: tar.length,
  },
});
const name = await templateName('tar.br');
await mkdir(SHIPPED_TEMPLATE_DIR, { recursive: true });
for (const other of await readdir(SHIPPED_TEMPLATE_DIR))
  if (/^pglite-.+-cluster-\d+\.tar\.br$/.test(other) && other !== name)
    await rm(join(SHIPPED_TEMPLATE_DIR, other));
await writeFile(join(SHIPPED_TEMPLATE_DIR, name), compressed);
process.stdout.write(
  `share/${name}: ${(compressed.length / 1e6).toFixed(1)} MB (${(tar.length / 1e6).toFixed(1)} MB uncompressed)\n`,
);
