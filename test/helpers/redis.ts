import { Socket } from 'node:net';

/** The Redis the tests share with rate limits when it answers; tests that need it skip otherwise. */
export const TEST_REDIS_URL = process.env.EWA_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** Whether TEST_REDIS_URL answers PING within half a second. */
export async function redisAnswers(url = TEST_REDIS_URL): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (answers: boolean) => {
      socket.destroy();
      resolve(answers);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.connect(Number(port || 6379), hostname, () => socket.write('PING\r\n'));
  });
}
