import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/**
 * The ceiling of a read on this machine: a plain node:http server answering every request with one fixed JSON
 * body (the file given, a real document of the API), no framework, no database. Prints "ready <port>".
 */
const body = readFileSync(process.argv[2]!);
const headers = { 'content-type': 'application/vnd.api+json', 'content-length': String(body.length) };
const server = createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
});
server.listen(0, '127.0.0.1', () => {
  console.log(`ready ${(server.address() as { port: number }).port}`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
