import pg from 'pg';
import { POSTGRES_URL } from './money-fixture.ts';

/**
 * What our PostgreSQL sessions are doing, sampled every `everyMs` from pg_stat_activity until `stop`: on average
 * how many run a statement (and what they wait for, if anything), sit idle inside a transaction (waiting for the
 * application's next statement), or sit idle in the pool. Many sessions idle in transaction and few active means the
 * application, not the database, sets the pace.
 */
export function sampleSessionStates(
  sessionPrefix: string,
  everyMs = 100,
): { stop(): Promise<Map<string, number>> } {
  const counts = new Map<string, number>();
  let samples = 0;
  let running = true;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  const done = (async () => {
    await client.connect();
    try {
      while (running) {
        const { rows } = await client.query<{ state: string | null; wait: string | null }>(
          `select state, wait_event_type || ':' || wait_event as wait from pg_stat_activity
            where application_name like $1`,
          [`${sessionPrefix}%`],
        );
        for (const row of rows) {
          const key =
            row.state === 'active' ? `active${row.wait ? ` (${row.wait})` : ''}` : (row.state ?? 'unknown');
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        samples += 1;
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    } finally {
      await client.end();
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return new Map(
        [...counts]
          .map(([key, count]) => [key, count / Math.max(1, samples)] as const)
          .sort((a, b) => b[1] - a[1]),
      );
    },
  };
}

export function formatSessionStates(states: Map<string, number>): string {
  return [...states]
    .filter(([, mean]) => mean >= 0.05)
    .map(([key, mean]) => `${key} ${mean.toFixed(1)}`)
    .join(', ');
}
