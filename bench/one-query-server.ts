import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import pg from 'pg';

/**
 * A reference for a read that asks the database once: node:http and node-postgres, nothing else. Each request's
 * Authorization header names a worker (the file of headers → person ids given); one prepared select by primary key
 * finds them, and the fixed body (the file given, a real document of the API) answers. As many processes
 * (node:cluster) and connections each as `ewa serve` is given. Prints "ready <port>".
 * Usage: one-query-server.ts <body file> <authorizations file> <processes> <pool size each>; DATABASE_URL and
 * EWA_DB_SCHEMA name the database.
 */
const [bodyFile, authorizationsFile, processes, poolSize] = process.argv.slice(2);

if (cluster.isPrimary) {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  let listening = 0;
  for (let index = 0; index < Number(processes); index++) {
    cluster.fork({ ONE_QUERY_PORT: String(port) }).once('listening', () => {
      if (++listening === Number(processes)) console.log(`ready ${port}`);
    });
  }
  process.once('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    cluster.disconnect(() => process.exit(0));
  });
} else {
  const body = readFileSync(bodyFile!);
  const people = new Map<string, string>(
    Object.entries(JSON.parse(readFileSync(authorizationsFile!, 'utf8'))),
  );
  const headers = { 'content-type': 'application/vnd.api+json', 'content-length': String(body.length) };
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(poolSize),
    options: `-c search_path=${process.env.EWA_DB_SCHEMA}`,
  });
  const server = createServer((request, response) => {
    const personId = people.get(request.headers.authorization ?? '');
    if (!personId) {
      response.writeHead(401).end();
      return;
    }
    pool
      .query({ name: 'one-query', text: 'select id from people where id = $1', values: [personId] })
      .then(({ rows }) => {
        if (rows.length === 1) response.writeHead(200, headers).end(body);
        else response.writeHead(404).end();
      })
      .catch(() => response.writeHead(500).end());
  });
  server.listen(Number(process.env.ONE_QUERY_PORT), '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
}
