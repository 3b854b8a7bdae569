import assert from 'node:assert/strict';
import { test } from 'node:test';
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
  });
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
