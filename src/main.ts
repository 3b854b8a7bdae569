import { enableCompileCache } from 'node:module';

// Later starts reuse the compiled code of the server and its dependencies (Node's on-disk compile cache).
enableCompileCache();
const argv = process.argv.slice(2);
const io = { env: process.env, cwd: process.cwd(), stdout: process.stdout, stderr: process.stderr };
// While a server holds the embedded database, the command runs in it; otherwise here.
const { forwardToServer } = await import('./cli/forward-to-server.ts');
const forwarded = await forwardToServer(argv, io);
// Imported after the cache is on, so that these modules are compiled through it.
const code = forwarded ?? (await (await import('./cli/run.ts')).runCli(argv, io));
// The `ewa` command. `serve` keeps running; every other command exits with its code when done.
if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
