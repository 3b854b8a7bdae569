import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** Where a function lives, coarsely: a package, a folder of ours, a part of Node, or the VM's own work. */
function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName || 'anonymous'}`;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1]!;
  const ours = /\/(src|bench)\/(.+?)\/[^/]+$/.exec(url) ?? /\/(src|bench)\/([^/]+)$/.exec(url);
  if (ours) return `${ours[1]}/${ours[2]}`;
  const internal = /^node:(internal\/)?([^/]+)/.exec(url);
  if (internal) return `node:${internal[2]}`;
  return url;
}

export interface ProfileSummary {
  /** Self time by area, in per cent of the samples, largest first. */
  areas: { area: string; percent: number }[];
  /** Self time by function, in per cent, largest first. */
  functions: { name: string; percent: number }[];
}

interface Profile {
  nodes: ProfileNode[];
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Samples per node in the last `seconds` of the profile (all of it when undefined): the load, not the start-up. */
function hitsOf(profile: Profile, seconds: number | undefined): Map<number, number> {
  const hits = new Map<number, number>();
  if (seconds === undefined) {
    for (const node of profile.nodes) hits.set(node.id, node.hitCount ?? 0);
    return hits;
  }
  const from = profile.endTime - seconds * 1e6;
  let at = profile.endTime - profile.timeDeltas.reduce((sum, delta) => sum + delta, 0);
  profile.samples.forEach((id, index) => {
    at += profile.timeDeltas[index]!;
    if (at >= from) hits.set(id, (hits.get(id) ?? 0) + 1);
  });
  return hits;
}

/**
 * Self time of the `node --cpu-prof` profiles in `dir` that `pick` picks, by area and by function, over their last
 * `seconds` (a profile starts with the process: loading modules and compiling schemas are not the load's work).
 */
export function summarizeProfiles(
  dir: string,
  options: { pick?: (name: string) => boolean; seconds?: number; top?: number } = {},
): ProfileSummary {
  const { pick = () => true, seconds, top = 15 } = options;
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile') && pick(name));
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const hitsByNode = hitsOf(profile, seconds);
    for (const node of profile.nodes) {
      const hits = hitsByNode.get(node.id) ?? 0;
      if (hits === 0) continue;
      const { functionName, url, lineNumber } = node.callFrame;
      if (functionName === '(idle)') continue;
      total += hits;
      const area = areaOf(url, functionName);
      byArea.set(area, (byArea.get(area) ?? 0) + hits);
      const name = `${functionName || 'anonymous'} (${area}${url ? `:${lineNumber + 1}` : ''})`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
    }
  }
  const ranked = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, hits]) => ({ name, percent: Math.round((hits / Math.max(total, 1)) * 1000) / 10 }));
  return {
    areas: ranked(byArea).map(({ name, percent }) => ({ area: name, percent })),
    functions: ranked(byFunction),
  };
}
