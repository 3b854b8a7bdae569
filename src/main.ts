import { enableCompileCache } from 'node:module';

// A server process starts again at once with the V8 heap flags it lacks (EWA_V8_SEMI_SPACE_MB, …), before it loads anything.
if (process.argv[2] === 'serve') (await import('./cli/heap-flags.ts')).restartWithHeapFlags(process.env);
// Later starts reuse the compiled code of the server and its dependencies (Node's on-disk compile cache).
enableCompileCache();
const argv = process.argv.slice(2);
// A reader that stops early (`ewa … | head`) closes the pipe: the rest of the output has nowhere to go, which is not
// a failure of the command, so the process ends quietly instead of with an unhandled EPIPE stack.
// A server's output is its log, which this does not govern.
if (argv[0] !== 'serve')
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
const io = { env: process.env, cwd: process.cwd(), stdout: process.stdout, stderr: process.stderr };
// While a server holds the embedded database, the command runs in it; otherwise here.
const { forwardToServer } = await import('./cli/forward-to-server.ts');
const forwarded = await forwardToServer(argv, io);
// Imported after the cache is on, so that these modules are compiled through it.
const code = forwarded ?? (await (await import('./cli/run.ts')).runCli(argv, io));
// The `ewa` command. `serve` keeps running; every other command exits with its code when done.
if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
