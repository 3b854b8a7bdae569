import cliProgress from 'cli-progress';
import type { CliContext } from './command.ts';

export interface Progress {
  update(done: number): void;
  stop(): void;
}

/**
 * A bar on a terminal; on a pipe or in CI, a plain line each time another tenth of the way is crossed, so logs stay
 * readable. The line says the share actually done (a batch can cross a tenth by much), rounded down so that 100 %
 * means finished. Progress goes to standard error so that `--json` output on standard output stays clean.
 */
export function startProgress(context: CliContext, label: string, total: number): Progress {
  if (context.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {value}/{total} | ETA {eta}s`,
        stream: context.stderr as NodeJS.WriteStream,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0);
    return { update: (done) => bar.update(done), stop: () => bar.stop() };
  }
  let lastTenth = -1;
  return {
    update(done) {
      const tenth = Math.floor((done / Math.max(total, 1)) * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        const percent = total > 0 ? Math.floor((done * 100) / total) : 100;
        context.stderr.write(`${label}: ${done}/${total} (${percent}%)\n`);
      }
    },
    stop() {},
  };
}
