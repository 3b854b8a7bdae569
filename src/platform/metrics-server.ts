import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsConfig } from '../config.ts';

/** What answers a scrape: one process's Metrics, or the primary's sum of its workers' (serve-primary.ts). */
export interface MetricsSource {
  readonly contentType: string;
  scrape(): Promise<string>;
}

export interface MetricsServer {
  /** The port it listens on (the one chosen when EWA_METRICS_PORT is 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * GET /metrics on a listener of its own, plain node:http rather than a fourth Fastify app: it has one route, no
 * body, no token, and must answer even when the public listeners shed load. Anything else is 404.
 */
export async function startMetricsServer(
  metrics: MetricsSource,
  config: MetricsConfig,
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = request.url?.split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Not found: GET /metrics\n');
      return;
    }
    metrics.scrape().then(
      (text) => {
        response.writeHead(200, { 'content-type': metrics.contentType }).end(text);
      },
      (error: unknown) => {
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`Metrics could not be collected: ${(error as Error)?.message}\n`);
      },
    );
  });
  // A scraper keeps its connection alive between scrapes; close() must not wait for it.
  server.keepAliveTimeout = 5000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
