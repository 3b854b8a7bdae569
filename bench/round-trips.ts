import pg from 'pg';

export interface StatementCost {
  /** The statement's first words, enough to find it in src/. */
  label: string;
  callsPerRequest: number;
  msPerRequest: number;
}

export interface RoundTripProfile {
  requestMs: number;
  roundTripsPerRequest: number;
  /** Time spent waiting for PostgreSQL, per request (statements run one after another within a request). */
  databaseMsPerRequest: number;
  statements: StatementCost[];
}

function labelOf(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 90);
}

/**
 * Runs `requests` requests one after another and times every statement sent to PostgreSQL meanwhile, by wrapping
 * the driver's query method for the duration. One request at a time, so the time between statements is the
 * application's own (routing, validation, JSON, the driver) and the time inside them is the database's.
 */
export async function profileRoundTrips(
  requests: number,
  request: (index: number) => Promise<void>,
): Promise<RoundTripProfile> {
  const costs = new Map<string, { calls: number; ms: number }>();
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '?');
    const started = performance.now();
    const result = original.apply(this, args);
    const record = () => {
      const label = labelOf(text);
      const cost = costs.get(label) ?? { calls: 0, ms: 0 };
      cost.calls += 1;
      cost.ms += performance.now() - started;
      costs.set(label, cost);
    };
    if (result instanceof Promise) result.then(record, record);
    return result;
  };
  const started = performance.now();
  try {
    for (let index = 0; index < requests; index++) await request(index);
  } finally {
    prototype.query = original;
  }
  const requestMs = (performance.now() - started) / requests;
  const statements = [...costs]
    .map(([label, cost]) => ({
      label,
      callsPerRequest: cost.calls / requests,
      msPerRequest: cost.ms / requests,
    }))
    .sort((a, b) => b.msPerRequest - a.msPerRequest);
  return {
    requestMs,
    roundTripsPerRequest: statements.reduce((sum, s) => sum + s.callsPerRequest, 0),
    databaseMsPerRequest: statements.reduce((sum, s) => sum + s.msPerRequest, 0),
    statements,
  };
}
