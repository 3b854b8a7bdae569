import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { NotAClusterError } from '../../src/db/not-a-cluster-error.ts';
import {
  type OpenedCluster,
  openCluster,
  SHIPPED_TEMPLATE_DIR,
  shippedTemplateFile,
  templateName,
} from '../../src/db/pglite-cluster.ts';
import { initdbInChildProcess } from '../../src/db/pglite-initdb.ts';
import { ewa } from '../helpers/cli.ts';
import { spawnEwa } from '../helpers/ew-processes.ts';

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ewa-cluster-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Opens a cluster, checks that it answers and keeps what it is given, and closes it. */
async function openAndUse(
  pgdata: string | undefined,
  templateDir: string | undefined,
  shippedTemplate?: string,
): Promise<OpenedCluster> {
  const opened = await openCluster({ pgdata, templateDir, shippedTemplate, pgliteOptions: {} });
  try {
    await opened.pglite.exec('create table kept (n int); insert into kept values (7)');
    const { rows } = await opened.pglite.query<{ n: number }>('select n from kept');
    assert.deepEqual(rows, [{ n: 7 }]);
  } finally {
    await opened.pglite.close();
  }
  return opened;
}

function templatesIn(templateDir: string): string[] {
  return existsSync(templateDir) ? readdirSync(templateDir) : [];
}

test('the first new cluster is made by initdb and kept as the template; the next ones are loaded from it', async () => {
  const dir = scratch();
  const templateDir = join(dir, 'templates');

  assert.equal((await openAndUse(join(dir, 'a', 'pgdata'), templateDir)).origin, 'initdb');
  const kept = templatesIn(templateDir);
  assert.equal(kept.length, 1, `one whole template and no partial file: ${kept}`);
  assert.match(kept[0]!, /^pglite-[\w.-]+-cluster-\d+\.tar\.gz$/);

  assert.equal((await openAndUse(join(dir, 'b', 'pgdata'), templateDir)).origin, 'template');
  assert.equal((await openAndUse(undefined, templateDir)).origin, 'template', 'a cluster in memory too');
  assert.deepEqual(readdirSync(join(dir, 'b')), ['pgdata'], 'made beside, then renamed into place');

  // What the first use wrote stays in the cluster: it is opened as it is, not made again.
  const reopened = await openCluster({
    pgdata: join(dir, 'b', 'pgdata'),
    templateDir,
    shippedTemplate: undefined,
    pgliteOptions: {},
  });
  try {
    assert.equal(reopened.origin, 'existing');
    assert.deepEqual((await reopened.pglite.query('select n from kept')).rows, [{ n: 7 }]);
  } finally {
    await reopened.pglite.close();
  }
  // The template holds a fresh cluster, not what was written into a cluster made from it.
  const fromTemplate = await openCluster({
    pgdata: join(dir, 'c', 'pgdata'),
    templateDir,
    shippedTemplate: undefined,
    pgliteOptions: {},
  });
  try {
    const { rows } = await fromTemplate.pglite.query("select to_regclass('kept') as kept");
    assert.deepEqual(rows, [{ kept: null }]);
  } finally {
    await fromTemplate.pglite.close();
  }
});

test('a damaged template is passed over: the cluster is made by initdb, whose cluster replaces it', async () => {
  const dir = scratch();
  const templateDir = join(dir, 'templates');
  await openAndUse(join(dir, 'first', 'pgdata'), templateDir);
  const [name] = templatesIn(templateDir);
  const file = join(templateDir, name!);
  const whole = readFileSync(file);

  const damages: [string, Buffer][] = [
    ['cut in half', whole.subarray(0, whole.length >> 1)],
    ['not an archive', Buffer.from('not a tarball\n')],
  ];
  for (const [damage, bytes] of damages) {
    writeFileSync(file, bytes);
    const where = join(dir, damage.replaceAll(' ', '-'), 'pgdata');
    assert.equal((await openAndUse(where, templateDir)).origin, 'initdb', damage);
    assert.deepEqual(readdirSync(join(where, '..')), ['pgdata'], `${damage}: nothing half-made left beside`);
    assert.ok(readFileSync(file).length > bytes.length, `${damage}: a whole template again`);
    assert.equal((await openAndUse(join(where, '..', 'next'), templateDir)).origin, 'template', damage);
  }
  writeFileSync(file, Buffer.from('not a tarball\n'));
  assert.equal((await openAndUse(undefined, templateDir)).origin, 'initdb', 'in memory');
  assert.equal((await openAndUse(undefined, templateDir)).origin, 'template', 'in memory, once replaced');
});

test('a directory with files but no database is refused as it is, naming it; an empty one is used', async () => {
  const dir = scratch();
  const pgdata = join(dir, 'pgdata');
  mkdirSync(pgdata);
  writeFileSync(join(pgdata, 'notes.txt'), 'mine');
  await assert.rejects(
    openCluster({ pgdata, templateDir: undefined, shippedTemplate: undefined, pgliteOptions: {} }),
    (error: unknown) => error instanceof NotAClusterError && error.message.includes(pgdata),
  );
  assert.deepEqual(readdirSync(pgdata), ['notes.txt']);
  const migration = spawnEwa(['migrate'], { EWA_DATA_DIR: dir, EWA_EMBEDDED_TEMPLATE_DIR: 'off' });
  assert.equal(await migration.exited, 1);
  assert.equal(
    migration.output().trim(),
    `ewa migrate: ${pgdata} holds files but no database (no PG_VERSION): move it away, or choose another EWA_DATA_DIR.`,
  );

  rmSync(join(pgdata, 'notes.txt'));
  assert.equal((await openAndUse(pgdata, undefined)).origin, 'initdb');
});

test('an EWA_DATA_DIR where a file stands, or under one, is refused in one line naming it, and nothing is made', async () => {
  const file = join(scratch(), 'a-file');
  writeFileSync(file, 'mine');
  for (const dataDir of [file, join(file, 'below')]) {
    const run = await ewa({ EWA_DATA_DIR: dataDir, EWA_EMBEDDED_TEMPLATE_DIR: 'off' }, 'orgs', 'list');
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr,
      `ewa orgs list: The embedded database's directory ${dataDir} (EWA_DATA_DIR) cannot be used: a file stands ` +
        'where it, or a folder above it, should be. Set EWA_DATA_DIR to a directory this user may write, or to ' +
        'one that does not exist yet.\n',
    );
  }
  assert.equal(readFileSync(file, 'utf8'), 'mine');
});

test('what a process killed while it made a cluster left beside it is cleared, and no template is kept when off', async () => {
  const dir = scratch();
  const pgdata = join(dir, 'data', 'pgdata');
  mkdirSync(`${pgdata}.new`, { recursive: true });
  writeFileSync(join(`${pgdata}.new`, 'PG_VERSION'), 'half');
  assert.equal((await openAndUse(pgdata, undefined)).origin, 'initdb');
  assert.deepEqual(readdirSync(join(dir, 'data')), ['pgdata']);
  assert.deepEqual(readdirSync(dir), ['data'], 'no template anywhere');
});

test('a template directory that cannot be used (a file stands there) only means initdb each time', async () => {
  const dir = scratch();
  const templateDir = join(dir, 'not-a-directory');
  writeFileSync(templateDir, 'a file');
  assert.equal((await openAndUse(join(dir, 'disk', 'pgdata'), templateDir)).origin, 'initdb');
  assert.equal((await openAndUse(undefined, templateDir)).origin, 'initdb');
  assert.equal(readFileSync(templateDir, 'utf8'), 'a file');
});

test('the shipped template is used unless EWA_EMBEDDED_SHIPPED_TEMPLATE is false', () => {
  const shippedOf = (env: Record<string, string>) => {
    const { database } = loadConfig({ EWA_DATA_DIR: ':memory:', ...env });
    return database.kind === 'pglite' ? database.shippedTemplate : 'not embedded';
  };
  assert.equal(shippedOf({}), true);
  assert.equal(shippedOf({ EWA_EMBEDDED_SHIPPED_TEMPLATE: 'false' }), false);
  assert.throws(() => shippedOf({ EWA_EMBEDDED_SHIPPED_TEMPLATE: 'maybe' }), /EWA_EMBEDDED_SHIPPED_TEMPLATE/);
});

test('the template directory comes from EWA_EMBEDDED_TEMPLATE_DIR, else the user cache; off turns it off', () => {
  const templateDirOf = (env: Record<string, string>) => {
    const { database } = loadConfig({ EWA_DATA_DIR: ':memory:', ...env });
    assert.equal(database.kind, 'pglite');
    return database.kind === 'pglite' ? database.templateDir : 'not embedded';
  };
  assert.equal(templateDirOf({ EWA_EMBEDDED_TEMPLATE_DIR: '/var/cache/ewa' }), '/var/cache/ewa');
  assert.equal(templateDirOf({ EWA_EMBEDDED_TEMPLATE_DIR: 'off' }), undefined);
  assert.equal(templateDirOf({ XDG_CACHE_HOME: '/home/me/.cache' }), '/home/me/.cache/ewa-server');
  assert.match(templateDirOf({}) ?? '', /\/\.cache\/ewa-server$/);
});

test('the template shipped with the project is the one for the installed PGlite', async () => {
  const file = await shippedTemplateFile();
  assert.ok(
    file !== undefined,
    `no ${await templateName('tar.br')} in share/: run \`npm run cluster-template\` after upgrading PGlite`,
  );
  assert.deepEqual(
    readdirSync(SHIPPED_TEMPLATE_DIR).filter((name) => name.startsWith('pglite-')),
    [await templateName('tar.br')],
    "no other version's template left behind",
  );
});

test("a new cluster is made from the shipped template before the machine's, with no initdb and nothing kept", async () => {
  const dir = scratch();
  const templateDir = join(dir, 'templates');
  const shipped = await shippedTemplateFile();
  assert.ok(shipped);
  assert.equal((await openAndUse(join(dir, 'disk', 'pgdata'), templateDir, shipped)).origin, 'shipped');
  assert.equal((await openAndUse(undefined, templateDir, shipped)).origin, 'shipped', 'in memory too');
  assert.deepEqual(templatesIn(templateDir), [], 'the shipped template is not copied');
  // Off for this machine's template (EWA_EMBEDDED_TEMPLATE_DIR=off): the shipped one still makes it.
  assert.equal((await openAndUse(join(dir, 'off', 'pgdata'), undefined, shipped)).origin, 'shipped');
  assert.deepEqual(readdirSync(join(dir, 'disk')), ['pgdata'], 'made beside, then renamed into place');
});

test("a damaged shipped template is passed over: the machine's template, else initdb", async () => {
  const dir = scratch();
  const templateDir = join(dir, 'templates');
  const shipped = await shippedTemplateFile();
  assert.ok(shipped);
  const whole = readFileSync(shipped);
  // The first damage finds no template of this machine's, so initdb makes the cluster and keeps its template; the
  // second finds that one.
  const damages = [
    { damage: 'cut', bytes: whole.subarray(0, whole.length >> 1), origin: 'initdb' },
    { damage: 'not-brotli', bytes: Buffer.from('not a template'), origin: 'template' },
  ];
  for (const { damage, bytes, origin } of damages) {
    const damaged = join(dir, `${damage}.tar.br`);
    writeFileSync(damaged, bytes);
    assert.equal((await openAndUse(join(dir, damage, 'a'), templateDir, damaged)).origin, origin, damage);
    assert.equal(templatesIn(templateDir).length, 1, damage);
    assert.equal((await openAndUse(join(dir, damage, 'b'), templateDir, damaged)).origin, 'template', damage);
    assert.equal(
      (await openAndUse(undefined, templateDir, damaged)).origin,
      'template',
      `${damage}, in memory`,
    );
  }
});

test('two processes making their first clusters at once both succeed and leave one whole template', async () => {
  const dir = scratch();
  const templateDir = join(dir, 'templates');
  const migrations = ['one', 'two'].map((name) =>
    spawnEwa(['migrate'], {
      EWA_DATA_DIR: join(dir, name),
      EWA_EMBEDDED_TEMPLATE_DIR: templateDir,
      EWA_EMBEDDED_SHIPPED_TEMPLATE: 'false',
    }),
  );
  const codes = await Promise.all(migrations.map((migration) => migration.exited));
  assert.deepEqual(codes, [0, 0], migrations.map((migration) => migration.output()).join('\n'));
  assert.equal(templatesIn(templateDir).length, 1, `${templatesIn(templateDir)}`);
  assert.equal((await openAndUse(join(dir, 'three', 'pgdata'), templateDir)).origin, 'template');
});

test('initdb runs in a process of its own, whose failure or stall ends in an error naming the directory and why', async () => {
  const dir = scratch();
  const file = join(dir, 'a-file');
  writeFileSync(file, 'mine');
  const where = join(file, 'pgdata');
  await assert.rejects(
    initdbInChildProcess({ where, templateFile: undefined, startParams: undefined }),
    (error: unknown) =>
      error instanceof Error &&
      error.message.startsWith(`initdb of the embedded database in ${where} failed: `) &&
      /ENOTDIR/.test(error.message),
  );
  const stalled = join(dir, 'stalled');
  await assert.rejects(
    initdbInChildProcess({ where: stalled, templateFile: undefined, startParams: undefined }, 50),
    { message: `initdb of the embedded database in ${stalled} failed: it took longer than 50 ms` },
  );
  assert.equal(readFileSync(file, 'utf8'), 'mine');
});
