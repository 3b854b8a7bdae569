export interface RateLimitOptions {
  /** Attempts allowed per key in one window. */
  limit: number;
  windowMs: number;
  /** Keys tracked at once; past it the oldest window is forgotten, so memory stays bounded under a flood. */
  keysMax: number;
  now: () => Date;
}

export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Window {
  startMs: number;
  count: number;
}

/**
 * A fixed window per key that opens at the key's first attempt: at most `limit` attempts until it closes
 * `windowMs` later. The state lives in this process only, so with N processes behind a load balancer and no Redis
 * a client can make up to N times the limit (rate-limit-store.ts says why that is accepted).
 *
 * Windows sit in a Map in the order they opened (a new window is deleted and set again), so the expired ones are
 * always at the front and are swept there on each attempt: the cost is constant per attempt on average.
 */
export class RateLimiter {
  readonly #options: RateLimitOptions;
  readonly #windows = new Map<string, Window>();

  constructor(options: RateLimitOptions) {
    if (options.limit < 1 || options.windowMs < 1 || options.keysMax < 1) {
      throw new Error('a rate limit needs a positive limit, window and key count');
    }
    this.#options = options;
  }

  /** Counts one attempt for `key` and says whether it may go on. A refused attempt still counts. */
  hit(key: string): RateLimitDecision {
    const { count, remainingMs } = this.count(key);
    if (count <= this.#options.limit) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(remainingMs / 1000)) };
  }

  /** Counts one attempt for `key`: the attempts in its window so far, this one included, and the window's time left. */
  count(key: string): { count: number; remainingMs: number } {
    const nowMs = this.#options.now().getTime();
    this.#sweep(nowMs);
    let window = this.#windows.get(key);
    if (!window || nowMs - window.startMs >= this.#options.windowMs || nowMs < window.startMs) {
      // A clock that went back also opens a new window, rather than leaving a key blocked for the gap.
      this.#windows.delete(key);
      window = { startMs: nowMs, count: 0 };
      this.#windows.set(key, window);
      this.#evictOverflow();
    }
    window.count += 1;
    return { count: window.count, remainingMs: window.startMs + this.#options.windowMs - nowMs };
  }

  /** Keys tracked now (tests check that memory stays bounded). */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(nowMs: number): void {
    for (const [key, window] of this.#windows) {
      if (nowMs - window.startMs < this.#options.windowMs) break;
      this.#windows.delete(key);
    }
  }

  #evictOverflow(): void {
    while (this.#windows.size > this.#options.keysMax) {
      const oldest = this.#windows.keys().next();
      if (oldest.done) return;
      this.#windows.delete(oldest.value);
    }
  }
}
