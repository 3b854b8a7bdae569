import { enableCompileCache } from 'node:module';

// Later starts reuse the compiled code of the server and its dependencies (Node's on-disk compile cache).
enableCompileCache();
// Imported after the cache is on, so that these modules are compiled through it.
const { runCli } = await import('./cli/run.ts');

// The `ewa` command. `serve` keeps running; every other command exits with its code when done.
const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
