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
  const logger = parent as Levelled;
  let child: FastifyBaseLogger | undefined;
  const made = () => {
    child ??= logger.child(bindings, options);
    return child;
  };
  const lazy = {
    get level() {
      return child?.level ?? logger.level;
    },
    set level(level: string) {
      made().level = level;
    },
    child: (more: Record<string, unknown>, moreOptions?: object) => made().child(more, moreOptions),
    silent: () => {},
  } as unknown as Record<string, unknown>;
  for (const level of LEVELS) {
    lazy[level] = (...args: unknown[]) => {
      if (child || (logger.isLevelEnabled?.(level) ?? true))
        (made()[level] as (...line: unknown[]) => void)(...args);
    };
  }
  return lazy as unknown as FastifyBaseLogger;
}
