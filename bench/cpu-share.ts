import { readdirSync, readFileSync } from 'node:fs';
import { adminQuery } from './money-fixture.ts';

/** Linux reports process CPU time in clock ticks of 1/100 s (USER_HZ) on every common architecture. */
const TICKS_PER_SECOND = 100;

/** CPU ticks used so far by each process, and by the whole machine (all cores), from Linux /proc. */
interface Snapshot {
  machine: { total: number; idle: number; steal: number };
  processes: Map<number, { comm: string; ticks: number; backend: boolean }>;
}

function snapshot(): Snapshot {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const processes = new Map<number, { comm: string; ticks: number; backend: boolean }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces; the counters follow it.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const rest = stat
        .slice(close + 2)
        .split(' ')
        .map(Number);
      // A backend's title names its client's address; the server's own processes (WAL writer, checkpointer …) do not.
      const backend =
        comm === 'postgres' && /\(\d+\)|\[local\]/.test(readFileSync(`/proc/${name}/cmdline`, 'utf8'));
      processes.set(Number(name), { comm, ticks: (rest[11] ?? 0) + (rest[12] ?? 0), backend }); // utime + stime
    } catch {} // the process ended while we read
  }
  return {
    machine: {
      total: fields.reduce((sum, value) => sum + value, 0),
      idle: (fields[3] ?? 0) + (fields[4] ?? 0),
      steal: fields[7] ?? 0,
    },
    processes,
  };
}

export interface CpuShare {
  /** Shares of the machine's whole CPU capacity (all cores), in per cent. */
  servers: number;
  /** Our sessions' backends and the server's own processes (WAL writer, checkpointer …). */
  postgres: number;
  /** This process (autocannon, or the work it runs itself) and pgbench. */
  loadGenerator: number;
  /** Everything else: other programs, and other sessions of the same PostgreSQL. */
  other: number;
  /** Taken by the virtual machine's host. */
  steal: number;
  idle: number;
  /** CPU seconds (not shares) of our API processes, of PostgreSQL for our sessions, and of the load generator. */
  serverSeconds: number;
  postgresSeconds: number;
  loadGeneratorSeconds: number;
}

/** The backends of sessions whose application_name starts with `prefix`. */
async function backendsOf(prefix: string): Promise<Set<number>> {
  const { rows } = await adminQuery(
    `select pid from pg_stat_activity where application_name like '${prefix.replace(/'/g, "''")}%'`,
  );
  return new Set(rows.map((row: { pid: number }) => Number(row.pid)));
}

export function formatShare(share: CpuShare | undefined): string {
  return share
    ? `${share.servers} / ${share.postgres} / ${share.loadGenerator} / ${share.other} / ${share.steal} / ${share.idle} %`
    : 'not measured';
}

/**
 * Starts counting where the machine's CPU goes: our server processes, PostgreSQL for our sessions (backends whose
 * application_name starts with `sessionPrefix`, plus the server's own processes), the load generator (this process,
 * or pgbench), everything else, and idle. `stop` must run while our sessions are still connected. Tells a CPU-bound run
 * from a waiting one, which side of the database connection is the bottleneck, and how much other work disturbed it.
 */
export function startCpuShare(
  serverPids: readonly number[],
  sessionPrefix: string,
): { stop(): Promise<CpuShare | undefined> } {
  let before: Snapshot | undefined;
  try {
    before = snapshot();
  } catch {
    before = undefined;
  }
  return {
    async stop() {
      if (!before) return undefined;
      const after = snapshot();
      const ours = await backendsOf(sessionPrefix);
      const total = after.machine.total - before.machine.total;
      if (total <= 0) return undefined;
      const used = { servers: 0, postgres: 0, loadGenerator: 0, other: 0 };
      const servers = new Set(serverPids);
      for (const [pid, { comm, ticks, backend }] of after.processes) {
        const delta = ticks - (before.processes.get(pid)?.ticks ?? 0);
        if (servers.has(pid)) used.servers += delta;
        else if (comm === 'postgres' && (!backend || ours.has(pid))) used.postgres += delta;
        else if (pid === process.pid || comm === 'pgbench') used.loadGenerator += delta;
        else used.other += delta;
      }
      const percent = (ticks: number) => Math.round((ticks / total) * 1000) / 10;
      return {
        servers: percent(used.servers),
        postgres: percent(used.postgres),
        loadGenerator: percent(used.loadGenerator),
        other: percent(used.other),
        steal: percent(after.machine.steal - before.machine.steal),
        idle: percent(after.machine.idle - before.machine.idle),
        serverSeconds: used.servers / TICKS_PER_SECOND,
        postgresSeconds: used.postgres / TICKS_PER_SECOND,
        loadGeneratorSeconds: used.loadGenerator / TICKS_PER_SECOND,
      };
    },
  };
}
