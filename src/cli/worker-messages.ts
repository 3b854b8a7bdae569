import type { MetricObjectWithValues, MetricValue } from 'prom-client';

/**
 * What the primary of `ewa serve --workers` and its workers say to each other over the cluster channel. Every
 * message has a `type` starting with `ewa:`, so that prom-client's and Node's own messages are told apart.
 */
export type WorkerMessage =
  /** Every listener is up and the background work started: the worker may be sent connections. */
  | { type: 'ewa:ready' }
  /** Its listeners are closed: once the primary answers, no connection is on its way to this worker any more. */
  | { type: 'ewa:closed' }
  | { type: 'ewa:metrics'; id: number; metrics: MetricObjectWithValues<MetricValue<string>>[] }
  /** The answer to `ewa:ping`, sent from the worker's event loop: it still runs. */
  | { type: 'ewa:pong' };

export type PrimaryMessage =
  /** Stop: answer /readyz 503 for `delayMs`, stop accepting, finish the requests in flight, exit 0. */
  | { type: 'ewa:drain'; delayMs: number }
  | { type: 'ewa:metrics?'; id: number }
  /** Are you there? Answered `ewa:pong`; a worker that stops answering is killed and replaced. */
  | { type: 'ewa:ping' }
  /**
   * The answer to `ewa:closed`. The channel keeps order both ways: the primary read the worker's listeners close
   * before this, so it hands the worker no more connections, and any it handed before arrive (and are handed back)
   * before this does.
   */
  | { type: 'ewa:closed!' };

function isTyped(message: unknown): message is { type: string } {
  return (
    typeof message === 'object' &&
    message !== null &&
    typeof (message as { type?: unknown }).type === 'string'
  );
}

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  return isTyped(message) && ['ewa:ready', 'ewa:closed', 'ewa:metrics', 'ewa:pong'].includes(message.type);
}

export function isPrimaryMessage(message: unknown): message is PrimaryMessage {
  return isTyped(message) && ['ewa:drain', 'ewa:metrics?', 'ewa:closed!', 'ewa:ping'].includes(message.type);
}
