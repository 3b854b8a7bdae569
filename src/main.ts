import { runCli } from './cli/run.ts';

// The `ewa` command. `serve` keeps running; every other command exits with its code when done.
const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
