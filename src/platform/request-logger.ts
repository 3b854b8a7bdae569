import type { FastifyBaseLogger } from 'fastify';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

type Levelled = FastifyBaseLogger & { isLevelEnabled?(level: string): boolean };

/**
 * Fastify gives every request a child logger bound to its id. Making one runs pino's redaction over that binding
 * (our redacted paths start with a wildcard, which matches every key): about 2 % of a read's CPU in the profile
 * (BENCHMARKS.md, reads), for a logger that at the usual levels writes nothing for most requests. This one makes
 * the child when the request first writes a line its level lets through, with the same bindings, so every line
 * still carries the request's id.
 */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  options: { level?: string },
): FastifyBaseLogger {
  if (options.level !== undefined) return parent.child(bindings, options);
  return new LazyLogger(parent as Levelled, bindings, options) as unknown as FastifyBaseLogger;
}

/**
 * A class rather than an object of closures: made for every request, it is then one small object whose methods are
 * shared, where the closures were ten allocations a request.
 */
class LazyLogger {
  readonly #parent: Levelled;
  readonly #bindings: Record<string, unknown>;
  readonly #options: { level?: string };
  #child: FastifyBaseLogger | undefined;

  constructor(parent: Levelled, bindings: Record<string, unknown>, options: { level?: string }) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #made(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #write(level: (typeof LEVELS)[number], args: unknown[]): void {
    if (this.#child || (this.#parent.isLevelEnabled?.(level) ?? true))
      (this.#made()[level] as (...line: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#made().level = level;
  }

  child(more: Record<string, unknown>, moreOptions?: object): FastifyBaseLogger {
    return this.#made().child(more, moreOptions);
  }

  silent(): void {}

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#write('error', args);
  }

  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }

  info(...args: unknown[]): void {
    this.#write('info', args);
  }

  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
}
