import { readdirSync, readFileSync } from 'node:fs';

/** The process and every descendant of it (cluster workers), from Linux /proc. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
    } catch {} // the process ended while we read
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

/**
 * The highest resident set of each process of a server (VmHWM: the peak since it started), in MB, largest first.
 * Read while the processes still run.
 */
export function peakRssMb(root: number): number[] {
  return processTree(root)
    .map(processPeakRssMb)
    .filter((mb) => mb !== undefined)
    .sort((a, b) => b - a);
}

/** The highest resident set of one process (VmHWM), in MB; undefined once it has ended. */
export function processPeakRssMb(pid: number): number | undefined {
  try {
    const line = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? Math.round(Number(line[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Watches for processes whose command line matches and notes the highest resident set each reached, in MB,
 * largest first: for short-lived processes (initdb's), which have ended by the time a scenario reads its peaks.
 */
export function watchPeakRss(commandLine: RegExp, everyMs = 50): { stop(): number[] } {
  const peaks = new Map<number, number>();
  const sample = () => {
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (!commandLine.test(readFileSync(`/proc/${name}/cmdline`, 'utf8'))) continue;
        const line = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${name}/status`, 'utf8'));
        if (line) peaks.set(Number(name), Math.max(peaks.get(Number(name)) ?? 0, Number(line[1])));
      } catch {} // the process ended while we read
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return [...peaks.values()].map((kb) => Math.round(kb / 1024)).sort((a, b) => b - a);
    },
  };
}
