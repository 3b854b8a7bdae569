import pg from 'pg';

export interface StatementCost {
  /** The statement's first words, enough to find it in src/. */
  label: string;
  callsPerRequest: number;
  msPerRequest: number;
}

export interface RoundTripProfile {
  requestMs: number;
  statementsPerRequest: number;
  /** Statements sent while none was in flight: a batch of statements sent together is one round trip. */
  roundTripsPerRequest: number;
  /** Time with at least one statement in flight, per request. */
  databaseMsPerRequest: number;
  statements: StatementCost[];
}

function labelOf(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 90);
}

/**
 * Runs `requests` requests one after another and times every statement sent to PostgreSQL meanwhile, by wrapping
 * the driver's query method for the duration. One request at a time, so the time with no statement in flight is
 * the application's own (routing, validation, JSON, the driver) and the rest is the database's. A statement's time
 * runs from when it was handed to the driver until its answer: in a batch, that includes the statements before it.
 */
export async function profileRoundTrips(
  requests: number,
  request: (index: number) => Promise<void>,
): Promise<RoundTripProfile> {
  const costs = new Map<string, { calls: number; ms: number }>();
  let inFlight = 0;
  let roundTrips = 0;
  let waitingSince = 0;
  let databaseMs = 0;
  const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '?');
    const started = performance.now();
    if (inFlight++ === 0) {
      roundTrips += 1;
      waitingSince = started;
    }
    const result = original.apply(this, args);
    const record = () => {
      const label = labelOf(text);
      const cost = costs.get(label) ?? { calls: 0, ms: 0 };
      cost.calls += 1;
      cost.ms += performance.now() - started;
      costs.set(label, cost);
      if (--inFlight === 0) databaseMs += performance.now() - waitingSince;
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
    statementsPerRequest: statements.reduce((sum, s) => sum + s.callsPerRequest, 0),
    roundTripsPerRequest: roundTrips / requests,
    databaseMsPerRequest: databaseMs / requests,
    statements,
  };
}
