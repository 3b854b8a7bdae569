import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `npm install` records only the platform packages the registry it talks to can serve. When that registry
 * lacks some of a package's per-platform binaries (Biome's for macOS, Windows, musl…), the lock file misses
 * them and `npm ci` refuses to run. This adds the missing entries, with the os, cpu and libc their names say,
 * so `npm ci` skips them on platforms they are not for. Run it after regenerating package-lock.json.
 */
const LOCK = join(import.meta.dirname, '..', 'package-lock.json');
const PLATFORM =
  /-(android|darwin|freebsd|linux|openbsd|sunos|win32)-(arm|arm64|ia32|x64|ppc64|s390x)(-(musl|gnu|msvc))?$/;

type Entry = Record<string, unknown> & { optionalDependencies?: Record<string, string>; dev?: boolean };
const lock = JSON.parse(readFileSync(LOCK, 'utf8')) as { packages: Record<string, Entry> };
let added = 0;
for (const [, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const match = PLATFORM.exec(name);
    if (lock.packages[key] || !match) continue;
    lock.packages[key] = {
      version,
      cpu: [match[2]],
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [match[1]],
      ...(match[4] === 'musl' || match[4] === 'gnu' ? { libc: [match[4] === 'gnu' ? 'glibc' : 'musl'] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)),
);
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries to package-lock.json`);
