import { summarizeProfiles } from './cpu-profile.ts';

/**
 * Summarizes the `node --cpu-prof` profiles of a directory over their last N seconds, as the reads scenario does:
 * `node bench/profile-summary.ts <dir> [seconds]`.
 */
const [dir, seconds] = process.argv.slice(2);
if (!dir) throw new Error('usage: node bench/profile-summary.ts <dir> [seconds]');
const summary = summarizeProfiles(dir, seconds === undefined ? {} : { seconds: Number(seconds) });
for (const row of summary.areas) console.log(`| ${row.area} | ${row.percent} % |`);
console.log();
for (const row of summary.functions) console.log(`| \`${row.name}\` | ${row.percent} % |`);
