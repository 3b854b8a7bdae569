import { writeSync } from 'node:fs';
import { registerHooks } from 'node:module';

/**
 * Loaded with `--import` (NODE_OPTIONS) into a process a test starts: prints a line on stderr for each module of
 * src/cli/ the process loads and each resolution of oidc-provider, so that the test can tell what a process loaded.
 */
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    if (specifier === 'oidc-provider' || /\/src\/cli\/[^/]+\.ts$/.test(resolved.url))
      writeSync(2, `resolved ${specifier === 'oidc-provider' ? specifier : resolved.url}\n`);
    return resolved;
  },
});
