import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { type CpuShare, startCpuShare } from './cpu-share.ts';
import { adminQuery, POSTGRES_URL } from './money-fixture.ts';
import { type WalVolume, walPerUnit, walSoFar } from './wal-volume.ts';

const run = promisify(execFile);

export interface TpcbResult {
  tps: number;
  latencyMs: number;
  transactions: number;
  failed: number;
  /** Where the machine's CPU went in the middle of the run (pgbench itself counts as other). */
  cpu: CpuShare | undefined;
  /** CPU milliseconds of PostgreSQL and of pgbench per transaction, over the part of the run that was measured. */
  postgresCpuMs: number | undefined;
  clientCpuMs: number | undefined;
  /** Write-ahead log per transaction over the whole run: the cluster's, so background writes (autovacuum) count too. */
  wal: WalVolume;
}

/**
 * PostgreSQL's own yardstick on the same server: pgbench's built-in TPC-B-like script (three updates, a select
 * and an insert per transaction), or with `selectOnly` its select-only script (one select by primary key), in a
 * scratch database of its own, which is dropped afterwards.
 */
export async function pgbenchTpcb(options: {
  scale: number;
  clients: number;
  threads: number;
  seconds: number;
  selectOnly?: boolean;
}): Promise<TpcbResult> {
  const name = `bench_tpcb_${randomBytes(5).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  try {
    await run('pgbench', ['-i', '-q', '-s', String(options.scale), url.toString()], {
      maxBuffer: 16 * 1024 * 1024,
    });
    const appName = `ewa-bench-${name}`;
    const walBefore = await walSoFar();
    const running = run(
      'pgbench',
      [
        '-c',
        String(options.clients),
        '-j',
        String(options.threads),
        '-T',
        String(options.seconds),
        '-M',
        'prepared',
        ...(options.selectOnly ? ['-S'] : []),
        url.toString(),
      ],
      { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, PGAPPNAME: appName } },
    );
    running.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled meanwhile
    // Its backends end with it, so CPU is counted over the middle of the run, while they are connected.
    await sleep(1000);
    const meter = startCpuShare([], appName);
    await sleep((options.seconds - 2) * 1000);
    const cpu = await meter.stop();
    const result = await running;
    const text = result.stdout;
    const number = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);
    const walAfter = await walSoFar();
    const tps = number(/tps = ([\d.]+) \(without initial connection time\)/);
    if (!Number.isFinite(tps)) throw new Error(`pgbench printed no tps:\n${text}\n${result.stderr}`);
    const transactions = number(/number of transactions actually processed: (\d+)/);
    return {
      tps,
      latencyMs: number(/latency average = ([\d.]+) ms/),
      transactions,
      failed: number(/number of failed transactions: (\d+)/) || 0,
      cpu,
      postgresCpuMs: cpu ? (cpu.postgresSeconds * 1000) / (tps * (options.seconds - 2)) : undefined,
      clientCpuMs: cpu ? (cpu.loadGeneratorSeconds * 1000) / (tps * (options.seconds - 2)) : undefined,
      wal: walPerUnit(walBefore, walAfter, transactions),
    };
  } finally {
    await adminQuery(`drop database if exists ${name} with (force)`);
  }
}
