import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP path to a server (PostgreSQL, Redis) that can stop carrying bytes without closing anything, as a stopped
 * server or a network that drops packets does: nothing fails, and only the client's own deadlines can tell.
 */
export async function freezablePath(host: string, port: number) {
  let frozen = false;
  const held: Socket[] = [];
  const server = createServer((inbound) => {
    const outbound = connect(port, host);
    held.push(inbound, outbound);
    const carry = (from: Socket, to: Socket) =>
      from.on('data', (chunk) => {
        if (!frozen) to.write(chunk);
      });
    carry(inbound, outbound);
    carry(outbound, inbound);
    for (const socket of [inbound, outbound]) socket.on('error', () => {});
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
    },
    close: () => {
      for (const socket of held) socket.destroy();
      server.close();
    },
  };
}
