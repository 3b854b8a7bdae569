import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';
import { cliDatabaseEnv, ewa, inDatabase } from '../helpers/cli.ts';

const READ = 'a'.repeat(64);
const REFUSED = 'b'.repeat(64);

test('ewa ach returns: the return files read, latest first, refused ones with why; --unmatched: what matched nothing; --changes: notifications of change', async (t) => {
  const env = await cliDatabaseEnv(t);
  assert.deepEqual(await ewa(env, 'ach', 'returns').then((r) => [r.code, r.stdout]), [
    0,
    'No return files read.\n',
  ]);
  assert.deepEqual(await ewa(env, 'ach', 'returns', '--unmatched').then((r) => [r.code, r.stdout]), [
    0,
    'No unmatched returns.\n',
  ]);
  // As the rail leaves them (test/db/ach-rail.test.ts reads real files into them).
  await inDatabase(env, async (db) => {
    await db
      .insertInto('ach_return_files')
      .values([
        {
          sha256: READ,
          file_name: 'returns-1.ach',
          read_at: new Date('2026-03-09T19:00:00Z'),
          returns: 3,
          unmatched: 1,
          error: null,
        },
        {
          sha256: REFUSED,
          file_name: 'returns-2.ach',
          read_at: new Date('2026-03-10T19:00:00Z'),
          returns: 0,
          unmatched: 0,
          error: 'line 3: entry without its addenda record',
        },
      ])
      .execute();
    await db
      .insertInto('ach_unmatched_returns')
      .values({
        file_sha256: READ,
        position: 2,
        original_trace_number: '091000019999999',
        amount_minor: 12_500,
        return_code: 'R01',
        transaction_code: 21,
        individual_id: 'TRF0001',
        addenda_information: 'BALANCE BELOW ENTRY AMOUNT',
        received_at: new Date('2026-03-09T19:00:00Z'),
      })
      .execute();
    await db
      .insertInto('ach_change_notifications')
      .values({
        file_sha256: READ,
        position: 1,
        original_trace_number: '091000019999998',
        change_code: 'C02',
        corrected_data: '021000021',
        transaction_code: 21,
        individual_id: 'TRF0002',
        original_receiving_dfi: '11000000',
        instruction_id: null,
        received_at: new Date('2026-03-09T19:00:00Z'),
      })
      .execute();
  });
  const files = await ewa(env, 'ach', 'returns');
  assert.equal(files.code, 0, files.stderr);
  assert.equal(
    files.stdout,
    [
      `2026-03-10T19:00:00.000Z  returns-2.ach  sha256 ${'b'.repeat(16)}  REFUSED  line 3: entry without its addenda record`,
      `2026-03-09T19:00:00.000Z  returns-1.ach  sha256 ${'a'.repeat(16)}  READ     3 return(s): 0 applied, 2 already returned, 1 unmatched; 1 notification(s) of change`,
      '',
    ].join('\n'),
  );
  assert.deepEqual((await ewa(env, 'ach', 'returns', '--limit', '1', '--json')).json(), {
    data: [
      {
        sha256: REFUSED,
        file_name: 'returns-2.ach',
        read_at: '2026-03-10T19:00:00.000Z',
        status: 'REFUSED',
        returns: 0,
        applied: 0,
        unmatched: 0,
        already_returned: 0,
        notifications: 0,
        error: 'line 3: entry without its addenda record',
      },
    ],
    next: (await ewa(env, 'ach', 'returns', '--limit', '1', '--json')).json().next,
  });
  const second = (await ewa(env, 'ach', 'returns', '--limit', '1', '--json')).json().next;
  assert.match(second, /^[A-Za-z0-9_-]+$/);
  const last = (await ewa(env, 'ach', 'returns', '--limit', '1', '--after', second, '--json')).json();
  assert.deepEqual([last.data.map((file: { sha256: string }) => file.sha256), last.next], [[READ], null]);
  const unmatched = await ewa(env, 'ach', 'returns', '--unmatched');
  assert.equal(
    unmatched.stdout,
    '2026-03-09T19:00:00.000Z  returns-1.ach #2  R01 (insufficient funds)  trace 091000019999999  125.00 USD  id TRF0001  transaction code 21  "BALANCE BELOW ENTRY AMOUNT"\n',
  );
  const changes = await ewa(env, 'ach', 'returns', '--changes');
  assert.equal(
    changes.stdout,
    '2026-03-09T19:00:00.000Z  returns-1.ach #1  C02 (incorrect routing number: the correct one in 1-9)  corrected data "021000021"  trace 091000019999998  no entry of ours\n',
  );
  const both = await ewa(env, 'ach', 'returns', '--unmatched', '--changes');
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^ewa ach returns: give one of --unmatched and --changes\./);
  const wrong = await ewa(env, 'ach', 'returns', '--limit', '0');
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /^ewa ach returns: --limit must be a whole number from 1 to 1000/);
});

/** A file with its returns that matched nothing and its notifications of change, all read at `at` (microseconds kept). */
async function readFile(
  db: Db,
  file: { sha256: string; name: string; at: string; rows: number },
): Promise<void> {
  await sql`insert into ach_return_files (sha256, file_name, read_at, returns, unmatched, error)
    values (${file.sha256}, ${file.name}, ${file.at}::timestamptz, ${file.rows}, ${file.rows}, null)`.execute(
    db,
  );
  for (let position = 1; position <= file.rows; position++) {
    await sql`insert into ach_unmatched_returns (file_sha256, position, original_trace_number, amount_minor,
        return_code, transaction_code, individual_id, addenda_information, received_at)
      values (${file.sha256}, ${position}, '091000019999999', 100, 'R01', 22, 'TRF', '', ${file.at}::timestamptz)`.execute(
      db,
    );
    await sql`insert into ach_change_notifications (file_sha256, position, original_trace_number, change_code,
        corrected_data, transaction_code, individual_id, original_receiving_dfi, instruction_id, received_at)
      values (${file.sha256}, ${position}, '091000019999998', 'C01', '123', 22, 'TRF', '11000000', null,
        ${file.at}::timestamptz)`.execute(db);
  }
}

type Listed = { sha256?: string; file_sha256?: string; position?: number };
const identity = (row: Listed) => `${row.sha256 ?? row.file_sha256}#${row.position ?? 0}`;

/** Every page of a listing, `size` rows at a time, following "next" of --json until it is null. */
async function allPages(
  env: Record<string, string>,
  flags: readonly string[],
  size: number,
): Promise<string[]> {
  const seen: string[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const args = ['ach', 'returns', ...flags, '--limit', String(size), '--json'];
    const page = await ewa(env, ...args, ...(after === null ? [] : ['--after', after]));
    assert.equal(page.code, 0, page.stderr);
    const { data, next } = page.json() as { data: Listed[]; next: string | null };
    assert.ok(data.length <= size);
    seen.push(...data.map(identity));
    if (next === null) return seen;
    assert.equal(data.length, size);
    after = next;
  }
  throw new Error('more than 50 pages');
}

test('ewa ach returns --after: every listing pages through all its rows, latest first, each once, ties and microseconds kept', async (t) => {
  const env = await cliDatabaseEnv(t);
  await ewa(env, 'ach', 'returns'); // migrates the database
  const sha = (c: string) => c.repeat(64);
  await inDatabase(env, async (db) => {
    // One instant for three files, two of them of one name (a file sent again with other bytes): the name
    // (descending) then the SHA-256 order them. Two others a microsecond apart, within one millisecond.
    await readFile(db, { sha256: sha('1'), name: 'r-b.ach', at: '2026-03-09T19:00:00.000001Z', rows: 3 });
    await readFile(db, { sha256: sha('2'), name: 'r-b.ach', at: '2026-03-09T19:00:00.000001Z', rows: 2 });
    await readFile(db, { sha256: sha('3'), name: 'r-c.ach', at: '2026-03-09T19:00:00.000001Z', rows: 1 });
    await readFile(db, { sha256: sha('4'), name: 'r-a.ach', at: '2026-03-09T19:00:00.000002Z', rows: 4 });
    await readFile(db, { sha256: sha('5'), name: 'r-z.ach', at: '2026-03-08T19:00:00Z', rows: 1 });
  });
  const files = [sha('4'), sha('3'), sha('1'), sha('2'), sha('5')].map((s) => `${s}#0`);
  const rows = [
    ...[1, 2, 3, 4].map((p) => `${sha('4')}#${p}`),
    `${sha('3')}#1`,
    ...[1, 2, 3].map((p) => `${sha('1')}#${p}`),
    ...[1, 2].map((p) => `${sha('2')}#${p}`),
    `${sha('5')}#1`,
  ];
  for (const size of [1, 4]) {
    assert.deepEqual(await allPages(env, [], size), files, `files, ${size} a page`);
    assert.deepEqual(await allPages(env, ['--unmatched'], size), rows, `unmatched, ${size} a page`);
    assert.deepEqual(await allPages(env, ['--changes'], size), rows, `changes, ${size} a page`);
  }

  // The text's last line is the next page's command, as given.
  const text = await ewa(env, 'ach', 'returns', '--unmatched', '--limit', '3');
  const lines = text.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 4);
  const next = /^next: ewa ach returns --unmatched --limit 3 --after ([A-Za-z0-9_-]+)$/.exec(lines[3]!);
  assert.ok(next, lines[3]);
  const following = await ewa(env, 'ach', 'returns', '--unmatched', '--limit', '3', '--after', next[1]!);
  assert.match(following.stdout, /^2026-03-09T19:00:00\.000Z {2}r-a\.ach #4 /);
  assert.match(
    following.stdout.trimEnd().split('\n').at(-1)!,
    /^next: ewa ach returns --unmatched --limit 3 --after /,
  );
  const end = await ewa(
    env,
    'ach',
    'returns',
    '--limit',
    '4',
    '--after',
    (await ewa(env, 'ach', 'returns', '--limit', '1', '--json')).json().next,
  );
  assert.equal(end.stdout.split('\n').filter((line) => line.startsWith('next:')).length, 0);

  // Rows read after the first page, newer than it, leave the next page as it was.
  const first = (await ewa(env, 'ach', 'returns', '--changes', '--limit', '5', '--json')).json();
  const before = (
    await ewa(env, 'ach', 'returns', '--changes', '--limit', '5', '--after', first.next, '--json')
  ).json();
  await inDatabase(env, (db) =>
    readFile(db, { sha256: sha('6'), name: 'r-0.ach', at: '2026-03-10T19:00:00Z', rows: 2 }),
  );
  const after = (
    await ewa(env, 'ach', 'returns', '--changes', '--limit', '5', '--after', first.next, '--json')
  ).json();
  assert.deepEqual(after, before);
  assert.deepEqual(await allPages(env, ['--changes'], 4), [`${sha('6')}#1`, `${sha('6')}#2`, ...rows]);
});

test('ewa ach returns --after: a cursor that is not one of this listing is refused, exit 2, nothing printed', async (t) => {
  const env = await cliDatabaseEnv(t);
  await ewa(env, 'ach', 'returns'); // migrates the database
  await inDatabase(env, async (db) => {
    await readFile(db, { sha256: 'c'.repeat(64), name: 'r.ach', at: '2026-03-09T19:00:00Z', rows: 2 });
    await readFile(db, { sha256: 'd'.repeat(64), name: 'r.ach', at: '2026-03-08T19:00:00Z', rows: 0 });
  });
  const cursorOf = async (...flags: string[]) =>
    (await ewa(env, 'ach', 'returns', ...flags, '--limit', '1', '--json')).json().next as string;
  const files = await cursorOf();
  const unmatched = await cursorOf('--unmatched');
  const changes = await cursorOf('--changes');
  const forged = (k: unknown[]) =>
    Buffer.from(JSON.stringify({ l: 'ach-unmatched-returns', k })).toString('base64url');
  assert.ok(files && unmatched && changes);
  const refused: [string[], string][] = [
    [[], 'not a cursor'],
    [[], ''],
    [[], Buffer.from('{"l":').toString('base64url')],
    [['--unmatched'], files],
    [['--changes'], unmatched],
    [[], changes],
    [['--unmatched'], forged(['2026-03-09T19:00:00.000000Z', 'r.ach', 'c'.repeat(64)])],
    [['--unmatched'], forged(['2026-03-09T19:00:00.000Z', 'r.ach', 'c'.repeat(64), 1])],
    [['--unmatched'], forged(['0000-03-09T19:00:00.000000Z', 'r.ach', 'c'.repeat(64), 1])],
    [['--unmatched'], forged(['2026-03-09T19:00:00.000000Z', 'r\u0000.ach', 'c'.repeat(64), 1])],
    [['--unmatched'], forged(['2026-03-09T19:00:00.000000Z', 'r.ach', 'C'.repeat(64), 1])],
    [['--unmatched'], forged(['2026-03-09T19:00:00.000000Z', 'r.ach', 'c'.repeat(64), 0])],
    [['--unmatched'], forged(['2026-03-09T19:00:00.000000Z', 'r.ach', 'c'.repeat(64), 1.5])],
  ];
  for (const [flags, cursor] of refused) {
    const run = await ewa(env, 'ach', 'returns', ...flags, '--after', cursor);
    assert.deepEqual([run.code, run.stdout], [2, ''], `${flags} ${cursor}`);
    assert.match(run.stderr, /^ewa ach returns: --after is not a cursor of this listing/);
  }
  // The forged shape itself is one: a well-formed key of the listing pages from it.
  const own = forged(['2026-03-09T19:00:00.000000Z', 'r.ach', 'c'.repeat(64), 1]);
  const page = await ewa(env, 'ach', 'returns', '--unmatched', '--after', own, '--json');
  assert.deepEqual(page.json().data.map(identity), [`${'c'.repeat(64)}#2`]);
});
