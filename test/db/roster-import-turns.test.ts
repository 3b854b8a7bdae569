import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.ts';
import { AppError } from '../../src/errors/app-error.ts';
import { InputRefusedError } from '../../src/errors/input-error.ts';
import { createOrganization } from '../../src/operator/organizations.ts';
import { importRoster } from '../../src/operator/roster-import.ts';
import { heldRoster } from '../helpers/held-roster.ts';
import { openTestDatabase } from '../helpers/test-database.ts';

/**
 * One roster import of an organization at a time, on either database: an import held open by its source keeps the
 * organization's turn, so that a second one is refused at once instead of mixing its lines with the first's.
 */

const HEADER = 'primary_identifier,first_name,last_name,email,wage_amount,wage_frequency';

const line = (organization: string, n: number, first = 'Worker') =>
  `J-${n},${first},${n},w${n}.${organization.slice(0, 8)}@example.com,20,HOURLY\n`;

async function twoOrganizations(t: TestContext) {
  const database = await openTestDatabase(t);
  const first = await createOrganization(database.db, { name: 'First Employer' });
  const second = await createOrganization(database.db, { name: 'Second Employer' });
  return { database, first, second };
}

function isImportRunning(organization: { id: string; name: string }) {
  return (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, 'ROSTER_IMPORT_RUNNING');
    assert.equal(error.status, 409);
    assert.match(error.detail, new RegExp(`${organization.name} \\(${organization.id}\\)`));
    return true;
  };
}

async function jobCount(database: Database, organizationId: string): Promise<number> {
  const row = await database.db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

test('while an import of an organization runs, another of it is refused at once, and another organization imports meanwhile', async (t) => {
  const { database, first, second } = await twoOrganizations(t);
  const held = heldRoster(`${HEADER}\n${line(first.id, 1)}`, line(first.id, 2));
  const running = importRoster(database, { organizationId: first.id, source: held.source });
  await held.reading;
  await assert.rejects(
    importRoster(database, { organizationId: first.id, source: [`${HEADER}\n${line(first.id, 3)}`] }),
    isImportRunning(first),
  );
  // The organization named by the file's organization_id column, not by the caller: refused the same.
  await assert.rejects(
    importRoster(database, {
      source: [`organization_id,${HEADER}\n${first.id},${line(first.id, 4)}`],
    }),
    isImportRunning(first),
  );
  const other = await importRoster(database, {
    organizationId: second.id,
    source: [`${HEADER}\n${line(second.id, 1)}`],
  });
  assert.equal(other.created, 1);
  held.finish();
  const done = await running;
  assert.deepEqual([done.created, done.rejected], [2, 0]);
  assert.equal(await jobCount(database, first.id), 2, 'nothing of the refused files was written');
  const again = await importRoster(database, {
    organizationId: first.id,
    source: [`${HEADER}\n${line(first.id, 1)}${line(first.id, 2)}`],
  });
  assert.deepEqual([again.unchanged, again.created], [2, 0], 'the turn is free once the import succeeded');
});

test("an import that takes its organization from the file's organization_id holds it as one named does", async (t) => {
  const { database, first } = await twoOrganizations(t);
  // Two lines: the reader holds the last line of what it was given until it sees what follows.
  const held = heldRoster(
    `organization_id,${HEADER}\n${first.id},${line(first.id, 1)}${first.id},${line(first.id, 2)}`,
    '',
  );
  const running = importRoster(database, { source: held.source });
  await held.reading;
  await assert.rejects(
    importRoster(database, { organizationId: first.id, source: [`${HEADER}\n${line(first.id, 2)}`] }),
    isImportRunning(first),
  );
  held.finish();
  assert.equal((await running).created, 2);
});

test('the turn is given back when an import fails: its source breaks, the records refuse it, the database fails', async (t) => {
  const { database, first } = await twoOrganizations(t);
  const importAgain = async () => {
    const result = await importRoster(database, {
      organizationId: first.id,
      source: [`${HEADER}\n${line(first.id, 9)}`],
    });
    assert.equal(result.rejected, 0);
  };

  // The client goes away mid-upload, or the file cannot be read on.
  const broken = heldRoster(`${HEADER}\n${line(first.id, 1)}`, '');
  const breaking = importRoster(database, { organizationId: first.id, source: broken.source });
  await broken.reading;
  broken.failWith(new Error('the upload was cut off'));
  await assert.rejects(breaking, /the upload was cut off/);
  await importAgain();

  // An InputError after the turn was taken: the currency changed while the file was read.
  const refused = heldRoster(`${HEADER}\n${line(first.id, 2)}`, '');
  const refusing = importRoster(database, { organizationId: first.id, source: refused.source });
  await refused.reading;
  await sql`update organization_policies set currency = 'EUR' where organization_id = ${first.id}`.execute(
    database.db,
  );
  refused.finish();
  await assert.rejects(refusing, InputRefusedError);
  await sql`update organization_policies set currency = 'USD' where organization_id = ${first.id}`.execute(
    database.db,
  );
  await importAgain();

  // A statement the database refuses: a column gone while the file was read.
  const failing = heldRoster(`${HEADER}\n${line(first.id, 3)}`, '');
  const failingImport = importRoster(database, { organizationId: first.id, source: failing.source });
  await failing.reading;
  await sql`alter table jobs rename column first_name to first_name_gone`.execute(database.db);
  failing.finish();
  await assert.rejects(failingImport, (error: unknown) => (error as { code?: string }).code === '42703');
  await sql`alter table jobs rename column first_name_gone to first_name`.execute(database.db);
  await importAgain();
});
