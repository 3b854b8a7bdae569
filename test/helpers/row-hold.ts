import pg from 'pg';
import type { MoneyWorld } from './money-world.ts';
import { POSTGRES_URL } from './test-database.ts';

/** A session of the test's own that holds row locks until it is released. */
export interface Hold {
  pid: number;
  release(): Promise<void>;
}

/**
 * Runs `text` (a `select … for update`) in a transaction of a session of its own on the world's schema and keeps it
 * open: the rows stay locked until `release`, or the end of the test. To force the interleaving a race needs.
 */
export async function holdRows(
  world: Pick<MoneyWorld, 'env' | 'onCleanup'>,
  text: string,
  params: unknown[],
): Promise<Hold> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  let open = true;
  const release = async () => {
    if (!open) return;
    open = false;
    await client.query('rollback');
    await client.end();
  };
  world.onCleanup(release);
  await client.query(`set search_path to ${world.env.EWA_DB_SCHEMA}`);
  await client.query('begin');
  await client.query(text, params);
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  return { pid: rows[0]!.pid, release };
}
